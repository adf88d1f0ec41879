"""KoloStrategy's Lightning-facing semantics on every rank of the job (kolorun
-np 2 and -np 3): the ranks it reports, reduce / all_gather / broadcast /
barrier / reduce_boolean_decision as Lightning's strategies define them, and a
real Trainer.fit whose weights must equal a serial computation of the same
data-parallel steps (rank 0's initial weights, gradients averaged over the
ranks' shards, accumulated batches, learning-rate scaling). Skipped on every
rank alike when PyTorch Lightning is not installed."""

import importlib.util
import time

import pytest
import torch

import kolo.torch as hvd

if importlib.util.find_spec("pytorch_lightning") is None:
    pytest.skip("PyTorch Lightning is not installed (make python-test installs the version "
                "the Makefile pins)", allow_module_level=True)

import kolo.lightning  # noqa: E402  before Lightning (see kolo/lightning/_torch_compat.py)
from kolo.lightning import KoloEnvironment, KoloStrategy  # noqa: E402
import pytorch_lightning as pl  # noqa: E402
from torch.distributed import ReduceOp  # noqa: E402

hvd.init()


@pytest.fixture(scope="module")
def strategy():
    return KoloStrategy()


# --- who is who -----------------------------------------------------------------------

def test_ranks_come_from_kolo(strategy):
    assert isinstance(strategy.cluster_environment, KoloEnvironment)
    assert strategy.cluster_environment.creates_processes_externally
    assert (strategy.world_size, strategy.global_rank) == (hvd.size(), hvd.rank())
    assert (strategy.local_rank, strategy.node_rank) == (hvd.local_rank(), hvd.cross_rank())
    assert strategy.is_global_zero == (hvd.rank() == 0)
    assert strategy.is_distributed
    assert strategy.distributed_sampler_kwargs == {"num_replicas": hvd.size(),
                                                    "rank": hvd.rank()}


def test_lightning_cannot_change_the_job(strategy):
    env = strategy.cluster_environment
    env.set_world_size(hvd.size())  # what the job already is: accepted
    with pytest.raises(ValueError, match="world size"):
        env.set_world_size(hvd.size() + 1)
    with pytest.raises(ValueError, match="global rank"):
        env.set_global_rank(hvd.rank() + 1)
    with pytest.raises(RuntimeError, match="no Lightning launcher"):
        env.main_address


def test_registered_names_build_kolo_strategies():
    registry = pl.strategies.StrategyRegistry
    for name in ("kolo", "horovod"):
        assert isinstance(registry.get(name), KoloStrategy)
    trainer = pl.Trainer(strategy="kolo", accelerator="cpu", devices=1, logger=False,
                         enable_progress_bar=False, enable_model_summary=False)
    assert isinstance(trainer.strategy, KoloStrategy)
    assert (trainer.world_size, trainer.global_rank) == (hvd.size(), hvd.rank())
    assert trainer.strategy.launcher is None  # the ranks exist: Lightning spawns none


def test_more_than_one_device_per_rank_is_refused():
    with pytest.raises(ValueError, match="one device per rank"):
        pl.Trainer(strategy=KoloStrategy(), accelerator="cpu", devices=2, logger=False)


# --- collectives ----------------------------------------------------------------------

def ranks():
    return torch.arange(hvd.size(), dtype=torch.float64)


@pytest.mark.parametrize("op, expected", [
    ("mean", lambda r: r.mean()), (None, lambda r: r.mean()), ("sum", lambda r: r.sum()),
    ("max", lambda r: r.max()), ("min", lambda r: r.min()), (ReduceOp.SUM, lambda r: r.sum()),
    (ReduceOp.MAX, lambda r: r.max()), (hvd.Sum, lambda r: r.sum()),
], ids=["mean", "default", "sum", "max", "min", "ReduceOp.SUM", "ReduceOp.MAX", "hvd.Sum"])
def test_reduce(strategy, op, expected):
    mine = torch.tensor([hvd.rank() + 1.0, -2.0 * hvd.rank()], dtype=torch.float64)
    result = strategy.reduce(mine, reduce_op=op) if op is not None else strategy.reduce(mine)
    want = torch.stack([expected(ranks() + 1), expected(-2 * ranks())])
    torch.testing.assert_close(result, want)
    assert mine[0] == hvd.rank() + 1  # the input is left as it was


def test_reduce_mean_of_integers_is_fractional(strategy):
    result = strategy.reduce(torch.tensor(hvd.rank(), dtype=torch.int64), reduce_op="mean")
    assert result.is_floating_point()
    assert result.item() == pytest.approx((hvd.size() - 1) / 2)


def test_reduce_passes_non_tensors_and_refuses_bad_arguments(strategy):
    assert strategy.reduce(3.5) == 3.5
    with pytest.raises(ValueError, match="unknown reduce_op"):
        strategy.reduce(torch.ones(1), reduce_op="median")
    with pytest.raises(TypeError, match="ProcessSet"):
        strategy.reduce(torch.ones(1), group="world")


def test_reduce_boolean_decision(strategy):
    only_rank0 = hvd.rank() == 0
    assert strategy.reduce_boolean_decision(only_rank0, all=True) == (hvd.size() == 1)
    assert strategy.reduce_boolean_decision(only_rank0, all=False)
    assert strategy.reduce_boolean_decision(True, all=True)
    assert not strategy.reduce_boolean_decision(False, all=False)


