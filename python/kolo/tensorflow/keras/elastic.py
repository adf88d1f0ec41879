"""kolo.tensorflow.keras.elastic (horovod.tensorflow.keras.elastic): elastic
training with Keras (tf.keras: Keras 3, or tf-keras under
TF_USE_LEGACY_KERAS=1).

    state = hvd.elastic.KerasState(model, batch=0, epoch=0)
    callbacks = [hvd.elastic.UpdateEpochStateCallback(state),
                 hvd.elastic.UpdateBatchStateCallback(state),
                 hvd.elastic.CommitStateCallback(state)]

    @hvd.elastic.run
    def train(state):
        state.model.fit(dataset, steps_per_epoch=steps, epochs=epochs - state.epoch,
                        callbacks=callbacks)

    train(state)

run is kolo.tensorflow.elastic.run; the callbacks are those of
kolo.tensorflow.elastic_callbacks on tf.keras's Callback class.
"""

import tensorflow as tf

from kolo.common.exceptions import HostsUpdatedInterrupt, WorkerRemovedError
from kolo.elastic import ObjectState, State
from kolo.tensorflow.elastic import run
from kolo.tensorflow.elastic_callbacks import callback_classes
from kolo.tensorflow.elastic_state import TensorFlowKerasState


class KerasState(TensorFlowKerasState):
    """TensorFlowKerasState for a Keras model: KerasState(model,
    optimizer=None, **values); the optimizer defaults to the one the model
    was compiled with."""

    def __init__(self, model, optimizer=None, **kwargs):
        super().__init__(model, optimizer=optimizer, backend=tf.keras.backend, **kwargs)


CommitStateCallback, UpdateBatchStateCallback, UpdateEpochStateCallback = callback_classes(
    tf.keras.callbacks.Callback, __name__)

__all__ = ["run", "State", "ObjectState", "KerasState", "CommitStateCallback",
           "UpdateBatchStateCallback", "UpdateEpochStateCallback", "HostsUpdatedInterrupt",
           "WorkerRemovedError"]
