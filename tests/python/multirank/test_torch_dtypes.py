"""Every dtype Horovod's PyTorch API lists, in every collective where it
makes sense: plain, in place, grouped and on a process set. Each rank's
input is a known function of its rank, so every rank computes the
expected result itself. Values stay small enough for uint8 sums over three
ranks and are exact in float16 and bfloat16."""

import pytest
import torch

import kolo.torch as hvd
from process_set_case import set_case_fixture

DTYPES = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
          torch.bfloat16, torch.float32, torch.float64, torch.bool]
IDS = [str(d).replace("torch.", "") for d in DTYPES]
NUMERIC = [d for d in DTYPES if d != torch.bool]


def value(r, rows, dtype, cols=3):
    """Rank r's input: rows x cols, different per rank and per element."""
    base = torch.arange(rows * cols).reshape(rows, cols)
    if dtype == torch.bool:
        return ((base + r) % 3 == 0)
    return ((base % 5) + r + 1).to(dtype)


def summed(ranks, rows, dtype):
    """Sum over `ranks`; for bool, Kolo's Sum is a logical or."""
    if dtype == torch.bool:
        return torch.stack([value(r, rows, dtype) for r in ranks]).any(0)
    total = sum(value(r, rows, torch.int64) for r in ranks)
    return total.to(dtype)


case = set_case_fixture("dt")


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_allreduce(dtype, case):
    if not case.included:
        return
    ps, ranks, me = case.process_set, case.ranks, case.me
    out = hvd.allreduce(value(me, 2, dtype), op=hvd.Sum, name=case.tag, process_set=ps)
    assert out.dtype == dtype
    assert torch.equal(out, summed(ranks, 2, dtype))
    inplace = value(me, 2, dtype)
    hvd.allreduce_(inplace, op=hvd.Sum, name=case.tag + ".inplace", process_set=ps)
    assert torch.equal(inplace, summed(ranks, 2, dtype))
    grouped = hvd.grouped_allreduce([value(me, 1, dtype), value(me, 3, dtype)], op=hvd.Sum,
                                    name=case.tag + ".grouped", process_set=ps)
    assert [g.dtype for g in grouped] == [dtype, dtype]
    assert torch.equal(grouped[0], summed(ranks, 1, dtype))
    assert torch.equal(grouped[1], summed(ranks, 3, dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_allgather(dtype, case):
    if not case.included:
        return
    ps, ranks, me = case.process_set, case.ranks, case.me
    # Rank r contributes r + 1 rows: the first dimension differs per rank.
    out = hvd.allgather(value(me, me + 1, dtype), name=case.tag, process_set=ps)
    assert out.dtype == dtype
    assert torch.equal(out, torch.cat([value(r, r + 1, dtype) for r in ranks]))
    grouped = hvd.grouped_allgather([value(me, 1, dtype), value(me, me + 2, dtype)],
                                    name=case.tag + ".grouped", process_set=ps)
    assert torch.equal(grouped[0], torch.cat([value(r, 1, dtype) for r in ranks]))
    assert torch.equal(grouped[1], torch.cat([value(r, r + 2, dtype) for r in ranks]))


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_broadcast(dtype, case):
    if not case.included:
        return
    root = case.ranks[-1]
    out = hvd.broadcast(value(case.me, 2, dtype), root_rank=root, name=case.tag,
                        process_set=case.process_set)
    assert out.dtype == dtype
    assert torch.equal(out, value(root, 2, dtype))
    inplace = value(case.me, 2, dtype)
    hvd.broadcast_(inplace, root_rank=root, name=case.tag + ".inplace",
                   process_set=case.process_set)
    assert torch.equal(inplace, value(root, 2, dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_alltoall(dtype, case):
    if not case.included:
        return
    ranks, n, k = case.ranks, case.n, case.k
    # Without splits the k-th member gets row k of every member's value(r, n).
    out = hvd.alltoall(value(case.me, n, dtype), name=case.tag, process_set=case.process_set)
    assert out.dtype == dtype
    assert torch.equal(out, torch.cat([value(r, n, dtype)[k:k + 1] for r in ranks]))
    splits = [1 + j for j in range(n)]  # j + 1 rows to the j-th member
    rows = sum(splits)
    out, received = hvd.alltoall(value(case.me, rows, dtype), splits=splits,
                                 name=case.tag + ".splits", process_set=case.process_set)
    start = sum(splits[:k])
    assert torch.equal(out, torch.cat([value(r, rows, dtype)[start:start + k + 1] for r in ranks]))
    assert received.tolist() == [k + 1] * n


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_reducescatter(dtype, case):
    if not case.included:
        return
    ranks, n, k = case.ranks, case.n, case.k
    out = hvd.reducescatter(value(case.me, 2 * n, dtype), op=hvd.Sum, name=case.tag,
                            process_set=case.process_set)
    assert out.dtype == dtype
    assert torch.equal(out, summed(ranks, 2 * n, dtype)[2 * k:2 * k + 2])
    grouped = hvd.grouped_reducescatter([value(case.me, n, dtype), value(case.me, 3 * n, dtype)],
                                        op=hvd.Sum, name=case.tag + ".grouped",
                                        process_set=case.process_set)
    assert torch.equal(grouped[0], summed(ranks, n, dtype)[k:k + 1])
    assert torch.equal(grouped[1], summed(ranks, 3 * n, dtype)[3 * k:3 * k + 3])


@pytest.mark.parametrize("dtype", NUMERIC, ids=IDS[:-1])
def test_min_max_product(dtype):
    me, n = hvd.rank(), hvd.size()
    for op, reduce in ((hvd.Min, lambda t: t.min(0).values), (hvd.Max, lambda t: t.max(0).values),
                       (hvd.Product, lambda t: t.prod(0))):
        out = hvd.allreduce(value(me, 1, dtype), op=op, name=f"dt.{op}.{dtype}")
        stacked = torch.stack([value(r, 1, torch.int64) for r in range(n)])
        assert torch.equal(out, reduce(stacked).to(dtype)), (op, out)


def test_numpy_int16():
    np = pytest.importorskip("numpy")
    import kolo.numpy as kn

    me, n = hvd.rank(), hvd.size()
    out = kn.allreduce(np.full(3, 1000 * (me + 1), dtype=np.int16), op=kn.Sum, name="dt.np.i16")
    assert out.dtype == np.int16
    assert (out == 1000 * sum(range(1, n + 1))).all()
    gathered = kn.allgather(np.full((1, 2), me, dtype=np.int16), name="dt.np.i16.ag")
    assert gathered.dtype == np.int16 and gathered[:, 0].tolist() == list(range(n))
