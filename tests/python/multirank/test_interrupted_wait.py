"""Ctrl-C while a collective is in flight, under kolorun -np 2 and -np 3.

The wait ends with KeyboardInterrupt, but the engine goes on reading the
operation's input and writing its output until every rank has joined in, so
the binding has to keep that memory alive until the engine is done, and the
job has to stay usable afterwards.

Every rank but the last starts a 64 MiB allreduce and gets a real SIGINT while
it waits. The last rank joins that allreduce only after the others have
dropped every reference they held to its buffers and filled fresh 64 MiB
arrays with a canary value: memory freed early is unmapped (64 MiB is far
above malloc's mmap threshold) or handed to a canary, so the engine's writes
would crash the rank or overwrite a canary.
"""

import contextlib
import gc
import os
import signal
import threading
import weakref

import numpy as np
import pytest
import torch

import kolo.numpy
import kolo.torch

kolo.torch.init()
RANK = kolo.torch.rank()
SIZE = kolo.torch.size()
LATE = SIZE - 1  # the rank that joins the interrupted allreduce last

pytestmark = pytest.mark.skipif(SIZE < 2, reason="run under kolorun -np 2 or more")

COUNT = 16 * 2**20  # float32 elements: 64 MiB, far beyond what completes before the signal
CANARY = -7.0
SIGNAL_DELAY_SECONDS = 0.5


class Framework:
    def __init__(self, name, module, full, as_numpy):
        self.name = name
        self.module = module
        self.full = full  # (count, value) -> a float32 tensor or array
        self.as_numpy = as_numpy


FRAMEWORKS = {
    "torch": Framework("torch", kolo.torch, lambda n, v: torch.full((n,), float(v)),
                       lambda t: t.numpy()),
    "numpy": Framework("numpy", kolo.numpy, lambda n, v: np.full(n, v, dtype=np.float32),
                       np.asarray),
}


@pytest.fixture(params=sorted(FRAMEWORKS))
def framework(request):
    return FRAMEWORKS[request.param]


