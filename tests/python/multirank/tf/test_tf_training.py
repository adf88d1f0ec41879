"""DistributedGradientTape: N ranks, each on its B/N rows of a batch,
train a small model to the same weights as one process on all B rows
(the averaged gradient of equal shards is the full batch's gradient);
also an embedding whose gradient is tf.IndexedSlices, with and without
sparse_as_dense."""

import numpy as np
import pytest

from tf_helpers import MODES, embedding_data, tf

import kolo.tensorflow as hvd

BATCH = 12  # divisible by 2 and 3 ranks
STEPS = 5


def data():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(BATCH, 4)).astype(np.float32)
    y = rng.normal(size=(BATCH, 1)).astype(np.float32)
    return x, y


def initial_weights():
    rng = np.random.default_rng(11)
    return [rng.normal(size=(4, 8)).astype(np.float32), np.zeros(8, np.float32),
            rng.normal(size=(8, 1)).astype(np.float32), np.zeros(1, np.float32)]


def loss_fn(weights, x, y):
    w1, b1, w2, b2 = weights
    hidden = tf.tanh(x @ w1 + b1)
    return tf.reduce_mean(tf.square(hidden @ w2 + b2 - y))


def train(x, y, distributed, mode, compression=None):
    weights = [tf.Variable(w) for w in initial_weights()]
    if distributed:  # start from rank 0's weights, as a real job would
        hvd.broadcast_variables(weights, root_rank=0)

    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(weights, x, y)
        if distributed:
            tape = hvd.DistributedGradientTape(
                tape, compression=compression or hvd.Compression.none)
        grads = tape.gradient(loss, weights)
        for w, g in zip(weights, grads):
            w.assign_sub(0.1 * g)
        return loss

    if mode == "function":
        step = tf.function(step)
    for _ in range(STEPS):
        step(x, y)
    return [w.numpy() for w in weights]


@pytest.mark.parametrize("mode", MODES)
def test_n_ranks_on_shards_equal_one_on_the_batch(mode):
    x, y = data()
    n, r = hvd.size(), hvd.rank()
    shard = slice(r * BATCH // n, (r + 1) * BATCH // n)
    distributed = train(x[shard], y[shard], True, mode)
    single = train(x, y, False, mode)
    for got, want in zip(distributed, single):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # Every rank holds the same weights.
    gathered = hvd.allgather_object([w.tolist() for w in distributed])
    assert all(g == gathered[0] for g in gathered)


def test_fp16_compression_stays_close():
    x, y = data()
    n, r = hvd.size(), hvd.rank()
    shard = slice(r * BATCH // n, (r + 1) * BATCH // n)
    distributed = train(x[shard], y[shard], True, "function", hvd.Compression.fp16)
    single = train(x, y, False, "function")
    for got, want in zip(distributed, single):
        np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2)


def test_none_gradients_are_kept():
    used, unused = tf.Variable([1.0, 2.0]), tf.Variable([3.0])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(used * float(hvd.rank() + 1))
    grads = hvd.DistributedGradientTape(tape).gradient(loss, [used, unused])
    assert grads[1] is None
    np.testing.assert_allclose(grads[0].numpy(), [(hvd.size() + 1) / 2] * 2)


VOCAB = 7


def embedding_weights():
    rng = np.random.default_rng(13)
    return [rng.normal(size=(VOCAB, 3)).astype(np.float32),
            rng.normal(size=(6, 1)).astype(np.float32)]


def apply_sgd(var, grad, lr):
    """var -= lr * grad, for a dense gradient or IndexedSlices (duplicate
    indices add up, as in a dense sum)."""
    if isinstance(grad, tf.IndexedSlices):
        var.scatter_sub(tf.IndexedSlices(lr * grad.values, grad.indices, grad.dense_shape))
    else:
        var.assign_sub(lr * grad)


def train_embedding(ids, y, mode, sparse_as_dense=None):
    """STEPS of SGD on mean((gather(table, ids) flattened) @ w - y)^2; with
    sparse_as_dense None one process with a plain tape. Returns the weights
    and, per step, whether the table's (reduced) gradient was IndexedSlices."""
    table, w = [tf.Variable(v) for v in embedding_weights()]
    kinds = []

    def step(ids, y):
        with tf.GradientTape() as tape:
            rows = tf.reshape(tf.gather(table, ids), [-1, 6])
            loss = tf.reduce_mean(tf.square(rows @ w - y))
        if sparse_as_dense is not None:
            tape = hvd.DistributedGradientTape(tape, sparse_as_dense=sparse_as_dense)
        g_table, g_w = tape.gradient(loss, [table, w])
        kinds.append(isinstance(g_table, tf.IndexedSlices))
        apply_sgd(table, g_table, 0.2)
        apply_sgd(w, g_w, 0.2)

    if mode == "function":
        step = tf.function(step)
    for _ in range(STEPS):
        step(tf.constant(ids), tf.constant(y))
    return [table.numpy(), w.numpy()], kinds


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("sparse_as_dense", [False, True], ids=["sparse", "dense"])
def test_embedding_gradients_on_shards_equal_one_process(mode, sparse_as_dense):
    """IndexedSlices are gathered (every rank's rows, values / n) unless
    sparse_as_dense makes them dense first; both equal the full batch."""
    ids, y = embedding_data(BATCH, VOCAB)
    n, r = hvd.size(), hvd.rank()
    shard = slice(r * BATCH // n, (r + 1) * BATCH // n)
    distributed, kinds = train_embedding(ids[shard], y[shard], mode, sparse_as_dense)
    single, single_kinds = train_embedding(ids, y, mode)
    assert all(single_kinds)  # the plain gradient of tf.gather is IndexedSlices
    assert kinds and all(k == (not sparse_as_dense) for k in kinds), kinds
    for got, want in zip(distributed, single):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    gathered = hvd.allgather_object([w.tolist() for w in distributed])
    assert all(g == gathered[0] for g in gathered)
