"""A small, deterministic elastic Keras job for test_elastic_keras.py.

    kolorun --min-np 2 ... python elastic_keras_train.py OUTDIR [--kill WORKER:ITERATION]

A Keras model (whichever tf.keras is: Keras 3, or tf-keras under
TF_USE_LEGACY_KERAS=1) trains with model.fit() under hvd.elastic.run,
KerasState and the three state callbacks (a commit after every batch);
its train_step averages gradients with hvd.DistributedGradientTape, so
every rank holds the same weights after every step. Each worker
(KOLO_ELASTIC_WORKER) appends JSON lines to OUTDIR/worker<id>.jsonl:

    {"event": "start", ...}   every attempt of the training function, after the sync
    {"event": "commit", ...}  after every commit (batch ends and epoch ends)
    {"event": "reset", ...}   from the reset callback, after joining a new round
    {"event": "done", ...}    training returned

Every event carries the worker id, round, rank, size, the optimizer's
iteration count, state.epoch, state.batch and a SHA-256 of the model's and
optimizer's variables ("checksum"). --kill WORKER:ITERATION SIGKILLs worker
WORKER right after it committed that iteration; --step-sleep sleeps before
every step, so a test can change the discovered hosts while the job runs.
"""

import argparse
import hashlib
import json
import os
import signal
import time

import numpy as np
import tensorflow as tf

import horovod.tensorflow as hvd_tf
import horovod.tensorflow.keras.elastic as elastic
from kolo.common.runtime import runtime
from kolo.tensorflow.elastic_state import optimizer_variables

parser = argparse.ArgumentParser()
parser.add_argument("outdir")
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--steps", type=int, default=6, help="steps per epoch")
parser.add_argument("--kill", default="", metavar="WORKER:ITERATION")
parser.add_argument("--step-sleep", type=float, default=0.0,
                    help="seconds to sleep before every step (time to change the hosts)")
parser.add_argument("--marker", default="", help="ignored: tells this job's processes apart")
args = parser.parse_args()
worker = int(os.environ.get("KOLO_ELASTIC_WORKER", "-1"))
kill_worker, kill_at = (int(v) for v in args.kill.split(":")) if args.kill else (-1, -1)
log_path = os.path.join(args.outdir, f"worker{worker}.jsonl")

tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)
hvd_tf.init()


class AveragingModel(tf.keras.Sequential):
    """fit()'s step with the gradients averaged over the ranks."""

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self(x, training=True) - y))
        grads = hvd_tf.DistributedGradientTape(tape).gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


rng = np.random.default_rng(1234)
features = rng.normal(size=(48, 6)).astype(np.float32)
targets = (features @ rng.normal(size=(6, 1)) + 0.1).astype(np.float32)
dataset = tf.data.Dataset.from_tensor_slices((features, targets)).repeat().batch(4)

tf.keras.utils.set_random_seed(hvd_tf.rank())  # different per rank: the first sync must fix it
model = AveragingModel([tf.keras.Input(shape=(6,)), tf.keras.layers.Dense(8, activation="tanh"),
                        tf.keras.layers.Dense(1)])
model.compile(optimizer=tf.keras.optimizers.SGD(0.05, momentum=0.9))
state = elastic.KerasState(model, epoch=0, batch=0)


def iterations():
    return int(state.model.optimizer.iterations.numpy())


def checksum():
    digest = hashlib.sha256()
    for var in list(state.model.variables) + optimizer_variables(state.model.optimizer):
        digest.update(np.asarray(var.numpy()).tobytes())
    return digest.hexdigest()


def log(event, **fields):
    engine = runtime()._engine
    record = {"event": event, "worker": worker, "pid": os.getpid(),
              "round": engine.elastic_round if engine is not None else None,
              "rank": engine.rank if engine is not None else None,
              "size": engine.size if engine is not None else None,
              "iterations": iterations(), "epoch": state.epoch, "batch": state.batch,
              "checksum": checksum()}
    record.update(fields)
    with open(log_path, "a") as f:
        f.write(json.dumps(record) + "\n")


class LogCommits(tf.keras.callbacks.Callback):
    """After CommitStateCallback: what was just committed."""

    def on_train_batch_begin(self, batch, logs=None):
        if args.step_sleep:
            time.sleep(args.step_sleep)

    def on_train_batch_end(self, batch, logs=None):
        log("commit", at="batch")
        if worker == kill_worker and iterations() == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    def on_epoch_end(self, epoch, logs=None):
        log("commit", at="epoch")


state.register_reset_callbacks([lambda: log("reset")])
callbacks = [elastic.UpdateEpochStateCallback(state), elastic.UpdateBatchStateCallback(state),
             elastic.CommitStateCallback(state), LogCommits()]


@elastic.run
def train(state):
    log("start")
    state.model.fit(dataset, steps_per_epoch=args.steps, epochs=args.epochs - state.epoch,
                    callbacks=callbacks, verbose=0)


train(state)
log("done")
