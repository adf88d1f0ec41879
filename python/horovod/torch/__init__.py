"""horovod.torch: Kolo's PyTorch API (kolo.torch) under Horovod's package
name. It re-exports whatever kolo.torch lists in __all__, so new kolo.torch
names appear here without edits."""

from kolo.torch import *  # noqa: F401,F403
from kolo.torch import __all__ as _kolo_all
from horovod.common.exceptions import HorovodInternalError

__all__ = list(_kolo_all) + ["HorovodInternalError"]
