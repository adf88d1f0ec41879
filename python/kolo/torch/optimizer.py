"""DistributedOptimizer: Horovod's wrapper that combines gradients over the
ranks of a process set before the wrapped optimizer applies them.

Each parameter's gradient accumulator gets a hook, so the reduction of a
gradient starts the moment backward has produced it and overlaps with the
rest of backward; step() (or synchronize()) only waits for what is still in
flight. Every reduction is named after its parameter, so ranks may finish
backward in different orders and the engine still pairs the right tensors.
"""

import contextlib
import warnings

import torch

from kolo.common.basics import global_process_set
from kolo.common.grouping import split_evenly
from kolo.common.process_sets import ProcessSet
from kolo.common.reduce_ops import Adasum, Average, Sum, resolve_op
from kolo.common.runtime import runtime
from kolo.torch.async_ops import allreduce_async_, grouped_allreduce_async_, synchronize
from kolo.torch.compression import Compression
from kolo.torch.functions import broadcast_object
from kolo.torch.grad_hooks import register_grad_hooks
from kolo.torch.sparse_ops import sparse_allreduce_async

_TOO_MANY_PASSES = ("kolo: backward ran more often than backward_passes_per_step allows before "
                    "step(); raise backward_passes_per_step to accumulate more passes locally")
_ZERO_GRAD_IN_FLIGHT = ("kolo: optimizer.zero_grad() while gradients are still being reduced "
                        "(after backward, before step() or synchronize()) would race with the "
                        "reduction; call step() or synchronize() first")
# Horovod's words: code written for Horovod filters or checks this warning by its text.
_STEP_AFTER_SYNCHRONIZE = ("optimizer.step() called without optimizer.skip_synchronize() "
                           "context after optimizer.synchronize(). This can cause training "
                           "slowdown. You may want to consider using "
                           "optimizer.skip_synchronize() context if you use "
                           "optimizer.synchronize() in your code.")


# --- validation ----------------------------------------------------------------

def _parameter_names(named_parameters, param_groups):
    """{param: name} for every parameter; Horovod's errors for bad names."""
    if named_parameters is None:
        return {p: f"allreduce.noname.{i}.{j}"
                for i, group in enumerate(param_groups) for j, p in enumerate(group["params"])}
    named_parameters = list(named_parameters)
    if any(not isinstance(item, tuple) for item in named_parameters):
        raise ValueError("kolo: named_parameters must be (name, parameter) tuples, as "
                         "model.named_parameters() yields")
    seen, dups = set(), set()
    for name, _ in named_parameters:
        (dups if name in seen else seen).add(name)
    if dups:
        raise ValueError("kolo: names in named_parameters must be unique; repeated: "
                         + ", ".join(sorted(str(d) for d in dups)))
    named_ids = {id(p) for _, p in named_parameters}
    unnamed = [p for group in param_groups for p in group["params"] if id(p) not in named_ids]
    if unnamed:
        raise ValueError("kolo: named_parameters leaves some of the optimizer's parameters "
                         "unnamed (Python object ids: "
                         + ", ".join(str(id(p)) for p in unnamed) + ")")
    return {p: str(name) for name, p in named_parameters}


def _check_groups(groups):
    if groups is None:
        return
    if isinstance(groups, list):
        seen = set()
        for group in groups:
            for p in group:
                if not isinstance(p, torch.Tensor):
                    raise ValueError("kolo: groups must hold torch.Tensor parameters")
                if id(p) in seen:
                    raise ValueError("kolo: a parameter appears in more than one group")
                seen.add(id(p))
    elif isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0:
        raise ValueError("kolo: groups must be a positive integer or a list of lists of "
                         "parameters")


# --- reductions in flight --------------------------------------------------------

class _DenseReduction:
    """One allreduce (or one grouped allreduce) of dense gradients, written
    back into p.grad when finished (the engine keeps what it reads alive)."""

    def __init__(self, params, ctxs, handle, grouped, compression):
        self.params, self.ctxs = params, ctxs
        self.handle, self.grouped, self.compression = handle, grouped, compression

    def finish(self):
        outputs = synchronize(self.handle)
        if not self.grouped:
            outputs = [outputs]
        for p, output, ctx in zip(self.params, outputs, self.ctxs):
            result = self.compression.decompress(output, ctx)
            if p.grad.is_sparse:  # sparse_as_dense: the optimizer expects a sparse gradient
                p.grad.zero_().add_(result.to_sparse(p.grad.sparse_dim()))
            elif result is not p.grad:
                p.grad.set_(result)


