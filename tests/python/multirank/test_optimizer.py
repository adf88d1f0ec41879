"""DistributedOptimizer on every rank of the job (kolorun -np 2 and -np 3).

Every rank knows the whole global batch (seeded), so each test computes the
single-process reference locally: one model on the concatenation of all
ranks' rows, with a plain optimizer."""

import copy
import warnings

import pytest
import torch

import kolo.torch as hvd
from kolo.torch import optimizer as optimizer_module
from kolo.torch import sparse_ops

hvd.init()

BATCH = 12  # the global batch; divisible by 2 and 3 ranks
ATOL = 1e-5


def make_model(seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 6),
                               torch.nn.Tanh(), torch.nn.Linear(6, 2))


def global_batch(step=0, rows=BATCH):
    gen = torch.Generator().manual_seed(1000 + step)
    return torch.randn(rows, 5, generator=gen), torch.randn(rows, 2, generator=gen)


def my_rows(t, members=None):
    """This rank's share of a global batch split over `members` (ranks)."""
    members = list(range(hvd.size())) if members is None else members
    n = t.shape[0] // len(members)
    i = members.index(hvd.rank())
    return t[i * n:(i + 1) * n]


def loss_fn(model, x, y):
    return torch.nn.functional.mse_loss(model(x), y)


def reference_grads(model, x, y):
    """Gradients of one process training on the whole batch `x`, `y`."""
    ref = copy.deepcopy(model)
    ref.zero_grad()
    loss_fn(ref, x, y).backward()
    return [p.grad.clone() for p in ref.parameters()]


def assert_close_list(actual, expected, atol=ATOL):
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert torch.allclose(a, e, atol=atol, rtol=0), (a - e).abs().max()


def grads(model):
    return [p.grad for p in model.parameters()]


def distributed_sgd(model, lr=0.1, **kwargs):
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    return hvd.DistributedOptimizer(opt, named_parameters=model.named_parameters(), **kwargs)


class _Spy:
    """Records the calls the optimizer makes to one async op."""

    def __init__(self, monkeypatch, name, module=optimizer_module):
        self.calls = []
        real = getattr(module, name)

        def spy(tensors, **kwargs):
            self.calls.append((tensors, kwargs))
            return real(tensors, **kwargs)

        monkeypatch.setattr(module, name, spy)


# --- equivalence ------------------------------------------------------------------

@pytest.mark.parametrize("make_opt", [
    lambda params: torch.optim.SGD(params, lr=0.1, momentum=0.9),
    lambda params: torch.optim.Adam(params, lr=0.01),
], ids=["sgd_momentum", "adam"])
def test_n_ranks_with_batch_over_n_match_one_rank_with_the_whole_batch(make_opt):
    steps = 20
    model, ref = make_model(), make_model()
    initial = [p.detach().clone() for p in model.parameters()]
    opt = hvd.DistributedOptimizer(make_opt(model.parameters()),
                                   named_parameters=model.named_parameters())
    ref_opt = make_opt(ref.parameters())
    for step in range(steps):
        x, y = global_batch(step)
        opt.zero_grad()
        loss_fn(model, my_rows(x), my_rows(y)).backward()
        opt.step()
        ref_opt.zero_grad()
        loss_fn(ref, x, y).backward()
        ref_opt.step()
    assert_close_list(list(model.parameters()), list(ref.parameters()))
    assert not torch.equal(initial[0], model[0].weight.detach())  # it did train


@pytest.mark.skipif(hvd.size() == 1, reason="one rank reduces nothing")
def test_gradients_are_averaged_during_backward(monkeypatch):
    model = make_model()
    single = _Spy(monkeypatch, "allreduce_async_")
    opt = distributed_sgd(model)
    x, y = global_batch()
    loss_fn(model, my_rows(x), my_rows(y)).backward()
    # backward itself started one reduction per parameter, named after it
    names = sorted(kw["name"] for _, kw in single.calls)
    assert names == sorted(f"allreduce.{n}" for n, _ in model.named_parameters())
    opt.synchronize()
    assert len(single.calls) == 6
    assert_close_list(grads(model), reference_grads(model, x, y))
    with opt.skip_synchronize():
        opt.step()


