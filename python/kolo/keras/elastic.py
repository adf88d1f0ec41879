"""kolo.keras.elastic (horovod.keras.elastic): elastic training for the
standalone keras package.

KerasState and run are kolo.tensorflow.keras.elastic's (the state keeps
variables, whichever Keras made them); the callbacks derive from
keras.callbacks.Callback, the class this package's users build on (with
TF_USE_LEGACY_KERAS=1 that is Keras 3 while tf.keras is tf-keras).
"""

import keras

from kolo.tensorflow.elastic_callbacks import callback_classes
from kolo.tensorflow.keras.elastic import (  # noqa: F401
    HostsUpdatedInterrupt, KerasState, ObjectState, State, WorkerRemovedError, run)

CommitStateCallback, UpdateBatchStateCallback, UpdateEpochStateCallback = callback_classes(
    keras.callbacks.Callback, __name__)

__all__ = ["run", "State", "ObjectState", "KerasState", "CommitStateCallback",
           "UpdateBatchStateCallback", "UpdateEpochStateCallback", "HostsUpdatedInterrupt",
           "WorkerRemovedError"]
