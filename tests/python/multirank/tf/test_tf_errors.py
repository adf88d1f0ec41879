"""Disagreements between ranks fail the op on every rank with the same
message (KoloInternalError eagerly; tf.errors.AbortedError out of a
tf.function, which is what TF raises from a failed kernel), and the engine
keeps working afterwards. Bad arguments fail at the call."""

import re

import numpy as np
import pytest

from tf_helpers import tf

import kolo.tensorflow as hvd


def same_on_every_rank(text):
    texts = hvd.allgather_object(text)
    assert all(t == texts[0] for t in texts), texts


def kernel_message(error, name):
    """What Kolo's kernel reported, out of the AbortedError a tf.function
    raises: TF puts its function's name in front (numbered per process, so
    it differs between ranks that traced different numbers of functions)."""
    text = re.sub(r"^\{\{function_node [^}]*\}\}\s*", "", error.message).split("\n")[0]
    assert name in text, error.message
    return text


def works_after():
    out = hvd.allreduce(tf.ones([2]), op=hvd.Sum, name="tf.err.after")
    np.testing.assert_array_equal(out.numpy(), [hvd.size()] * 2)


def test_shape_mismatch_eager():
    with pytest.raises(hvd.KoloInternalError, match="tf.err.shape") as info:
        hvd.allreduce(tf.ones([hvd.rank() + 1]), name="tf.err.shape")
    same_on_every_rank(str(info.value))
    works_after()


def test_dtype_mismatch_in_function():
    x = tf.ones([3], dtype=tf.float32 if hvd.rank() == 0 else tf.float64)
    with pytest.raises(tf.errors.AbortedError, match="tf.err.dtype") as info:
        tf.function(lambda t: hvd.allreduce(t, name="tf.err.dtype"))(x)
    assert "float32" in info.value.message and "float64" in info.value.message
    same_on_every_rank(kernel_message(info.value, "tf.err.dtype"))
    works_after()


def test_op_and_root_mismatch():
    op = hvd.Sum if hvd.rank() == 0 else hvd.Max
    with pytest.raises(hvd.KoloInternalError, match="tf.err.op") as info:
        hvd.allreduce(tf.ones([2]), op=op, name="tf.err.op")
    same_on_every_rank(str(info.value))
    with pytest.raises(hvd.KoloInternalError, match="tf.err.root") as info:
        hvd.broadcast(tf.ones([2]), root_rank=hvd.rank(), name="tf.err.root")
    same_on_every_rank(str(info.value))
    works_after()


def test_op_and_root_mismatch_in_function():
    op = hvd.Sum if hvd.rank() == 0 else hvd.Max
    with pytest.raises(tf.errors.AbortedError, match="tf.err.fn.op") as info:
        tf.function(lambda t: hvd.allreduce(t, op=op, name="tf.err.fn.op"))(tf.ones([2]))
    same_on_every_rank(kernel_message(info.value, "tf.err.fn.op"))
    with pytest.raises(tf.errors.AbortedError, match="tf.err.fn.root") as info:
        tf.function(lambda t: hvd.broadcast(t, root_rank=hvd.rank(), name="tf.err.fn.root"))(
            tf.ones([2]))
    same_on_every_rank(kernel_message(info.value, "tf.err.fn.root"))
    works_after()


def test_bad_arguments_fail_locally():
    with pytest.raises(ValueError, match="op or the deprecated average"):
        hvd.allreduce(tf.ones([2]), average=True, op=hvd.Sum)
    with pytest.raises(ValueError, match="root rank 99"):
        hvd.broadcast(tf.ones([2]), root_rank=99)
    with pytest.raises(ValueError, match="rank >= 1"):
        hvd.allgather(tf.constant(1.0))
    with pytest.raises(TypeError, match="unsupported tensor dtype string"):
        hvd.allreduce(tf.constant(["a"]))


def test_horovod_names():
    import horovod.tensorflow as hvd_tf

    assert hvd_tf.allreduce is hvd.allreduce
    assert issubclass(hvd.KoloInternalError, hvd_tf.HorovodInternalError) or \
        hvd_tf.HorovodInternalError is hvd.KoloInternalError
    assert hvd_tf.rank() == hvd.rank() and hvd_tf.size() == hvd.size()
