"""horovod.common: the framework-independent names scripts import from it."""

from horovod.common.exceptions import HorovodInternalError, HostsUpdatedInterrupt

__all__ = ["HorovodInternalError", "HostsUpdatedInterrupt"]
