"""allreduce_async_'s hot path (a contiguous CPU tensor, a plain op, a set
given by its id) against the general path, which the same call takes when
the set is given as a ProcessSet object: both must give the same bits, the
same errors, and leave no difference a program could see."""

import pytest
import torch

import kolo.torch as hvd

DTYPES = [torch.uint8, torch.int8, torch.int32, torch.int64, torch.float16, torch.bfloat16,
          torch.float32, torch.float64]
PLAIN_OPS = [None, "average", "sum", "min", "max", "product"]


def op_of(name):
    return None if name is None else {"average": hvd.Average, "sum": hvd.Sum, "min": hvd.Min,
                                      "max": hvd.Max, "product": hvd.Product}[name]


def contribution(dtype, shape=(4, 3)):
    """Small distinct values per rank that every dtype holds exactly."""
    n = shape[0] * shape[1]
    return ((torch.arange(n) % 5) + hvd.rank() + 1).reshape(shape).to(dtype)


def both_paths(tensor_fn, **kwargs):
    """(fast, general): the same in-place allreduce, once with the global set
    as id 0 (the hot path) and once as the ProcessSet object (the general one)."""
    fast, general = tensor_fn(), tensor_fn()
    h_fast = hvd.allreduce_async_(fast, process_set=0, **kwargs)
    h_general = hvd.allreduce_async_(general, process_set=hvd.global_process_set, **kwargs)
    assert hvd.synchronize(h_fast) is fast
    assert hvd.synchronize(h_general) is general
    return fast, general


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d)[6:])
@pytest.mark.parametrize("op", PLAIN_OPS, ids=str)
def test_the_hot_path_gives_the_general_paths_bits(dtype, op):
    fast, general = both_paths(lambda: contribution(dtype), op=op_of(op), name=None)
    assert torch.equal(fast, general)
    if op == "sum":
        assert not torch.equal(fast, contribution(dtype))  # it did reduce


def test_averaging_bools_is_refused_on_the_hot_path_too():
    with pytest.raises(ValueError, match="(?i)average.*bool|bool.*average"):
        hvd.allreduce_async_(torch.tensor([True, False]), name="fast.bool_average")


def test_bool_tensors_take_the_hot_path_with_their_real_type():
    fast, general = both_paths(lambda: torch.tensor([hvd.rank() == 0, False, True]), op=hvd.Max)
    assert fast.dtype == torch.bool
    assert torch.equal(fast, general)
    assert fast.tolist() == [True, False, True]


def test_scale_factors_apply_on_the_hot_path():
    fast, general = both_paths(lambda: torch.full((6,), float(hvd.rank() + 1)), op=hvd.Sum,
                               prescale_factor=0.5, postscale_factor=4.0)
    assert torch.equal(fast, general)
    expected = 4.0 * 0.5 * sum(range(1, hvd.size() + 1))
    assert fast.tolist() == [expected] * 6


def test_a_parameter_is_reduced_in_place_and_keeps_its_identity():
    param = torch.nn.Parameter(torch.full((5,), float(hvd.rank())), requires_grad=False)
    assert hvd.synchronize(hvd.allreduce_async_(param, op=hvd.Sum, name="fast.param")) is param
    assert param.tolist() == [float(sum(range(hvd.size())))] * 5


def test_the_names_a_step_uses_can_be_used_again_once_synchronized():
    tensors = [torch.full((16,), float(hvd.rank() + i)) for i in range(8)]
    for _ in range(3):
        handles = [hvd.allreduce_async_(t, name=f"fast.step.{i}", op=hvd.Sum)
                   for i, t in enumerate(tensors)]
        for h in handles:
            hvd.synchronize(h)
    # Step 1 sums every rank's r + i; steps 2 and 3 sum that same value size times each.
    ranks = sum(range(hvd.size()))
    for i, t in enumerate(tensors):
        assert t[0].item() == (ranks + i * hvd.size()) * hvd.size() ** 2


def test_a_name_in_flight_is_refused_on_the_hot_path_too():
    a, b = torch.ones(4), torch.ones(4)
    handle = hvd.allreduce_async_(a, name="fast.twice")
    with pytest.raises(ValueError, match="already in use"):
        hvd.allreduce_async_(b, name="fast.twice")
    hvd.synchronize(handle)


def test_a_non_contiguous_tensor_is_refused_as_before():
    t = torch.ones(4, 6).t()
    with pytest.raises(ValueError, match="contiguous"):
        hvd.allreduce_async_(t, name="fast.strided")


def test_what_the_hot_path_does_not_take_still_works():
    """average=, Adasum and a ProcessSet object go the general way."""
    t = torch.full((3,), float(hvd.rank() + 1))
    hvd.synchronize(hvd.allreduce_async_(t, average=False, name="fast.average_false"))
    assert t.tolist() == [float(sum(range(1, hvd.size() + 1)))] * 3
    with pytest.raises(ValueError, match="either op or the deprecated average"):
        hvd.allreduce_async_(t, average=True, op=hvd.Sum)
    with pytest.raises(TypeError):
        hvd.allreduce_async_([1.0, 2.0])
