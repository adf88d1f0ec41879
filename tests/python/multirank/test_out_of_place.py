"""Out-of-place results from the engine's output cache (core/output_pool.h),
in kolo.torch and kolo.numpy: every output is right and shares no memory
with its input, a freed output is reused by the next call of its size, and
an output (or a view of one) that the caller still holds is never handed
out again."""

import time

import numpy as np
import pytest
import torch

import kolo.numpy as knp
import kolo.torch as hvd
from kolo.common.runtime import runtime

ROWS = 1 << 14  # 16384 x 4 floats: 256 KiB, a size class of its own in these tests


def contribution(shape=(ROWS, 4), dtype=torch.float32):
    return torch.full(shape, float(hvd.rank() + 1)).to(dtype)


def cached_bytes():
    """Freed outputs the engine's cache holds (the same memory could come back
    from malloc by chance too, so reuse is checked here and by address)."""
    return runtime().engine().cached_output_bytes


def cache_grows_to(at_least, timeout=10.0):
    """Whether the cache reaches `at_least` bytes within `timeout`: the engine
    thread may still hold a finished operation's handle for a moment after
    the caller got the result, and the handle holds an engine-allocated
    output."""
    deadline = time.monotonic() + timeout
    while cached_bytes() < at_least:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    return True


def ranks_sum():
    return hvd.size() * (hvd.size() + 1) / 2


def overlaps(a, b):
    """Whether two tensors' storages share any byte."""
    a0, b0 = a.storage().data_ptr(), b.storage().data_ptr()
    a1 = a0 + a.storage().nbytes()
    b1 = b0 + b.storage().nbytes()
    return a0 < b1 and b0 < a1


def test_allreduce_output_is_independent_of_its_input():
    x = contribution()
    out = hvd.allreduce(x, op=hvd.Sum, name="oop.independent")
    assert torch.all(out == ranks_sum())
    assert not overlaps(out, x)
    out.add_(100.0)
    assert torch.all(x == hvd.rank() + 1), "writing the output changed the input"
    x.add_(7.0)
    assert torch.all(out == ranks_sum() + 100.0), "writing the input changed the output"


def test_freed_output_is_reused_by_the_next_call():
    x = contribution()
    first = hvd.allreduce(x, op=hvd.Sum, name="oop.reuse")
    address = first.data_ptr()
    before = cached_bytes()
    del first
    assert cache_grows_to(before + x.numel() * x.element_size()), "the freed output stayed out"
    second = hvd.allreduce(x, op=hvd.Sum, name="oop.reuse")
    assert second.data_ptr() == address, "the cache did not hand the freed output out again"
    assert torch.all(second == ranks_sum())


def test_held_output_is_never_reused():
    x = contribution()
    held = hvd.allreduce(x, op=hvd.Sum, name="oop.held")
    outputs = [hvd.allreduce(x * (i + 2), op=hvd.Sum, name="oop.held") for i in range(3)]
    for i, out in enumerate(outputs):
        assert not overlaps(out, held)
        assert torch.all(out == ranks_sum() * (i + 2))
        out.fill_(-1.0)
    assert torch.all(held == ranks_sum()), "a later output overwrote one the caller holds"


def test_a_view_keeps_its_output_out_of_the_cache():
    x = contribution()
    out = hvd.allreduce(x, op=hvd.Sum, name="oop.view")
    view = out[ROWS // 2:]
    del out
    nxt = hvd.allreduce(x, op=hvd.Sum, name="oop.view")
    assert not overlaps(nxt, view)
    nxt.fill_(-1.0)
    assert torch.all(view == ranks_sum())


@pytest.mark.parametrize("dtype", [torch.bool, torch.float16, torch.int64], ids=str)
def test_allreduce_out_of_place_dtypes(dtype):
    if dtype == torch.bool:
        x = torch.tensor([hvd.rank() == 0, True, False])
        out = hvd.allreduce(x, op=hvd.Max, name="oop.bool")
        assert out.dtype == torch.bool and out.tolist() == [True, True, False]
        return
    x = contribution((5, 3), dtype)
    out = hvd.allreduce(x, op=hvd.Sum, name=f"oop.{dtype}")
    assert out.dtype == dtype and out.shape == x.shape
    assert torch.all(out.to(torch.float64) == ranks_sum())


def test_grouped_and_broadcast_outputs_are_distinct():
    xs = [contribution() for _ in range(3)]
    outs = hvd.grouped_allreduce(xs, op=hvd.Sum, name="oop.group")
    for i, out in enumerate(outs):
        assert torch.all(out == ranks_sum())
        assert not any(overlaps(out, other) for other in outs[i + 1:] + xs)
    b = hvd.broadcast(contribution(), root_rank=0, name="oop.bcast")
    assert torch.all(b == 1.0) and not any(overlaps(b, o) for o in outs)


def test_autograd_allreduce_out_of_place():
    x = contribution((4, 4)).requires_grad_()
    y = hvd.allreduce(x, op=hvd.Sum, name="oop.grad")
    y.sum().backward()
    assert torch.all(x.grad == hvd.size())


def first_bytes(x):
    return x.numel() * x.element_size() * hvd.size()


def test_engine_allocated_output_reuse_and_no_alias():
    x = contribution()
    first = hvd.allgather(x, name="oop.gather")
    address = first.data_ptr()
    before = cached_bytes()
    del first
    assert cache_grows_to(before + first_bytes(x))
    second = hvd.allgather(x, name="oop.gather")
    assert second.data_ptr() == address
    third = hvd.allgather(x, name="oop.gather")
    assert not overlaps(second, third)
    third.fill_(0)
    for r in range(hvd.size()):
        assert torch.all(second[r * ROWS:(r + 1) * ROWS] == r + 1)


def numpy_address(array):
    return array.__array_interface__["data"][0]


def test_numpy_out_of_place_independent_and_reused():
    x = np.full((ROWS, 4), hvd.rank() + 1, dtype=np.float32)
    out = knp.allreduce(x, op=knp.Sum, name="oop.np")
    assert (out == ranks_sum()).all() and out.flags.writeable
    assert not np.shares_memory(out, x)
    out += 100
    assert (x == hvd.rank() + 1).all()
    address = numpy_address(out)
    before = cached_bytes()
    del out
    assert cache_grows_to(before + x.nbytes)
    again = knp.allreduce(x, op=knp.Sum, name="oop.np")
    assert numpy_address(again) == address, "the cache did not hand the freed output out again"
    held = knp.allreduce(x, op=knp.Sum, name="oop.np")
    assert not np.shares_memory(held, again)
    again[...] = -1
    assert (held == ranks_sum()).all()


def test_numpy_bool_and_broadcast_out_of_place():
    flags = np.array([hvd.rank() == 0, True, False])
    out = knp.allreduce(flags, op=knp.Max, name="oop.np.bool")
    assert out.dtype == np.bool_ and out.tolist() == [True, True, False]
    b = knp.broadcast(np.arange(6, dtype=np.int32) + hvd.rank(), root_rank=0, name="oop.np.b")
    assert b.tolist() == list(range(6))
