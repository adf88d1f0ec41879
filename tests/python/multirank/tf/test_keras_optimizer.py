"""kolo.tensorflow.keras.DistributedOptimizer under model.fit: N ranks
each on B/N rows of every batch end with the weights of one process on the
full batch (averaged gradients of equal shards are the batch's gradient);
backward_passes_per_step sums or averages k passes; groups (and the
deprecated num_groups) split the exchange; op=Sum is n times the rate;
gradient_predivide_factor scales before and after the sum; fp16
compression sends halves; the traced step holds one grouped allreduce.
Runs under Keras 3 and under tf-keras (keras_helpers)."""

import numpy as np
import pytest

from keras_helpers import (BATCH, LEGACY, data, gathered_equal, keras, model,
                           optimizer_factories, shard)
from tf_helpers import tf

import kolo.tensorflow.keras as hvd

KINDS = optimizer_factories()


def fit(m, x, y, batch, epochs, callbacks=None):
    return m.fit(x, y, batch_size=batch, epochs=epochs, shuffle=False, verbose=0,
                 callbacks=callbacks or [])


@pytest.mark.parametrize("kind", [k for k, _ in KINDS])
def test_fit_on_shards_equals_one_process_on_the_batch(kind):
    make = dict(KINDS)[kind]
    x, y = data(rows=2 * BATCH)
    n, r = hvd.size(), hvd.rank()
    dist = model()
    dist.compile(loss="mse", optimizer=hvd.DistributedOptimizer(make(0.05)))
    fit(dist, shard(x, r, n), shard(y, r, n), BATCH // n, epochs=3)
    single = model()
    single.compile(loss="mse", optimizer=make(0.05))
    fit(single, x, y, BATCH, epochs=3)
    for got, want in zip(dist.get_weights(), single.get_weights()):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert gathered_equal(hvd, dist.get_weights())
    assert int(dist.optimizer.iterations) == 6


def test_the_optimizer_keeps_its_class_name_and_config():
    plain = keras.optimizers.Adam(0.01, beta_1=0.8)
    wrapped = hvd.DistributedOptimizer(plain)
    assert type(wrapped).__name__ == "Adam" and isinstance(wrapped, type(plain))
    assert wrapped.get_config()["beta_1"] == pytest.approx(0.8)
    assert float(np.asarray(wrapped.learning_rate)) == pytest.approx(0.01)


@pytest.mark.parametrize("average", [True, False], ids=["average", "sum"])
def test_backward_passes_accumulate_before_the_exchange(average):
    # Two passes of one batch each, then one update: with SGD, the update of
    # one process on both batches at once (their mean gradient), at twice
    # the rate when the passes are summed.
    x, y = data(rows=4 * BATCH)
    n, r = hvd.size(), hvd.rank()
    dist = model()
    dist.compile(loss="mse", optimizer=hvd.DistributedOptimizer(
        keras.optimizers.SGD(0.05), backward_passes_per_step=2,
        average_aggregated_gradients=average))
    fit(dist, shard(x, r, n), shard(y, r, n), BATCH // n, epochs=2)
    single = model()
    single.compile(loss="mse", optimizer=keras.optimizers.SGD(0.05 if average else 0.1))
    fit(single, x, y, 2 * BATCH, epochs=2)
    for got, want in zip(dist.get_weights(), single.get_weights()):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    # Every pass counts as an iteration, applied or not (Horovod's rule).
    assert int(dist.optimizer.iterations) == 8


def test_backward_passes_leave_weights_alone_between_updates():
    x, y = data()
    dist = model()
    before = dist.get_weights()
    dist.compile(loss="mse", optimizer=hvd.DistributedOptimizer(
        keras.optimizers.SGD(0.1), backward_passes_per_step=3))
    fit(dist, x, y, BATCH, epochs=2)
    for got, want in zip(dist.get_weights(), before):
        np.testing.assert_array_equal(got, want)
    fit(dist, x, y, BATCH, epochs=1)
    assert not np.array_equal(dist.get_weights()[0], before[0])


def shards_and_one(dist_optimizer, single_optimizer, epochs=3):
    """Weights after `epochs` of fit: each rank on its B/N rows of every
    batch with `dist_optimizer` (made for the model), one process on the
    full batches with `single_optimizer`; both from the same weights."""
    x, y = data()
    n, r = hvd.size(), hvd.rank()
    dist = model()
    dist.compile(loss="mse", optimizer=dist_optimizer(dist))
    fit(dist, shard(x, r, n), shard(y, r, n), BATCH // n, epochs=epochs)
    single = model()
    single.compile(loss="mse", optimizer=single_optimizer)
    fit(single, x, y, BATCH, epochs=epochs)
    return dist.get_weights(), single.get_weights()


def assert_close(got, want, rtol=1e-4, atol=1e-5):
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


@pytest.mark.parametrize("groups", ["two", "by-layer"])
def test_groups_change_the_messages_not_the_result(groups):
    def make(m):
        split = 2 if groups == "two" else [m.layers[0].trainable_variables]
        return hvd.DistributedOptimizer(keras.optimizers.SGD(0.1), groups=split)

    assert_close(*shards_and_one(make, keras.optimizers.SGD(0.1)))


def test_num_groups_is_groups_under_its_deprecated_name():
    x, y = data()
    with pytest.warns(DeprecationWarning, match="num_groups is deprecated"):
        traced = hvd.DistributedOptimizer(keras.optimizers.SGD(0.1), num_groups=2)
    assert [op.type for op in _traced_exchange(traced, model(), x, y)] == \
        ["KoloGroupedAllreduce"] * 2
    with pytest.warns(DeprecationWarning):
        got, want = shards_and_one(
            lambda m: hvd.DistributedOptimizer(keras.optimizers.SGD(0.1), num_groups=2),
            keras.optimizers.SGD(0.1))
    assert_close(got, want)


def test_op_sum_adds_the_ranks_gradients():
    """Summed shard means are n times the batch's mean gradient: with SGD,
    one process on the batch at n times the rate."""
    got, want = shards_and_one(
        lambda m: hvd.DistributedOptimizer(keras.optimizers.SGD(0.05), op=hvd.Sum),
        keras.optimizers.SGD(0.05 * hvd.size()))
    assert_close(got, want)


def test_gradient_predivide_factor_splits_the_average():
    """Factor f: each rank scales by 1/f before the sum and by f/n after it
    (the op's prescale and postscale), which is still the average."""
    x, y = data()
    opt = hvd.DistributedOptimizer(keras.optimizers.SGD(0.1), gradient_predivide_factor=4.0)
    (op,) = _traced_exchange(opt, model(), x, y)
    assert op.get_attr("reduce_op") == 1  # the engine's Average, which divides by n
    assert op.get_attr("prescale") == pytest.approx(0.25)
    assert op.get_attr("postscale") == pytest.approx(4.0)
    got, want = shards_and_one(
        lambda m: hvd.DistributedOptimizer(keras.optimizers.SGD(0.1),
                                           gradient_predivide_factor=4.0),
        keras.optimizers.SGD(0.1))
    assert_close(got, want)


def test_fp16_compression_sends_half_and_stays_close():
    x, y = data()
    opt = hvd.DistributedOptimizer(keras.optimizers.SGD(0.1), compression=hvd.Compression.fp16)
    (op,) = _traced_exchange(opt, model(), x, y)
    assert op.get_attr("T") == [tf.float16] * 4  # two kernels and two biases, as halves
    got, want = shards_and_one(
        lambda m: hvd.DistributedOptimizer(keras.optimizers.SGD(0.1),
                                           compression=hvd.Compression.fp16),
        keras.optimizers.SGD(0.1))
    assert all(g.dtype == np.float32 for g in got)
    # Within half precision's rounding of each step's gradients (~1e-3).
    assert_close(got, want, rtol=1e-2, atol=1e-3)


def _traced_exchange(optimizer, m, x, y):
    """The Kolo allreduce ops of one traced training step."""
    variables = m.trainable_variables

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(m(x) - y))
        if hasattr(optimizer, "stateless_apply"):  # Keras 3: fit hands over gradients
            optimizer.apply(tape.gradient(loss, variables), variables)
        else:  # tf-keras: fit calls minimize(), which computes them
            optimizer.minimize(loss, variables, tape=tape)
        return loss

    graph = step.get_concrete_function(tf.constant(x), tf.constant(y)).graph
    return [op for op in graph.get_operations()
            if op.type in ("KoloAllreduce", "KoloGroupedAllreduce")]


@pytest.mark.parametrize("groups,expected", [(None, 1), (2, 2)])
def test_a_traced_step_exchanges_all_gradients_in_one_grouped_op(groups, expected):
    x, y = data()
    opt = hvd.DistributedOptimizer(keras.optimizers.SGD(0.1), groups=groups)
    found = [op.type for op in _traced_exchange(opt, model(), x, y)]
    assert found == ["KoloGroupedAllreduce"] * expected, found


@pytest.mark.parametrize("kwargs,message", [
    (dict(backward_passes_per_step=0), "backward_passes_per_step must be an integer >= 1"),
    (dict(op=hvd.Adasum), "op=Average or op=Sum"),
    (dict(op=hvd.Sum, gradient_predivide_factor=2.0), "gradient_predivide_factor needs"),
    (dict(groups=-1), "groups must be >= 0"),
])
def test_bad_arguments_fail_the_same_way_on_every_rank(kwargs, message):
    with pytest.raises(ValueError, match=message) as error:
        hvd.DistributedOptimizer(keras.optimizers.SGD(0.1), **kwargs)
    texts = hvd.allgather_object(str(error.value))
    assert all(t == texts[0] for t in texts)


def test_wrapping_something_else_is_refused():
    with pytest.raises(ValueError, match="wraps a Keras optimizer"):
        hvd.DistributedOptimizer(object())


def test_mismatched_models_fail_on_every_rank():
    # Rank-dependent layer widths: the exchange cannot match, and every rank
    # must get the error instead of waiting.
    width = 4 + hvd.rank()
    m = keras.Sequential([keras.Input((4,)), keras.layers.Dense(width), keras.layers.Dense(1)])
    m.compile(loss="mse", optimizer=hvd.DistributedOptimizer(keras.optimizers.SGD(0.1)))
    x, y = data()
    with pytest.raises(Exception) as error:
        fit(m, x, y, BATCH, epochs=1)
    assert "mismatch" in str(error.value).lower() or "shape" in str(error.value).lower(), \
        str(error.value)
    failed = hvd.allgather_object(True)
    assert all(failed)
    # Some members of that grouped allreduce matched and completed: the op
    # must have waited for them before failing, or they write into freed
    # outputs and a later traced collective aborts the process.
    for _ in range(3):
        total = tf.function(lambda: hvd.allreduce(tf.ones([64], tf.int8), op=hvd.Sum))()
        np.testing.assert_array_equal(total.numpy(), np.full(64, hvd.size()))


def test_legacy_flag_matches_the_keras_in_use():
    # The suite really runs under the Keras the environment asks for.
    assert keras.__name__.startswith("tf_keras") == LEGACY, keras.__name__