@contextlib.contextmanager
def sigint_after(seconds):
    """Sends this process a real SIGINT after `seconds`, with Python's own
    handler installed (a launcher may start ranks with SIGINT ignored)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        timer.join(10)
        signal.signal(signal.SIGINT, previous)


def expected_sum():
    return float(sum(r + 1 for r in range(SIZE)))


def fill_canaries(framework):
    """Fresh 64 MiB arrays: the allocator hands out freed memory first."""
    return [framework.full(COUNT, CANARY) for _ in range(2)]


def assert_canaries_intact(framework, canaries):
    for canary in canaries:
        values = framework.as_numpy(canary)
        assert (values == CANARY).all(), (
            f"rank {RANK}: the engine wrote into freed memory (canary now holds "
            f"{np.unique(values)[:5]})")


def let_late_rank_join(framework, name):
    """Only the late rank runs the interrupted allreduce here, after every
    other rank has been interrupted and set its canaries."""
    hvd = framework.module
    hvd.allreduce(framework.full(1, 0), name=f"{name}.ready")
    if RANK == LATE:
        result = hvd.allreduce(framework.full(COUNT, RANK + 1), name=name, op=hvd.Sum)
        assert (framework.as_numpy(result) == expected_sum()).all()


def wait_for_the_interrupted_allreduce(framework, name):
    """Returns once the interrupted allreduce has finished on this rank: the
    engine runs responses in the same order on every rank, and the late rank
    submits this one only after its allreduce returned."""
    framework.module.allreduce(framework.full(1, 0), name=f"{name}.done")


def assert_further_allreduce_correct(framework, name):
    hvd = framework.module
    result = hvd.allreduce(framework.full(COUNT, RANK + 1), name=f"{name}.after", op=hvd.Sum)
    assert (framework.as_numpy(result) == expected_sum()).all()


def check_interrupted_call_keeps_its_buffers(framework, name, call):
    """`call(tensor)` runs a synchronous allreduce that SIGINT interrupts; the
    engine must keep the tensor until it is done with it, and no longer."""
    if RANK != LATE:
        tensor = framework.full(COUNT, RANK + 1)
        watched_input = weakref.ref(tensor)
        with pytest.raises(KeyboardInterrupt), sigint_after(SIGNAL_DELAY_SECONDS):
            call(tensor)
        del tensor
        gc.collect()
        assert watched_input() is not None, (
            "the interrupted allreduce's input was released while the engine may still read it")
        canaries = fill_canaries(framework)
    let_late_rank_join(framework, name)
    wait_for_the_interrupted_allreduce(framework, name)
    if RANK != LATE:
        assert_canaries_intact(framework, canaries)
    assert_further_allreduce_correct(framework, name)
    gc.collect()
    if RANK != LATE:
        assert watched_input() is None, (
            "the interrupted allreduce's buffers are still held after the engine finished it")


def test_interrupted_allreduce_keeps_its_buffers_until_the_engine_is_done(framework):
    hvd = framework.module
    name = f"interrupted.sync.{framework.name}"
    check_interrupted_call_keeps_its_buffers(
        framework, name, lambda tensor: hvd.allreduce(tensor, name=name, op=hvd.Sum))


def test_interrupted_in_place_allreduce_keeps_its_tensor_until_the_engine_is_done():
    """hvd.allreduce_ (kolo.torch's hot path) spends its handle when the wait
    is interrupted, so only the runtime's interrupted operations keep the
    tensor the engine writes."""
    hvd = kolo.torch
    name = "interrupted.sync_in_place.torch"
    check_interrupted_call_keeps_its_buffers(
        FRAMEWORKS["torch"], name, lambda tensor: hvd.allreduce_(tensor, name=name, op=hvd.Sum))


def test_interrupted_synchronize_keeps_the_handle_and_its_buffers(framework):
    hvd = framework.module
    name = f"interrupted.async.{framework.name}"
    if RANK != LATE:
        # Only the operation holds its input and output from here on.
        handle = hvd.allreduce_async(framework.full(COUNT, RANK + 1), name=name, op=hvd.Sum)
        with pytest.raises(KeyboardInterrupt), sigint_after(SIGNAL_DELAY_SECONDS):
            hvd.synchronize(handle)
        gc.collect()
        assert not hvd.poll(handle), "the late rank has not joined, yet the allreduce finished"
        canaries = fill_canaries(framework)
    let_late_rank_join(framework, name)
    if RANK != LATE:
        result = hvd.synchronize(handle)
        assert (framework.as_numpy(result) == expected_sum()).all()
        assert_canaries_intact(framework, canaries)
    assert_further_allreduce_correct(framework, name)


def test_interrupted_in_place_synchronize_keeps_the_handle_and_its_tensor():
    """allreduce_async_'s hot path (kolo.torch) keeps the tensor it writes into
    through an interrupted wait, and its handle stays valid."""
    framework = FRAMEWORKS["torch"]
    hvd = framework.module
    name = "interrupted.async_in_place.torch"
    if RANK != LATE:
        tensor = framework.full(COUNT, RANK + 1)
        watched = weakref.ref(tensor)
        handle = hvd.allreduce_async_(tensor, name=name, op=hvd.Sum)
        del tensor  # only the operation holds it from here on
        with pytest.raises(KeyboardInterrupt), sigint_after(SIGNAL_DELAY_SECONDS):
            hvd.synchronize(handle)
        gc.collect()
        assert watched() is not None, (
            "the interrupted in-place allreduce's tensor was released while the engine writes it")
        assert not hvd.poll(handle), "the late rank has not joined, yet the allreduce finished"
        canaries = fill_canaries(framework)
    let_late_rank_join(framework, name)
    if RANK != LATE:
        result = hvd.synchronize(handle)
        assert result is watched()
        assert (framework.as_numpy(result) == expected_sum()).all()
        assert_canaries_intact(framework, canaries)
        del result
    assert_further_allreduce_correct(framework, name)  # a new operation drops finished ones
    gc.collect()
    if RANK != LATE:
        assert watched() is None, "the finished operation still holds its tensor"


def test_interrupted_grouped_synchronize_keeps_the_handle_and_its_tensors():
    """A grouped allreduce waits on one kolo._core.HandleGroup for all its
    tensors: an interrupted wait keeps every tensor the engine writes, and
    the handle stays valid."""
    framework = FRAMEWORKS["torch"]
    hvd = framework.module
    name = "interrupted.grouped.torch"
    half = COUNT // 2
    if RANK != LATE:
        tensors = [framework.full(half, RANK + 1) for _ in range(2)]
        watched = [weakref.ref(t) for t in tensors]
        handle = hvd.grouped_allreduce_async_(tensors, name=name, op=hvd.Sum)
        del tensors  # only the operation holds them from here on
        with pytest.raises(KeyboardInterrupt), sigint_after(SIGNAL_DELAY_SECONDS):
            hvd.synchronize(handle)
        gc.collect()
        assert all(w() is not None for w in watched), (
            "the interrupted group's tensors were released while the engine writes them")
        assert not hvd.poll(handle), "the late rank has not joined, yet the group finished"
        canaries = fill_canaries(framework)
    hvd.allreduce(framework.full(1, 0), name=f"{name}.ready")
    if RANK == LATE:
        outs = hvd.grouped_allreduce_([framework.full(half, RANK + 1) for _ in range(2)],
                                      name=name, op=hvd.Sum)
        assert all((framework.as_numpy(o) == expected_sum()).all() for o in outs)
    if RANK != LATE:
        result = hvd.synchronize(handle)
        assert [r is w() for r, w in zip(result, watched)] == [True, True]
        assert all((framework.as_numpy(r) == expected_sum()).all() for r in result)
        assert_canaries_intact(framework, canaries)
    assert_further_allreduce_correct(framework, name)
