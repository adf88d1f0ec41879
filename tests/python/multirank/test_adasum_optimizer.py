"""DistributedOptimizer(op=hvd.Adasum), Horovod's delta optimizer: every
rank steps the wrapped optimizer on its own gradients, and the parameters'
changes are combined with Adasum. The reference here replays each rank's
local step on a copy (with that rank's own optimizer state) and combines the
changes with a serial Adasum written from the formula."""

import copy

import numpy as np
import pytest
import torch

import kolo.torch as hvd

SIZE = hvd.size()
POWER_OF_TWO = SIZE & (SIZE - 1) == 0
needs_power_of_two = pytest.mark.skipif(
    not POWER_OF_TWO, reason=f"Adasum runs on a power-of-two number of ranks, not {SIZE}")


def reference_adasum(vectors):
    if len(vectors) == 1:
        return vectors[0]
    mid = len(vectors) // 2
    a, b = reference_adasum(vectors[:mid]), reference_adasum(vectors[mid:])
    dot, aa, bb = float(a @ b), float(a @ a), float(b @ b)
    ca = 1 - dot / (2 * aa) if aa >= 1e-8 else 1.0
    cb = 1 - dot / (2 * bb) if bb >= 1e-8 else 1.0
    return ca * a + cb * b


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(4, 3)
        self.fc2 = torch.nn.Linear(3, 1)
        self.unused = torch.nn.Parameter(torch.ones(2))  # never gets a gradient

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def batch(rank, step):
    g = torch.Generator().manual_seed(1000 * step + rank)
    return torch.randn(8, 4, generator=g), torch.randn(8, 1, generator=g)


def make_sgd(model):
    return torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)


def loss_of(model, rank, step):
    x, y = batch(rank, step)
    return torch.nn.functional.mse_loss(model(x), y)


@needs_power_of_two
def test_steps_match_the_serial_reference():
    torch.manual_seed(7)
    model = Model()
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    # One copy and one optimizer per rank: each rank's momentum is its own.
    replicas = [copy.deepcopy(model) for _ in range(SIZE)]
    replica_opts = [make_sgd(m) for m in replicas]
    optimizer = hvd.DistributedOptimizer(make_sgd(model), named_parameters=model.named_parameters(),
                                         op=hvd.Adasum)
    names = [name for name, _ in model.named_parameters()]
    for step in range(3):
        before = {n: p.detach().clone() for n, p in model.named_parameters()}
        deltas = {n: [] for n in names}
        for r, (replica, opt) in enumerate(zip(replicas, replica_opts)):
            with torch.no_grad():
                for n, p in replica.named_parameters():
                    p.copy_(before[n])
            opt.zero_grad()
            loss_of(replica, r, step).backward()
            opt.step()
            for n, p in replica.named_parameters():
                deltas[n].append((p.detach() - before[n]).double().numpy().ravel())

        optimizer.zero_grad()
        loss_of(model, hvd.rank(), step).backward()
        optimizer.step()

        for n, p in model.named_parameters():
            want = before[n].double().numpy().ravel() + reference_adasum(deltas[n])
            got = p.detach().double().numpy().ravel()
            assert np.allclose(got, want, rtol=1e-5, atol=1e-6), (n, step, got, want)
        assert torch.equal(model.unused, torch.ones(2))
    # Every rank holds the same model.
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    gathered = hvd.allgather(flat.reshape(1, -1), name="adasum.opt.same")
    assert (gathered == gathered[0]).all()


@needs_power_of_two
def test_horovod_rules_of_the_delta_optimizer():
    if SIZE == 1:
        pytest.skip("with one rank Horovod returns the plain DistributedOptimizer")
    model = Model()
    optimizer = hvd.DistributedOptimizer(make_sgd(model), named_parameters=model.named_parameters(),
                                         op=hvd.Adasum)
    assert isinstance(optimizer, torch.optim.SGD)
    with pytest.raises(AssertionError, match="Skipping synchronization is not supported"):
        with optimizer.skip_synchronize():
            pass
    loss_of(model, hvd.rank(), 0).backward()
    with pytest.raises(AssertionError, match="zero_grad"):
        optimizer.zero_grad()
    optimizer.synchronize()  # nothing to do: deltas are applied in step()
    optimizer.step()
    optimizer.zero_grad()
    with pytest.raises(ValueError, match="gradient_predivide_factor"):
        hvd.DistributedOptimizer(make_sgd(model), named_parameters=model.named_parameters(),
                                 op=hvd.Adasum, gradient_predivide_factor=2.0)


def test_non_power_of_two_is_refused_as_horovod_does():
    if POWER_OF_TWO:
        pytest.skip(f"{SIZE} ranks is a power of two")
    model = Model()
    with pytest.raises(NotImplementedError, match="non-power of 2 ranks"):
        hvd.DistributedOptimizer(make_sgd(model), named_parameters=model.named_parameters(),
                                 op=hvd.Adasum)