def test_sum_op_adds_the_ranks_gradients():
    model = make_model()
    opt = distributed_sgd(model, op=hvd.Sum)
    x, y = global_batch()
    loss_fn(model, my_rows(x), my_rows(y)).backward()
    opt.synchronize()
    expected = [g * hvd.size() for g in reference_grads(model, x, y)]
    assert_close_list(grads(model), expected)
    opt.zero_grad()  # allowed again after synchronize


def test_without_named_parameters_every_gradient_is_still_reduced():
    model = make_model()
    opt = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1))
    x, y = global_batch()
    loss_fn(model, my_rows(x), my_rows(y)).backward()
    opt.synchronize()
    assert_close_list(grads(model), reference_grads(model, x, y))


def test_wrapped_optimizer_keeps_class_defaults_and_state():
    model = make_model()
    base = torch.optim.SGD(model.parameters(), lr=0.25, momentum=0.5)
    model(torch.ones(1, 5)).sum().backward()
    base.step()  # builds momentum buffers before wrapping
    opt = hvd.DistributedOptimizer(base, named_parameters=model.named_parameters())
    assert isinstance(opt, torch.optim.SGD)
    assert type(opt).__name__ == "SGD"
    assert opt.defaults == base.defaults and opt.defaults["lr"] == 0.25
    assert opt.param_groups == base.param_groups
    for p in model.parameters():
        assert torch.equal(opt.state[p]["momentum_buffer"], base.state[p]["momentum_buffer"])
    opt.zero_grad()  # nothing pending: the wrapped backward above ran before the hooks existed


@pytest.mark.skipif(hvd.size() == 1, reason="needs a rank that uses the parameter")
def test_a_parameter_unused_on_rank_0_gets_the_others_average():
    torch.manual_seed(3)
    used, maybe = torch.nn.Linear(3, 1), torch.nn.Linear(3, 1)
    params = list(used.named_parameters()) + [("maybe." + n, p)
                                              for n, p in maybe.named_parameters()]
    opt = hvd.DistributedOptimizer(torch.optim.SGD([p for _, p in params], lr=0.1),
                                   named_parameters=params)
    x = torch.ones(2, 3) * (hvd.rank() + 1)
    out = used(x).sum()
    if hvd.rank() != 0:
        out = out + maybe(x).sum()
    out.backward()
    assert (maybe.weight.grad is None) == (hvd.rank() == 0)
    opt.synchronize()
    # d/dw sum(maybe(x)) = column sums of x = 2 * (rank + 1) per input.
    expected = sum(2.0 * (r + 1) for r in range(1, hvd.size())) / hvd.size()
    assert torch.allclose(maybe.weight.grad, torch.full((1, 3), expected))
    assert torch.allclose(maybe.bias.grad, torch.full((1,), 2.0 * (hvd.size() - 1) / hvd.size()))


# --- backward_passes_per_step ----------------------------------------------------------

def test_backward_passes_per_step_accumulates_locally_then_reduces_once():
    model = make_model()
    opt = distributed_sgd(model, backward_passes_per_step=2)
    x, y = global_batch()
    xs, ys = my_rows(x), my_rows(y)
    half = xs.shape[0] // 2
    local = copy.deepcopy(model)
    (loss_fn(local, xs[:half], ys[:half]) * 0.5).backward()

    (loss_fn(model, xs[:half], ys[:half]) * 0.5).backward()
    # Nothing was reduced after the first pass: the gradient is still local.
    assert_close_list(grads(model), grads(local), atol=0)
    with pytest.raises(AssertionError, match="zero_grad"):
        opt.zero_grad()
    (loss_fn(model, xs[half:], ys[half:]) * 0.5).backward()
    opt.synchronize()
    assert_close_list(grads(model), reference_grads(model, x, y))


def test_step_before_all_backward_passes_reduces_what_there_is():
    model = make_model()
    opt = distributed_sgd(model, backward_passes_per_step=3)
    x, y = global_batch()
    loss_fn(model, my_rows(x), my_rows(y)).backward()
    opt.synchronize()
    assert_close_list(grads(model), reference_grads(model, x, y))


