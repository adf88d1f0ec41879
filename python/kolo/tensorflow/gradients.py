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
    return ops.grouped_allreduce([tf.convert_to_tensor(g) for g in grads],
                                 op=ops.Sum if reduce_op == _SUM else ops.Average,
                                 prescale_factor=op.get_attr("prescale"),
                                 postscale_factor=op.get_attr("postscale"),
                                 process_set=_set_of(op))


@_tf_ops.RegisterGradient("KoloAllgather")
def _allgather_grad(op, grad):
    """Every rank's gradient summed, then this rank's rows of it."""
    ps = _set_of(op)
    grad = ops.allreduce(tf.convert_to_tensor(grad), op=ops.Sum, process_set=ps)
    rows = tf.shape(op.inputs[0], out_type=tf.int64)[:1]
    all_rows = ops.allgather(rows, process_set=ps)
    me = runtime().process_set_ranks(ps).index(runtime().engine().rank)
    start = tf.reduce_sum(all_rows[:me])
    return grad[start:start + rows[0]]


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


@_tf_ops.RegisterGradient("KoloReducescatter")
def _reducescatter_grad(op, grad):
    """Every rank's block gathered back into the full shape, with the op's
    scaling (Average divides by the set size)."""
    reduce_op = op.get_attr("reduce_op")
    if reduce_op not in (_SUM, _AVERAGE):
        raise NotImplementedError("kolo: only Sum and Average reducescatter have gradients")
    ps = _set_of(op)
    gathered = ops.allgather(tf.convert_to_tensor(grad), process_set=ps)
    scale = op.get_attr("prescale") * op.get_attr("postscale")
    if reduce_op == _AVERAGE:
        scale /= len(runtime().process_set_ranks(ps))
    return gathered * tf.cast(scale, gathered.dtype)
