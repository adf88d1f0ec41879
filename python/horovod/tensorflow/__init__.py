"""horovod.tensorflow: Kolo's TensorFlow API (kolo.tensorflow) under
Horovod's package name; re-exports whatever kolo.tensorflow lists in
__all__. Without TensorFlow, importing it raises ImportError saying what to
install."""

from kolo.tensorflow import *  # noqa: F401,F403
from kolo.tensorflow import __all__ as _kolo_all
from horovod.common.exceptions import HorovodInternalError
import importlib as _importlib

# hvd.elastic is horovod.tensorflow.elastic (the star import above bound
# kolo.tensorflow.elastic to the name; both hold the same classes and functions).
elastic = _importlib.import_module("horovod.tensorflow.elastic")

__all__ = list(_kolo_all) + ["HorovodInternalError"]
