"""hvd.elastic on every rank of a plain kolorun job (-np 2 and -np 3): the
job is not elastic, so no host updates arrive by themselves; the tests
raise KoloInternalError and HostsUpdatedInterrupt from the training
function, at the same call on every rank, to drive run()'s retries (each a
real shutdown and init of the engine).

States start from rank-dependent values, so a sync that did not happen,
or came from the wrong rank, shows."""

import collections
import copy
import math

import pytest
import torch

import kolo.torch as hvd
from kolo.common.runtime import runtime
from kolo.elastic import ObjectState, State
from kolo.torch.elastic import ElasticSampler, TorchState

hvd.init()


def make_model(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.BatchNorm1d(5),
                               torch.nn.Linear(5, 2))


def local_step(model, optimizer, seed):
    """One training step without collectives (plain optimizers)."""
    torch.manual_seed(1000 + seed)
    optimizer.zero_grad()
    model(torch.randn(6, 4)).pow(2).mean().backward()
    optimizer.step()


def make_trained(seed):
    """A model and SGD-with-momentum optimizer that took one step: both
    depend on `seed` (weights, running stats, momentum buffers)."""
    model = make_model(seed)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    local_step(model, optimizer, seed)
    return model, optimizer


def assert_same(a, b, path="obj"):
    """Recursive equality: same structure and types, bitwise-equal tensors."""
    assert type(a) is type(b), f"{path}: {type(a)} != {type(b)}"
    if isinstance(a, torch.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape, path
        assert torch.equal(a, b), path
    elif isinstance(a, dict):
        assert list(a) == list(b), path
        for k in a:
            assert_same(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{path}[{i}]")
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def differs(a, b):
    try:
        assert_same(a, b)
    except AssertionError:
        return True
    return False


def counting(cls):
    """A subclass of a State class that counts sync/restore/reset calls."""

    class Counting(cls):
        def sync(self):
            self.counts["sync"] += 1
            super().sync()

        def restore(self):
            self.counts["restore"] += 1
            super().restore()

        def reset(self):
            self.counts["reset"] += 1
            super().reset()

    def make(*args, **kwargs):
        state = Counting(*args, **kwargs)
        state.counts = collections.Counter()
        return state

    return make


def engine_works():
    out = hvd.allreduce(torch.ones(2), op=hvd.Sum, name="elastic.engine_works")
    return torch.equal(out, torch.full((2,), float(hvd.size())))


# --- names --------------------------------------------------------------------------

def test_elastic_is_reachable_from_both_packages():
    import sys

    import horovod.torch
    import kolo.elastic
    import kolo.torch.elastic

    assert hvd.elastic is kolo.torch.elastic
    assert horovod.torch.elastic is sys.modules["horovod.torch.elastic"]
    for module in (hvd.elastic, horovod.torch.elastic):
        assert module.TorchState is TorchState and module.ElasticSampler is ElasticSampler
        assert module.run is kolo.elastic.run
        assert module.ObjectState is ObjectState and module.State is State
        assert module.HostsUpdatedInterrupt is hvd.HostsUpdatedInterrupt
        for name in module.__all__:
            assert hasattr(module, name), name
    assert "elastic" in hvd.__all__ and "elastic" in horovod.torch.__all__
    assert set(kolo.elastic.__all__) <= set(hvd.elastic.__all__)


# --- ObjectState --------------------------------------------------------------------

def test_object_state_commit_and_restore():
    state = ObjectState(epoch=0, batch=0, history=[])
    state.batch = 5
    state.history.append("a")
    state.commit()
    state.epoch, state.batch = 3, 9
    state.history.append("b")
    state.restore()
    assert (state.epoch, state.batch, state.history) == (0, 5, ["a"])
    state.history.append("c")  # restore hands out copies: the saved list stays intact
    state.restore()
    assert state.history == ["a"]


def test_object_state_sync_gives_every_rank_rank0s_saved_values():
    state = ObjectState(epoch=10 + hvd.rank(), tag=f"rank{hvd.rank()}")
    state.epoch = 100  # not saved: sync sends saved values
    state.sync()
    assert (state.epoch, state.tag) == (10, "rank0")
    state.epoch = 7
    state.restore()  # the synced values are the saved ones now
    assert state.epoch == 10


def test_object_state_refuses_names_that_hide_methods():
    with pytest.raises(ValueError, match="commit"):
        ObjectState(commit=1)
    with pytest.raises(ValueError, match="_private"):
        ObjectState(_private=1)
    with pytest.raises(ValueError, match="restore"):
        TorchState(restore=1)


def test_reset_callbacks_run_in_registration_order_after_reset_hook():
    calls = []

    class Recording(ObjectState):
        def reset(self):
            calls.append("reset")

    state = Recording(x=1)
    state.register_reset_callbacks([lambda: calls.append("a"), lambda: calls.append("b")])
    state.register_reset_callbacks([lambda: calls.append("c")])
    state.on_reset()
    assert calls == ["reset", "a", "b", "c"]
    state.on_reset()
    assert calls == ["reset", "a", "b", "c"] * 2


def test_state_is_abstract():
    with pytest.raises(TypeError):
        State()


def test_host_updates_outside_an_elastic_job_are_none():
    assert not runtime().is_elastic()
    assert runtime().check_host_updates() is None
    state = ObjectState(x=1)
    assert state.check_host_updates() is None
    state.x = 2
    state.commit()  # saves, raises nothing
    state.x = 3
    state.restore()
    assert state.x == 2


@pytest.mark.parametrize("changes, skip_sync", [
    ({"removed"}, True), ({"added"}, False), ({"added", "removed"}, False)])
def test_host_updates_become_interrupts(monkeypatch, changes, skip_sync):
    monkeypatch.setattr(runtime(), "check_host_updates", lambda: set(changes))
    state = ObjectState(x=1)
    state.x = 2
    with pytest.raises(hvd.elastic.HostsUpdatedInterrupt) as info:
        state.commit()
    assert info.value.skip_sync is skip_sync
    state.x = 3
    state.restore()
    assert state.x == 2  # commit saved before it checked


# --- TorchState ---------------------------------------------------------------------

@pytest.mark.parametrize("wrap", ["plain", "distributed"])
def test_torch_state_restores_model_and_optimizer(wrap):
    model, optimizer = make_trained(seed=hvd.rank())
    if wrap == "distributed":
        optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters())
    state = TorchState(model, optimizer, epoch=1, batch=0)
    assert state.model is model and state.optimizer is optimizer

    def snapshot():
        return copy.deepcopy((model.state_dict(), optimizer.state_dict(), state.epoch))

    committed = snapshot()
    for seed in (1, 2):
        local_step(model, optimizer, seed)  # DistributedOptimizer: same collectives on all ranks
    optimizer.param_groups[0]["lr"] = 0.5
    state.epoch = 3
    assert differs(snapshot(), committed)
    state.restore()
    assert_same(snapshot(), committed)
    assert optimizer.param_groups[0]["lr"] == 0.1

    local_step(model, optimizer, 3)
    state.epoch = 2
    state.commit()
    committed = snapshot()
    local_step(model, optimizer, 4)
    state.epoch = 9
    state.restore()
    assert_same(snapshot(), committed)


def test_torch_state_sync_overwrites_other_ranks_with_rank0():
    model, optimizer = make_trained(seed=hvd.rank())
    state = TorchState(model, optimizer, epoch=hvd.rank(), batch=5 * hvd.rank())
    before = hvd.allgather_object(model.state_dict(), name="elastic.before")
    if hvd.size() > 1:
        assert differs(before[0], before[1])
    state.sync()
    reference_model, reference_optimizer = make_trained(seed=0)
    assert_same(model.state_dict(), reference_model.state_dict())
    assert_same(optimizer.state_dict(), reference_optimizer.state_dict())
    assert (state.epoch, state.batch) == (0, 0)
    everyone = hvd.allgather_object((model.state_dict(), optimizer.state_dict()),
                                    name="elastic.after")
    for theirs in everyone:
        assert_same(theirs, everyone[0])
    # sync also made rank 0's values the ones a restore goes back to
    local_step(model, optimizer, 7)
    state.restore()
    assert_same(model.state_dict(), reference_model.state_dict())
    assert_same(optimizer.state_dict(), reference_optimizer.state_dict())


def test_torch_state_attributes():
    model, optimizer = make_trained(seed=0)
    state = TorchState(model=model, optimizer=optimizer, epoch=1, batch=0)
    visited = []
    for state.epoch in range(state.epoch, 3):
        visited.append(state.epoch)
    assert visited == [1, 2] and state.epoch == 2

    # a new model assigned to state.model is what save/restore work on from then on
    other = make_model(seed=5)
    state.model = other
    assert state.model is other
    kept = copy.deepcopy(other.state_dict())
    with torch.no_grad():
        for p in other.parameters():
            p.add_(1.0)
    state.restore()
    assert_same(other.state_dict(), kept)
    with pytest.raises(TypeError, match="Module"):
        state.model = 42

    empty = TorchState(epoch=0)
    assert empty.model is None and empty.optimizer is None
    assert "epoch" in repr(empty)


# --- run() --------------------------------------------------------------------------

def test_run_passes_arguments_and_returns_the_result():
    state = counting(ObjectState)(value=hvd.rank())

    @hvd.elastic.run
    def train(state, a, b=0):
        """Docstring kept."""
        return state.value, a, b

    assert train(state, 1, b=2) == (0, 1, 2)  # synced before the first call
    assert train.__doc__ == "Docstring kept." and train.__name__ == "train"
    assert state.counts == {"sync": 1}


def test_run_retries_after_internal_error():
    model, optimizer = make_trained(seed=hvd.rank())
    state = counting(TorchState)(model, optimizer, epoch=0, value=hvd.rank())
    resets = []
    state.register_reset_callbacks([lambda: resets.append(("first", hvd.size())),
                                    lambda: resets.append(("second", hvd.size()))])
    engine_before = runtime().engine()
    size_before, rank_before = hvd.size(), hvd.rank()
    calls, committed = [], {}

    @hvd.elastic.run
    def train(state):
        calls.append((state.epoch, state.value, copy.deepcopy(state.model.state_dict())))
        if len(calls) == 1:
            local_step(state.model, state.optimizer, 1)
            state.epoch, state.value = 1, 42
            state.commit()
            committed["model"] = copy.deepcopy(state.model.state_dict())
            committed["optimizer"] = copy.deepcopy(state.optimizer.state_dict())
            local_step(state.model, state.optimizer, 2)  # lost in the failure
            state.epoch, state.value = 2, 99
            raise hvd.KoloInternalError("simulated failure of a collective")
        return state.epoch, state.value

    assert train(state) == (1, 42)
    assert len(calls) == 2
    reference, _ = make_trained(seed=0)
    assert calls[0][:2] == (0, 0)  # the first sync gave everyone rank 0's values
    assert_same(calls[0][2], reference.state_dict())
    assert calls[1][:2] == (1, 42)
    assert_same(calls[1][2], committed["model"])  # the model came back to the commit
    assert_same(model.state_dict(), committed["model"])
    assert_same(optimizer.state_dict(), committed["optimizer"])
    assert state.counts == {"sync": 2, "restore": 1, "reset": 1}
    assert resets == [("first", size_before), ("second", size_before)]
    assert runtime().engine() is not engine_before  # a new engine joined the (same) world
    assert (hvd.size(), hvd.rank()) == (size_before, rank_before)
    assert engine_works()


@pytest.mark.parametrize("skip_sync", [True, False])
def test_run_after_hosts_updated_syncs_unless_skipped(skip_sync):
    state = counting(ObjectState)(value=hvd.rank())
    resets = []
    state.register_reset_callbacks([lambda: resets.append(hvd.size())])
    engine_before = runtime().engine()
    calls = []

    @hvd.elastic.run
    def train(state):
        calls.append(state.value)
        if len(calls) == 1:
            state.value = 10 + hvd.rank()
            state.commit()
            raise hvd.elastic.HostsUpdatedInterrupt(skip_sync=skip_sync)
        return state.value

    result = train(state)
    assert calls[0] == 0
    if skip_sync:
        assert result == 10 + hvd.rank()  # every rank kept its own committed value
        assert state.counts == {"sync": 1, "reset": 1}
    else:
        assert result == 10  # rank 0's
        assert state.counts == {"sync": 2, "reset": 1}
    assert resets == [hvd.size()]
    assert runtime().engine() is not engine_before
    assert engine_works()


def test_run_exits_cleanly_when_the_worker_is_removed(monkeypatch, capsys):
    def removed(*args, **kwargs):
        raise hvd.elastic.WorkerRemovedError("its host left the discovered set")

    state = counting(ObjectState)(value=1)
    monkeypatch.setattr(runtime(), "init", removed)

    @hvd.elastic.run
    def train(state):
        raise hvd.elastic.HostsUpdatedInterrupt(skip_sync=True)

    with pytest.raises(SystemExit) as info:
        train(state)
    assert info.value.code == 0
    assert ("kolo: this worker left the elastic job: its host left the discovered set\n"
            in capsys.readouterr().err)
    assert not hvd.is_initialized()
    assert state.counts["reset"] == 0  # no round joined, nothing reset
    monkeypatch.undo()
    hvd.init()
    assert engine_works()


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
