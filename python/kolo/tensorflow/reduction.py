"""The gradient exchange shared by DistributedGradientTape and every
DistributedOptimizer: the present gradients go to the engine as grouped
allreduces (one by default: one negotiation, fused on the wire, in a graph
one op), split the way Horovod's `groups`/`num_groups` ask."""

import warnings

import tensorflow as tf

from kolo.common.grouping import split_evenly
from kolo.common.reduce_ops import Average, resolve_op
from kolo.common.runtime import runtime
from kolo.tensorflow.ops import grouped_allreduce


def resolve_groups(num_groups, groups):
    """Horovod's deprecated num_groups folded into groups (None: one group)."""
    if num_groups:
        warnings.warn("kolo: num_groups is deprecated, use groups", DeprecationWarning,
                      stacklevel=3)
        if groups is None:
            groups = num_groups
    if groups is None:
        return None
    if isinstance(groups, int):
        if groups < 0:
            raise ValueError(f"kolo: groups must be >= 0 or a list of lists of variables, got "
                             f"{groups}")
        return groups or None
    if not isinstance(groups, (list, tuple)) or not all(
            isinstance(g, (list, tuple)) for g in groups):
        raise ValueError("kolo: groups must be an int or a list of lists of variables")
    return [list(g) for g in groups]


def _split(present, variables, groups):
    """Lists of indices into the gradients, one list per grouped allreduce."""
    if groups is None:
        return [present] if present else []
    if isinstance(groups, int):
        # Contiguous, near-equal parts, the first ones one longer.
        return [p for p in split_evenly(present, min(groups, len(present)) or 1) if p]
    if variables is None:
        raise ValueError("kolo: groups given as variables needs the variables of the gradients")
    left = {id(variables[i]): i for i in present}
    parts = []
    for group in groups:
        part = [left.pop(id(var)) for var in group if id(var) in left]
        if part:
            parts.append(sorted(part))
    # Gradients of variables no group names go alone, as Horovod sends them.
    parts.extend([i] for i in sorted(left.values()))
    return parts


def _exchange_is_identity():
    """True in a job of one process that is not elastic: every reduction
    over it is the identity, so the gradients need not reach the engine
    (Horovod skips there too). An elastic job always exchanges, because a
    tf.function traced at size 1 keeps its ops when the job grows."""
    rt = runtime()
    return rt.engine().size == 1 and not rt.is_elastic()


def reduce_gradients(grads, compression, sparse_as_dense, op, gradient_predivide_factor,
                     process_set, groups=None, variables=None):
    """`grads` (None entries kept) reduced over the set. With
    gradient_predivide_factor f and Average: each rank scales by 1/f before
    the sum and by f/size after it, as Horovod does. In a one-process job
    that is not elastic they come back as they are (sparse_as_dense still
    applied, so their types do not depend on the job's size)."""
    op = resolve_op(op)
    prescale, postscale = 1.0, 1.0
    if gradient_predivide_factor != 1.0:
        if op != Average:
            raise ValueError("kolo: gradient_predivide_factor needs op=Average")
        prescale, postscale = 1.0 / gradient_predivide_factor, gradient_predivide_factor
    grads = list(grads)
    present = [i for i, g in enumerate(grads) if g is not None]
    if sparse_as_dense:
        grads = [tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g
                 for g in grads]
    if _exchange_is_identity():
        return grads
    out = list(grads)
    for part in _split(present, variables, groups):
        reduced = grouped_allreduce([grads[i] for i in part], compression=compression, op=op,
                                    prescale_factor=prescale, postscale_factor=postscale,
                                    process_set=process_set)
        for i, value in zip(part, reduced):
            out[i] = value
    return out
