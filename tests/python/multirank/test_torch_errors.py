"""Misuse and failures: bad arguments fail at the call on the calling rank
(ValueError/TypeError); disagreements between ranks fail the operation on
every rank with KoloInternalError naming the tensor and what differs; the
engine keeps working afterwards."""

import numpy as np
import pytest
import torch

import kolo.numpy
import kolo.torch as hvd


def test_kolo_internal_error_is_a_runtime_error():
    assert issubclass(hvd.KoloInternalError, RuntimeError)


def test_shape_mismatch_fails_on_every_rank_then_engine_recovers():
    x = torch.ones(hvd.rank() + 1) if hvd.size() > 1 else torch.ones(1)
    if hvd.size() == 1:
        pytest.skip("needs two ranks")
    with pytest.raises(hvd.KoloInternalError, match="(?i)mismatch.*shape.*'err.shape'|err.shape"):
        hvd.allreduce(x, name="err.shape")
    assert torch.allclose(hvd.allreduce(torch.ones(2), op=hvd.Sum, name="err.after"),
                          torch.full((2,), float(hvd.size())))


def test_a_group_member_s_mismatch_fails_the_group_on_every_rank_then_engine_recovers():
    # The group is one kolo._core.HandleGroup: its failure must still reach
    # synchronize with the member's name, and a later group must work.
    if hvd.size() == 1:
        pytest.skip("needs two ranks")
    xs = [torch.ones(4), torch.ones(hvd.rank() + 1), torch.ones(3)]
    handle = hvd.grouped_allreduce_async_(xs, op=hvd.Sum, name="err.group")
    with pytest.raises(hvd.KoloInternalError, match="err.group.1"):
        hvd.synchronize(handle)
    outs = hvd.grouped_allreduce([torch.ones(2), torch.ones(5)], op=hvd.Sum, name="err.group.after")
    assert all(torch.equal(o, torch.full_like(o, float(hvd.size()))) for o in outs)


def test_dtype_mismatch_names_the_dtypes():
    x = torch.ones(3, dtype=torch.float32 if hvd.rank() == 0 else torch.float64)
    with pytest.raises(hvd.KoloInternalError) as info:
        hvd.allreduce(x, name="err.dtype")
    assert "float32" in str(info.value) and "float64" in str(info.value)
    assert "err.dtype" in str(info.value)


def test_op_mismatch_fails():
    op = hvd.Sum if hvd.rank() == 0 else hvd.Max
    with pytest.raises(hvd.KoloInternalError, match="err.op"):
        hvd.allreduce(torch.ones(2), op=op, name="err.op")


def test_broadcast_root_mismatch_fails():
    with pytest.raises(hvd.KoloInternalError, match="err.root"):
        hvd.broadcast(torch.ones(2), root_rank=hvd.rank(), name="err.root")


def test_allgather_trailing_shape_mismatch_fails():
    with pytest.raises(hvd.KoloInternalError, match="err.ag"):
        hvd.allgather(torch.ones(2, hvd.rank() + 1), name="err.ag")


def test_bad_arguments_fail_locally():
    with pytest.raises(TypeError, match="torch.Tensor"):
        hvd.allreduce_async([1.0, 2.0], name="err.list")
    with pytest.raises(TypeError, match="unsupported tensor dtype"):
        hvd.allreduce_async(torch.ones(2, dtype=torch.complex64), name="err.complex")
    with pytest.raises(ValueError, match="op or the deprecated average"):
        hvd.allreduce(torch.ones(2), average=True, op=hvd.Sum)
    with pytest.raises(ValueError, match="root rank 99"):
        hvd.broadcast(torch.ones(2), root_rank=99)
    with pytest.raises(ValueError, match="unknown or already synchronized handle"):
        hvd.synchronize(123456789)
    with pytest.raises(ValueError, match="contiguous"):
        hvd.allreduce_(torch.ones(3, 4).t())
    with pytest.raises(ValueError):
        hvd.alltoall(torch.ones(4), splits=[1] * (hvd.size() + 1), name="err.splits")
    with pytest.raises(ValueError, match="list of tensors"):
        hvd.grouped_allreduce_async(torch.ones(2))
    assert hvd.grouped_allreduce([]) == [] and hvd.grouped_allgather([]) == []


def test_unknown_op_and_average_of_bool_are_refused():
    with pytest.raises(ValueError, match="unknown reduction op 105"):
        hvd.allreduce_async(torch.ones(2), op=105)
    with pytest.raises(ValueError, match="(?i)average.*bool|bool.*average"):
        hvd.allreduce_async(torch.ones(2, dtype=torch.bool), name="err.bool.avg")


def test_name_reused_while_in_flight_is_refused():
    # Each rank in turn checks while the others have not submitted the name
    # yet, so the first operation is surely still in flight (with every rank
    # submitting at once, a cycle could finish it between the two calls).
    for checker in range(hvd.size()):
        name = f"err.twice.{checker}"
        if hvd.rank() == checker:
            handle = hvd.allreduce_async(torch.ones(2), name=name)
            try:
                with pytest.raises(ValueError, match=name):
                    hvd.allreduce_async(torch.ones(2), name=name)
                with pytest.raises(ValueError, match=name):
                    hvd.allreduce_async_(torch.ones(2), name=name)  # the hot path too
            finally:
                hvd.barrier()
        else:
            hvd.barrier()
            handle = hvd.allreduce_async(torch.ones(2), name=name)
        hvd.synchronize(handle)


def test_handle_is_released_after_synchronize():
    handle = hvd.allreduce_async(torch.ones(2), name="err.released")
    hvd.synchronize(handle)
    with pytest.raises(ValueError, match="already synchronized"):
        hvd.synchronize(handle)


def test_handles_belong_to_the_module_that_made_them():
    numpy_handle = kolo.numpy.allreduce_async(np.ones(2), op=kolo.numpy.Sum, name="err.numpy")
    torch_handle = hvd.allreduce_async(torch.ones(2), op=hvd.Sum, name="err.torch")
    with pytest.raises(ValueError, match="belongs to kolo.numpy"):
        hvd.synchronize(numpy_handle)
    with pytest.raises(ValueError, match="belongs to kolo.torch"):
        kolo.numpy.poll(torch_handle)
    # A refused handle stays valid in its own module.
    np.testing.assert_array_equal(kolo.numpy.synchronize(numpy_handle), np.full(2, hvd.size()))
    assert torch.equal(hvd.synchronize(torch_handle), torch.full((2,), float(hvd.size())))