@pytest.mark.parametrize("shape", [(), (3,), (2, 2)], ids=["scalar", "vector", "matrix"])
def test_all_gather_stacks_every_rank(strategy, shape):
    mine = torch.full(shape, float(hvd.rank())) + torch.arange(max(1, torch.Size(shape).numel())
                                                              ).reshape(shape)
    gathered = strategy.all_gather(mine)
    assert gathered.shape == (hvd.size(), *shape)
    for r in range(hvd.size()):
        torch.testing.assert_close(gathered[r], mine - hvd.rank() + r)
    assert not gathered.requires_grad


def test_all_gather_sync_grads_carries_gradients(strategy):
    x = torch.full((2,), float(hvd.rank()), requires_grad=True)
    gathered = strategy.all_gather(x, sync_grads=True)
    # As under DDP: x's gradient sums what every rank's loss gives its slot (rank
    # r weighs slot s by s + 1, the same on every rank: size * (s + 1) in all).
    (gathered * torch.arange(1.0, hvd.size() + 1).unsqueeze(1)).sum().backward()
    torch.testing.assert_close(x.grad, torch.full((2,), (hvd.rank() + 1.0) * hvd.size()))


@pytest.mark.parametrize("src", sorted({0, hvd.size() - 1}))
def test_broadcast_returns_the_source_object(strategy, src):
    mine = {"rank": hvd.rank(), "weights": torch.full((2,), float(hvd.rank())), "path": "x"}
    got = strategy.broadcast(mine, src=src)
    assert got["rank"] == src and got["path"] == "x"
    torch.testing.assert_close(got["weights"], torch.full((2,), float(src)))


def test_barrier_waits_for_the_last_rank(strategy):
    strategy.barrier("align")  # start together
    started = time.monotonic()
    if hvd.rank() == hvd.size() - 1:
        time.sleep(0.5)
    strategy.barrier("after sleep")
    waited = time.monotonic() - started
    assert waited >= 0.45, f"barrier returned after {waited:.3f} s, before the last rank came"


# --- a real Trainer.fit against a serial computation ------------------------------------

SAMPLES_PER_RANK, FEATURES, LR = 4, 3, 0.1


class Regression(pl.LightningModule):
    def __init__(self, seed):
        super().__init__()
        torch.manual_seed(seed)  # rank-dependent: setup must make rank 0's the start
        self.layer = torch.nn.Linear(FEATURES, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=LR)


def job_data(batches_per_rank):
    """The whole job's samples, identical on every rank; Lightning's sampler hands
    rank r the samples r, r + size, ... (no shuffling: the loader is sequential)."""
    n = hvd.size() * SAMPLES_PER_RANK * batches_per_rank
    g = torch.Generator().manual_seed(7)
    x = torch.randn(n, FEATURES, generator=g)
    return x, x @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.3


def serial_step(layer, x, y, batches_per_rank, lr):
    """One SGD step on the average over ranks of each rank's accumulated gradient
    (Lightning divides each batch's loss by the number of accumulated batches)."""
    layer.zero_grad()
    for r in range(hvd.size()):
        shard_x, shard_y = x[r::hvd.size()], y[r::hvd.size()]
        for b in range(batches_per_rank):
            rows = slice(b * SAMPLES_PER_RANK, (b + 1) * SAMPLES_PER_RANK)
            loss = torch.nn.functional.mse_loss(layer(shard_x[rows]), shard_y[rows])
            (loss / batches_per_rank / hvd.size()).backward()
    with torch.no_grad():
        for p in layer.parameters():
            p -= lr * p.grad


@pytest.mark.parametrize("batches_per_rank, scale_lr", [(1, False), (2, False), (1, True)],
                         ids=["one-batch", "accumulate-2", "scale-lr"])
def test_fit_equals_serial_data_parallel_step(batches_per_rank, scale_lr):
    x, y = job_data(batches_per_rank)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y),
                                         batch_size=SAMPLES_PER_RANK)
    model = Regression(seed=100 + hvd.rank())
    trainer = pl.Trainer(strategy=KoloStrategy(scale_lr=scale_lr), accelerator="cpu",
                         devices=1, max_steps=1, accumulate_grad_batches=batches_per_rank,
                         logger=False, enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False)
    trainer.fit(model, loader)
    assert trainer.global_step == 1

    reference = Regression(seed=100).layer  # rank 0's initial weights
    lr = LR * hvd.size() if scale_lr else LR
    serial_step(reference, x, y, batches_per_rank, lr)
    torch.testing.assert_close(model.layer.weight, reference.weight, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(model.layer.bias, reference.bias, rtol=1e-5, atol=1e-6)
    assert trainer.optimizers[0].param_groups[0]["lr"] == pytest.approx(lr)


class ScheduledRegression(Regression):
    def configure_optimizers(self):
        optimizer = torch.optim.SGD(self.parameters(), lr=LR)
        return [optimizer], [torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)]


def test_scale_lr_scales_the_schedulers_base_rates_too():
    # The scheduler holds the optimizer Lightning built, the DistributedOptimizer
    # shares its param_groups: the scaled rate is halved after each of 2 epochs.
    x, y = job_data(batches_per_rank=2)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y),
                                         batch_size=SAMPLES_PER_RANK)
    trainer = pl.Trainer(strategy=KoloStrategy(), accelerator="cpu", devices=1, max_epochs=2,
                         logger=False, enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False)
    trainer.fit(ScheduledRegression(seed=1), loader)
    assert trainer.global_step == 4
    assert trainer.lr_scheduler_configs[0].scheduler.base_lrs == [pytest.approx(LR * hvd.size())]
    assert trainer.optimizers[0].param_groups[0]["lr"] == pytest.approx(LR * hvd.size() / 4)
