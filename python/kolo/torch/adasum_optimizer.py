"""DistributedOptimizer(op=Adasum): Horovod's delta optimizer.

With Adasum the ranks do not combine gradients. Each rank applies the wrapped
optimizer to its own gradient of one parameter, takes the change this local
step made to the parameter (the "delta"), and the deltas are combined with
Adasum; the parameter becomes its value before the step plus the combined
delta. Adasum's pairwise combination then sees what the optimizer would do
(momentum, Adam's scaling), which is what its orthogonality test is about.

As in Horovod, each parameter is stepped and sent as soon as backward has
produced its gradient (a hook on its gradient accumulator), step() waits for
the combined deltas and writes them back, and synchronize() has nothing to
do. The parameter's own storage carries the delta while it is being
reduced, so the model must not be read between backward and step().
"""

import contextlib

import torch

from kolo.common.reduce_ops import Adasum
from kolo.torch.async_ops import allreduce_async_, synchronize
from kolo.torch.grad_hooks import register_grad_hooks

# Horovod's words: code written for Horovod checks for this error.
_NO_SKIP = "Skipping synchronization is not supported when using Adasum optimizer."


class _DistributedAdasumOptimizer(torch.optim.Optimizer):
    """Mixed in before the wrapped optimizer's class (see DistributedOptimizer)."""

    def __init__(self, params, parameter_names, compression, backward_passes_per_step,
                 messages):
        super().__init__(params)
        self._compression = compression
        self._parameter_names = parameter_names
        self._messages = messages  # the errors the plain DistributedOptimizer raises too
        self.backward_passes_per_step = backward_passes_per_step
        self._trained = [p for group in self.param_groups for p in group["params"]
                         if p.requires_grad]
        self._passes_left = {p: backward_passes_per_step for p in self._trained}
        # The parameter's value before the local step of this iteration.
        self._starts = {p: torch.zeros_like(p, requires_grad=False) for p in self._trained}
        self._in_flight = {}  # parameter -> (handle, compression context)
        self._grad_accs = register_grad_hooks(self, self._trained)

    def _on_grad_ready(self, p):
        if self._passes_left[p] <= 0:
            raise AssertionError(self._messages["too_many_passes"])
        self._passes_left[p] -= 1
        if self._passes_left[p] == 0:
            self._in_flight[p] = self._reduce_delta(p)

    def _step_only(self, p):
        """The wrapped optimizer's step() on `p` alone (its state, its group's
        hyperparameters)."""
        saved = [group["params"] for group in self.param_groups]
        try:
            for group in self.param_groups:
                group["params"] = [p] if any(q is p for q in group["params"]) else []
            super().step()
        finally:
            for group, params in zip(self.param_groups, saved):
                group["params"] = params

    def _reduce_delta(self, p):
        # .data: the parameter's storage, outside autograd's version checks
        # (backward may still hold the parameter for other nodes, as in Horovod).
        start = self._starts[p]
        start.copy_(p.data)
        self._step_only(p)
        p.data.sub_(start)
        tensor, ctx = self._compression.compress(p.data)
        handle = allreduce_async_(tensor, name=f"allreduce.{self._parameter_names[p]}",
                                  op=Adasum)
        return handle, ctx

    def _finish_in_flight(self):
        try:
            for p, (handle, ctx) in self._in_flight.items():
                delta = self._compression.decompress(synchronize(handle), ctx)
                start = self._starts[p]
                start.add_(delta)
                p.data.copy_(start)
        finally:
            self._in_flight.clear()
            for p in self._passes_left:
                self._passes_left[p] = self.backward_passes_per_step

    def step(self, closure=None):
        """Steps and sends the parameters backward has not (fewer passes than
        backward_passes_per_step, or no gradient: their delta is zero), then
        applies every combined delta."""
        loss = closure() if closure is not None else None
        for p in self._trained:
            if p not in self._in_flight:
                self._in_flight[p] = self._reduce_delta(p)
        self._finish_in_flight()
        return loss

    def synchronize(self):
        """Nothing to wait for before step(): the deltas are applied there."""

    @contextlib.contextmanager
    def skip_synchronize(self):
        raise AssertionError(_NO_SKIP)
        yield  # pragma: no cover (makes this a generator, as the context manager needs)

    def zero_grad(self, *args, **kwargs):
        if self._in_flight:
            raise AssertionError(self._messages["zero_grad_in_flight"])
        return super().zero_grad(*args, **kwargs)

    def set_backward_passes_per_step(self, passes):
        self.backward_passes_per_step = passes
        for p in self._passes_left:
            self._passes_left[p] = passes

    def load_state_dict(self, *args, **kwargs):
        """Deltas in flight are applied first: the engine must not write into
        the parameters afterwards."""
        self._finish_in_flight()
        return super().load_state_dict(*args, **kwargs)


def adasum_optimizer_class(base):
    """The class DistributedOptimizer(op=Adasum) instantiates for `base`."""
    return type(base.__name__, (_DistributedAdasumOptimizer, base), {})