class _SparseReduction:
    """Horovod's sparse allreduce of one sparse gradient (sparse_ops): every
    rank's (indices, values) allgathered; the optimizer gets the sum."""

    def __init__(self, p, name, op, process_set):
        self.p = p
        self.handle = sparse_allreduce_async(p.grad, name=f"sparse_allreduce.{name}", op=op,
                                             process_set=process_set)

    def finish(self):
        self.p.grad.zero_().add_(self.handle())


# --- the optimizer ------------------------------------------------------------------

class _DistributedOptimizer(torch.optim.Optimizer):
    """Mixed in before the wrapped optimizer's class (see DistributedOptimizer)."""

    def __init__(self, params, named_parameters, compression, backward_passes_per_step, op,
                 gradient_predivide_factor, groups, sparse_as_dense, process_set):
        super().__init__(params)
        self._compression = compression
        # {parameter: name}, under Horovod's attribute name (code written for
        # Horovod reads it).
        self._parameter_names = _parameter_names(named_parameters, self.param_groups)
        self.backward_passes_per_step = backward_passes_per_step
        self.op = op
        self.gradient_predivide_factor = gradient_predivide_factor
        self.sparse_as_dense = sparse_as_dense
        self.process_set = process_set

        # As in Horovod, a rank outside the process set gets a plain
        # optimizer: no hooks, nothing reduced, step() applies its own
        # gradients.
        self._member = process_set.included()
        self._trained = [p for group in self.param_groups for p in group["params"]
                         if p.requires_grad and self._member]
        self._units = self._form_units(groups)
        self._unit_of = {p: unit for unit in self._units for p in unit}
        self._passes_left = {p: backward_passes_per_step for p in self._trained}
        self._ready_in_unit = {unit: 0 for unit in self._units}
        self._reductions = {}  # unit -> reduction in flight
        self._synchronized = False
        self._should_synchronize = True
        self._grad_accs = register_grad_hooks(self, self._trained)

    # --- setup ---------------------------------------------------------------

    def _form_units(self, groups):
        """The tuples of parameters reduced together: singletons without
        groups; otherwise groups formed over rank 0's parameter order, so
        every rank builds the same ones."""
        if groups is None or not self._member:
            return [(p,) for p in self._trained]
        names = broadcast_object([self._parameter_names[p] for p in self._trained],
                                 root_rank=self.process_set.ranks[0],
                                 name="DistributedOptimizer.parameter_order",
                                 process_set=self.process_set)
        order = {name: i for i, name in enumerate(names)}
        if set(order) != {self._parameter_names[p] for p in self._trained}:
            raise ValueError("kolo: DistributedOptimizer(groups=...) needs the same trainable "
                             "parameter names on every rank")
        trained = sorted(self._trained, key=lambda p: order[self._parameter_names[p]])
        if isinstance(groups, int):
            runs = split_evenly(trained, groups)
        else:
            trained_ids = {id(p) for p in trained}
            runs = [[p for p in group if id(p) in trained_ids] for group in groups]
            grouped = {id(p) for run in runs for p in run}
            runs += [[p] for p in trained if id(p) not in grouped]
        return [tuple(run) for run in runs if run]


    # --- reductions ----------------------------------------------------------

    def _set_size(self):
        if self.process_set.process_set_id == 0:
            return runtime().engine().size
        return self.process_set.size()

    def _on_grad_ready(self, p):
        if self._set_size() == 1:
            return  # as in Horovod, one rank is the plain optimizer: no counting, no checks
        if self._passes_left[p] <= 0:
            raise AssertionError(_TOO_MANY_PASSES)
        self._passes_left[p] -= 1
        if self._passes_left[p] > 0:
            return
        unit = self._unit_of[p]
        self._ready_in_unit[unit] += 1
        if self._ready_in_unit[unit] == len(unit):
            self._launch(unit)

    def _launch(self, unit):
        for p in unit:
            if p.grad is None:
                # Unused here, but another rank may have a gradient for it:
                # every rank must submit the same reductions.
                p.grad = torch.zeros_like(p)
        if len(unit) == 1 and unit[0].grad.is_sparse and not self.sparse_as_dense:
            p = unit[0]
            if self.op not in (Average, Sum):
                raise ValueError(f"kolo: the sparse gradient of {self._parameter_names[p]!r} can "
                                 "only be averaged or summed; use sparse_as_dense=True for other "
                                 "ops")
            reduction = _SparseReduction(p, self._parameter_names[p], self.op, self.process_set)
        else:
            reduction = self._dense_reduction(unit)
        self._reductions[unit] = reduction

    def _dense_reduction(self, unit):
        sent, ctxs = [], []
        for p in unit:
            grad = p.grad
            if grad.is_sparse:
                if not self.sparse_as_dense:
                    raise ValueError(f"kolo: the sparse gradient of {self._parameter_names[p]!r} "
                                     "cannot be reduced in a group; pass sparse_as_dense=True "
                                     "or leave the parameter out of groups")
                grad = grad.to_dense()
            elif not grad.is_contiguous():
                grad = grad.contiguous()
            tensor, ctx = self._compression.compress(grad)
            sent.append(tensor)
            ctxs.append(ctx)
        # Average = sum * prescale * postscale / size; predivision moves part
        # of the 1/size before the sum to keep low-precision sums in range.
        scale = {}
        if self.op == Average:
            scale = dict(prescale_factor=1.0 / self.gradient_predivide_factor,
                         postscale_factor=self.gradient_predivide_factor)
        name = self._parameter_names[unit[0]]
        if len(unit) == 1:
            handle = allreduce_async_(sent[0], name=f"allreduce.{name}", op=self.op,
                                      process_set=self.process_set, **scale)
            return _DenseReduction(unit, ctxs, handle, False, self._compression)
        handle = grouped_allreduce_async_(sent, name=f"grouped_allreduce.{name}", op=self.op,
                                          process_set=self.process_set, **scale)
        return _DenseReduction(unit, ctxs, handle, True, self._compression)

    def _reset_passes(self):
        for p in self._passes_left:
            self._passes_left[p] = self.backward_passes_per_step
        for unit in self._ready_in_unit:
            self._ready_in_unit[unit] = 0

    # --- public API ----------------------------------------------------------

    def synchronize(self):
        """Starts the reductions backward has not started (parameters without
        a gradient this step, or fewer backward passes than expected) and
        waits for all of them; p.grad then holds the combined gradients.
        Outside the optimizer's process set it does nothing."""
        if self._member and self._set_size() > 1:
            for unit in self._units:
                if unit not in self._reductions:
                    self._launch(unit)
        self._finish_in_flight()
        self._synchronized = True

    @contextlib.contextmanager
    def skip_synchronize(self):
        """step() inside this context does not synchronize; for code that
        calls synchronize() itself, e.g. to clip the combined gradients:

            optimizer.synchronize()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            with optimizer.skip_synchronize():
                optimizer.step()
        """
        self._should_synchronize = False
        try:
            yield
        finally:
            self._should_synchronize = True

    def step(self, closure=None):
        if self._should_synchronize:
            if self._synchronized:
                warnings.warn(_STEP_AFTER_SYNCHRONIZE)
            self.synchronize()
        self._synchronized = False
        return super().step(closure)

    def zero_grad(self, *args, **kwargs):
        """Refused while gradients are being accumulated or reduced: the
        engine may still be writing into them."""
        pending = self._reductions or any(
            left != self.backward_passes_per_step for left in self._passes_left.values())
        if pending:
            raise AssertionError(_ZERO_GRAD_IN_FLIGHT)
        return super().zero_grad(*args, **kwargs)

    def set_backward_passes_per_step(self, passes):
        self.backward_passes_per_step = passes
        self._reset_passes()

    def load_state_dict(self, *args, **kwargs):
        """Loading a checkpoint starts a fresh step: reductions in flight are
        waited for (the engine must not write into gradients afterwards)."""
        self._finish_in_flight()
        self._synchronized = False
        self._should_synchronize = True
        return super().load_state_dict(*args, **kwargs)

    def _finish_in_flight(self):
        """Waits for every launched reduction; the pass counters start over
        even when one of them failed."""
        try:
            for reduction in self._reductions.values():
                reduction.finish()
        finally:
            self._reductions.clear()
            self._reset_passes()


