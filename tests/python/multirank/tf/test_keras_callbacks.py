"""Horovod's Keras callbacks, checked by their numbers: metrics averaged
over the ranks, the learning rate the warmup and schedule set at given
batches, weights broadcast from rank 0. Also load_model's round trip and
the horovod.* drop-in modules. Runs under Keras 3 and tf-keras."""

import os

import numpy as np
import pytest

from keras_helpers import BATCH, LEGACY, data, gathered_equal, keras, model, shard

import kolo.tensorflow.keras as hvd

STEPS = 4  # batches per epoch


class Recorder(keras.callbacks.Callback):
    """Copies of the logs at each epoch's end, and the optimizer's learning
    rate at each batch's start, as the callbacks before it left them."""

    def __init__(self):
        super().__init__()
        self.epoch_logs, self.batch_lr = [], []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch_logs.append(dict(logs or {}))

    def on_train_batch_begin(self, batch, logs=None):
        self.batch_lr.append(float(np.asarray(self.model.optimizer.learning_rate)))


def compiled(lr=0.01, momentum=0.0, seed=11):
    m = model(seed)
    m.compile(loss="mse", metrics=["mae"],
              optimizer=hvd.DistributedOptimizer(keras.optimizers.SGD(lr, momentum=momentum)))
    return m


def rank_data():
    """Different rows on every rank (so the metrics differ)."""
    return data(rows=STEPS * BATCH, seed=100 + hvd.rank())


def test_metric_average_replaces_logs_by_their_mean_over_ranks():
    x, y = rank_data()
    before, after = Recorder(), Recorder()
    m = compiled()
    history = m.fit(x, y, batch_size=BATCH, epochs=2, verbose=0, validation_data=(x, y),
                    callbacks=[before, hvd.callbacks.MetricAverageCallback(), after])
    raw = hvd.allgather_object(before.epoch_logs)
    assert set(after.epoch_logs[0]) >= {"loss", "mae", "val_loss", "val_mae"}
    for epoch, logs in enumerate(after.epoch_logs):
        for name, value in logs.items():
            mean = np.mean([ranks_logs[epoch][name] for ranks_logs in raw])
            assert value == pytest.approx(mean, rel=1e-6), name
            assert history.history[name][epoch] == pytest.approx(mean, rel=1e-6), name
    assert gathered_equal(hvd, [np.array(after.epoch_logs[-1]["val_loss"])])
    # The ranks' own values did differ: the average is not a no-op here.
    assert len({round(logs[-1]["loss"], 9) for logs in raw}) == hvd.size()


def test_learning_rate_warmup_follows_goyals_ramp():
    x, y = rank_data()
    recorder = Recorder()
    warmup_epochs, initial = 2, 0.08
    m = compiled(lr=initial)
    history = m.fit(x, y, batch_size=BATCH, epochs=3, verbose=0, callbacks=[
        hvd.callbacks.LearningRateWarmupCallback(initial, warmup_epochs=warmup_epochs),
        recorder])
    n = hvd.size()
    expected = []
    for epoch in range(3):
        for batch in range(STEPS):
            if epoch < warmup_epochs:
                e = epoch + batch / STEPS + 1 / STEPS
                expected.append(initial / n * (e * (n - 1) / warmup_epochs + 1))
            else:
                expected.append(expected[-1])
    np.testing.assert_allclose(recorder.batch_lr, expected, rtol=1e-6)
    # Warmup ends exactly at the initial rate, and fit logs it per epoch.
    assert history.history["lr"][warmup_epochs - 1] == pytest.approx(initial, rel=1e-6)
    assert history.history["lr"][0] == pytest.approx(expected[STEPS - 1], rel=1e-6)


def test_learning_rate_schedule_steps_per_epoch_in_its_window():
    x, y = rank_data()
    recorder = Recorder()
    m = compiled(lr=1.0)
    m.fit(x, y, batch_size=BATCH, epochs=4, verbose=0, callbacks=[
        hvd.callbacks.LearningRateScheduleCallback(0.1, multiplier=0.5, start_epoch=1,
                                                   end_epoch=3),
        recorder])
    per_epoch = [recorder.batch_lr[e * STEPS] for e in range(4)]
    # Epoch 0 is before the window (the optimizer's own 1.0), epochs 1 and 2
    # get 0.1 * 0.5**epoch, epoch 3 keeps the last value set.
    np.testing.assert_allclose(per_epoch, [1.0, 0.05, 0.025, 0.025], rtol=1e-6)
    assert all(lr == recorder.batch_lr[e * STEPS] for e in range(4)
               for lr in recorder.batch_lr[e * STEPS:(e + 1) * STEPS])


def test_learning_rate_schedule_needs_initial_lr():
    with pytest.raises(ValueError, match="needs initial_lr"):
        hvd.callbacks.LearningRateScheduleCallback(None, multiplier=0.5)


@pytest.mark.skipif(not LEGACY, reason="only tf-keras's optimizer_v2 keeps momentum in a "
                    "variable the callback can change (Keras 3 bakes it into the step)")