@pytest.mark.parametrize("passes", [1, 2])
def test_more_backward_passes_than_declared_is_an_error(passes):
    model = make_model()
    opt = distributed_sgd(model, backward_passes_per_step=passes)
    x, y = global_batch()
    for _ in range(passes):
        loss_fn(model, my_rows(x), my_rows(y)).backward()
    with pytest.raises(AssertionError, match="backward ran more often than "
                                             "backward_passes_per_step allows"):
        loss_fn(model, my_rows(x), my_rows(y)).backward()
    opt.synchronize()  # finishes the reductions every rank started


def test_set_backward_passes_per_step():
    model = make_model()
    opt = distributed_sgd(model)
    opt.set_backward_passes_per_step(2)
    x, y = global_batch()
    xs, ys = my_rows(x), my_rows(y)
    half = xs.shape[0] // 2
    (loss_fn(model, xs[:half], ys[:half]) * 0.5).backward()
    (loss_fn(model, xs[half:], ys[half:]) * 0.5).backward()
    opt.synchronize()
    assert_close_list(grads(model), reference_grads(model, x, y))


# --- groups --------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["lists", "int", "num_groups"])
def test_groups_reduce_parameters_together(monkeypatch, kind):
    model = make_model()
    grouped = _Spy(monkeypatch, "grouped_allreduce_async_")
    single = _Spy(monkeypatch, "allreduce_async_")
    if kind == "lists":
        opt = distributed_sgd(model, groups=[[model[0].weight, model[2].weight],
                                             [model[4].bias]])
        expected_groups, expected_single = [2], 4  # four parameters reduced alone
    elif kind == "int":
        opt = distributed_sgd(model, groups=4)  # six parameters: 2, 2, 1, 1
        expected_groups, expected_single = [2, 2], 2
    else:
        with pytest.warns(DeprecationWarning, match="num_groups"):
            opt = distributed_sgd(model, num_groups=2)
        expected_groups, expected_single = [3, 3], 0
    x, y = global_batch()
    loss_fn(model, my_rows(x), my_rows(y)).backward()
    opt.synchronize()
    assert sorted(len(t) for t, _ in grouped.calls) == expected_groups
    assert len(single.calls) == expected_single
    assert all(kw["name"].startswith("grouped_allreduce.") for _, kw in grouped.calls)
    assert_close_list(grads(model), reference_grads(model, x, y))


def test_groups_errors():
    model = make_model()
    with pytest.raises(ValueError, match="groups must hold torch.Tensor"):
        distributed_sgd(model, groups=[[1, 2]])
    with pytest.raises(ValueError, match="appears in more than one group"):
        distributed_sgd(model, groups=[[model[0].weight], [model[0].weight]])
    with pytest.raises(ValueError, match="groups must be a positive integer"):
        distributed_sgd(model, groups=-1)


# --- ops and scaling ------------------------------------------------------------------

def test_gradient_predivide_factor_splits_the_average(monkeypatch):
    model = make_model()
    single = _Spy(monkeypatch, "allreduce_async_")
    opt = distributed_sgd(model, gradient_predivide_factor=4.0)
    x, y = global_batch()
    loss_fn(model, my_rows(x), my_rows(y)).backward()
    opt.synchronize()
    assert len(single.calls) == 6
    for _, kwargs in single.calls:
        assert kwargs["op"] == hvd.Average
        assert kwargs["prescale_factor"] == 0.25 and kwargs["postscale_factor"] == 4.0
    assert_close_list(grads(model), reference_grads(model, x, y))


def test_option_errors():
    model = make_model()
    with pytest.raises(ValueError, match="gradient_predivide_factor needs "
                                         "op=Average"):
        distributed_sgd(model, op=hvd.Sum, gradient_predivide_factor=2.0)
    with pytest.raises(ValueError, match="unknown reduction op"):
        distributed_sgd(model, op=42)
    with pytest.raises(ValueError, match="backward_passes_per_step"):
        distributed_sgd(model, backward_passes_per_step=0)
    with pytest.raises(TypeError, match="ProcessSet"):
        distributed_sgd(model, process_set=0)


