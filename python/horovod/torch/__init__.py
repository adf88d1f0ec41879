"""horovod.torch: Kolo's PyTorch API (kolo.torch) under Horovod's package
name. It re-exports whatever kolo.torch lists in __all__, so new kolo.torch
names appear here without edits."""

from kolo.torch import *  # noqa: F401,F403
from kolo.torch import __all__ as _kolo_all
from horovod.common.exceptions import HorovodInternalError
import importlib as _importlib

# hvd.elastic is horovod.torch.elastic (the star import above bound
# kolo.torch.elastic to the name; both hold the same classes and functions).
elastic = _importlib.import_module("horovod.torch.elastic")

__all__ = list(_kolo_all) + ["HorovodInternalError"]
