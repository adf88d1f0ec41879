"""barrier and join inside tf.function: graph nodes that run on every call
of the function (a plain Python call would run once, while tracing), in
program order with the collectives around them."""

import os
import time

import numpy as np

from tf_helpers import tf

import kolo.tensorflow as hvd


def test_barrier_in_a_tf_function_waits_on_every_call(tmp_path_factory):
    # Rank 0 writes marker i late, then enters the barrier of call i; every
    # rank finds marker i once its own call i returns. Without a barrier in
    # the graph, call 2 would return at once on the other ranks.
    folder = hvd.broadcast_object(str(tmp_path_factory.mktemp("barrier")), root_rank=0)

    @tf.function
    def wait_for_all():
        hvd.barrier()
        return tf.constant(1)

    for call in range(3):
        if hvd.rank() == 0:
            time.sleep(0.3)
            open(os.path.join(folder, f"marker-{call}"), "w").close()
        assert wait_for_all().numpy() == 1
        assert os.path.exists(os.path.join(folder, f"marker-{call}")), call
    assert wait_for_all.experimental_get_tracing_count() == 1


def test_join_in_a_tf_function_returns_the_last_rank_as_a_tensor():
    size, rank = hvd.size(), hvd.rank()

    @tf.function
    def join():
        return hvd.join()

    @tf.function
    def summed(x):
        return hvd.allreduce(x, op=hvd.Sum, name="tf.joined.allreduce")

    for _ in range(2):  # the second call runs the traced graph again
        # Rank 0 has one more batch than the others: they join at once and
        # count as zeros in its allreduce.
        if rank == 0:
            np.testing.assert_array_equal(summed(tf.fill([3], 5.0)).numpy(), [5.0] * 3)
        last = join()
        assert last.dtype == tf.int32 and last.shape == ()
        assert last.numpy() == 0  # rank 0 joined last
        gathered = hvd.allgather(tf.reshape(last, [1]))
        np.testing.assert_array_equal(gathered.numpy(), [0] * size)


def test_barrier_and_join_stay_eager_calls_outside_tf_function():
    assert hvd.barrier() is None
    last = hvd.join()
    assert isinstance(last, int) and 0 <= last < hvd.size()