def test_fp16_compression_sends_half_precision():
    model = make_model()
    opt = distributed_sgd(model, compression=hvd.Compression.fp16)
    x, y = global_batch()
    loss_fn(model, my_rows(x), my_rows(y)).backward()
    opt.synchronize()
    for g, ref in zip(grads(model), reference_grads(model, x, y)):
        assert g.dtype == torch.float32
        assert torch.equal(g, g.half().float())  # the values went through float16
        assert torch.allclose(g, ref, atol=2e-3, rtol=2e-3)


# --- named_parameters ----------------------------------------------------------------------

def test_named_parameters_errors():
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(ValueError, match="named_parameters must be \\(name, parameter\\) tuples"):
        hvd.DistributedOptimizer(opt, named_parameters=list(model.parameters()))
    dup = [("w", p) for p in model.parameters()]
    with pytest.raises(ValueError, match="names in named_parameters must be "
                                         "unique; repeated: w"):
        hvd.DistributedOptimizer(opt, named_parameters=dup)
    partial = list(model.named_parameters())[:-1]
    with pytest.raises(ValueError, match="named_parameters leaves some of the "
                                         "optimizer's parameters unnamed"):
        hvd.DistributedOptimizer(opt, named_parameters=partial)


# --- synchronize / step / zero_grad ------------------------------------------------------------

def test_skip_synchronize_steps_on_the_gradients_synchronize_produced():
    model = make_model()
    opt = distributed_sgd(model)
    before = [p.detach().clone() for p in model.parameters()]
    x, y = global_batch()
    loss_fn(model, my_rows(x), my_rows(y)).backward()
    opt.synchronize()
    for p in model.parameters():
        p.grad.mul_(0.0)  # e.g. clipping: must not be overwritten by step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with opt.skip_synchronize():
            opt.step()
    assert_close_list(list(model.parameters()), before, atol=0)


def test_step_after_synchronize_without_skip_warns():
    model = make_model()
    opt = distributed_sgd(model)
    x, y = global_batch()
    loss_fn(model, my_rows(x), my_rows(y)).backward()
    opt.synchronize()
    # Horovod's text, word for word.
    with pytest.warns(UserWarning, match="^optimizer.step\\(\\) called without "
                                         "optimizer.skip_synchronize\\(\\) context after "
                                         "optimizer.synchronize\\(\\). This can cause training "
                                         "slowdown."):
        opt.step()
    with warnings.catch_warnings():  # the flag was reset by step()
        warnings.simplefilter("error")
        opt.zero_grad()
        loss_fn(model, my_rows(x), my_rows(y)).backward()
        opt.step()


def test_zero_grad_while_reducing_is_an_error():
    model = make_model()
    opt = distributed_sgd(model)
    x, y = global_batch()
    loss_fn(model, my_rows(x), my_rows(y)).backward()
    with pytest.raises(AssertionError, match="optimizer.zero_grad\\(\\) while "
                                             "gradients are still being reduced"):
        opt.zero_grad()
    opt.step()
    opt.zero_grad()


def test_load_state_dict_finishes_the_step_in_flight():
    model = make_model()
    opt = distributed_sgd(model)
    saved = opt.state_dict()
    x, y = global_batch()
    loss_fn(model, my_rows(x), my_rows(y)).backward()
    opt.load_state_dict(saved)
    opt.zero_grad()  # nothing in flight any more
    loss_fn(model, my_rows(x), my_rows(y)).backward()
    opt.synchronize()
    assert_close_list(grads(model), reference_grads(model, x, y))


# --- sparse gradients -----------------------------------------------------------------------------

def _rank_indices(r):
    return torch.tensor([r, r + 1, 7, r])  # overlapping rows, one repeated


