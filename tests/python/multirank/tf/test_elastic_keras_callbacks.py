"""kolo.tensorflow.keras.elastic (horovod.tensorflow.keras.elastic,
horovod.keras.elastic) on every rank of a plain kolorun job: KerasState and
the three state callbacks inside real Keras fit() calls, and run()
restarting fit() from the last commit after a real failed collective.
Under either Keras (scripts/run-python-tests.sh runs this file with
TF_USE_LEGACY_KERAS=1 too)."""

import gc

import numpy as np
import pytest

from tf_helpers import tf
from tensorflow.python.data.ops import iterator_ops

import kolo.tensorflow as hvd
import kolo.tensorflow.keras.elastic as keras_elastic
from kolo.common.runtime import runtime

from tf_elastic_helpers import (
    batch, counting, engine_works, every_rank_holds_the_same, make_model, snapshot)

STEPS, EPOCHS = 4, 3


def dataset():
    x, y = batch(seed=0, rows=8)
    return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(2)


class Recorder(tf.keras.callbacks.Callback):
    """Records what the state callbacks left behind, batch by batch."""

    def __init__(self, state):
        super().__init__()
        self.state = state
        self.batches, self.epoch_steps, self.train_begins = [], [], []

    def on_train_begin(self, logs=None):
        self.train_begins.append((self.state.epoch, self.state.batch, snapshot(self.state)))

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch_steps.append(self.params.get("steps"))

    def on_train_batch_end(self, batch, logs=None):
        self.batches.append((self.state.epoch, self.state.batch))


def test_names_in_every_package():
    import keras

    import horovod.keras.elastic
    import horovod.tensorflow.keras
    import horovod.tensorflow.keras.elastic
    import kolo.keras.elastic

    assert horovod.tensorflow.keras.elastic.KerasState is keras_elastic.KerasState
    assert horovod.tensorflow.keras.elastic.run is hvd.elastic.run
    assert horovod.tensorflow.keras.elastic is horovod.tensorflow.keras.elastic
    assert horovod.keras.elastic.KerasState is keras_elastic.KerasState
    assert horovod.keras.elastic.CommitStateCallback is kolo.keras.elastic.CommitStateCallback
    for module in (keras_elastic, horovod.tensorflow.keras.elastic, horovod.keras.elastic,
                   kolo.keras.elastic):
        for name in module.__all__:
            assert hasattr(module, name), name
    for name in ("CommitStateCallback", "UpdateBatchStateCallback", "UpdateEpochStateCallback"):
        assert issubclass(getattr(keras_elastic, name), tf.keras.callbacks.Callback)
        assert issubclass(getattr(horovod.keras.elastic, name), keras.callbacks.Callback)
    assert issubclass(keras_elastic.KerasState, hvd.elastic.TensorFlowKerasState)


