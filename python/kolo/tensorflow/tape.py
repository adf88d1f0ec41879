"""DistributedGradientTape: a tf.GradientTape whose gradient() returns the
gradients averaged (by default) over every rank of the process set, as
Horovod's does. Dense gradients go to the engine as one grouped allreduce
(one negotiation, fused on the wire; in a graph, one op)."""

import tensorflow as tf

from kolo.common.basics import global_process_set
from kolo.common.reduce_ops import Average
from kolo.tensorflow.compression import Compression
from kolo.tensorflow.reduction import reduce_gradients, resolve_groups


class _DistributedTapeMixin:
    """Methods the distributed tape puts in front of the user's tape class."""

    def gradient(self, target, sources, output_gradients=None, **kwargs):
        grads = super().gradient(target, sources, output_gradients, **kwargs)
        flat = tf.nest.flatten(grads)
        reduced = reduce_gradients(flat, variables=tf.nest.flatten(sources),
                                   **self._kolo_options)
        return tf.nest.pack_sequence_as(grads, reduced)


def DistributedGradientTape(gradtape, device_dense="", device_sparse="",
                            compression=Compression.none, sparse_as_dense=False, op=Average,
                            gradient_predivide_factor=1.0, num_groups=0, groups=None,
                            process_set=global_process_set):
    """Wraps a tf.GradientTape (used or about to be used) so gradient()
    averages over the ranks: one grouped allreduce, or one per group of
    `groups` (an int: that many parts; a list of lists of variables)."""
    del device_dense, device_sparse
    groups = resolve_groups(num_groups, groups)
    cls = type(gradtape.__class__.__name__, (_DistributedTapeMixin, gradtape.__class__), {})
    tape = cls.__new__(cls)
    tape.__dict__.update(gradtape.__dict__)
    tape._kolo_options = dict(compression=compression, sparse_as_dense=sparse_as_dense, op=op,
                              gradient_predivide_factor=gradient_predivide_factor,
                              process_set=process_set, groups=groups)
    return tape
