"""barrier and join for TensorFlow code, eagerly and inside tf.function.

Eagerly they are kolo.numpy's calls. Inside a tf.function a plain Python
call would run once, while tracing, and never again when the function runs;
here they become graph nodes (tf.py_function) that run on every call. Both
are stateful, so tf.function's automatic control dependencies keep them in
program order with the collectives around them on every rank. The Python
per call is acceptable for them: they are called once per epoch or at the
end of the data, not per tensor per step (the collectives themselves stay
C API kernels)."""

import tensorflow as tf

from kolo.common.basics import global_process_set
from kolo.numpy import collectives as _numpy_collectives


def barrier(process_set=global_process_set):
    """Returns once every rank of the set has called barrier(). Inside a
    tf.function: the op that waits so (it has no output)."""
    if tf.executing_eagerly():
        _numpy_collectives.barrier(process_set)
        return None

    def wait():
        _numpy_collectives.barrier(process_set)
        return []

    return tf.py_function(wait, [], [], name="KoloBarrier")


def join(process_set=global_process_set):
    """Declares that this rank has no more data (see kolo.numpy.join) and
    waits for the others; returns the rank that joined last: an int eagerly,
    an int32 scalar tensor inside a tf.function."""
    if tf.executing_eagerly():
        return _numpy_collectives.join(process_set)

    def last_joined():
        return tf.constant(_numpy_collectives.join(process_set), tf.int32)

    result = tf.py_function(last_joined, [], tf.int32, name="KoloJoin")
    result.set_shape([])
    return result
