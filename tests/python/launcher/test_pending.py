"""kolo.common.pending on its own, with stand-in engine handles: an
interrupted wait keeps the operation (and so its buffers) until its handles
complete, and the kept list drops finished operations instead of growing.
The same behaviour in a real job is tests/python/multirank/test_interrupted_wait.py."""

import weakref

import pytest

from kolo.common.pending import InterruptedOperations, PendingOperation


class Buffer:
    """Stands in for a tensor: something a weak reference can watch."""


class StandInHandle:
    """An engine handle whose completion the test decides; wait_succeeded()
    behaves as if Ctrl-C arrived while the operation still runs."""

    def __init__(self):
        self.completed = False

    def is_completed(self):
        return self.completed

    def wait_succeeded(self):
        if not self.completed:
            raise KeyboardInterrupt
        return True

    def check(self):
        assert self.completed


def interrupted_operation(interrupted):
    """Starts an operation over a fresh buffer, interrupts its wait and drops
    every reference but the handle; returns (handle, watch on the buffer)."""
    handle = StandInHandle()
    buffer = Buffer()
    operation = PendingOperation([handle], buffer, lambda _: "done", interrupted)
    with pytest.raises(KeyboardInterrupt):
        operation.wait()
    return handle, weakref.ref(buffer)


def test_interrupted_wait_keeps_the_buffers_until_the_handles_complete():
    interrupted = InterruptedOperations()
    handle, watched = interrupted_operation(interrupted)
    interrupted.drop_finished()
    assert watched() is not None, "buffers released while the engine still runs the operation"
    handle.completed = True
    interrupted.drop_finished()
    assert watched() is None, "buffers still held after the operation finished"
    assert len(interrupted) == 0


def test_only_running_operations_stay_kept():
    interrupted = InterruptedOperations()
    operations = [interrupted_operation(interrupted) for _ in range(3)]
    assert len(interrupted) == 3
    for handle, _ in operations[:2]:
        handle.completed = True
    interrupted_operation(interrupted)  # keeping one drops the finished ones
    assert len(interrupted) == 2
    assert [watched() is None for _, watched in operations] == [True, True, False]


def test_completed_operation_gives_its_result_and_keeps_nothing():
    interrupted = InterruptedOperations()
    handle = StandInHandle()
    handle.completed = True
    assert PendingOperation([handle], Buffer(), lambda _: "done", interrupted).result() == "done"
    assert len(interrupted) == 0
