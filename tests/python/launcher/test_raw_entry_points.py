"""kolo._core's raw entry points on their own (one process, size 1): the
tensors kolo.torch describes by data pointer, shape and dtype code instead of
a DLPack export (the per-gradient hot path), what they refuse, and that
kolo.torch takes that path for allreduce."""

import pytest
import torch

import kolo.torch as hvd
from kolo import _core
from kolo.common.runtime import runtime
from kolo.torch.tensors import raw_view


@pytest.fixture(scope="module")
def engine():
    hvd.init()
    yield runtime().engine()
    hvd.shutdown()


def finished(handle):
    assert handle.wait(30)
    handle.check()


def test_allreduce_raw_reads_and_writes_the_memory_it_is_given(engine):
    source = torch.arange(6, dtype=torch.float64).reshape(2, 3)
    out = torch.zeros(2, 3, dtype=torch.float64)
    finished(engine.allreduce_raw(source.data_ptr(), out.data_ptr(), source.shape,
                                  _core.dtype_code("float64"), "sum", 2.0, 1.0, "raw.a", 0))
    assert torch.equal(out, source * 2)


def test_grouped_allreduce_raw_keeps_each_tensor_s_dtype(engine):
    tensors = [torch.ones(3, dtype=torch.float32), torch.tensor([True, False]),
               torch.full((2, 2), 7, dtype=torch.int64)]
    expected = [t.clone() for t in tensors]
    group = engine.grouped_allreduce_raw(
        [t.data_ptr() for t in tensors], [t.data_ptr() for t in tensors],
        [t.shape for t in tensors], [raw_view(t)[3] for t in tensors], "sum", 1.0, 1.0,
        "raw.g", 0)
    assert len(group) == 3  # one HandleGroup for the group's three tensors
    finished(group)
    assert group.is_completed() and group.wait_succeeded()
    for got, want in zip(tensors, expected):
        assert torch.equal(got, want)


@pytest.mark.parametrize("call, message", [
    (lambda e, p: e.allreduce_raw(p, p, [2], 99, "sum", 1.0, 1.0, "raw.e1", 0), "dtype code 99"),
    (lambda e, p: e.allreduce_raw(p, p, [-2], 6, "sum", 1.0, 1.0, "raw.e2", 0),
     "no negative sizes"),
    (lambda e, p: e.allreduce_raw(0, p, [2], 6, "sum", 1.0, 1.0, "raw.e3", 0), "has no data"),
    (lambda e, p: e.allreduce_raw(p, 0, [2], 6, "sum", 1.0, 1.0, "raw.e4", 0), "needs an output"),
    (lambda e, p: e.allreduce_raw(p, p, [2], 6, "mean", 1.0, 1.0, "raw.e5", 0),
     "unknown reduce op 'mean'"),
    (lambda e, p: e.grouped_allreduce_raw([p], [p, p], [[2]], [6], "sum", 1.0, 1.0, "raw.e6", 0),
     "as many outputs"),
])
def test_bad_raw_arguments_are_refused_before_anything_runs(engine, call, message):
    tensor = torch.ones(2)
    with pytest.raises(ValueError, match=message):
        call(engine, tensor.data_ptr())


def test_dtype_codes_are_the_engine_s_and_unknown_names_are_refused(engine):
    codes = {_core.dtype_code(n) for n in ("uint8", "int8", "int16", "int32", "int64", "float16",
                                           "bfloat16", "float32", "float64", "bool")}
    assert len(codes) == 10
    with pytest.raises(ValueError, match="unknown dtype 'float128'"):
        _core.dtype_code("float128")


def test_torch_tensors_on_other_devices_and_dtypes_get_clear_errors(engine):
    with pytest.raises(ValueError, match="device meta"):
        hvd.allreduce(torch.ones(2, device="meta"), name="raw.meta")
    with pytest.raises(TypeError, match="unsupported tensor dtype complex64"):
        hvd.allreduce_(torch.ones(2, dtype=torch.complex64), name="raw.complex")


def test_a_non_contiguous_input_is_reduced_through_a_contiguous_copy(engine):
    source = torch.arange(12, dtype=torch.float32).reshape(3, 4).t()
    assert not source.is_contiguous()
    out = hvd.allreduce(source, op=hvd.Sum, name="raw.strided")
    assert torch.equal(out, source)
