"""hvd.SyncBatchNormalization against one process on the full batch: every
rank normalizes its rows of a batch with statistics over all ranks' rows,
and its outputs, moving statistics and gradients (inputs, gamma, beta) must
be those of tf.keras's BatchNormalization on the concatenated batch. Ranks
hold different numbers of rows (rank r has r + 2), which a plain average of
per-rank moments would get wrong. Eager and inside tf.function."""

import numpy as np
import pytest

from tf_helpers import MODES, tf

import kolo.tensorflow as hvd


def rows_of(r):
    return r + 2


def full_batch(shape_tail, dtype):
    """Every rank's rows, concatenated in rank order, and where each rank's
    rows start: the same arrays on every rank (fixed seed)."""
    sizes = [rows_of(r) for r in range(hvd.size())]
    rng = np.random.default_rng(5)
    x = rng.normal(loc=3.0, scale=2.0, size=(sum(sizes),) + shape_tail).astype(dtype)
    # A fixed projection of the outputs as the loss, so gradients differ per element.
    weights = rng.normal(size=x.shape).astype(dtype)
    starts = np.cumsum([0] + sizes)
    return x, weights, starts


def forward_backward(layer, x, weights, mode):
    """Outputs, and gradients of sum(outputs * weights) with respect to the
    inputs, gamma and beta, of one training call of `layer`."""
    def body(x, weights):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = layer(x, training=True)
            loss = tf.reduce_sum(y * weights)
        dx, dgamma, dbeta = tape.gradient(loss, [x, layer.gamma, layer.beta])
        return y, dx, dgamma, dbeta

    if mode == "function":
        body = tf.function(body)
    return [t.numpy() for t in body(tf.constant(x), tf.constant(weights))]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape_tail, axis", [((3,), -1), ((4, 4, 3), -1), ((3, 4, 4), 1)],
                         ids=["dense", "nhwc", "nchw"])
def test_matches_batch_normalization_on_the_full_batch(mode, shape_tail, axis):
    x, weights, starts = full_batch(shape_tail, np.float64)
    mine = slice(starts[hvd.rank()], starts[hvd.rank() + 1])
    options = dict(axis=axis, momentum=0.9, dtype="float64",
                   gamma_initializer=tf.keras.initializers.Constant(1.5),
                   beta_initializer=tf.keras.initializers.Constant(-0.5))
    sync = hvd.SyncBatchNormalization(**options)
    single = tf.keras.layers.BatchNormalization(**options)

    y, dx, dgamma, dbeta = forward_backward(sync, x[mine], weights[mine], mode)
    y_full, dx_full, dgamma_full, dbeta_full = forward_backward(single, x, weights, mode)

    np.testing.assert_allclose(y, y_full[mine], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(sync.moving_mean.numpy(), single.moving_mean.numpy(), rtol=1e-9)
    np.testing.assert_allclose(sync.moving_variance.numpy(), single.moving_variance.numpy(),
                               rtol=1e-9)
    # The gradient of every rank's loss reaches this rank's inputs through the
    # allreduce: together they are the full batch's loss.
    np.testing.assert_allclose(dx, dx_full[mine], rtol=1e-8, atol=1e-9)
    # gamma and beta see only this rank's outputs; summed over the ranks
    # (what DistributedGradientTape does, up to its average) they are the full batch's.
    summed = hvd.allreduce(tf.constant(np.stack([dgamma, dbeta])), op=hvd.Sum).numpy()
    np.testing.assert_allclose(summed[0], dgamma_full, rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(summed[1], dbeta_full, rtol=1e-8, atol=1e-9)

    # Inference uses the moving statistics alone, the same as the single layer's.
    probe = x[:2]
    np.testing.assert_allclose(sync(probe, training=False).numpy(),
                               single(probe, training=False).numpy(), rtol=1e-9, atol=1e-9)


def test_float32_stays_close_to_the_full_batch():
    x, weights, starts = full_batch((6,), np.float32)
    mine = slice(starts[hvd.rank()], starts[hvd.rank() + 1])
    sync = hvd.SyncBatchNormalization()
    single = tf.keras.layers.BatchNormalization()
    y, dx, _, _ = forward_backward(sync, x[mine], weights[mine], "function")
    y_full, dx_full, _, _ = forward_backward(single, x, weights, "function")
    np.testing.assert_allclose(y, y_full[mine], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dx, dx_full[mine], rtol=1e-3, atol=1e-4)


def test_trains_in_keras_fit_with_the_same_statistics_on_every_rank():
    x, weights, starts = full_batch((3,), np.float32)
    mine = slice(starts[hvd.rank()], starts[hvd.rank() + 1])
    for _ in range(hvd.rank()):
        # Keras numbers models and layers per process: make the names differ
        # between ranks, as any rank-specific model (a rank-0 evaluation) does.
        tf.keras.Sequential([hvd.SyncBatchNormalization()])
    tf.keras.utils.set_random_seed(3)
    model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(4),
                                 hvd.SyncBatchNormalization(), tf.keras.layers.Dense(1)])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.01), loss="mse")
    hvd.broadcast_variables(model.variables, root_rank=0)
    model.fit(x[mine], weights[mine, :1], batch_size=len(x[mine]), epochs=2, verbose=0)
    bn = model.layers[1]
    stats = np.concatenate([bn.moving_mean.numpy(), bn.moving_variance.numpy()])
    everyone = hvd.allgather_object(stats.tolist(), name="syncbn.fit")
    assert all(theirs == everyone[0] for theirs in everyone)


def test_fused_is_refused():
    with pytest.raises(ValueError, match="fused"):
        hvd.SyncBatchNormalization(fused=True)
    with pytest.raises(ValueError, match="fused"):
        hvd.SyncBatchNormalization(fused=None)


def test_horovod_name():
    import horovod.tensorflow

    assert horovod.tensorflow.SyncBatchNormalization is hvd.SyncBatchNormalization
    layer = hvd.SyncBatchNormalization(axis=1, momentum=0.8)
    clone = hvd.SyncBatchNormalization.from_config(layer.get_config())
    assert (clone.axis, clone.momentum) == (layer.axis, layer.momentum)
