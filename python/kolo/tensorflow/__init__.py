"""kolo.tensorflow: Horovod's TensorFlow 2 API on Kolo's engine.

    import kolo.tensorflow as hvd          # or: import horovod.tensorflow as hvd
    hvd.init()
    with tf.GradientTape() as tape:
        loss = loss_fn(model(x), y)
    tape = hvd.DistributedGradientTape(tape)
    grads = tape.gradient(loss, model.trainable_variables)
    hvd.broadcast_variables(model.variables, root_rank=0)

Every collective works eagerly and inside tf.function; needs TensorFlow 2
(any 2.x with the C API for ops and kernels) but no Kolo build against it.
"""

from kolo.tensorflow import _loader  # noqa: F401  first: a clear error without TF
from kolo.common.basics import *  # noqa: F401,F403  init, rank, size, process sets, ...
from kolo.common.basics import __all__ as _basics_all
from kolo.common.exceptions import HostsUpdatedInterrupt, KoloInternalError
from kolo.common.reduce_ops import Adasum, Average, Max, Min, Product, Sum
from kolo.tensorflow.sync_ops import barrier, join
from kolo.tensorflow.compression import Compression
from kolo.tensorflow.functions import allgather_object, broadcast_object, broadcast_variables
from kolo.tensorflow.ops import (
    allgather, allreduce, alltoall, broadcast, grouped_allgather, grouped_allreduce,
    grouped_reducescatter, reducescatter)
from kolo.tensorflow import gradients as _gradients  # noqa: F401  registers the gradients
from kolo.tensorflow.tape import DistributedGradientTape
from kolo.tensorflow.optimizer import DistributedOptimizer
from kolo.tensorflow.sync_batch_norm import SyncBatchNormalization
from kolo.tensorflow.session_hooks import BroadcastGlobalVariablesHook, broadcast_global_variables
from kolo.tensorflow import elastic

__all__ = list(_basics_all) + [
    "KoloInternalError", "HostsUpdatedInterrupt",
    "Average", "Sum", "Adasum", "Min", "Max", "Product", "Compression",
    "allreduce", "grouped_allreduce", "allgather", "grouped_allgather", "broadcast",
    "alltoall", "reducescatter", "grouped_reducescatter", "barrier", "join",
    "broadcast_variables", "broadcast_object", "allgather_object", "DistributedGradientTape",
    "DistributedOptimizer", "SyncBatchNormalization", "elastic",
    "broadcast_global_variables", "BroadcastGlobalVariablesHook",
]
