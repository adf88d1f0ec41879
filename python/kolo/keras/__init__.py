"""kolo.keras (also horovod.keras): Horovod's Keras API for the standalone
`keras` package (Keras 3; on TensorFlow's backend). Everything but
load_model and the callbacks is kolo.tensorflow.keras's; those two use
`keras` itself, which is tf.keras unless TF_USE_LEGACY_KERAS=1 makes
tf.keras tf-keras."""

from kolo.tensorflow import _loader  # noqa: F401  first: a clear error without TF

import keras  # noqa: E402

from kolo.tensorflow.keras import *  # noqa: F401,F403
from kolo.tensorflow.keras import __all__ as _tf_keras_all
from kolo.tensorflow.keras import Compression
from kolo.tensorflow.keras import api as _api
from kolo.keras import callbacks
from kolo.keras import elastic  # KerasState, the state callbacks, run


def load_model(filepath, custom_optimizers=None, custom_objects=None,
               compression=Compression.none):
    """keras.models.load_model with the optimizer made a
    DistributedOptimizer (its saved state kept)."""
    return _api.load_model(keras, filepath, custom_optimizers, custom_objects, compression)


__all__ = list(_tf_keras_all)
