"""op=Adasum in kolo.torch, kolo.numpy and the horovod drop-in, against a
serial reference of Adasum's formula written here:

    adasum(a, b) = (1 - a.b / (2|a|^2)) a + (1 - a.b / (2|b|^2)) b

over Horovod's tree (ranks 0+1, 2+3, then the pairs), tensor by tensor.
Every rank builds every rank's input from its rank number, so each can
compute the expected result alone. Horovod runs Adasum on a power-of-two
number of ranks only; on others (make test's 3 ranks) the same calls must
raise Horovod's NotImplementedError."""

import numpy as np
import pytest
import torch

import horovod.torch as horovod_torch
import kolo.numpy as knp
import kolo.torch as hvd

SIZE = hvd.size()
POWER_OF_TWO = SIZE & (SIZE - 1) == 0
needs_power_of_two = pytest.mark.skipif(
    not POWER_OF_TWO, reason=f"Adasum runs on a power-of-two number of ranks, not {SIZE}")
NOT_POWER_OF_TWO = "non-power of 2 ranks"


def reference_pair(a, b):
    dot, aa, bb = float(a @ b), float(a @ a), float(b @ b)
    ca = 1 - dot / (2 * aa) if aa >= 1e-8 else 1.0
    cb = 1 - dot / (2 * bb) if bb >= 1e-8 else 1.0
    return ca * a + cb * b


def reference_adasum(vectors):
    """Horovod's tree over `vectors` (one per rank, flattened, float64)."""
    if len(vectors) == 1:
        return vectors[0]
    mid = len(vectors) // 2
    return reference_pair(reference_adasum(vectors[:mid]), reference_adasum(vectors[mid:]))


def rank_input(rank, shape, seed):
    """Correlated across ranks (a shared direction plus each rank's own), so
    no coefficient is trivially 1 or 1/2."""
    shared = np.random.default_rng(seed).standard_normal(shape)
    own = np.random.default_rng(seed * 1000 + rank + 1).standard_normal(shape)
    return shared + 0.8 * own + 0.1 * rank


def expected(shape, seed, dtype=np.float64):
    """The reference over every rank's input as stored in `dtype`."""
    inputs = [rank_input(r, shape, seed).astype(dtype).astype(np.float64).ravel()
              for r in range(SIZE)]
    return reference_adasum(inputs).reshape(shape)


TORCH_TOLERANCE = {torch.float64: 1e-10, torch.float32: 1e-5, torch.float16: 1e-2,
                   torch.bfloat16: 5e-2}


def assert_matches(result, want, rtol):
    got = np.asarray(result, dtype=np.float64)
    scale = max(np.abs(want).max(), 1e-30)
    assert np.abs(got - want).max() <= rtol * scale, (got, want)


def assert_same_on_every_rank(tensor, name):
    gathered = hvd.allgather(tensor.reshape(1, -1).to(torch.float64), name=name)
    assert (gathered == gathered[0]).all(), "ranks differ"


# --- kolo.torch ------------------------------------------------------------------

@needs_power_of_two
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_torch_allreduce_matches_the_formula(dtype):
    shape = (37, 5)
    x = torch.from_numpy(rank_input(hvd.rank(), shape, seed=1)).to(dtype)
    result = hvd.allreduce(x, op=hvd.Adasum, name=f"adasum.torch.{dtype}")
    assert result.dtype == dtype and result.shape == x.shape
    torch_to_numpy = {torch.float16: np.float16, torch.float32: np.float32,
                      torch.float64: np.float64}
    stored = torch_to_numpy.get(dtype)
    if stored is None:  # bfloat16 has no numpy type: round through torch
        inputs = [torch.from_numpy(rank_input(r, shape, 1)).to(dtype).to(torch.float64).numpy()
                  .ravel() for r in range(SIZE)]
        want = reference_adasum(inputs).reshape(shape)
    else:
        want = expected(shape, seed=1, dtype=stored)
    assert_matches(result.to(torch.float64).numpy(), want, TORCH_TOLERANCE[dtype])
    assert_same_on_every_rank(result, f"adasum.torch.{dtype}.check")


@needs_power_of_two
def test_torch_async_in_place_and_scaling():
    x = torch.from_numpy(rank_input(hvd.rank(), (100,), seed=2))
    handle = hvd.allreduce_async_(x, op=hvd.Adasum, name="adasum.inplace")
    assert hvd.synchronize(handle) is x
    assert_matches(x.numpy(), expected((100,), 2), 1e-10)
    y = torch.from_numpy(rank_input(hvd.rank(), (100,), seed=2))
    scaled = hvd.synchronize(hvd.allreduce_async(y, op=hvd.Adasum, prescale_factor=0.5,
                                                 postscale_factor=4.0, name="adasum.scaled"))
    # Adasum is homogeneous of degree one: prescale and postscale multiply.
    assert_matches(scaled.numpy(), 2.0 * expected((100,), 2), 1e-10)


