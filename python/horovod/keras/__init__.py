"""horovod.keras: kolo.keras (the standalone keras package) under Horovod's name."""

from kolo.keras import *  # noqa: F401,F403
from kolo.keras import __all__ as _kolo_all
from horovod.common.exceptions import HorovodInternalError
from horovod.keras import callbacks
from horovod.keras import elastic  # KerasState, the state callbacks, run

__all__ = list(_kolo_all) + ["HorovodInternalError"]