@pytest.mark.parametrize("sparse_as_dense", [False, True])
@pytest.mark.parametrize("op", [hvd.Average, hvd.Sum], ids=["average", "sum"])
def test_sparse_gradients(monkeypatch, sparse_as_dense, op):
    torch.manual_seed(5)
    emb = torch.nn.Embedding(10, 3, sparse=True)
    ref = copy.deepcopy(emb)
    weights = torch.randn(4, 3)
    gathers = _Spy(monkeypatch, "allgather_async", sparse_ops)
    opt = hvd.DistributedOptimizer(torch.optim.SGD(emb.parameters(), lr=0.5),
                                   named_parameters=emb.named_parameters(),
                                   sparse_as_dense=sparse_as_dense, op=op)
    (emb(_rank_indices(hvd.rank())) * weights).sum().backward()
    assert emb.weight.grad.is_sparse
    opt.synchronize()
    assert len(gathers.calls) == (0 if sparse_as_dense else 2)

    expected = torch.zeros(10, 3)
    for r in range(hvd.size()):
        ref.zero_grad()
        (ref(_rank_indices(r)) * weights).sum().backward()
        expected += ref.weight.grad.to_dense()
    if op == hvd.Average:
        expected /= hvd.size()
    assert emb.weight.grad.is_sparse
    assert torch.allclose(emb.weight.grad.to_dense(), expected, atol=ATOL)

    before = emb.weight.detach().clone()
    with opt.skip_synchronize():
        opt.step()
    assert torch.allclose(emb.weight.detach(), before - 0.5 * expected, atol=ATOL)


def test_sparse_gradient_in_a_group_needs_sparse_as_dense():
    emb = torch.nn.Embedding(10, 3, sparse=True)
    lin = torch.nn.Linear(3, 1)
    params = [("emb." + n, p) for n, p in emb.named_parameters()] + \
             [("lin." + n, p) for n, p in lin.named_parameters()]
    opt = hvd.DistributedOptimizer(torch.optim.SGD([p for _, p in params], lr=0.1),
                                   named_parameters=params, groups=1)
    with pytest.raises(ValueError, match="sparse_as_dense"):
        lin(emb(torch.tensor([1, 2]))).sum().backward()
    assert not opt._reductions  # nothing was left in flight


# --- process sets ----------------------------------------------------------------------

def test_process_set_reduces_over_its_members_only():
    """Ranks 0 .. size-2 train together; the last rank is no member: as in
    Horovod, it constructs and steps the optimizer as a plain one (with -np
    2 the set has one rank: its gradients stay local)."""
    members = list(range(hvd.size() - 1))
    subset = hvd.add_process_set(members)
    try:
        model = make_model()
        opt = distributed_sgd(model, process_set=subset)
        if hvd.rank() not in members:
            x, y = global_batch()
            loss_fn(model, x[:2], y[:2]).backward()
            local = reference_grads(model, x[:2], y[:2])
            before = [p.detach().clone() for p in model.parameters()]
            opt.step()  # nothing reduced, nobody waited for: the local step
            assert_close_list(grads(model), local, atol=0)
            assert_close_list([p.detach() for p in model.parameters()],
                              [b - 0.1 * g for b, g in zip(before, local)])
            return
        x, y = global_batch()
        loss_fn(model, my_rows(x, members), my_rows(y, members)).backward()
        opt.synchronize()
        assert_close_list(grads(model), reference_grads(model, x, y))
    finally:
        hvd.remove_process_set(subset)


def test_process_set_of_one_rank_is_the_plain_optimizer():
    singles = [hvd.add_process_set([r]) for r in range(hvd.size())]
    try:
        mine = singles[hvd.rank()]
        model = make_model()
        opt = distributed_sgd(model, process_set=mine, compression=hvd.Compression.fp16)
        x, y = global_batch()
        loss_fn(model, my_rows(x), my_rows(y)).backward()
        local = reference_grads(model, my_rows(x), my_rows(y))
        opt.synchronize()
        assert_close_list(grads(model), local, atol=0)  # no fp16 round trip either
        with opt.skip_synchronize():
            opt.step()
        # As in Horovod, one rank is the plain optimizer: extra backward
        # passes accumulate, and zero_grad() is always allowed.
        loss_fn(model, my_rows(x), my_rows(y)).backward()
        loss_fn(model, my_rows(x), my_rows(y)).backward()
        opt.zero_grad()
        loss_fn(model, my_rows(x), my_rows(y)).backward()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            opt.step()
    finally:
        for ps in singles:
            hvd.remove_process_set(ps)
