"""Gradients of the differentiable ops (Horovod's conventions), checked
against closed forms: every rank's loss is sum(w_r * output) with weights
w_r known to every rank, so the expected input gradient is computable."""

import torch

import kolo.torch as hvd


def weights(r, shape):
    return torch.arange(1, 1 + torch.Size(shape).numel(), dtype=torch.float64).reshape(shape) * (
        r + 1)


def all_weights(shape):
    return torch.stack([weights(r, shape) for r in range(hvd.size())])


def test_allreduce_gradient_reduces_with_the_same_op():
    x = torch.ones(2, 3, dtype=torch.float64, requires_grad=True)
    (hvd.allreduce(x, op=hvd.Sum, name="g.ar") * weights(hvd.rank(), (2, 3))).sum().backward()
    assert torch.allclose(x.grad, all_weights((2, 3)).sum(0))

    y = torch.ones(2, 3, dtype=torch.float64, requires_grad=True)
    (hvd.allreduce(y, name="g.ar.avg") * weights(hvd.rank(), (2, 3))).sum().backward()
    assert torch.allclose(y.grad, all_weights((2, 3)).mean(0))


def test_grouped_allreduce_gradient():
    xs = [torch.ones(k + 1, dtype=torch.float64, requires_grad=True) for k in range(3)]
    outs = hvd.grouped_allreduce(xs, op=hvd.Sum, name="g.gar")
    sum(((o * weights(hvd.rank(), o.shape)).sum() for o in outs)).backward()
    for k, x in enumerate(xs):
        assert torch.allclose(x.grad, all_weights((k + 1,)).sum(0))


def test_allgather_gradient_is_own_rows_of_average():
    me, n = hvd.rank(), hvd.size()
    x = torch.ones(me + 1, 2, dtype=torch.float64, requires_grad=True)
    out = hvd.allgather(x, name="g.ag")
    total = sum(r + 1 for r in range(n))
    (out * weights(me, (total, 2))).sum().backward()
    start = sum(r + 1 for r in range(me))
    expected = all_weights((total, 2)).mean(0)[start:start + me + 1]
    assert torch.allclose(x.grad, expected)


def test_broadcast_gradient_lands_on_root():
    x = torch.ones(4, dtype=torch.float64, requires_grad=True)
    (hvd.broadcast(x, root_rank=0, name="g.bc") * weights(hvd.rank(), (4,))).sum().backward()
    expected = all_weights((4,)).mean(0) if hvd.rank() == 0 else torch.zeros(4, dtype=torch.float64)
    assert torch.allclose(x.grad, expected)


def test_alltoall_gradient_is_reverse_alltoall():
    me, n = hvd.rank(), hvd.size()
    splits = [d + 1 for d in range(n)]  # rank me sends d+1 rows to rank d
    x = torch.ones(sum(splits), dtype=torch.float64, requires_grad=True)
    out, received = hvd.alltoall(x, splits=splits, name="g.a2a")
    assert received.tolist() == [me + 1] * n
    # The loss weighs row j received from rank r with 10*r + j.
    w = torch.cat([10.0 * r + torch.arange(me + 1, dtype=torch.float64) for r in range(n)])
    (out * w).sum().backward()
    # Row j of the block this rank sent to rank d came back weighted 10*me + j.
    expected = torch.cat([10.0 * me + torch.arange(d + 1, dtype=torch.float64) for d in range(n)])
    assert torch.allclose(x.grad, expected)


def _reducescatter_case(op, prescale, postscale, grouped):
    """Horovod's closed form of the reducescatter gradient: the allgather of
    the output gradients, times the set size for Sum (1 for Average), times
    prescale * postscale. Rank r's output gradient is weights(r)."""
    me, n = hvd.rank(), hvd.size()
    rows = [2, 1]  # two tensors for the grouped form: 2n and n rows
    xs = [torch.ones(k * n, 3, dtype=torch.float64, requires_grad=True) for k in rows]
    kwargs = dict(op=op, prescale_factor=prescale, postscale_factor=postscale)
    if grouped:
        outs = hvd.grouped_reducescatter(xs, name=f"g.grs.{op}.{prescale}", **kwargs)
    else:
        outs = [hvd.reducescatter(x, name=f"g.rs.{op}.{prescale}.{k}", **kwargs)
                for k, x in zip(rows, xs)]
    sum((o * weights(me, o.shape)).sum() for o in outs).backward()
    factor = prescale * postscale * (n if op == hvd.Sum else 1)
    for k, x in zip(rows, xs):
        expected = torch.cat([weights(r, (k, 3)) for r in range(n)]) * factor
        assert torch.allclose(x.grad, expected), (op, prescale, postscale, grouped, x.grad)


def test_reducescatter_gradient_sum_and_average():
    for grouped in (False, True):
        for op in (hvd.Sum, hvd.Average):
            _reducescatter_case(op, 1.0, 1.0, grouped)


def test_reducescatter_gradient_with_scale_factors():
    for grouped in (False, True):
        for op in (hvd.Sum, hvd.Average):
            _reducescatter_case(op, 0.5, 3.0, grouped)


def test_reducescatter_gradient_of_ones_is_horovods():
    """Horovod's own case: d(sum of reducescatter)/dx is size for Sum, 1 for
    Average (Kolo gave 1 and 1/size)."""
    n = hvd.size()
    for op, expected in ((hvd.Sum, float(n)), (hvd.Average, 1.0)):
        x = torch.ones(4 * n, 2, requires_grad=True)
        out = hvd.reducescatter(x, op=op, name=f"g.rs.ones.{op}")
        out.backward(torch.ones_like(out))
        assert torch.equal(x.grad, torch.full_like(x, expected)), (op, x.grad)