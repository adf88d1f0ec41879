"""horovod.tensorflow: Kolo's TensorFlow API (kolo.tensorflow) under
Horovod's package name; re-exports whatever kolo.tensorflow lists in
__all__. Without TensorFlow, importing it raises ImportError saying what to
install."""

from kolo.tensorflow import *  # noqa: F401,F403
from kolo.tensorflow import __all__ as _kolo_all
from horovod.common.exceptions import HorovodInternalError

__all__ = list(_kolo_all) + ["HorovodInternalError"]
