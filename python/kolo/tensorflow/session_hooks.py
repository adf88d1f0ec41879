"""TF1-style graph-and-session training (tf.compat.v1: placeholders,
MonitoredTrainingSession): broadcast_global_variables and
BroadcastGlobalVariablesHook, the two calls Horovod's TF1 scripts make to
start every rank from the root's weights.

Both build ordinary graph ops (kolo.tensorflow's broadcast kernels), so a
session runs them like any other op; eagerly there are no global variables
to collect, and broadcast_global_variables says what to call instead."""

import tensorflow as tf

from kolo.common.basics import global_process_set
from kolo.tensorflow.functions import broadcast_variables


def broadcast_global_variables(root_rank, process_set=global_process_set):
    """The op that assigns root_rank's value to every global variable of the
    default graph (tf.compat.v1.global_variables()) on every rank. Graph mode
    only: TF2 code keeps its variables in models and optimizers."""
    if tf.executing_eagerly():
        raise RuntimeError(
            "broadcast_global_variables() needs graph mode (tf.compat.v1 with eager "
            "execution disabled); eagerly, call "
            "hvd.broadcast_variables(model.variables + optimizer.variables, root_rank)")
    variables = tf.compat.v1.global_variables()
    if not variables:
        return tf.no_op(name="kolo_broadcast_no_global_variables")
    return broadcast_variables(variables, root_rank, process_set=process_set)


class BroadcastGlobalVariablesHook(tf.compat.v1.train.SessionRunHook):
    """Broadcasts root_rank's global variables once each session is created
    (and after a MonitoredTrainingSession restored a checkpoint or ran its
    initializers), so training starts from the same weights everywhere.

    The op is built in begin(), when the graph is complete; a hook reused
    with a new graph builds it again there."""

    def __init__(self, root_rank, device="", process_set=global_process_set):
        super().__init__()
        self.root_rank = root_rank
        self.device = device
        self.process_set = process_set
        self.bcast_op = None

    def begin(self):
        graph = tf.compat.v1.get_default_graph()
        if self.bcast_op is None or self.bcast_op.graph is not graph:
            with tf.device(self.device):
                self.bcast_op = broadcast_global_variables(self.root_rank, self.process_set)

    def after_create_session(self, session, coord):
        del coord
        session.run(self.bcast_op)
