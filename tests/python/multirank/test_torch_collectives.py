"""kolo.torch collectives: results against references each rank computes
locally from what every rank contributed (rank r's input is a known
function of r)."""

import pytest
import torch

import kolo.torch as hvd

DTYPES = [torch.uint8, torch.int8, torch.int32, torch.int64, torch.float16, torch.bfloat16,
          torch.float32, torch.float64]
FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


def contribution(r, shape=(3, 5), dtype=torch.float32):
    """Rank r's input: small distinct values that every dtype holds exactly."""
    n = 1
    for d in shape:
        n *= d
    return ((torch.arange(n) % 7) + r + 1).reshape(shape).to(dtype)


def all_contributions(shape=(3, 5), dtype=torch.float32):
    return [contribution(r, shape, dtype) for r in range(hvd.size())]


def reference(op, shape=(3, 5), dtype=torch.float32):
    stack = torch.stack([c.to(torch.float64) for c in all_contributions(shape, dtype)])
    if op == hvd.Sum:
        out = stack.sum(0)
    elif op == hvd.Average:
        out = stack.mean(0)
    elif op == hvd.Min:
        out = stack.min(0).values
    elif op == hvd.Max:
        out = stack.max(0).values
    else:
        out = stack.prod(0)
    return out


def close(actual, expected, dtype):
    tol = {torch.float16: 1e-2, torch.bfloat16: 5e-2}.get(dtype, 1e-6)
    return torch.allclose(actual.to(torch.float64), expected.to(torch.float64), rtol=tol,
                          atol=tol)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", [hvd.Sum, hvd.Min, hvd.Max, hvd.Product],
                         ids=["sum", "min", "max", "product"])
def test_allreduce_every_dtype_and_op(dtype, op):
    x = contribution(hvd.rank(), dtype=dtype)
    out = hvd.allreduce(x, op=op, name=f"ar.{dtype}.{op}")
    expected = reference(op, dtype=dtype)
    if not dtype.is_floating_point:
        expected = expected.to(torch.int64).to(dtype)  # integer wrap-around, as the engine does
    assert out.dtype == dtype and out.shape == x.shape
    assert close(out, expected, dtype)
    assert torch.equal(x, contribution(hvd.rank(), dtype=dtype)), "input must not change"


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_allreduce_average_is_default(dtype):
    out = hvd.allreduce(contribution(hvd.rank(), dtype=dtype), name=f"avg.{dtype}")
    assert close(out, reference(hvd.Average, dtype=dtype), dtype)


def test_allreduce_deprecated_average_flag():
    x = contribution(hvd.rank())
    assert torch.allclose(hvd.allreduce(x, average=False, name="avgflag.sum"),
                          reference(hvd.Sum).float())
    assert torch.allclose(hvd.allreduce(x, average=True, name="avgflag.avg"),
                          reference(hvd.Average).float())


def test_allreduce_bool_is_logical_or_and_and():
    mine = torch.tensor([True, hvd.rank() == 0, False])
    assert hvd.allreduce(mine, op=hvd.Sum, name="bool.or").tolist() == [True, True, False]
    assert hvd.allreduce(mine, op=hvd.Min, name="bool.and").tolist() == [
        True, hvd.size() == 1, False]


def test_prescale_and_postscale():
    x = contribution(hvd.rank(), dtype=torch.float64)
    out = hvd.allreduce(x, op=hvd.Sum, prescale_factor=0.5, postscale_factor=3.0, name="scale")
    assert torch.allclose(out, reference(hvd.Sum, dtype=torch.float64) * 1.5)


def test_allreduce_in_place_and_async():
    x = contribution(hvd.rank())
    same = hvd.allreduce_(x, op=hvd.Sum, name="inplace")
    assert same is x and torch.allclose(x, reference(hvd.Sum).float())

    y = contribution(hvd.rank())
    handle = hvd.allreduce_async(y, op=hvd.Max, name="async")
    out = hvd.synchronize(handle)
    assert hvd.poll(hvd.allreduce_async_(y, op=hvd.Sum, name="async_")) in (True, False)
    assert torch.allclose(out, reference(hvd.Max).float())


def test_poll_becomes_true():
    handle = hvd.allreduce_async(torch.ones(4), name="poll")
    hvd.barrier()
    for _ in range(1000):
        if hvd.poll(handle):
            break
        torch.ones(1000).sum()
    out = hvd.synchronize(handle)
    assert torch.allclose(out, torch.ones(4))


def test_noncontiguous_input():
    x = contribution(hvd.rank(), shape=(4, 6)).t()
    assert not x.is_contiguous()
    out = hvd.allreduce(x, op=hvd.Sum, name="noncontig")
    assert torch.allclose(out, reference(hvd.Sum, shape=(4, 6)).float().t())


def test_grouped_allreduce_all_variants():
    xs = [contribution(hvd.rank(), shape=(i + 1, 3)) for i in range(4)]
    outs = hvd.grouped_allreduce(xs, op=hvd.Sum, name="group")
    for i, out in enumerate(outs):
        assert torch.allclose(out, reference(hvd.Sum, shape=(i + 1, 3)).float())
    outs = hvd.synchronize(hvd.grouped_allreduce_async(xs, name="group.async"))
    for i, out in enumerate(outs):
        assert torch.allclose(out, reference(hvd.Average, shape=(i + 1, 3)).float())
    same = hvd.grouped_allreduce_(xs, op=hvd.Max, name="group.inplace")
    for i, x in enumerate(xs):
        assert same[i] is x and torch.allclose(x, reference(hvd.Max, shape=(i + 1, 3)).float())