def DistributedOptimizer(optimizer, named_parameters=None, compression=Compression.none,
                         backward_passes_per_step=1, op=Average, gradient_predivide_factor=1.0,
                         num_groups=0, groups=None, sparse_as_dense=False,
                         process_set=global_process_set):
    """Wraps a torch.optim.Optimizer so that step() applies gradients
    combined (averaged by default) over the ranks of `process_set`.

    The result is an instance of a new subclass of the optimizer's class,
    sharing its param_groups and starting from its state. Gradient
    reductions start during backward; step() waits for them. Use
    synchronize() + skip_synchronize() to work on the combined gradients
    before step().

    Arguments:
        named_parameters: (name, parameter) pairs, usually
            model.named_parameters(); the names pair up reductions across
            ranks and must be unique and cover every optimized parameter.
        compression: Compression.none or Compression.fp16 (for the wire).
        backward_passes_per_step: backward passes accumulated locally before
            the gradients are reduced (once per step()).
        op: Average (default), Sum, Adasum, Min, Max or Product. With Adasum
            (and more than one rank) each rank steps the wrapped optimizer on
            its own gradients and the ranks combine the parameters' changes
            with Adasum, as Horovod's _DistributedAdasumOptimizer does;
            groups and sparse_as_dense do not apply to it, and only the
            global process set may be given.
        gradient_predivide_factor: with Average, scale by 1/f before the sum
            and by f/size after it.
        num_groups: deprecated spelling of an integer `groups`.
        groups: an integer n (parameters split into n fused reductions), or a
            list of lists of parameters reduced together (parameters in no
            list are reduced alone).
        sparse_as_dense: reduce sparse gradients as dense tensors (and hand
            the optimizer a sparse result); otherwise they are allgathered.
        process_set: the ranks that combine gradients. On a rank outside it,
            and with a set of one rank, the result behaves exactly like the
            wrapped optimizer (as Horovod's does).
    """
    op = resolve_op(op)  # Adasum on a non-power-of-two world raises NotImplementedError here
    if gradient_predivide_factor != 1.0 and op != Average:
        raise ValueError("kolo: gradient_predivide_factor needs op=Average")
    if gradient_predivide_factor <= 0:
        raise ValueError("kolo: gradient_predivide_factor must be positive")
    if backward_passes_per_step < 1:
        raise ValueError("kolo: backward_passes_per_step must be at least 1")
    if num_groups != 0:
        warnings.warn("kolo: `num_groups` is an older spelling of `groups`; it still works, "
                      "and `groups` wins when both are given", DeprecationWarning)
        if groups is None:
            groups = num_groups
    _check_groups(groups)
    if not isinstance(process_set, ProcessSet):
        raise TypeError("kolo: DistributedOptimizer(process_set=...) takes a ProcessSet "
                        "(hvd.global_process_set or one from hvd.add_process_set)")

    base = optimizer.__class__
    if op == Adasum and runtime().engine().size > 1:
        if process_set.process_set_id != 0:
            # Horovod's words for the same refusal.
            raise NotImplementedError("Adasum does not support non-global process sets yet.")
        from kolo.torch.adasum_optimizer import adasum_optimizer_class
        wrapped = adasum_optimizer_class(base)(
            optimizer.param_groups, _parameter_names(named_parameters, optimizer.param_groups),
            compression, backward_passes_per_step,
            {"too_many_passes": _TOO_MANY_PASSES, "zero_grad_in_flight": _ZERO_GRAD_IN_FLIGHT})
    else:
        cls = type(base.__name__, (_DistributedOptimizer, base), {})
        wrapped = cls(optimizer.param_groups, named_parameters, compression,
                      backward_passes_per_step, op, gradient_predivide_factor, groups,
                      sparse_as_dense, process_set)
    # Re-running the base constructor on param_groups loses the user's
    # defaults (e.g. SGD's required lr) and any state already built.
    wrapped.defaults = optimizer.defaults
    wrapped.state.update(optimizer.state)
    return wrapped


__all__ = ["DistributedOptimizer"]
