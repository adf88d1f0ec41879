"""The Keras callbacks of elastic training, for any Keras: Horovod's
CommitStateCallback, UpdateBatchStateCallback and UpdateEpochStateCallback.

    callbacks = [hvd.elastic.UpdateEpochStateCallback(state),
                 hvd.elastic.UpdateBatchStateCallback(state),
                 hvd.elastic.CommitStateCallback(state)]

    @hvd.elastic.run
    def train(state):
        state.model.fit(dataset, steps_per_epoch=..., epochs=epochs - state.epoch,
                        callbacks=callbacks)

callback_classes(base, module) builds the three on one Keras's Callback class:
kolo.tensorflow.keras.elastic on tf.keras's (Keras 3, or tf-keras under
TF_USE_LEGACY_KERAS=1), horovod.keras.elastic on the standalone keras
package's. Every fit() starts with on_train_begin, so a retry after a reset
starts the counters afresh, the same on every rank.
"""


class _CommitState:
    """Commits `state` every `batches_per_commit` batches and at the end of
    every epoch: CommitStateCallback(state, batches_per_commit=1)."""

    def __init__(self, state, batches_per_commit=1):
        super().__init__()
        if batches_per_commit < 1:
            raise ValueError(f"kolo: batches_per_commit must be at least 1; got "
                             f"{batches_per_commit}")
        self.state = state
        self.batches_per_commit = batches_per_commit
        self.batches_remaining = batches_per_commit

    def on_train_begin(self, logs=None):
        self.batches_remaining = self.batches_per_commit

    def on_train_batch_end(self, batch, logs=None):
        self.batches_remaining -= 1
        if self.batches_remaining == 0:
            self.state.commit()
            self.batches_remaining = self.batches_per_commit

    def on_epoch_end(self, epoch, logs=None):
        self.state.commit()


class _UpdateBatchState:
    """Keeps state.batch at the last finished batch of the epoch (0 once the
    epoch ends): UpdateBatchStateCallback(state)."""

    def __init__(self, state):
        super().__init__()
        self.state = state
        self.steps_per_epoch = None

    def on_train_begin(self, logs=None):
        self.steps_per_epoch = None

    def on_epoch_begin(self, epoch, logs=None):
        # What is left of the epoch a reset interrupted, as Horovod reports
        # it to the other callbacks (the progress bar): Keras itself runs
        # the steps fit() was given.
        params = getattr(self, "params", None) or {}
        if params.get("steps"):
            if self.steps_per_epoch is None:
                self.steps_per_epoch = params["steps"]
            params["steps"] = self.steps_per_epoch - self.state.batch

    def on_train_batch_end(self, batch, logs=None):
        self.state.batch = batch

    def on_epoch_end(self, epoch, logs=None):
        self.state.batch = 0


class _UpdateEpochState:
    """Keeps state.epoch at the number of epochs finished over the whole job,
    resets included: UpdateEpochStateCallback(state)."""

    def __init__(self, state):
        super().__init__()
        self.state = state
        # Keras counts the epochs of each fit() from 0; the state counts
        # them over the whole job, resets included.
        self.initial_epoch = state.epoch

    def on_train_begin(self, logs=None):
        self.initial_epoch = self.state.epoch

    def on_epoch_end(self, epoch, logs=None):
        # + 1: the epoch is done, so a reset after this (state.batch is 0
        # by now) must not run it again.
        self.state.epoch = self.initial_epoch + epoch + 1


def callback_classes(base, module):
    """(CommitStateCallback, UpdateBatchStateCallback,
    UpdateEpochStateCallback) deriving from the Keras Callback class `base`,
    living in `module` (their __module__, for repr and pickling)."""
    return [type(name, (impl, base), {"__module__": module, "__qualname__": name,
                                      "__doc__": impl.__doc__})
            for name, impl in (("CommitStateCallback", _CommitState),
                               ("UpdateBatchStateCallback", _UpdateBatchState),
                               ("UpdateEpochStateCallback", _UpdateEpochState))]


__all__ = ["callback_classes"]
