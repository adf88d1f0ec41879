"""Horovod's Keras callbacks on tf.keras (Keras 3, or tf-keras with
TF_USE_LEGACY_KERAS=1); see callbacks_impl for what each does."""

import tensorflow as tf

from kolo.tensorflow.keras.callbacks_impl import callback_classes

(BroadcastGlobalVariablesCallback, MetricAverageCallback, LearningRateScheduleCallback,
 LearningRateWarmupCallback) = callback_classes(tf.keras.callbacks.Callback, __name__)

__all__ = ["BroadcastGlobalVariablesCallback", "MetricAverageCallback",
           "LearningRateScheduleCallback", "LearningRateWarmupCallback"]
