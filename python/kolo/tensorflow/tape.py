"""DistributedGradientTape: a tf.GradientTape whose gradient() returns the
gradients averaged (by default) over every rank of the process set, as
Horovod's does. Dense gradients go to the engine as one grouped allreduce
(one negotiation, fused on the wire; in a graph, one op)."""

import tensorflow as tf

from kolo.common.basics import global_process_set
from kolo.common.reduce_ops import Average, resolve_op
from kolo.tensorflow.compression import Compression
from kolo.tensorflow.ops import grouped_allreduce


def reduce_gradients(grads, compression, sparse_as_dense, op, gradient_predivide_factor,
                     process_set):
    """`grads` (None entries kept) reduced over the set. With
    gradient_predivide_factor f and Average: each rank scales by 1/f before
    the sum and by f/size after it, as Horovod does."""
    op = resolve_op(op)
    prescale, postscale = 1.0, 1.0
    if gradient_predivide_factor != 1.0:
        if op != Average:
            raise ValueError("kolo: gradient_predivide_factor needs op=Average")
        prescale, postscale = 1.0 / gradient_predivide_factor, gradient_predivide_factor
    present = [i for i, g in enumerate(grads) if g is not None]
    tensors = []
    for i in present:
        grad = grads[i]
        if sparse_as_dense and isinstance(grad, tf.IndexedSlices):
            grad = tf.convert_to_tensor(grad)
        tensors.append(grad)
    reduced = grouped_allreduce(tensors, compression=compression, op=op,
                                prescale_factor=prescale, postscale_factor=postscale,
                                process_set=process_set)
    out = list(grads)
    for i, value in zip(present, reduced):
        out[i] = value
    return out


class _DistributedTapeMixin:
    """Methods the distributed tape puts in front of the user's tape class."""

    def gradient(self, target, sources, output_gradients=None, **kwargs):
        grads = super().gradient(target, sources, output_gradients, **kwargs)
        flat = tf.nest.flatten(grads)
        reduced = reduce_gradients(flat, **self._kolo_options)
        return tf.nest.pack_sequence_as(grads, reduced)


def DistributedGradientTape(gradtape, device_dense="", device_sparse="",
                            compression=Compression.none, sparse_as_dense=False, op=Average,
                            gradient_predivide_factor=1.0, num_groups=0, groups=None,
                            process_set=global_process_set):
    """Wraps a tf.GradientTape (used or about to be used) so gradient()
    averages over the ranks. num_groups/groups are accepted for Horovod's
    signature; Kolo always sends the gradients as one group."""
    del device_dense, device_sparse, num_groups, groups
    cls = type(gradtape.__class__.__name__, (_DistributedTapeMixin, gradtape.__class__), {})
    tape = cls.__new__(cls)
    tape.__dict__.update(gradtape.__dict__)
    tape._kolo_options = dict(compression=compression, sparse_as_dense=sparse_as_dense, op=op,
                              gradient_predivide_factor=gradient_predivide_factor,
                              process_set=process_set)
    return tape
