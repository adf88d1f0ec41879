"""What Horovod's Keras callbacks do, independent of which Keras runs
them: callback_classes(Callback) makes the four classes on the Callback
base of one Keras (tf.keras, Keras 3 or tf-keras, or standalone keras), so
kolo.tensorflow.keras.callbacks and kolo.keras.callbacks share this code."""

import numpy as np
import tensorflow as tf

from kolo.common.basics import rank, size
from kolo.tensorflow.functions import broadcast_variables
from kolo.tensorflow.ops import allreduce


def optimizer_variables(optimizer):
    if optimizer is None:
        return []
    found = optimizer.variables
    return list(found() if callable(found) else found)


def _scalar(value):
    return float(np.asarray(tf.convert_to_tensor(value)))


def get_learning_rate(optimizer):
    value = optimizer.learning_rate
    if callable(value) and not hasattr(value, "assign"):
        raise ValueError("kolo: the learning-rate callbacks set the optimizer's learning rate, "
                         "which here is a schedule; give the optimizer a number instead")
    return _scalar(value)


def set_learning_rate(optimizer, value):
    optimizer.learning_rate = value  # every Keras assigns its variable


class BroadcastGlobalVariablesImpl:
    """Rank root_rank's model and optimizer variables on every rank: the ones
    that exist when training begins (so the first step already starts from
    the same weights), then, after the first batch, the ones that step made
    (optimizer slots, layers built on first call), as Horovod does."""

    def __init__(self, root_rank, device=""):
        super().__init__()
        del device  # CPU tensors; the engine picks the transport
        self.root_rank = root_rank
        self.broadcast_done = False
        self._sent = set()

    def _broadcast_new(self):
        # A model without an Input layer has no weights before its first batch.
        built = getattr(self.model, "built", True)
        variables = ((list(self.model.variables) if built else [])
                     + optimizer_variables(self.model.optimizer))
        fresh = [v for v in variables if id(v) not in self._sent]
        if fresh:
            broadcast_variables(fresh, root_rank=self.root_rank)
        self._sent.update(id(v) for v in fresh)

    def on_train_begin(self, logs=None):
        if not self.broadcast_done:
            self._broadcast_new()

    def on_batch_end(self, batch, logs=None):
        if self.broadcast_done:
            return
        self._broadcast_new()
        self.broadcast_done = True


class MetricAverageImpl:
    """At each epoch's end, every numeric entry of `logs` (training and
    validation metrics) becomes its mean over the ranks, in place, so the
    callbacks after this one (checkpoints, early stopping, History) see the
    averages. One allreduce for all of them, in name order."""

    def __init__(self, device=""):
        super().__init__()
        del device

    def on_epoch_end(self, epoch, logs=None):
        if not logs:
            return
        names = sorted(k for k, v in logs.items() if np.ndim(v) == 0 and np.isreal(v))
        values = tf.constant([float(logs[k]) for k in names], dtype=tf.float64)
        averaged = allreduce(values, name=f"kolo.MetricAverageCallback.{len(names)}").numpy()
        for name, value in zip(names, averaged):
            logs[name] = float(value)


