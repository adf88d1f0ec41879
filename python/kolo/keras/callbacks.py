"""Horovod's Keras callbacks on the standalone `keras` package's Callback."""

import keras

from kolo.tensorflow.keras.callbacks_impl import callback_classes

(BroadcastGlobalVariablesCallback, MetricAverageCallback, LearningRateScheduleCallback,
 LearningRateWarmupCallback) = callback_classes(keras.callbacks.Callback, __name__)

__all__ = ["BroadcastGlobalVariablesCallback", "MetricAverageCallback",
           "LearningRateScheduleCallback", "LearningRateWarmupCallback"]
