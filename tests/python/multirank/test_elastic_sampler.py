"""ElasticSampler on every rank of a plain kolorun job (-np 2 and -np 3):
partitions, progress shared at commit, resets, and a whole epoch with
resets through run() (each a real shutdown and init of the engine)."""

import collections
import math

import pytest
import torch

import kolo.torch as hvd
from kolo.torch.elastic import ElasticSampler, TorchState

from elastic_helpers import *  # noqa: F401,F403


# --- ElasticSampler -----------------------------------------------------------------

def gather_partitions(sampler, name):
    return hvd.allgather_object(list(sampler), name=name)


def check_spread(parts, expected, size):
    """Every expected index in exactly one partition except the padding,
    which repeats expected indices only; every partition the same length."""
    per_rank = math.ceil(len(expected) / size)
    assert [len(p) for p in parts] == [per_rank] * size
    counts = collections.Counter(i for p in parts for i in p)
    assert set(counts) == set(expected)
    assert sum(counts.values()) - len(expected) == per_rank * size - len(expected)


@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("n", [11, 12, 1])
def test_sampler_partitions_are_disjoint_and_cover_the_dataset(n, shuffle):
    sampler = ElasticSampler(range(n), shuffle=shuffle, seed=3)
    assert len(sampler) == math.ceil(n / hvd.size())
    assert list(sampler) == list(sampler)  # iterating does not change it
    parts = gather_partitions(sampler, f"elastic.cover.{n}.{shuffle}")
    check_spread(parts, range(n), hvd.size())
    if not shuffle:
        order = [i % n for i in range(len(sampler) * hvd.size())]
        assert parts == [order[r::hvd.size()] for r in range(hvd.size())]


def test_sampler_set_epoch_reshuffles_deterministically():
    n = 20
    sampler = ElasticSampler(range(n), seed=7)
    sampler.set_epoch(1)
    first = list(sampler)
    sampler.set_epoch(2)
    second = list(sampler)
    assert first != second
    sampler.set_epoch(1)
    assert list(sampler) == first
    twin = ElasticSampler(range(n), seed=7)
    twin.set_epoch(1)
    assert list(twin) == first
    other_seed = ElasticSampler(range(n), seed=8)
    other_seed.set_epoch(1)
    assert list(other_seed) != first
    # the same permutation on every rank: the partitions fit together
    check_spread(hvd.allgather_object(first, name="elastic.epoch1"), range(n), hvd.size())
    check_spread(hvd.allgather_object(second, name="elastic.epoch2"), range(n), hvd.size())
    # a new epoch forgets what was processed in the last one
    sampler.record_batch(0, 3)
    assert len(sampler.processed_indices) == 3
    sampler.set_epoch(3)
    assert sampler.processed_indices == set() and len(sampler) == math.ceil(n / hvd.size())


def test_sampler_record_batch_marks_this_ranks_batch():
    sampler = ElasticSampler(range(17), seed=2)
    mine = list(sampler)
    assert sampler.get_indices(0, 2) == mine[:2]
    assert sampler.get_indices(99, 2) == []
    sampler.record_batch(1, 2)
    assert sampler.processed_indices == set(mine[2:4])
    sampler.record_indices([mine[0]])
    assert sampler.processed_indices == set(mine[:1] + mine[2:4])
    assert list(sampler) == mine  # recording does not re-partition before a reset
    assert sampler.state_dict() == {"epoch": 0, "processed_indices": set(mine[:1] + mine[2:4])}


@pytest.mark.parametrize("n", [23, 24])
def test_sampler_sync_spreads_exactly_the_unprocessed_samples(n):
    batch = 2
    sampler = ElasticSampler(range(n), seed=1)
    sampler.set_epoch(4)
    state = TorchState(sampler=sampler, epoch=4)
    assert state.sampler is sampler
    for b in range(hvd.rank() + 1):  # ranks got different distances into the epoch
        sampler.record_batch(b, batch)
    processed = set().union(*hvd.allgather_object(sampler.processed_indices,
                                                  name="elastic.processed"))
    assert len(processed) == batch * sum(range(1, hvd.size() + 1))
    state.sync()
    assert sampler.processed_indices == processed and sampler.epoch == 4
    unprocessed = sorted(set(range(n)) - processed)
    parts = gather_partitions(sampler, f"elastic.rest.{n}")
    check_spread(parts, unprocessed, hvd.size())  # no loss, no processed sample again
    assert len(sampler) == math.ceil(len(unprocessed) / hvd.size())
    # the synced progress is also what a restore goes back to
    sampler.record_batch(0, batch)
    state.restore()
    assert sampler.processed_indices == processed
    assert gather_partitions(sampler, f"elastic.rest2.{n}") == parts


