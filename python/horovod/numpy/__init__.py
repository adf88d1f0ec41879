"""horovod.numpy: Kolo's NumPy API (kolo.numpy) under Horovod's package name."""

from kolo.numpy import *  # noqa: F401,F403
from kolo.numpy import __all__ as _kolo_all
from horovod.common.exceptions import HorovodInternalError

__all__ = list(_kolo_all) + ["HorovodInternalError"]