@needs_power_of_two
def test_grouped_allreduce_gives_each_tensor_its_own_coefficients():
    # The first tensor is the same on every rank (Adasum averages it), the
    # second is orthogonal across ranks (Adasum adds it). Over their
    # concatenation the coefficients would be neither.
    same = torch.arange(1.0, 9.0, dtype=torch.float64)
    orthogonal = torch.zeros(SIZE, dtype=torch.float64)
    orthogonal[hvd.rank()] = 3.0
    out = hvd.grouped_allreduce([same, orthogonal], op=hvd.Adasum, name="adasum.grouped")
    assert torch.equal(out[0], same)
    assert torch.equal(out[1], torch.full((SIZE,), 3.0, dtype=torch.float64))
    tensors = [torch.from_numpy(rank_input(hvd.rank(), (n,), seed=10 + n)) for n in (1, 33, 400)]
    hvd.synchronize(hvd.grouped_allreduce_async_(tensors, op=hvd.Adasum, name="adasum.g2"))
    for n, t in zip((1, 33, 400), tensors):
        assert_matches(t.numpy(), expected((n,), 10 + n), 1e-10)


@needs_power_of_two
def test_fused_tensors_keep_their_own_coefficients():
    # Separate allreduces submitted together are fused by the engine into
    # one operation; each must still get its own coefficients.
    handles = []
    for i in range(6):
        t = torch.from_numpy(rank_input(hvd.rank(), (i * 17 + 1,), seed=20 + i))
        handles.append((i, hvd.allreduce_async(t, op=hvd.Adasum, name=f"adasum.fused.{i}")))
    for i, handle in handles:
        assert_matches(hvd.synchronize(handle).numpy(), expected((i * 17 + 1,), 20 + i), 1e-10)


def test_power_of_two_rule():
    if POWER_OF_TWO:
        hvd.allreduce(torch.ones(3), op=hvd.Adasum, name="adasum.rule")
        return
    # Horovod's error, raised before anything is enqueued.
    with pytest.raises(NotImplementedError, match=NOT_POWER_OF_TWO):
        hvd.allreduce(torch.ones(3), op=hvd.Adasum, name="adasum.rule")
    with pytest.raises(NotImplementedError, match=NOT_POWER_OF_TWO):
        hvd.grouped_allreduce([torch.ones(3)], op=hvd.Adasum, name="adasum.rule.g")
    with pytest.raises(NotImplementedError, match=NOT_POWER_OF_TWO):
        knp.allreduce(np.ones(3), op=knp.Adasum, name="adasum.rule.np")


@needs_power_of_two
def test_refused_where_it_is_not_defined():
    with pytest.raises(ValueError, match="reduce op adasum is not defined for int32"):
        hvd.allreduce(torch.ones(3, dtype=torch.int32), op=hvd.Adasum, name="adasum.int")
    with pytest.raises(ValueError, match="Adasum is defined for allreduce only"):
        hvd.reducescatter(torch.ones(SIZE, 2), op=hvd.Adasum, name="adasum.rs")


@needs_power_of_two
def test_op_mismatch_across_ranks_fails_on_every_rank():
    if SIZE == 1:
        pytest.skip("needs two ranks")
    op = hvd.Adasum if hvd.rank() == 0 else hvd.Sum
    with pytest.raises(hvd.KoloInternalError, match="adasum.mismatch"):
        hvd.allreduce(torch.ones(4), op=op, name="adasum.mismatch")
    # The engine goes on working.
    assert torch.equal(hvd.allreduce(torch.ones(2), op=hvd.Adasum, name="adasum.after"),
                       torch.ones(2))


@needs_power_of_two
def test_process_set_of_a_power_of_two_ranks():
    if SIZE < 4:
        pytest.skip("needs 4 ranks (a set of 2 inside)")
    ps = hvd.add_process_set([0, 1])
    try:
        if hvd.rank() in (0, 1):
            x = torch.from_numpy(rank_input(hvd.rank(), (50,), seed=30))
            out = hvd.allreduce(x, op=hvd.Adasum, name="adasum.ps", process_set=ps)
            want = reference_adasum([rank_input(r, (50,), 30) for r in (0, 1)])
            assert_matches(out.numpy(), want, 1e-10)
    finally:
        hvd.remove_process_set(ps)


# --- kolo.numpy and the horovod drop-in -------------------------------------------------

@needs_power_of_two
def test_numpy_allreduce_and_grouped():
    x = rank_input(hvd.rank(), (3, 11), seed=40).astype(np.float32)
    out = knp.allreduce(x, op=knp.Adasum, name="adasum.np")
    assert out.dtype == np.float32
    assert_matches(out, expected((3, 11), 40, np.float32), 1e-5)
    parts = [rank_input(hvd.rank(), (n,), seed=41 + n) for n in (2, 9)]
    outs = knp.grouped_allreduce(parts, op=knp.Adasum, name="adasum.np.g")
    for n, o in zip((2, 9), outs):
        assert_matches(o, expected((n,), 41 + n), 1e-10)
    y = rank_input(hvd.rank(), (7,), seed=50)
    knp.synchronize(knp.allreduce_async_(y, op=knp.Adasum, name="adasum.np.inplace"))
    assert_matches(y, expected((7,), 50), 1e-10)


@needs_power_of_two
def test_horovod_drop_in():
    assert horovod_torch.Adasum == hvd.Adasum == 2
    x = torch.from_numpy(rank_input(hvd.rank(), (64,), seed=60))
    out = horovod_torch.allreduce(x, op=horovod_torch.Adasum, name="adasum.horovod")
    assert_matches(out.numpy(), expected((64,), 60), 1e-10)
