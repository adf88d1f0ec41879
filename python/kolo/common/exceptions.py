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


class SettingsError(SystemExit, ValueError):
    """A KOLO_ setting in the environment is wrong (out of range, or against
    another one: a stall warning time above the shutdown time), found by
    init(). kolorun refuses such settings before any rank starts; a rank
    started by another launcher (mpirun, srun, torchrun) finds them here.
    A ValueError, so code that catches bad values still does; also a
    SystemExit, so when nothing catches it the process ends with its one
    line ("kolo: bad setting: ...") and exit status 1, not a traceback
    through the binding's internals on every rank."""

    def __init__(self, message):
        super().__init__(f"kolo: bad setting: {message}")
        # What Python prints when nothing catches it: the line with its
        # newline, so that it is one write. Python writes the message and
        # then a newline of its own; two writes per rank let mpirun merge two
        # ranks' messages into one line. The cost is an empty line after it;
        # str(self) stays the bare message.
        self.code = f"{self.args[0]}\n"


__all__ = ["KoloInternalError", "HostsUpdatedInterrupt", "WorkerRemovedError", "SettingsError"]