def test_sampler_commit_shares_progress_without_repartitioning():
    """A commit (or host check) tells every rank what the others processed
    (a rank that dies later leaves nothing to redo); the current partition
    stays as it is."""
    n, batch = 40, 2
    sampler = ElasticSampler(range(n), seed=3)
    state = TorchState(sampler=sampler, epoch=0)
    mine = list(sampler)
    everyone = set()
    for step in range(2):
        batches = [2 * step + b for b in range(min(hvd.rank() + 1, 2))]  # ranks differ
        for b in batches:
            sampler.record_batch(b, batch)
        state.commit()
        recorded = hvd.allgather_object({i for b in batches for i in sampler.get_indices(b, batch)},
                                        name=f"elastic.recorded.{step}")
        everyone |= set().union(*recorded)
        assert sampler.processed_indices >= everyone
        assert list(sampler) == mine and sampler.get_indices(0, batch) == mine[:batch]
    assert sampler.processed_indices == everyone
    sampler.record_batch(4 + hvd.rank(), batch)  # a host check shares progress too
    state.check_host_updates()
    recorded = hvd.allgather_object(set(sampler.get_indices(4 + hvd.rank(), batch)),
                                    name="elastic.recorded.check")
    assert sampler.processed_indices == everyone | set().union(*recorded)
    assert list(sampler) == mine
    sampler.set_epoch(1)
    sampler.record_batch(0, batch)
    state.commit()  # a new epoch: only its own progress is shared
    firsts = hvd.allgather_object(set(sampler.get_indices(0, batch)), name="elastic.epoch1")
    assert sampler.processed_indices == set().union(*firsts)


def test_sampler_ranks_agree_after_restore_and_reset_without_sync():
    """After hosts were only removed run() skips the sync: what the last
    commit shared is enough for the ranks to agree on what is left."""
    n, batch = 30, 2
    sampler = ElasticSampler(range(n), seed=9)
    model, optimizer = make_trained(seed=0)
    state = TorchState(model, optimizer, sampler=sampler, epoch=0)
    for b in range(hvd.rank() + 1):  # ranks differ
        sampler.record_batch(b, batch)
    state.commit()
    committed = set(sampler.processed_indices)
    sampler.record_batch(hvd.rank() + 1, batch)  # not committed
    state.restore()
    assert sampler.processed_indices == committed
    state.on_reset()
    everyone = hvd.allgather_object(committed, name="elastic.committed")
    assert all(theirs == committed for theirs in everyone)
    assert len(committed) == batch * sum(range(1, hvd.size() + 1))
    check_spread(gather_partitions(sampler, "elastic.after_reset"),
                 sorted(set(range(n)) - committed), hvd.size())


def test_reset_hook_is_local():
    """Workers that join in a new round start with sync() and never reset,
    so TorchState.reset must not communicate: here only rank 0 resets."""
    model, optimizer = make_trained(seed=0)
    sampler = ElasticSampler(range(10))
    state = TorchState(model, optimizer, sampler=sampler, epoch=0)
    if hvd.rank() == 0:
        state.on_reset()
    assert engine_works()


def test_sampler_pads_from_the_few_samples_left():
    n = 11
    sampler = ElasticSampler(range(n), seed=4)
    state = TorchState(sampler=sampler)
    if hvd.rank() == 0:
        sampler.record_indices(range(1, n))  # only sample 0 left
    state.sync()
    assert list(sampler) == [0] and len(sampler) == 1
    if hvd.rank() == 0:
        sampler.record_indices([0])
    state.sync()
    assert list(sampler) == [] and len(sampler) == 0


def test_sampler_drives_a_dataloader():
    n = 14
    dataset = torch.utils.data.TensorDataset(torch.arange(n))
    sampler = ElasticSampler(dataset, seed=6)
    loader = torch.utils.data.DataLoader(dataset, batch_size=3, sampler=sampler)
    assert len(loader) == math.ceil(len(sampler) / 3)
    seen = [int(i) for (x,) in loader for i in x]
    assert seen == list(sampler)
    for b in range(len(loader)):
        assert sampler.get_indices(b, 3) == seen[3 * b:3 * b + 3]


# --- everything together ------------------------------------------------------------

def test_run_epoch_with_resets_processes_every_sample_once():
    """A data-parallel epoch under run() with three resets: hosts removed
    (sync skipped), a failed collective (back to the last commit) and hosts
    added. Every sample's committed processing happens exactly once."""
    n, batch = 10 * hvd.size(), 2
    dataset = torch.utils.data.TensorDataset(torch.arange(n, dtype=torch.float32))
    sampler = ElasticSampler(dataset, seed=11)
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch, sampler=sampler)
    torch.manual_seed(0)
    model = torch.nn.Linear(1, 1)
    optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.01),
                                         named_parameters=model.named_parameters())
    state = TorchState(model, optimizer, sampler=sampler, epoch=0)
    committed_samples, pending = [], []
    state.register_reset_callbacks([pending.clear])  # uncommitted work is undone
    calls = []

    @hvd.elastic.run
    def train(state):
        calls.append(len(sampler))
        for i, (x,) in enumerate(loader):
            optimizer.zero_grad()
            model(x.unsqueeze(1)).pow(2).mean().backward()
            optimizer.step()
            state.sampler.record_batch(i, batch)
            pending.extend(int(v) for v in x)
            if len(calls) == 2 and i == 0:
                raise hvd.KoloInternalError("simulated failure before the commit")
            state.commit()
            committed_samples.extend(pending)
            pending.clear()
            if len(calls) == 1 and i == 1:
                raise hvd.elastic.HostsUpdatedInterrupt(skip_sync=True)
            if len(calls) == 3 and i == 1:
                raise hvd.elastic.HostsUpdatedInterrupt(skip_sync=False)
        return "done"

    assert train(state) == "done"
    assert calls == [10, 6, 6, 2]  # samples left per rank at each attempt
    everyone = hvd.allgather_object(committed_samples, name="elastic.e2e.samples")
    counts = collections.Counter(i for mine in everyone for i in mine)
    assert counts == collections.Counter(range(n))
    weights = hvd.allgather_object(model.state_dict(), name="elastic.e2e.weights")
    for theirs in weights:
        assert_same(theirs, weights[0])
    assert engine_works()
