"""horovod.tensorflow.keras: kolo.tensorflow.keras under Horovod's name."""

from kolo.tensorflow.keras import *  # noqa: F401,F403
from kolo.tensorflow.keras import __all__ as _kolo_all
from horovod.common.exceptions import HorovodInternalError
from horovod.tensorflow.keras import callbacks
from horovod.tensorflow.keras import elastic  # KerasState, the state callbacks, run

__all__ = list(_kolo_all) + ["HorovodInternalError"]
