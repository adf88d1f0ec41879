"""Horovod's Keras module functions, for whichever Keras module `keras`
(tf.keras or standalone keras) the caller serves: DistributedOptimizer
with the Keras argument order, value collectives, broadcast of the global
variables, and load_model."""

import tensorflow as tf

from kolo.common.basics import global_process_set
from kolo.common.reduce_ops import Average
from kolo.tensorflow import ops
from kolo.tensorflow.compression import Compression
from kolo.tensorflow.functions import broadcast_variables
from kolo.tensorflow.optimizer import DistributedOptimizer as _tf_distributed_optimizer
from kolo.tensorflow.optimizer import attach, distributed_class


def DistributedOptimizer(optimizer, name=None, device_dense="", device_sparse="",
                         compression=Compression.none, sparse_as_dense=False,
                         gradient_predivide_factor=1.0, op=Average, backward_passes_per_step=1,
                         average_aggregated_gradients=False, num_groups=0, groups=None,
                         process_set=global_process_set, scale_local_gradients=True):
    """A Keras optimizer like `optimizer` (same class name and config) whose
    gradients are averaged over the ranks before they are applied; pass it
    to model.compile. Arguments as Horovod's horovod.tensorflow.keras."""
    return _tf_distributed_optimizer(
        optimizer, name=name, device_dense=device_dense, device_sparse=device_sparse,
        compression=compression, sparse_as_dense=sparse_as_dense,
        gradient_predivide_factor=gradient_predivide_factor, op=op,
        backward_passes_per_step=backward_passes_per_step,
        average_aggregated_gradients=average_aggregated_gradients, num_groups=num_groups,
        groups=groups, process_set=process_set, scale_local_gradients=scale_local_gradients)


def broadcast_global_variables(root_rank):
    """TF1-style graphs: assigns root_rank's value to every global variable
    and runs it in Keras's session. TF2 eager code has no global-variable
    collection: broadcast the model's variables (or use the callback)."""
    if tf.executing_eagerly():
        raise RuntimeError(
            "kolo: broadcast_global_variables() does not work in eager mode (TF2's default); "
            "use hvd.broadcast_variables(model.variables, root_rank) or "
            "hvd.callbacks.BroadcastGlobalVariablesCallback(root_rank)")
    op = broadcast_variables(tf.compat.v1.global_variables(), root_rank)
    return tf.compat.v1.keras.backend.get_session().run(op)


def allreduce(value, name=None, average=None, prescale_factor=1.0, postscale_factor=1.0,
              op=None, compression=Compression.none):
    """The reduction (Average by default) of a tensor-compatible value."""
    return ops.allreduce(tf.constant(value), name=name, average=average,
                         prescale_factor=prescale_factor, postscale_factor=postscale_factor,
                         op=op, compression=compression)


def allgather(value, name=None):
    return ops.allgather(tf.constant(value), name=name)


def broadcast(value, root_rank, name=None):
    return ops.broadcast(tf.constant(value), root_rank, name=name)


def reducescatter(value, name=None, op=Average):
    return ops.reducescatter(tf.constant(value), name=name, op=op)


def load_model(keras, filepath, custom_optimizers=None, custom_objects=None,
               compression=Compression.none):
    """keras.models.load_model, with the saved optimizer (its state
    included) turned into a DistributedOptimizer. custom_optimizers: the
    optimizer classes that are not Keras's own."""
    objects = {cls.__name__: cls for cls in custom_optimizers or []}
    objects.update(custom_objects or {})
    model = keras.models.load_model(filepath, custom_objects=objects or None)
    optimizer = getattr(model, "optimizer", None)
    if optimizer is not None:
        # In place: the loaded slots and iteration count stay as they are.
        optimizer.__class__ = distributed_class(optimizer)
        attach(optimizer, compression=compression)
    return model
