"""horovod.torch.elastic: Kolo's elastic PyTorch API (kolo.torch.elastic)
under Horovod's package name; the classes and functions are kolo's own."""

from kolo.torch.elastic import *  # noqa: F401,F403
from kolo.torch.elastic import __all__ as _kolo_all

__all__ = list(_kolo_all)
