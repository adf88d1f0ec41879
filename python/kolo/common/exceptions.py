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


class WorkerRemovedError(Exception):
    """Raised by init() in an elastic job when kolorun left this worker out of
    the next round (its host was removed from discovery or blacklisted, or the
    job is ending). Not a KoloInternalError: nothing is retried; the process
    should exit (kolo.elastic.run exits with status 0)."""


__all__ = ["KoloInternalError", "HostsUpdatedInterrupt", "WorkerRemovedError"]
