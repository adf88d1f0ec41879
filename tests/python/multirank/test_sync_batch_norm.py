"""SyncBatchNorm on every rank of the job (kolorun -np 2 and -np 3) against
torch's BatchNorm on the whole batch in one process, computed locally: each
rank knows the seeded global batch and takes its own rows of it."""

import pytest
import torch

import kolo.torch as hvd

hvd.init()

ATOL = 1e-5
CHANNELS = 3
REFERENCE = {2: torch.nn.BatchNorm1d, 3: torch.nn.BatchNorm1d, 4: torch.nn.BatchNorm2d,
             5: torch.nn.BatchNorm3d}
SPATIAL = {2: (), 3: (4,), 4: (3, 2), 5: (2, 3, 2)}


def rows_per_rank(uneven):
    """Rows of each rank's batch: equal shares of 12, or 2, 3, 4, ... rows."""
    n = hvd.size()
    return [r + 2 for r in range(n)] if uneven else [12 // n] * n


def global_input(dim, rows, step=0):
    gen = torch.Generator().manual_seed(10 * dim + step)
    x = torch.randn((sum(rows), CHANNELS) + SPATIAL[dim], generator=gen) * 3 + 1.5
    weights = torch.randn(x.shape, generator=gen)
    return x, weights


def my_slice(t, rows):
    start = sum(rows[:hvd.rank()])
    return t[start:start + rows[hvd.rank()]]


def loss_of(y, weights):
    # Not linear in y, so the input gradient depends on the statistics' own
    # gradient through every rank's rows.
    return (y * weights).sum() + 0.5 * (y ** 2).sum()


def make_pair(dim, **kwargs):
    torch.manual_seed(7)
    sync = hvd.SyncBatchNorm(CHANNELS, **kwargs)
    if sync.affine:
        with torch.no_grad():
            sync.weight.copy_(torch.rand(CHANNELS) + 0.5)
            sync.bias.copy_(torch.randn(CHANNELS))
    ref = REFERENCE[dim](CHANNELS, **kwargs)
    ref.load_state_dict(sync.state_dict())
    return sync, ref


def summed(t):
    return hvd.allreduce(t, op=hvd.Sum)


def check_training_steps(sync, ref, dim, rows, steps=2):
    for step in range(steps):
        x, weights = global_input(dim, rows, step)
        x_ref = x.clone().requires_grad_()
        y_ref = ref(x_ref)
        loss_of(y_ref, weights).backward()

        x_mine = my_slice(x, rows).clone().requires_grad_()
        y = sync(x_mine)
        loss_of(y, my_slice(weights, rows)).backward()

        assert torch.allclose(y, my_slice(y_ref, rows), atol=ATOL)
        assert torch.allclose(x_mine.grad, my_slice(x_ref.grad, rows), atol=ATOL)
        if sync.affine:
            # Local sums over this rank's rows; the ranks' sum is the whole batch's.
            assert torch.allclose(summed(sync.weight.grad), ref.weight.grad, atol=1e-4)
            assert torch.allclose(summed(sync.bias.grad), ref.bias.grad, atol=1e-4)
            sync.zero_grad()
            ref.zero_grad()
        if sync.track_running_stats:
            assert torch.allclose(sync.running_mean, ref.running_mean, atol=ATOL)
            assert torch.allclose(sync.running_var, ref.running_var, atol=ATOL)
            assert torch.equal(sync.num_batches_tracked, ref.num_batches_tracked)


@pytest.mark.parametrize("uneven", [False, True], ids=["equal", "uneven"])
@pytest.mark.parametrize("dim", [2, 3, 4, 5])
def test_training_matches_batch_norm_on_the_whole_batch(dim, uneven):
    sync, ref = make_pair(dim)
    check_training_steps(sync, ref, dim, rows_per_rank(uneven))


@pytest.mark.parametrize("kwargs", [dict(momentum=None), dict(affine=False),
                                    dict(track_running_stats=False), dict(eps=0.1)],
                         ids=["cumulative", "no_affine", "no_running_stats", "eps"])
def test_training_options(kwargs):
    sync, ref = make_pair(4, **kwargs)
    check_training_steps(sync, ref, 4, rows_per_rank(uneven=True), steps=3)


def test_eval_uses_running_stats_and_communicates_nothing():
    sync, ref = make_pair(4)
    check_training_steps(sync, ref, 4, rows_per_rank(uneven=False))
    sync.eval()
    ref.eval()
    if hvd.rank() == 0:  # only rank 0 evaluates: a collective here would hang
        x = torch.randn(5, CHANNELS, 3, 2)
        assert torch.allclose(sync(x), ref(x), atol=ATOL)
    hvd.barrier()


def test_eval_without_running_stats_normalizes_the_local_batch():
    sync, ref = make_pair(3, track_running_stats=False)
    sync.eval()
    ref.eval()
    x = torch.randn(4 + hvd.rank(), CHANNELS, 5)
    assert torch.allclose(sync(x), ref(x), atol=ATOL)


def test_process_set_of_one_rank_is_plain_batch_norm():
    singles = [hvd.add_process_set([r]) for r in range(hvd.size())]
    try:
        sync, ref = make_pair(2)
        sync.process_set = singles[hvd.rank()]
        x = torch.randn(6, CHANNELS) + hvd.rank()
        x_ref = x.clone().requires_grad_()
        x_mine = x.clone().requires_grad_()
        loss_of(ref(x_ref), 1.0).backward()
        loss_of(sync(x_mine), 1.0).backward()
        assert torch.allclose(x_mine.grad, x_ref.grad, atol=ATOL)
        assert torch.allclose(sync.running_var, ref.running_var, atol=ATOL)
    finally:
        for ps in singles:
            hvd.remove_process_set(ps)


def test_errors():
    sync = hvd.SyncBatchNorm(CHANNELS)
    with pytest.raises(ValueError, match="expected at least 2D input"):
        sync(torch.zeros(CHANNELS))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        sync(torch.zeros(1 if hvd.rank() == 0 else 0, CHANNELS))


def test_sync_batch_norm_inside_a_distributed_model_matches_one_process():
    """Conv -> SyncBatchNorm -> linear, trained 5 steps with the
    DistributedOptimizer, equals the same model with BatchNorm2d on the
    whole batch."""
    def build(norm):
        torch.manual_seed(11)
        return torch.nn.Sequential(torch.nn.Conv2d(2, CHANNELS, 3), norm(CHANNELS),
                                   torch.nn.ReLU(), torch.nn.Flatten(),
                                   torch.nn.Linear(CHANNELS * 4, 1))

    model, ref = build(hvd.SyncBatchNorm), build(torch.nn.BatchNorm2d)
    opt = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.05),
                                   named_parameters=model.named_parameters())
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.05)
    rows = rows_per_rank(uneven=False)
    for step in range(5):
        gen = torch.Generator().manual_seed(step)
        x, y = torch.randn(12, 2, 4, 4, generator=gen), torch.randn(12, 1, generator=gen)
        opt.zero_grad()
        # mean over the local rows; the optimizer's average makes it the global mean
        torch.nn.functional.mse_loss(model(my_slice(x, rows)), my_slice(y, rows)).backward()
        opt.step()
        ref_opt.zero_grad()
        torch.nn.functional.mse_loss(ref(x), y).backward()
        ref_opt.step()
    for p, e in zip(model.state_dict().values(), ref.state_dict().values()):
        assert torch.allclose(p.float(), e.float(), atol=ATOL)