class LearningRateScheduleImpl:
    """Sets the learning rate to initial_lr * multiplier(epoch) for the epochs
    in [start_epoch, end_epoch): at each epoch's first batch (staircase) or
    at every batch with a fractional epoch; multiplier may be a number m
    (m ** epoch). momentum_correction scales a momentum kept in a variable by
    new_lr / old_lr for the batch the rate changes in."""

    def __init__(self, initial_lr, multiplier, start_epoch=0, end_epoch=None, staircase=True,
                 momentum_correction=True, steps_per_epoch=None):
        super().__init__()
        if initial_lr is None:
            raise ValueError("kolo: LearningRateScheduleCallback needs initial_lr")
        self.initial_lr = initial_lr
        self.multiplier = multiplier if callable(multiplier) else (lambda e: multiplier ** e)
        self.start_epoch = start_epoch
        self.end_epoch = end_epoch
        self.staircase = staircase
        self.momentum_correction = momentum_correction
        self.steps_per_epoch = steps_per_epoch
        self.current_epoch = None
        self._restore_momentum = None

    def _detect_steps_per_epoch(self):
        params = self.params or {}
        if params.get("steps"):
            return params["steps"]
        if params.get("samples") and params.get("batch_size"):
            return params["samples"] // params["batch_size"]
        raise ValueError(f"kolo: {type(self).__name__} could not tell the steps per epoch; "
                         "pass steps_per_epoch=")

    def _adjust(self, epoch):
        optimizer = self.model.optimizer
        old_lr = get_learning_rate(optimizer)
        new_lr = self.initial_lr * self.multiplier(epoch)
        set_learning_rate(optimizer, new_lr)
        momentum = getattr(optimizer, "momentum", None)
        if self.momentum_correction and hasattr(momentum, "assign") and old_lr:
            # A momentum held as a plain number is baked into the traced
            # step, so only a variable momentum can be corrected.
            self._restore_momentum = _scalar(momentum)
            momentum.assign(self._restore_momentum * new_lr / old_lr)

    def on_train_begin(self, logs=None):
        if not self.staircase and not self.steps_per_epoch:
            self.steps_per_epoch = self._detect_steps_per_epoch()

    def on_epoch_begin(self, epoch, logs=None):
        self.current_epoch = epoch

    def on_batch_begin(self, batch, logs=None):
        if self.current_epoch < self.start_epoch or (
                self.end_epoch is not None and self.current_epoch >= self.end_epoch):
            return
        if self.staircase:
            if batch == 0:
                self._adjust(self.current_epoch)
        else:
            self._adjust(self.current_epoch + float(batch) / self.steps_per_epoch)

    def on_batch_end(self, batch, logs=None):
        if self._restore_momentum is not None:
            self.model.optimizer.momentum.assign(self._restore_momentum)
            self._restore_momentum = None

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["lr"] = get_learning_rate(self.model.optimizer)


class LearningRateWarmupImpl(LearningRateScheduleImpl):
    """Goes from initial_lr / size to initial_lr over warmup_epochs, batch by
    batch (Goyal et al.'s gradual warmup), reaching initial_lr at the end of
    the last warmup epoch."""

    def __init__(self, initial_lr, warmup_epochs=5, momentum_correction=True,
                 steps_per_epoch=None, verbose=0):
        def multiplier(epoch):
            # One step ahead, so the rate reaches whole values at epoch ends.
            epoch += 1.0 / self.steps_per_epoch
            return 1.0 / size() * (epoch * (size() - 1) / warmup_epochs + 1)

        super().__init__(initial_lr, multiplier, start_epoch=0, end_epoch=warmup_epochs,
                         staircase=False, momentum_correction=momentum_correction,
                         steps_per_epoch=steps_per_epoch)
        self.verbose = verbose

    def on_epoch_end(self, epoch, logs=None):
        super().on_epoch_end(epoch, logs)
        if epoch == self.end_epoch - 1 and self.verbose > 0 and rank() == 0:
            print(f"\nEpoch {epoch + 1}: finished gradual learning rate warmup to "
                  f"{get_learning_rate(self.model.optimizer):g}.")


def callback_classes(callback_base, module):
    """The four callbacks on `callback_base` (one Keras's Callback), named as
    Horovod names them, living in `module`."""
    made = []
    for name, impl in (("BroadcastGlobalVariablesCallback", BroadcastGlobalVariablesImpl),
                       ("MetricAverageCallback", MetricAverageImpl),
                       ("LearningRateScheduleCallback", LearningRateScheduleImpl),
                       ("LearningRateWarmupCallback", LearningRateWarmupImpl)):
        made.append(type(name, (impl, callback_base),
                         {"__module__": module, "__doc__": impl.__doc__}))
    return made


__all__ = ["callback_classes"]