def test_momentum_correction_scales_momentum_for_the_changed_batch():
    seen = []

    class Momentum(keras.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            seen.append(float(np.asarray(self.model.optimizer.momentum)))

    m = model()
    m.compile(loss="mse", optimizer=hvd.DistributedOptimizer(
        keras.optimizers.legacy.SGD(0.1, momentum=0.9)))
    x, y = rank_data()
    m.fit(x, y, batch_size=BATCH, epochs=2, verbose=0, callbacks=[
        hvd.callbacks.LearningRateScheduleCallback(0.1, multiplier=0.5, start_epoch=1),
        Momentum()])
    # Epoch 1's first batch halves the rate: momentum 0.9 * 0.5 for that batch only.
    assert seen[:STEPS] == pytest.approx([0.9] * STEPS)
    assert seen[STEPS] == pytest.approx(0.45)
    assert seen[STEPS + 1:] == pytest.approx([0.9] * (STEPS - 1))


def test_broadcast_callback_starts_every_rank_from_rank_0():
    x, y = data(rows=2 * BATCH)
    n, r = hvd.size(), hvd.rank()
    dist = compiled(lr=0.05, momentum=0.9, seed=11 + r)  # different weights per rank
    dist.fit(shard(x, r, n), shard(y, r, n), batch_size=BATCH // n, epochs=2, verbose=0,
             shuffle=False, callbacks=[hvd.callbacks.BroadcastGlobalVariablesCallback(0)])
    assert gathered_equal(hvd, dist.get_weights())
    # Broadcast before the first step: exactly one process on the batch from
    # rank 0's initial weights.
    single = model(seed=11)
    single.compile(loss="mse", optimizer=keras.optimizers.SGD(0.05, momentum=0.9))
    single.fit(x, y, batch_size=BATCH, epochs=2, verbose=0, shuffle=False)
    for got, want in zip(dist.get_weights(), single.get_weights()):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_broadcast_variables_from_a_non_zero_root():
    root = hvd.size() - 1
    m = model(seed=11 + hvd.rank())
    hvd.broadcast_variables(m.variables, root_rank=root)
    want = model(seed=11 + root).get_weights()
    for got, expected in zip(m.get_weights(), want):
        np.testing.assert_array_equal(got, expected)


def test_broadcast_global_variables_refuses_eager_mode_with_advice():
    with pytest.raises(RuntimeError, match="broadcast_variables"):
        hvd.broadcast_global_variables(0)


def test_load_model_round_trip(tmp_path_factory):
    # Rank 0 saves after training; every rank loads it with hvd.load_model
    # (the optimizer comes back distributed, with its state) and trains on
    # its shard; that equals one process continuing on the full batch.
    x, y = data(rows=2 * BATCH)
    n, r = hvd.size(), hvd.rank()
    directory = hvd.broadcast_object(str(tmp_path_factory.mktemp("saved")), root_rank=0)
    path = os.path.join(directory, "model.keras" if not LEGACY else "model.h5")
    if r == 0:
        m = model()
        m.compile(loss="mse", optimizer=keras.optimizers.Adam(0.01))
        m.fit(x, y, batch_size=BATCH, epochs=2, verbose=0, shuffle=False)
        m.save(path)
    hvd.barrier()
    loaded = hvd.load_model(path)
    assert hasattr(loaded.optimizer, "_kolo_reduce")
    assert type(loaded.optimizer).__name__ == "Adam"
    assert int(loaded.optimizer.iterations) == 4
    loaded.fit(shard(x, r, n), shard(y, r, n), batch_size=BATCH // n, epochs=2, verbose=0,
               shuffle=False)
    plain = keras.models.load_model(path)  # Kolo is not needed to read it
    assert not hasattr(plain.optimizer, "_kolo_reduce")
    plain.fit(x, y, batch_size=BATCH, epochs=2, verbose=0, shuffle=False)
    for got, want in zip(loaded.get_weights(), plain.get_weights()):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert gathered_equal(hvd, loaded.get_weights())


def test_value_collectives():
    assert float(hvd.allreduce(float(hvd.rank()))) == pytest.approx((hvd.size() - 1) / 2)
    assert float(hvd.allreduce(1.0, op=hvd.Sum)) == hvd.size()
    np.testing.assert_array_equal(hvd.allgather([hvd.rank()]).numpy(), range(hvd.size()))
    assert int(hvd.broadcast(hvd.rank() + 5, root_rank=1)) == 6


def test_horovod_drop_ins_are_the_same_objects():
    import horovod.keras
    import horovod.tensorflow as htf
    import horovod.tensorflow.keras as htk

    import kolo.keras
    import kolo.tensorflow
    assert htk.DistributedOptimizer is hvd.DistributedOptimizer
    assert htk.callbacks.MetricAverageCallback is hvd.callbacks.MetricAverageCallback
    assert htf.DistributedOptimizer is kolo.tensorflow.DistributedOptimizer
    assert horovod.keras.callbacks.BroadcastGlobalVariablesCallback is \
        kolo.keras.callbacks.BroadcastGlobalVariablesCallback
    assert horovod.keras.load_model is kolo.keras.load_model
    import keras as standalone
    assert issubclass(horovod.keras.callbacks.MetricAverageCallback,
                      standalone.callbacks.Callback)
    assert issubclass(htk.callbacks.MetricAverageCallback, keras.callbacks.Callback)


def test_broadcast_callback_covers_a_model_built_by_its_first_batch():
    # No Input layer: the weights appear during the first step, and the
    # callback broadcasts them after it (Horovod's point), so the ranks agree.
    keras.utils.set_random_seed(hvd.rank())
    m = keras.Sequential([keras.layers.Dense(8, activation="tanh"), keras.layers.Dense(1)])
    m.compile(loss="mse", optimizer=hvd.DistributedOptimizer(keras.optimizers.Adam(0.01)))
    x, y = rank_data()
    m.fit(x, y, batch_size=BATCH, epochs=1, verbose=0,
          callbacks=[hvd.callbacks.BroadcastGlobalVariablesCallback(0)])
    assert gathered_equal(hvd, m.get_weights())
