"""broadcast_parameters, broadcast_optimizer_state, broadcast_object and
allgather_object on every rank of the job (kolorun -np 2 and -np 3).

Ranks start from rank-dependent seeds; the root's values are rebuilt
locally from its seed, so each rank checks against the exact expectation."""

import pytest
import torch

import kolo.torch as hvd
from torch_compare import assert_same

hvd.init()


def make_model(seed):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.BatchNorm1d(6),
                                torch.nn.Linear(6, 2))
    model(torch.randn(5, 4) + seed)  # running stats and num_batches_tracked differ by seed
    return model


def roots():
    return sorted({0, hvd.size() - 1})


# --- broadcast_parameters ---------------------------------------------------------------

@pytest.mark.parametrize("root", roots())
def test_broadcast_parameters_state_dict(root):
    model = make_model(seed=hvd.rank())
    hvd.broadcast_parameters(model.state_dict(), root_rank=root)
    assert_same(model.state_dict(), make_model(seed=root).state_dict())
    assert int(model[1].num_batches_tracked) == 1


@pytest.mark.parametrize("form", ["named_list", "named_generator", "parameters_list"])
def test_broadcast_parameters_named_parameters(form):
    root = hvd.size() - 1
    model = make_model(seed=hvd.rank())
    params = {"named_list": lambda: list(model.named_parameters()),
              "named_generator": model.named_parameters,
              "parameters_list": lambda: list(model.parameters())}[form]()
    hvd.broadcast_parameters(params, root_rank=root)
    expected = make_model(seed=root)
    for p, e in zip(model.parameters(), expected.parameters()):
        assert torch.equal(p.detach(), e.detach())
    # buffers are not parameters: still this rank's own
    assert torch.equal(model[1].running_mean, make_model(seed=hvd.rank())[1].running_mean)


def test_broadcast_parameters_rejects_other_types():
    with pytest.raises(ValueError, match="invalid params of type"):
        hvd.broadcast_parameters(torch.zeros(3), root_rank=0)
    with pytest.raises(ValueError, match="invalid params of type"):
        hvd.broadcast_parameters(42, root_rank=0)


# --- broadcast_optimizer_state ------------------------------------------------------------

OPTIMIZERS = {
    "sgd_momentum": lambda params: torch.optim.SGD(params, lr=0.1, momentum=0.9),
    "adam": lambda params: torch.optim.Adam(params, lr=0.01, betas=(0.8, 0.99)),
    "lbfgs": lambda params: torch.optim.LBFGS(params, lr=0.5, history_size=3, max_iter=4),
}


def trained(kind, seed, steps):
    """A model and optimizer trained `steps` steps on seed-dependent data."""
    model = make_model(seed=0)
    opt = OPTIMIZERS[kind](model.parameters())
    gen = torch.Generator().manual_seed(100 + seed)
    for _ in range(steps):
        x, y = torch.randn(8, 4, generator=gen), torch.randn(8, 2, generator=gen)

        def closure():
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            return loss

        opt.step(closure)
    for group in opt.param_groups:
        group["lr"] = group["lr"] * (seed + 1)  # a hyperparameter the root changed
    return model, opt


@pytest.mark.parametrize("kind", sorted(OPTIMIZERS))
@pytest.mark.parametrize("root", roots())
def test_broadcast_optimizer_state_makes_every_rank_the_roots(kind, root):
    # Different ranks train different numbers of steps on different data.
    _, opt = trained(kind, seed=hvd.rank(), steps=1 + hvd.rank())
    hvd.broadcast_optimizer_state(opt, root_rank=root)
    _, expected = trained(kind, seed=root, steps=1 + root)
    assert_same(opt.state_dict(), expected.state_dict())
    assert isinstance(opt.param_groups[0]["lr"], float)
    if kind == "adam":
        assert opt.param_groups[0]["betas"] == (0.8, 0.99)


def test_broadcast_optimizer_state_from_a_fresh_root_leaves_no_state():
    _, opt = trained("adam", seed=hvd.rank(), steps=0 if hvd.rank() == 0 else 2)
    hvd.broadcast_optimizer_state(opt, root_rank=0)
    assert opt.state_dict()["state"] == {}
    assert opt.param_groups[0]["lr"] == 0.01


def test_broadcast_optimizer_state_of_a_distributed_optimizer():
    model, base = trained("sgd_momentum", seed=hvd.rank(), steps=2)
    opt = hvd.DistributedOptimizer(base, named_parameters=model.named_parameters())
    hvd.broadcast_optimizer_state(opt, root_rank=0)
    _, expected = trained("sgd_momentum", seed=0, steps=2)
    assert_same(opt.state_dict(), expected.state_dict())


# --- broadcast_object / allgather_object ------------------------------------------------------

def square(v):
    return v * v


OBJECTS = [
    None, 7, 2.5, "text", b"\x00\xff" * 3,
    {"epoch": 3, "metrics": [1.5, (2, "x")], "nested": {"a": None}},
    torch.arange(6, dtype=torch.float64).reshape(2, 3),
    bytes(range(256)) * 4096,  # 1 MiB
]


@pytest.mark.parametrize("root", roots())
@pytest.mark.parametrize("index", range(len(OBJECTS)))
def test_broadcast_object(root, index):
    expected = OBJECTS[index]
    mine = expected if hvd.rank() == root else ("not this", hvd.rank())
    got = hvd.broadcast_object(mine, root_rank=root)
    if isinstance(expected, torch.Tensor):
        assert torch.equal(got, expected)
    else:
        assert got == expected


def test_broadcast_object_functions_and_names():
    fn = (lambda v: v + 41) if hvd.rank() == 0 else None
    got = hvd.broadcast_object(fn, root_rank=0, name="a_lambda")
    assert got(1) == 42
    assert hvd.broadcast_object(square if hvd.rank() == 0 else None, name="f")(3) == 9


def test_allgather_object_returns_every_ranks_object_in_rank_order():
    mine = {"rank": hvd.rank(), "payload": "x" * (1000 * hvd.rank())}
    got = hvd.allgather_object(mine)
    assert got == [{"rank": r, "payload": "x" * (1000 * r)} for r in range(hvd.size())]
    assert hvd.allgather_object(hvd.rank() * 10, name="ints") == \
        [r * 10 for r in range(hvd.size())]


# --- process sets ---------------------------------------------------------------------------------

def test_helpers_on_a_process_set():
    """The set is ranks 1 .. size-1; rank 0 takes no part."""
    members = list(range(1, hvd.size()))
    subset = hvd.add_process_set(members)
    try:
        if hvd.rank() not in members:
            return
        root = members[-1]
        assert hvd.allgather_object(hvd.rank(), process_set=subset) == members
        got = hvd.broadcast_object({"from": hvd.rank()}, root_rank=root, process_set=subset)
        assert got == {"from": root}
        model = make_model(seed=hvd.rank())
        hvd.broadcast_parameters(model.state_dict(), root_rank=root, process_set=subset)
        assert_same(model.state_dict(), make_model(seed=root).state_dict())
        _, opt = trained("adam", seed=hvd.rank(), steps=1 + hvd.rank())
        hvd.broadcast_optimizer_state(opt, root_rank=root, process_set=subset)
        assert_same(opt.state_dict(), trained("adam", seed=root, steps=1 + root)[1].state_dict())
        with pytest.raises(ValueError, match="root rank 0 is not in process set"):
            hvd.broadcast_object(1, root_rank=0, process_set=subset)
    finally:
        hvd.remove_process_set(subset)
