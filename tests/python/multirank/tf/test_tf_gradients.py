"""Gradients through kolo.tensorflow's collectives against closed forms,
taken eagerly and inside tf.function. Each rank r weights its loss by
(r + 1), so the gradient shows which ranks' losses reached it."""

import numpy as np
import pytest

from tf_helpers import MODES, run, tf

import kolo.tensorflow as hvd


def grad_of(mode, forward, x):
    """d(sum(forward(x) * (rank + 1)))/dx."""
    def body(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(forward(x)) * float(hvd.rank() + 1)
        return tape.gradient(loss, x)

    return run(mode, body, x).numpy()


def weights_sum():
    n = hvd.size()
    return n * (n + 1) / 2


@pytest.mark.parametrize("mode", MODES)
def test_allreduce_sum_and_average(mode):
    x = tf.ones([2, 3])
    got = grad_of(mode, lambda t: hvd.allreduce(t, op=hvd.Sum, name="g.sum"), x)
    np.testing.assert_allclose(got, np.full([2, 3], weights_sum()))
    got = grad_of(mode, lambda t: hvd.allreduce(t, name="g.avg"), x)
    np.testing.assert_allclose(got, np.full([2, 3], weights_sum() / hvd.size()))
    got = grad_of(mode, lambda t: hvd.allreduce(t, op=hvd.Sum, prescale_factor=2.0,
                                                postscale_factor=0.25, name="g.scaled"), x)
    np.testing.assert_allclose(got, np.full([2, 3], weights_sum() * 0.5))


@pytest.mark.parametrize("mode", MODES)
def test_grouped_allreduce(mode):
    def body(a, b):
        with tf.GradientTape() as tape:
            tape.watch([a, b])
            ya, yb = hvd.grouped_allreduce([a, b], op=hvd.Sum, name="g.grouped")
            loss = (tf.reduce_sum(ya) + 2.0 * tf.reduce_sum(yb)) * float(hvd.rank() + 1)
        return tape.gradient(loss, [a, b])

    ga, gb = run(mode, body, tf.ones([3]), tf.ones([2, 2]))
    np.testing.assert_allclose(ga.numpy(), np.full([3], weights_sum()))
    np.testing.assert_allclose(gb.numpy(), np.full([2, 2], 2 * weights_sum()))


@pytest.mark.parametrize("mode", MODES)
def test_allgather(mode):
    """Rank k gives k + 1 rows; output row i is weighted by i, so rank k's
    rows get i * sum(r + 1) at their place in the gathered tensor."""
    k = hvd.rank()
    x = tf.ones([k + 1, 2])

    def forward(t):
        out = hvd.allgather(t, name="g.gather")
        rows = tf.cast(tf.range(tf.shape(out)[0]), tf.float32)[:, None]
        return out * rows

    got = grad_of(mode, forward, x)
    offset = sum(j + 1 for j in range(k))
    want = np.repeat(np.arange(offset, offset + k + 1, dtype=np.float64)[:, None], 2, axis=1)
    np.testing.assert_allclose(got, want * weights_sum())


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("root", [0, -1], ids=["root0", "rootlast"])
def test_broadcast(mode, root):
    root = root % hvd.size()
    got = grad_of(mode, lambda t: hvd.broadcast(t, root_rank=root, name=f"g.bcast.{root}"),
                  tf.ones([4]))
    want = weights_sum() if hvd.rank() == root else 0.0
    np.testing.assert_allclose(got, np.full([4], want))


@pytest.mark.parametrize("mode", MODES)
def test_reducescatter_average(mode):
    """n + 1 rows: set rank 0 keeps rows 0-1, rank k >= 1 row k + 1; row i's
    gradient is (weight of the rank that kept it) / n."""
    n = hvd.size()
    got = grad_of(mode, lambda t: hvd.reducescatter(t, name="g.rs"), tf.ones([n + 1, 2]))
    keeper = [0, 0] + list(range(1, n))
    want = np.array([[(keeper[i] + 1) / n] * 2 for i in range(n + 1)])
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_alltoall(mode):
    """Each rank sends one row to every rank; the row that came back from
    rank j carries j's weight."""
    n = hvd.size()
    got = grad_of(mode, lambda t: hvd.alltoall(t, name="g.a2a")[0], tf.ones([n, 2]))
    want = np.array([[j + 1.0] * 2 for j in range(n)])
    np.testing.assert_allclose(got, want)


def keeper_weights(rows, n):
    """Row i of a reducescatter of `rows` rows is kept by one rank k (the
    first rows % n ranks keep one row more); its weight is k + 1."""
    base, extra = divmod(rows, n)
    sizes = [base + (k < extra) for k in range(n)]
    return np.repeat(np.arange(1.0, n + 1), sizes)


@pytest.mark.parametrize("mode", MODES)
def test_grouped_allgather(mode):
    """Rank k gives k + 1 float32 rows and two float64 rows; the loss weights
    the first member's gathered row i by i and the second's rows by 3, so
    each rank's rows get their place (or 3) times sum(r + 1)."""
    k = hvd.rank()

    def body(a, b):
        with tf.GradientTape() as tape:
            tape.watch([a, b])
            ga, gb = hvd.grouped_allgather([a, b], name="g.grouped.gather")
            rows = tf.cast(tf.range(tf.shape(ga)[0]), tf.float32)[:, None]
            loss = (tf.reduce_sum(ga * rows) + 3.0 * tf.cast(tf.reduce_sum(gb), tf.float32)) \
                * float(k + 1)
        return tape.gradient(loss, [a, b])

    ga, gb = run(mode, body, tf.ones([k + 1, 2]), tf.ones([2, 3], tf.float64))
    offset = sum(j + 1 for j in range(k))
    want = np.repeat(np.arange(offset, offset + k + 1, dtype=np.float64)[:, None], 2, axis=1)
    np.testing.assert_allclose(ga.numpy(), want * weights_sum())
    assert gb.dtype == tf.float64
    np.testing.assert_allclose(gb.numpy(), np.full([2, 3], 3 * weights_sum()))


@pytest.mark.parametrize("mode", MODES)
def test_grouped_allgather_unused_member_gets_zeros(mode):
    def body(a, b):
        with tf.GradientTape() as tape:
            tape.watch([a, b])
            ga, _ = hvd.grouped_allgather([a, b], name="g.grouped.gather.unused")
            loss = tf.reduce_sum(ga) * float(hvd.rank() + 1)
        return tape.gradient(loss, [a, b])

    ga, gb = run(mode, body, tf.ones([1, 2]), tf.ones([2]))
    np.testing.assert_allclose(ga.numpy(), np.full([1, 2], weights_sum()))
    np.testing.assert_allclose(gb.numpy(), np.zeros([2]))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", [hvd.Average, hvd.Sum], ids=["average", "sum"])
def test_grouped_reducescatter(mode, op):
    """Members of n + 1 and 2n rows; the loss weights the second member by
    2: row i's gradient is (2x for the second) the weight of the rank that
    kept it, / n for Average, times the scale factors."""
    n = hvd.size()

    def body(a, b):
        with tf.GradientTape() as tape:
            tape.watch([a, b])
            ya, yb = hvd.grouped_reducescatter([a, b], op=op, prescale_factor=3.0,
                                               postscale_factor=0.5, name="g.grouped.rs")
            loss = (tf.reduce_sum(ya) + 2.0 * tf.reduce_sum(yb)) * float(hvd.rank() + 1)
        return tape.gradient(loss, [a, b])

    ga, gb = run(mode, body, tf.ones([n + 1, 2]), tf.ones([2 * n, 3]))
    scale = 1.5 / (n if op == hvd.Average else 1)
    np.testing.assert_allclose(ga.numpy(), np.repeat(keeper_weights(n + 1, n)[:, None], 2, 1)
                               * scale, rtol=1e-6)
    np.testing.assert_allclose(gb.numpy(), np.repeat(keeper_weights(2 * n, n)[:, None], 3, 1)
                               * 2 * scale, rtol=1e-6)
