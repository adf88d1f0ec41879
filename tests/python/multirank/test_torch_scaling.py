"""Scaling and averaging on integer and half types, against Horovod's rules
(its ScaleBuffer): prescale multiplies each rank's input before the sum,
postscale the sum, and Average is a postscale of postscale / size computed
in double. Integers are scaled in double and truncated toward zero (not
rounded); float16, bfloat16 and float32 in float32 with the factor rounded
to float32, the product rounded once to the type; float64 in double. The
expected values are computed here with exactly that arithmetic."""

import math

import pytest
import torch

import kolo.torch as hvd

INTEGERS = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]
FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


def ints(r, dtype, count=6):
    """Rank r's integer input; signed types get negative elements too, so
    truncation toward zero is seen on both sides."""
    values = [(7 * (i + 1) + 3 * r) % 40 + 1 for i in range(count)]
    if dtype != torch.uint8:
        values = [v if i % 2 == 0 else -v for i, v in enumerate(values)]
    return values


def scale_int(v, factor):
    return math.trunc(v * factor)


def expected_ints(dtype, count, prescale, postscale, n, average):
    factor = postscale / n if average else postscale
    sums = [sum(scale_int(v, prescale) for v in col)
            for col in zip(*[ints(r, dtype, count) for r in range(n)])]
    return torch.tensor([scale_int(s, factor) for s in sums], dtype=dtype)


@pytest.mark.parametrize("dtype", INTEGERS, ids=lambda d: str(d).replace("torch.", ""))
def test_integer_average_truncates(dtype):
    n = hvd.size()
    out = hvd.allreduce(torch.tensor(ints(hvd.rank(), dtype), dtype=dtype), op=hvd.Average,
                        name=f"sc.avg.{dtype}")
    assert torch.equal(out, expected_ints(dtype, 6, 1.0, 1.0, n, True)), out


@pytest.mark.parametrize("dtype", INTEGERS, ids=lambda d: str(d).replace("torch.", ""))
@pytest.mark.parametrize("op", [hvd.Sum, hvd.Average], ids=["sum", "average"])
@pytest.mark.parametrize("form", ["allreduce", "reducescatter"])
def test_integer_prescale_and_postscale_truncate(dtype, op, form):
    """Plain and grouped; reducescatter keeps this rank's two rows."""
    n, me = hvd.size(), hvd.rank()
    rows = 2 * n if form == "reducescatter" else 6
    x = torch.tensor(ints(me, dtype, rows), dtype=dtype)
    expected = expected_ints(dtype, rows, 0.7, 0.3, n, op == hvd.Average)
    if form == "reducescatter":
        expected = expected[2 * me:2 * me + 2]
    scaling = dict(op=op, prescale_factor=0.7, postscale_factor=0.3)
    out = getattr(hvd, form)(x, name=f"sc.{form}.{dtype}.{op}", **scaling)
    assert torch.equal(out, expected), (out, expected)
    grouped = getattr(hvd, "grouped_" + form)([x, x.clone()], name=f"sc.g{form}.{dtype}.{op}",
                                              **scaling)
    assert all(torch.equal(g, expected) for g in grouped)


def test_issue_values_average_to_horovods_results():
    """The values of the report: int32 sums 75, 71, 65 averaged over two
    ranks are 37, 35, 32 (truncated), not 38, 36, 32 (rounded to even)."""
    n, me = hvd.size(), hvd.rank()
    sums = torch.tensor([75, 71, 65], dtype=torch.int32)
    mine = sums if me == 0 else torch.zeros(3, dtype=torch.int32)
    out = hvd.allreduce(mine, op=hvd.Average, name="sc.issue")
    assert out.tolist() == [math.trunc(s * (1.0 / n)) for s in (75, 71, 65)]
    if n == 2:
        assert out.tolist() == [37, 35, 32]


def test_integer_average_under_join_divides_by_the_full_size():
    """The last rank joins at once (contributing zeros); the others average
    int32 values and then join. Horovod divides by the full size and
    truncates."""
    n, me = hvd.size(), hvd.rank()
    if me != n - 1:
        x = torch.tensor([75 + me, 71 - me, 65], dtype=torch.int32)
        out = hvd.allreduce(x, op=hvd.Average, name="sc.join")
        sums = [sum(75 + r for r in range(n - 1)), sum(71 - r for r in range(n - 1)),
                65 * (n - 1)]
        assert out.tolist() == [math.trunc(s * (1.0 / n)) for s in sums]
    hvd.join()


def _float_expected(dtype, inputs, prescale, postscale, n, average):
    """Each input scaled (float32 for the 16- and 32-bit types, rounded to the
    type), summed exactly (the values keep every partial sum exact), then
    scaled by postscale / size the same way."""
    compute = torch.float64 if dtype == torch.float64 else torch.float32

    def scale(t, factor):
        return (t.to(compute) * torch.tensor(factor, dtype=compute)).to(dtype)

    total = sum(scale(t, prescale).to(torch.float64) for t in inputs).to(dtype)
    return scale(total, postscale / n if average else postscale)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: str(d).replace("torch.", ""))
@pytest.mark.parametrize("op", [hvd.Sum, hvd.Average], ids=["sum", "average"])
def test_half_and_float_scaling(dtype, op):
    n, me = hvd.size(), hvd.rank()

    def mine(r):
        return torch.tensor([1.5 * (r + 1), -2.25, 3.0 + r, 0.125 * r], dtype=dtype)

    expected = _float_expected(dtype, [mine(r) for r in range(n)], 0.5, 3.0, n,
                               op == hvd.Average)
    out = hvd.allreduce(mine(me), op=op, prescale_factor=0.5, postscale_factor=3.0,
                        name=f"sc.f.{dtype}.{op}")
    assert out.dtype == dtype
    assert torch.equal(out, expected), (out, expected)


def test_float16_average_rounds_once_in_float32():
    """1/3 is not a float16: the product is computed in float32 with the
    factor as a float32 and rounded once to float16."""
    n = hvd.size()
    x = torch.tensor([1.0, 3.0, 1000.0, 0.1], dtype=torch.float16)
    out = hvd.allreduce(x, op=hvd.Sum, postscale_factor=1.0 / 3, name="sc.f16.third")
    total = (x.to(torch.float32) * n).to(torch.float16)
    expected = (total.to(torch.float32) * torch.tensor(1.0 / 3, dtype=torch.float32)).to(
        torch.float16)
    assert torch.equal(out, expected), (out, expected)
