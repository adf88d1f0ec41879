"""Gradients of Kolo's TF ops, registered with TensorFlow as Horovod
registers its own, so tf.GradientTape differentiates through collectives in
eager and graph mode alike. Every rank computes its gradient with the
matching collective, so the closed forms hold for the sum of every rank's
loss."""

import tensorflow as tf
from tensorflow.python.framework import ops as _tf_ops

from kolo.common.runtime import runtime
from kolo.tensorflow import ops

# The engine's ReduceOp values the op attribute holds (see ops._ENGINE_OPS).
_SUM, _AVERAGE = 0, 1


def _set_of(op):
    return op.get_attr("process_set")


@_tf_ops.RegisterGradient("KoloAllreduce")
def _allreduce_grad(op, grad):
    """d/dx of allreduce: the same allreduce of the incoming gradients (with
    the same scale factors); only Sum and Average are linear."""
    reduce_op = op.get_attr("reduce_op")
    if reduce_op not in (_SUM, _AVERAGE):
        raise NotImplementedError("kolo: only Sum and Average allreduce have gradients")
    return ops.allreduce(grad, op=ops.Sum if reduce_op == _SUM else ops.Average,
                         prescale_factor=op.get_attr("prescale"),
                         postscale_factor=op.get_attr("postscale"),
                         process_set=_set_of(op))


@_tf_ops.RegisterGradient("KoloGroupedAllreduce")
def _grouped_allreduce_grad(op, *grads):
    reduce_op = op.get_attr("reduce_op")
    if reduce_op not in (_SUM, _AVERAGE):
        raise NotImplementedError("kolo: only Sum and Average allreduce have gradients")
    return ops.grouped_allreduce(_grads_of(op, grads),
                                 op=ops.Sum if reduce_op == _SUM else ops.Average,
                                 prescale_factor=op.get_attr("prescale"),
                                 postscale_factor=op.get_attr("postscale"),
                                 process_set=_set_of(op))


def _grads_of(op, grads):
    """The incoming gradients as tensors of the outputs' dtypes: None (an
    output the loss does not use) as zeros, and TF may hand float32 zeros
    for an output of another dtype."""
    return [tf.zeros_like(out) if g is None else tf.cast(tf.convert_to_tensor(g), out.dtype)
            for g, out in zip(grads, op.outputs)]


def _own_rows(summed, inputs, ps):
    """Of each gathered gradient, the rows this rank's input gave: the
    first-dimension sizes of every rank's inputs gathered in one allgather."""
    rows = tf.stack([tf.shape(x, out_type=tf.int64)[0] for x in inputs])
    all_rows = ops.allgather(rows[None, :], process_set=ps)
    me = runtime().process_set_ranks(ps).index(runtime().engine().rank)
    starts = tf.reduce_sum(all_rows[:me], axis=0)
    return [g[starts[i]:starts[i] + rows[i]] for i, g in enumerate(summed)]


@_tf_ops.RegisterGradient("KoloAllgather")
def _allgather_grad(op, grad):
    """Every rank's gradient summed, then this rank's rows of it."""
    ps = _set_of(op)
    summed = ops.allreduce(tf.convert_to_tensor(grad), op=ops.Sum, process_set=ps)
    return _own_rows([summed], op.inputs, ps)[0]


@_tf_ops.RegisterGradient("KoloGroupedAllgather")
def _grouped_allgather_grad(op, *grads):
    """As allgather's, for every member: one grouped allreduce of the
    gradients, one allgather of the row counts."""
    ps = _set_of(op)
    summed = ops.grouped_allreduce(_grads_of(op, grads), op=ops.Sum, process_set=ps)
    return _own_rows(summed, op.inputs, ps)


@_tf_ops.RegisterGradient("KoloBroadcast")
def _broadcast_grad(op, grad):
    """Only the root's input reaches any output: it gets every rank's
    gradient summed, the other ranks' inputs get zeros."""
    ps = _set_of(op)
    summed = ops.allreduce(tf.convert_to_tensor(grad), op=ops.Sum, process_set=ps)
    set_rank = runtime().process_set_ranks(ps).index(runtime().engine().rank)
    return summed if set_rank == op.get_attr("root_rank") else tf.zeros_like(summed)


@_tf_ops.RegisterGradient("KoloAlltoall")
def _alltoall_grad(op, grad, _received_splits_grad):
    """The rows go back where they came from."""
    back, _ = ops.alltoall(tf.convert_to_tensor(grad), splits=op.outputs[1],
                           process_set=_set_of(op))
    return back, None


def _scatter_scale(op):
    """What reducescatter's gradient multiplies by: the op's scale factors,
    divided by the set size for Average; only Sum and Average are linear."""
    reduce_op = op.get_attr("reduce_op")
    if reduce_op not in (_SUM, _AVERAGE):
        raise NotImplementedError("kolo: only Sum and Average reducescatter have gradients")
    scale = op.get_attr("prescale") * op.get_attr("postscale")
    if reduce_op == _AVERAGE:
        scale /= len(runtime().process_set_ranks(_set_of(op)))
    return scale


@_tf_ops.RegisterGradient("KoloReducescatter")
def _reducescatter_grad(op, grad):
    """Every rank's block gathered back into the full shape, with the op's
    scaling (Average divides by the set size)."""
    scale = _scatter_scale(op)
    gathered = ops.allgather(tf.convert_to_tensor(grad), process_set=_set_of(op))
    return gathered * tf.cast(scale, gathered.dtype)


@_tf_ops.RegisterGradient("KoloGroupedReducescatter")
def _grouped_reducescatter_grad(op, *grads):
    """As reducescatter's, for every member, in one grouped allgather."""
    scale = _scatter_scale(op)
    gathered = ops.grouped_allgather(_grads_of(op, grads), process_set=_set_of(op))
    return [g * tf.cast(scale, g.dtype) for g in gathered]
