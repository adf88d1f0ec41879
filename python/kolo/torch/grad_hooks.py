"""Hooks that tell a distributed optimizer when backward has produced a
parameter's gradient (the AccumulateGrad node's post-hook), shared by the
averaging and the Adasum DistributedOptimizer."""

import weakref

import torch


def register_grad_hooks(optimizer, params):
    """Calls optimizer._on_grad_ready(p) each time backward has accumulated
    p's gradient. Returns the accumulator nodes, which the optimizer must
    keep (a parameter holds them only weakly); the hooks hold the optimizer
    weakly, so a discarded optimizer stops reacting."""
    me = weakref.ref(optimizer)
    accumulators = []
    with torch.enable_grad():
        for p in params:
            acc = p.expand_as(p).grad_fn.next_functions[0][0]
            acc.register_hook(_make_hook(me, p))
            accumulators.append(acc)
    return accumulators


def _make_hook(optimizer_ref, p):
    def hook(*_):
        optimizer = optimizer_ref()
        if optimizer is not None:
            optimizer._on_grad_ready(p)
    return hook
