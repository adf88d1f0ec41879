"""kolo.tensorflow.elastic (horovod.tensorflow.elastic): elastic training
for TensorFlow 2.

    state = hvd.elastic.TensorFlowKerasState(model, optimizer, epoch=0, batch=0)
    state.register_reset_callbacks([on_state_reset])

    @hvd.elastic.run
    def train(state):
        for state.epoch in range(state.epoch, epochs):
            ...                   # steps; state.commit() every few
        ...

    train(state)

run() is kolo.elastic.run (the same retry loop as kolo.torch.elastic:
sync, call, on a failed collective restore the last commit, on changed
hosts keep the state, rejoin the next round, reset, retry), with one
addition: a collective that fails inside a tf.function (Keras's fit runs
its steps as one) reaches Python as TensorFlow's AbortedError, which run()
treats as the KoloInternalError it is.
"""

import functools

import tensorflow as tf

from kolo import elastic as _elastic
from kolo.common.exceptions import HostsUpdatedInterrupt, KoloInternalError, WorkerRemovedError
from kolo.elastic import ObjectState, State
from kolo.tensorflow.elastic_state import TensorFlowKerasState, TensorFlowState

# Kolo's op types (python/src/tensorflow/tf_kernels.cc); TensorFlow names the
# failing node, and so the op, in the error it raises from a graph.
_KOLO_OPS = ("KoloAllreduce", "KoloGroupedAllreduce", "KoloAllgather", "KoloBroadcast",
             "KoloAlltoall", "KoloReducescatter")


def is_kolo_failure(error):
    """Whether a TensorFlow error is a Kolo collective's failure of the job:
    the kernels report those as AbortedError (bad arguments stay
    InvalidArgumentError, which no retry would fix)."""
    if not isinstance(error, tf.errors.AbortedError):
        return False
    node = getattr(error, "node_def", None)
    text = f"{error.message} {getattr(node, 'op', '')}"
    return any(op in text for op in _KOLO_OPS)


def run(func):
    """Decorates `func(state, *args, **kwargs)` so that it is retried from
    the last committed state until it returns (see kolo.elastic.run)."""

    @functools.wraps(func)
    def translated(state, *args, **kwargs):
        try:
            return func(state, *args, **kwargs)
        except tf.errors.AbortedError as error:
            if is_kolo_failure(error):
                raise KoloInternalError(error.message) from None
            raise

    return _elastic.run(translated)


__all__ = ["run", "State", "ObjectState", "TensorFlowKerasState", "TensorFlowState",
           "HostsUpdatedInterrupt", "WorkerRemovedError"]
