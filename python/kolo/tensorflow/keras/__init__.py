"""kolo.tensorflow.keras: Horovod's Keras API for tf.keras (Keras 3, or
tf-keras with TF_USE_LEGACY_KERAS=1) on Kolo's engine.

    import kolo.tensorflow.keras as hvd   # or horovod.tensorflow.keras
    hvd.init()
    model.compile(optimizer=hvd.DistributedOptimizer(tf.keras.optimizers.Adam(1e-3)), ...)
    model.fit(..., callbacks=[hvd.callbacks.BroadcastGlobalVariablesCallback(0),
                              hvd.callbacks.MetricAverageCallback()])
"""

import tensorflow as tf

from kolo.tensorflow import _loader  # noqa: F401  first: a clear error without TF
from kolo.common.basics import *  # noqa: F401,F403  init, rank, size, process sets, ...
from kolo.common.basics import __all__ as _basics_all
from kolo.common.reduce_ops import Adasum, Average, Max, Min, Product, Sum
from kolo.tensorflow.sync_ops import barrier, join
from kolo.tensorflow.compression import Compression
from kolo.tensorflow.functions import broadcast_object, allgather_object, broadcast_variables
from kolo.tensorflow.keras import callbacks
from kolo.tensorflow.keras import elastic  # KerasState, the state callbacks, run
from kolo.tensorflow.keras import api as _api
from kolo.tensorflow.keras.api import (
    DistributedOptimizer, allgather, allreduce, broadcast, broadcast_global_variables,
    reducescatter)


def load_model(filepath, custom_optimizers=None, custom_objects=None,
               compression=Compression.none):
    """tf.keras.models.load_model with the optimizer made a
    DistributedOptimizer (its saved state kept)."""
    return _api.load_model(tf.keras, filepath, custom_optimizers, custom_objects, compression)


__all__ = list(_basics_all) + [
    "Average", "Sum", "Adasum", "Min", "Max", "Product", "Compression", "DistributedOptimizer",
    "broadcast_global_variables", "allreduce", "allgather", "broadcast", "reducescatter",
    "load_model", "broadcast_variables", "broadcast_object", "allgather_object",
    "barrier", "join",
]
