"""Shared by the elastic multirank tests (test_elastic_state.py,
test_elastic_sampler.py): models, comparisons and call counters."""

import collections

import torch

import kolo.torch as hvd
from torch_compare import assert_same  # noqa: F401  (re-exported to the elastic tests)


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
