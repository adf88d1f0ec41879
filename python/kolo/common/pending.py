"""An operation the engine may still be running, with every buffer it uses.

Until its handles complete, the engine reads inputs and writes outputs
through raw pointers into memory the binding does not own: the caller's
tensors and arrays, contiguous copies, outputs allocated for the caller, the
DLPack views of all of them. A PendingOperation holds them until then. A wait
that is interrupted (Ctrl-C, or any exception raised while waiting) unwinds
the caller's frames and drops the caller's references, so the operation then
moves to its runtime's InterruptedOperations, which hold it until the engine
reports it finished, successfully or not. kolo._core.InPlaceOperation (one
in-place allreduce, kolo.torch's hot path) follows the same rules with is_completed,
wait and outcome.
"""

import threading


class PendingOperation:
    """The engine handles of one user-level operation (several for grouped
    ones), the buffers they use, and `finish(handles) -> result`, called once
    all of them succeeded. Built by Runtime.operation()."""

    __slots__ = ("_handles", "_buffers", "_finish", "_interrupted", "_failed")

    def __init__(self, handles, buffers, finish, interrupted):
        self._handles = list(handles)
        self._buffers = buffers
        self._finish = finish
        self._interrupted = interrupted
        self._failed = None  # unknown until wait() saw every handle finish

    def is_completed(self):
        """True once the engine is done with every handle (successfully or not)."""
        return all(handle.is_completed() for handle in self._handles)

    def wait(self):
        """Blocks until the engine is done with every handle. An interrupted
        wait leaves the operation, buffers included, with the runtime's
        interrupted operations until the engine is done with it."""
        try:
            failed = False
            for handle in self._handles:
                if not handle.wait_succeeded():
                    failed = True
            self._failed = failed
        except BaseException:
            self._interrupted.keep(self)
            raise

    def outcome(self):
        """The result of a finished operation; raises KoloInternalError if it failed."""
        if self._failed is not False:
            for handle in self._handles:
                handle.check()
        return None if self._finish is None else self._finish(self._handles)

    def result(self):
        """Waits, then returns the result or raises the operation's error."""
        self.wait()
        return self.outcome()


def engine_value(handles):
    """finish() of an operation whose result is the engine's integer value
    (join: the last rank to join; add_process_set: the new set's id)."""
    return int(handles[0].value)


class InterruptedOperations:
    """Operations whose wait was interrupted while the engine still ran them.

    Nothing tells Python when the engine finishes, so finished operations are
    dropped whenever one is added and whenever a new operation starts
    (Runtime.operation): the list holds the operations still running plus at
    most those that finished since the last operation started.
    """

    def __init__(self):
        # Operations start on any thread (autograd hooks, user threads); an
        # append racing a rebuild of the list must not be lost.
        self._lock = threading.Lock()
        self._operations = []

    def keep(self, operation):
        with self._lock:
            self._operations = self._still_running()
            self._operations.append(operation)

    def drop_finished(self):
        if not self._operations:  # the common case costs no lock
            return
        with self._lock:
            self._operations = self._still_running()

    def __len__(self):
        return len(self._operations)

    def _still_running(self):
        return [op for op in self._operations if not op.is_completed()]
