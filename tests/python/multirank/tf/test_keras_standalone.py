"""horovod.keras, Horovod's API for the standalone `keras` package: one
model.fit of a model built with `import keras`, with Horovod's
DistributedOptimizer and its callbacks (broadcast from rank 0, metrics
averaged, a learning-rate schedule), against one process on the full
batches from rank 0's weights. `keras` is Keras 3 in both runs of `make
test` (TF_USE_LEGACY_KERAS changes only what tf.keras is)."""

import numpy as np
import pytest

from keras_helpers import BATCH, data, gathered_equal, model, shard

keras = pytest.importorskip("keras", reason="the standalone keras package is not installed")

import horovod.keras as hvd  # noqa: E402

EPOCHS = 3


class EpochLogs(keras.callbacks.Callback):
    """Copies of the logs at each epoch's end, as the callbacks before it left them."""

    def __init__(self):
        super().__init__()
        self.logs = []

    def on_epoch_end(self, epoch, logs=None):
        self.logs.append(dict(logs or {}))


def schedule(epoch):
    """The rate LearningRateScheduleCallback(0.1, 0.5, start_epoch=1) sets."""
    return 0.2 if epoch < 1 else 0.1 * 0.5 ** epoch


def test_fit_with_horovod_keras_and_its_callbacks():
    assert keras.__name__ == "keras"  # the standalone package, whichever tf.keras is
    x, y = data(rows=2 * BATCH)
    n, r = hvd.size(), hvd.rank()
    dist = model(seed=11 + r, keras=keras)  # different weights per rank
    assert isinstance(dist, keras.Model)
    dist.compile(loss="mse", optimizer=hvd.DistributedOptimizer(keras.optimizers.SGD(0.2)))
    raw = EpochLogs()
    history = dist.fit(
        shard(x, r, n), shard(y, r, n), batch_size=BATCH // n, epochs=EPOCHS, shuffle=False,
        verbose=0, callbacks=[hvd.callbacks.BroadcastGlobalVariablesCallback(0),
                              hvd.callbacks.LearningRateScheduleCallback(0.1, multiplier=0.5,
                                                                         start_epoch=1),
                              raw, hvd.callbacks.MetricAverageCallback()])
    # The weights: one process on the full batches, from rank 0's weights,
    # at the scheduled rates.
    single = model(seed=11, keras=keras)
    single.compile(loss="mse", optimizer=keras.optimizers.SGD(0.2))
    single.fit(x, y, batch_size=BATCH, epochs=EPOCHS, shuffle=False, verbose=0,
               callbacks=[keras.callbacks.LearningRateScheduler(schedule)])
    for got, want in zip(dist.get_weights(), single.get_weights()):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert gathered_equal(hvd, dist.get_weights())
    assert float(np.asarray(dist.optimizer.learning_rate)) == pytest.approx(schedule(EPOCHS - 1))
    # The logged loss: the mean of the ranks' own losses, which differ.
    every = hvd.allgather_object([logs["loss"] for logs in raw.logs])
    assert len({round(losses[-1], 9) for losses in every}) == n
    np.testing.assert_allclose(history.history["loss"], np.mean(every, axis=0), rtol=1e-6)
