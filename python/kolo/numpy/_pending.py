"""An enqueued operation between its enqueue and its result.

The engine reads inputs and writes outputs in place until its handles
complete, and the binding does not own that memory: a PendingOp holds every
array involved until then. If the waiting thread is interrupted (Ctrl-C
while a collective runs) the operation is parked, still holding its arrays,
until the engine is done with them; freeing them earlier would let the
engine write into released memory.
"""

import threading

from kolo.common.runtime import runtime

_parked = []
_parked_lock = threading.Lock()


class PendingOp:
    """Engine handles of one user-level operation (several for grouped ones),
    the arrays they use, and `finish(handles) -> result` for after success."""

    __slots__ = ("handles", "keepalive", "finish")

    def __init__(self, handles, keepalive, finish):
        self.handles = list(handles)
        self.keepalive = keepalive
        self.finish = finish

    def is_completed(self):
        return all(h.is_completed() for h in self.handles)

    def wait(self):
        """Blocks until every handle completed, successfully or not."""
        try:
            for handle in self.handles:
                handle.wait(None)
        except BaseException:
            _park(self)
            raise

    def result(self):
        """Waits, then raises KoloInternalError for a failed operation or
        returns the result."""
        self.wait()
        return self.outcome()

    def outcome(self):
        """The result of a completed operation (raises its error, if any)."""
        for handle in self.handles:
            handle.check()
        return self.finish(self.handles)


def _park(op):
    with _parked_lock:
        _parked[:] = [p for p in _parked if not p.is_completed()]
        _parked.append(op)


def register(op):
    """Stores the operation under a new integer handle (the async API)."""
    return runtime().register(op)


def _lookup(handle):
    op = runtime().pending(handle)
    if not isinstance(op, PendingOp):
        raise ValueError(f"kolo.numpy: handle {handle} belongs to another framework's "
                         "module (e.g. kolo.torch); synchronize it there")
    return op


def poll(handle):
    """True when the asynchronous operation behind `handle` has finished;
    synchronize(handle) then returns without blocking."""
    return _lookup(handle).is_completed()


def synchronize(handle):
    """Waits for the asynchronous operation behind `handle` and returns its
    result; raises KoloInternalError if it failed. The handle is spent
    afterwards, unless the wait itself was interrupted (then it may be
    synchronized again)."""
    op = _lookup(handle)
    op.wait()
    runtime().release(handle)
    return op.outcome()
