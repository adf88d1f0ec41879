"""horovod.tensorflow.elastic: Kolo's elastic TensorFlow API
(kolo.tensorflow.elastic) under Horovod's package name; the classes and
functions are kolo's own."""

from kolo.tensorflow.elastic import *  # noqa: F401,F403
from kolo.tensorflow.elastic import __all__ as _kolo_all

__all__ = list(_kolo_all)
