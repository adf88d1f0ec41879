"""horovod.tensorflow.keras.elastic: Kolo's elastic Keras API
(kolo.tensorflow.keras.elastic) under Horovod's package name; the classes
and functions are kolo's own."""

from kolo.tensorflow.keras.elastic import *  # noqa: F401,F403
from kolo.tensorflow.keras.elastic import __all__ as _kolo_all

__all__ = list(_kolo_all)