@pytest.mark.parametrize("batches_per_commit, commits", [(1, STEPS * EPOCHS + EPOCHS),
                                                        (3, STEPS * EPOCHS // 3 + EPOCHS)])
def test_callbacks_track_epoch_and_batch_and_commit(batches_per_commit, commits):
    model = make_model(seed=0)
    state = counting(keras_elastic.KerasState)(model, epoch=0, batch=0)
    commit_calls = []
    original = state.commit
    state.commit = lambda: (commit_calls.append((state.epoch, state.batch)), original())[1]
    recorder = Recorder(state)
    callbacks = [keras_elastic.UpdateEpochStateCallback(state),
                 keras_elastic.UpdateBatchStateCallback(state),
                 keras_elastic.CommitStateCallback(state, batches_per_commit=batches_per_commit),
                 recorder]
    model.fit(dataset(), steps_per_epoch=STEPS, epochs=EPOCHS, callbacks=callbacks, verbose=0)
    assert (state.epoch, state.batch) == (EPOCHS, 0)
    assert recorder.batches == [(e, b) for e in range(EPOCHS) for b in range(STEPS)]
    assert len(commit_calls) == commits
    assert commit_calls[-1] == (EPOCHS, 0)  # the epoch-end commit comes after both updates
    assert recorder.epoch_steps == [STEPS] * EPOCHS

    # A fit() resumed mid-epoch reports the rest of that epoch's steps (as Horovod does).
    state.epoch, state.batch = 1, 2
    recorder.epoch_steps.clear()
    model.fit(dataset(), steps_per_epoch=STEPS, epochs=1, callbacks=callbacks, verbose=0)
    assert recorder.epoch_steps == [STEPS - 2]
    assert (state.epoch, state.batch) == (2, 0)


def test_keras_state_keeps_a_distributed_optimizers_variables():
    import kolo.tensorflow.keras as hvd_keras

    model = make_model(seed=40 + hvd.rank(), wrap=hvd_keras.DistributedOptimizer)
    x, y = batch(seed=hvd.rank())
    model.fit(x, y, batch_size=len(x), epochs=1, verbose=0)  # averaged: one collective
    state = keras_elastic.KerasState(model, epoch=hvd.rank())
    assert len(state._variables()[1]) > 2  # iterations, learning rate and Adam's slots
    state.sync()
    synced = snapshot(state)
    every_rank_holds_the_same(synced, "keras.elastic.distributed")
    model.fit(x, y, batch_size=len(x), epochs=1, verbose=0)
    state.restore()
    for got, want in zip(snapshot(state), synced):
        np.testing.assert_array_equal(got, want)
    assert state.epoch == 0


def test_batches_per_commit_must_be_positive():
    state = keras_elastic.KerasState(make_model(seed=0))
    with pytest.raises(ValueError, match="batches_per_commit"):
        keras_elastic.CommitStateCallback(state, batches_per_commit=0)


class FailOnce(tf.keras.callbacks.Callback):
    """At the end of batch `at_batch` of epoch `at_epoch` of the first
    attempt, runs an allreduce whose shape differs per rank: a real failure
    of the job's collective on every rank (KoloInternalError)."""

    def __init__(self, state, at_epoch, at_batch):
        super().__init__()
        self.state, self.at = state, (at_epoch, at_batch)
        self.failed = False

    def on_train_batch_end(self, batch, logs=None):
        if not self.failed and (self.state.epoch, batch) == self.at:
            self.failed = True
            hvd.allreduce(tf.ones([hvd.rank() + 1]), name="keras.elastic.fail")


def test_run_restarts_fit_from_the_last_commit_after_a_failed_collective():
    if hvd.size() < 2:
        pytest.skip("a shape mismatch needs two ranks")
    model = make_model(seed=30 + hvd.rank())
    state = counting(keras_elastic.KerasState)(model, epoch=0, batch=0)
    resets = []
    state.register_reset_callbacks([lambda: resets.append(hvd.size())])
    recorder = Recorder(state)
    committed = []

    class AfterCommit(tf.keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            committed.append((state.epoch, state.batch, snapshot(state)))

    # Order matters as in Horovod's examples: the failure comes before the
    # commit of its batch, so that batch's step is lost and redone.
    callbacks = [keras_elastic.UpdateEpochStateCallback(state),
                 keras_elastic.UpdateBatchStateCallback(state),
                 FailOnce(state, at_epoch=1, at_batch=2),
                 keras_elastic.CommitStateCallback(state), AfterCommit(), recorder]
    engine_before = runtime().engine()

    commits_at_start = []

    @keras_elastic.run
    def train(state):
        commits_at_start.append(len(committed))
        state.model.fit(dataset(), steps_per_epoch=STEPS, epochs=EPOCHS - state.epoch,
                        callbacks=callbacks, verbose=0)
        return int(state.optimizer.iterations.numpy())

    iterations = train(state)
    # run() freed the failed fit()'s input pipeline before the retry (its
    # late destruction could stall this rank in a later collective); the
    # retry's own iterator went with its fit() call.
    assert not [o for o in gc.get_objects() if isinstance(o, iterator_ops.OwnedIterator)]
    assert len(recorder.train_begins) == 2
    epoch, batch_, values = recorder.train_begins[1]
    # The retry starts from the last commit: epoch 1, batch 1 (two steps of epoch 1 done).
    last = committed[commits_at_start[1] - 1]
    assert (epoch, batch_) == (1, 1) == last[:2]
    for got, want in zip(values, last[2]):
        np.testing.assert_array_equal(got, want)
    # Epoch 0 and two steps of epoch 1 were kept; the retry ran 2 full epochs.
    assert iterations == STEPS + 2 + (EPOCHS - 1) * STEPS
    assert (state.epoch, state.batch) == (EPOCHS, 0)
    assert state.counts == {"sync": 2, "restore": 1, "reset": 1}
    assert resets == [hvd.size()]
    assert runtime().engine() is not engine_before
    assert engine_works()
