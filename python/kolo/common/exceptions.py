"""Exceptions users catch. KoloInternalError is the type the C++ binding
raises when a job step fails (lost peer, mismatch between ranks, shutdown);
Horovod's HorovodInternalError is the same class."""

from kolo._core import KoloInternalError


class HostsUpdatedInterrupt(RuntimeError):
    """Raised on every rank at the same step when the set of hosts changed
    (elastic training); ``skip_sync`` is True when no state needs syncing."""

    def __init__(self, skip_sync=False):
        super().__init__("the set of hosts changed")
        self.skip_sync = skip_sync


__all__ = ["KoloInternalError", "HostsUpdatedInterrupt"]
