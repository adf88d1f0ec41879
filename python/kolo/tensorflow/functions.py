"""Variables and Python objects across ranks: broadcast_variables (eager or
inside tf.function), broadcast_object and allgather_object (eager; the
bytes travel through kolo.numpy on the same engine)."""

import tensorflow as tf

from kolo.common.basics import global_process_set
from kolo.numpy import objects as _objects
from kolo.tensorflow.ops import broadcast


def broadcast_variables(variables, root_rank, process_set=global_process_set, inplace=True):
    """Assigns root_rank's value to every variable on every rank of the set.
    Eagerly it returns None; in a graph, the op that runs all assignments."""
    del inplace  # variables are always assigned in place
    if tf.executing_eagerly():
        for var in variables:
            var.assign(broadcast(var, root_rank, process_set=process_set))
        return None
    # In a graph each broadcast waits for the previous one's assignment. A
    # tf.function orders stateful ops by itself, but a TF1 graph run by a
    # session does not: there the independent broadcasts would start in any
    # order, each kernel blocking one of the few inter-op threads until every
    # rank submitted the same broadcast, and two ranks that picked different
    # ones would wait on each other for ever.
    assigns = []
    for var in variables:
        with tf.control_dependencies(assigns[-1:]):
            assigns.append(var.assign(broadcast(var, root_rank, process_set=process_set)))
    return tf.group(*assigns)


def broadcast_object(obj, root_rank=0, session=None, name=None, process_set=global_process_set):
    """root_rank's picklable `obj` on every rank of the set."""
    del session  # TF1 sessions do not exist here
    return _objects.broadcast_object(obj, root_rank, name=name, process_set=process_set)


def allgather_object(obj, session=None, name=None, process_set=global_process_set):
    """The list of every rank's picklable `obj`, in rank order within the set."""
    del session
    return _objects.allgather_object(obj, name=name, process_set=process_set)