def test_fp16_compression_keeps_dtype():
    x = contribution(hvd.rank(), dtype=torch.float32)
    out = hvd.allreduce(x, op=hvd.Sum, compression=hvd.Compression.fp16, name="fp16")
    assert out.dtype == torch.float32
    assert torch.allclose(out, reference(hvd.Sum).float(), rtol=1e-3)


@pytest.mark.parametrize("dtype", DTYPES + [torch.bool], ids=str)
def test_allgather_rows_differ_per_rank(dtype):
    mine = torch.full((hvd.rank() + 1, 2), hvd.rank() + 1).to(dtype)
    out = hvd.allgather(mine, name=f"ag.{dtype}")
    expected = torch.cat([torch.full((r + 1, 2), r + 1).to(dtype) for r in range(hvd.size())])
    assert out.dtype == dtype and torch.equal(out, expected)


def test_allgather_async_and_grouped():
    out = hvd.synchronize(hvd.allgather_async(torch.tensor([hvd.rank()]), name="ag.async"))
    assert out.tolist() == list(range(hvd.size()))
    outs = hvd.grouped_allgather([torch.tensor([hvd.rank()]), torch.ones(hvd.rank() + 1, 2)],
                                 name="ag.group")
    assert outs[0].tolist() == list(range(hvd.size()))
    assert outs[1].shape == (sum(r + 1 for r in range(hvd.size())), 2)
    outs = hvd.synchronize(hvd.grouped_allgather_async([torch.tensor([2 * hvd.rank()])],
                                                       name="ag.group.async"))
    assert outs[0].tolist() == [2 * r for r in range(hvd.size())]


@pytest.mark.parametrize("root", [0, 1, 2])
def test_broadcast_from_every_root(root):
    if root >= hvd.size():
        root = hvd.size() - 1
    x = contribution(hvd.rank(), dtype=torch.float64)
    out = hvd.broadcast(x, root_rank=root, name=f"bc.{root}")
    assert torch.equal(out, contribution(root, dtype=torch.float64))
    assert torch.equal(x, contribution(hvd.rank(), dtype=torch.float64))
    same = hvd.broadcast_(x, root_rank=root, name=f"bc_.{root}")
    assert same is x and torch.equal(x, contribution(root, dtype=torch.float64))
    y = torch.tensor([hvd.rank()] * 3, dtype=torch.int32)
    assert hvd.synchronize(hvd.broadcast_async(y, root, name=f"bca.{root}")).tolist() == [root] * 3
    hvd.synchronize(hvd.broadcast_async_(y, root, name=f"bca_.{root}"))
    assert y.tolist() == [root] * 3


def test_alltoall_equal_parts():
    n = hvd.size()
    x = torch.arange(2 * n) + 100 * hvd.rank()
    out = hvd.alltoall(x, name="a2a.equal")
    expected = torch.cat([torch.arange(2 * hvd.rank(), 2 * hvd.rank() + 2) + 100 * r
                          for r in range(n)])
    assert torch.equal(out, expected)


def test_alltoall_with_splits_returns_received_splits():
    n, me = hvd.size(), hvd.rank()
    # rank r sends (r + d + 1) rows to rank d, each row tagged with (r, d).
    splits = [me + d + 1 for d in range(n)]
    rows = torch.cat([torch.tensor([[me, d]] * (me + d + 1)) for d in range(n)])
    out, received = hvd.alltoall(rows, splits=torch.tensor(splits, dtype=torch.int32),
                                 name="a2a.splits")
    assert received.tolist() == [r + me + 1 for r in range(n)]
    expected = torch.cat([torch.tensor([[r, me]] * (r + me + 1)) for r in range(n)])
    assert torch.equal(out, expected)
    out2, received2 = hvd.synchronize(hvd.alltoall_async(rows, splits=splits, name="a2a.async"))
    assert torch.equal(out2, expected) and torch.equal(received2, received)


def test_reducescatter_uneven_rows():
    n, me = hvd.size(), hvd.rank()
    rows = 2 * n + 1  # rank r gets rows // n rows, one more if r < rows % n
    x = contribution(me, shape=(rows, 3), dtype=torch.float64)
    out = hvd.reducescatter(x, op=hvd.Sum, name="rs.sum")
    counts = [rows // n + (1 if r < rows % n else 0) for r in range(n)]
    start = sum(counts[:me])
    full = reference(hvd.Sum, shape=(rows, 3), dtype=torch.float64)
    assert torch.allclose(out, full[start:start + counts[me]])
    avg = hvd.synchronize(hvd.reducescatter_async(x, name="rs.avg"))
    assert torch.allclose(avg, full[start:start + counts[me]] / n)


def test_grouped_reducescatter():
    n, me = hvd.size(), hvd.rank()
    xs = [contribution(me, shape=(2 * n, k + 1)) for k in range(3)]
    outs = hvd.grouped_reducescatter(xs, op=hvd.Sum, name="rs.group")
    for k, out in enumerate(outs):
        full = reference(hvd.Sum, shape=(2 * n, k + 1)).float()
        assert torch.allclose(out, full[2 * me:2 * me + 2])
    outs = hvd.synchronize(hvd.grouped_reducescatter_async(xs, op=hvd.Max, name="rs.group.a"))
    assert torch.allclose(outs[0], reference(hvd.Max, shape=(2 * n, 1)).float()[2 * me:2 * me + 2])


def test_barrier_and_join():
    hvd.barrier()
    last = hvd.join()
    assert 0 <= last < hvd.size()


def test_empty_tensors():
    out = hvd.allgather(torch.zeros(0, 3), name="empty.ag")
    assert out.shape == (0, 3)
    mixed = hvd.allgather(torch.zeros(hvd.rank() % 2, 3), name="empty.mixed")
    assert mixed.shape == (sum(r % 2 for r in range(hvd.size())), 3)
    assert hvd.allreduce(torch.zeros(0), name="empty.ar").shape == (0,)
