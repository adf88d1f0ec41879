"""op=Adasum in kolo.tensorflow: the engine's Adasum (the one kolo.torch
uses, tested against the formula in ../test_adasum.py) through the TF ops,
eagerly and inside tf.function. Here each rank checks the TF result against
Horovod's tree of pairwise combinations computed in NumPy from every rank's
input, and against kolo.numpy's Adasum of the same input. On a job whose
size is not a power of two (make test's 3 ranks) the calls must raise
Horovod's NotImplementedError."""

import numpy as np
import pytest

from tf_helpers import MODES, run, tf

import kolo.numpy as knp
import kolo.tensorflow as hvd

SIZE = hvd.size()
POWER_OF_TWO = SIZE & (SIZE - 1) == 0
needs_power_of_two = pytest.mark.skipif(
    not POWER_OF_TWO, reason=f"Adasum runs on a power-of-two number of ranks, not {SIZE}")


def combine(a, b):
    """Adasum of two vectors: each scaled down by its share of their overlap."""
    overlap = float(np.dot(a, b))
    scale_a = 1.0 - overlap / (2.0 * float(np.dot(a, a))) if np.dot(a, a) >= 1e-8 else 1.0
    scale_b = 1.0 - overlap / (2.0 * float(np.dot(b, b))) if np.dot(b, b) >= 1e-8 else 1.0
    return scale_a * a + scale_b * b


def tree(vectors):
    """Horovod's order: neighbours first (0+1, 2+3, ...), then the pairs."""
    while len(vectors) > 1:
        vectors = [combine(vectors[i], vectors[i + 1]) for i in range(0, len(vectors), 2)]
    return vectors[0]


def rank_value(rank, shape, seed):
    """Correlated across ranks, so no coefficient is trivially 1 or 1/2."""
    shared = np.random.default_rng(seed).standard_normal(shape)
    return shared + 0.7 * np.random.default_rng(seed + 100 * (rank + 1)).standard_normal(shape)


def want(shape, seed, dtype):
    stored = [rank_value(r, shape, seed).astype(dtype).astype(np.float64).ravel()
              for r in range(SIZE)]
    return tree(stored).reshape(shape)


@needs_power_of_two
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
def test_allreduce_adasum_matches_the_tree(dtype, mode):
    shape = (4, 5)
    mine = rank_value(hvd.rank(), shape, seed=3)
    out = run(mode, lambda x: hvd.allreduce(x, op=hvd.Adasum, name=f"tf.adasum.{mode}"),
              tf.constant(mine, dtype))
    assert out.dtype == dtype and out.shape == shape
    rtol = 1e-5 if dtype == tf.float32 else 1e-10
    expected = want(shape, 3, dtype.as_numpy_dtype)
    np.testing.assert_allclose(out.numpy(), expected, rtol=rtol, atol=rtol)
    numpy_result = knp.allreduce(mine.astype(dtype.as_numpy_dtype), op=knp.Adasum,
                                 name=f"np.adasum.{mode}")
    np.testing.assert_array_equal(out.numpy(), numpy_result)


@needs_power_of_two
@pytest.mark.parametrize("mode", MODES)
def test_grouped_allreduce_gives_each_tensor_its_own_coefficients(mode):
    shapes = [(3,), (2, 4)]
    inputs = [tf.constant(rank_value(hvd.rank(), s, seed=10 + i), tf.float64)
              for i, s in enumerate(shapes)]
    outs = run(mode, lambda *xs: hvd.grouped_allreduce(list(xs), op=hvd.Adasum), *inputs)
    for i, (out, shape) in enumerate(zip(outs, shapes)):
        np.testing.assert_allclose(out.numpy(), want(shape, 10 + i, np.float64), rtol=1e-10)


@needs_power_of_two
def test_distributed_gradient_tape_with_adasum_combines_the_gradients():
    x = tf.Variable(rank_value(hvd.rank(), (6,), seed=20))
    with tf.GradientTape() as tape:
        loss = 0.5 * tf.reduce_sum(x * x)  # the gradient is x itself
    tape = hvd.DistributedGradientTape(tape, op=hvd.Adasum)
    grad = tape.gradient(loss, [x])[0]
    np.testing.assert_allclose(grad.numpy(), want((6,), 20, np.float64), rtol=1e-10)


@needs_power_of_two
def test_refused_where_the_engine_does_not_define_it():
    # Refused on this rank before anything is sent: TF's InvalidArgumentError.
    with pytest.raises(tf.errors.InvalidArgumentError, match="adasum is not defined for int32"):
        hvd.allreduce(tf.ones([3], tf.int32), op=hvd.Adasum, name="tf.adasum.int")
    with pytest.raises(ValueError, match="op=Average or op=Sum"):
        hvd.DistributedOptimizer(tf.keras.optimizers.SGD(0.1), op=hvd.Adasum)


def test_non_power_of_two_jobs_raise_horovods_error():
    if POWER_OF_TWO:
        pytest.skip("this job's size is a power of two")
    with pytest.raises(NotImplementedError, match="non-power of 2 ranks"):
        hvd.allreduce(tf.ones([2]), op=hvd.Adasum)
    with pytest.raises(NotImplementedError, match="non-power of 2 ranks"):
        hvd.grouped_allreduce([tf.ones([2])], op=hvd.Adasum)
