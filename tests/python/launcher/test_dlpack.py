"""The DLPack boundary of kolo._core on its own (one process, size 1):
producers other than torch and NumPy, devices the build cannot use, dtypes
it does not know, and zero-copy in both directions."""

import ctypes

import numpy as np
import pytest
import torch

import kolo.torch as hvd
from kolo import _core
from kolo.common.runtime import runtime

K_DL_CPU, K_DL_CUDA = 1, 2
K_DL_INT, K_DL_UINT, K_DL_FLOAT = 0, 1, 2


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int),
                ("dtype", _DType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _Managed(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class HandMadeTensor:
    """A DLPack producer written from the spec: proves the binding depends on
    the protocol, not on torch or NumPy. Keeps its memory and the capsule's
    struct alive itself (no deleter)."""

    def __init__(self, array, device_type=K_DL_CPU, dtype=None):
        self.array = np.ascontiguousarray(array)
        self.shape = (ctypes.c_int64 * self.array.ndim)(*self.array.shape)
        code, bits = dtype or {np.dtype(np.float32): (K_DL_FLOAT, 32),
                               np.dtype(np.int64): (K_DL_INT, 64)}[self.array.dtype]
        self.managed = _Managed()
        self.managed.dl_tensor = _DLTensor(
            self.array.ctypes.data, _Device(device_type, 0), self.array.ndim,
            _DType(code, bits, 1), self.shape, None, 0)

    def __dlpack__(self, stream=None):
        new_capsule = ctypes.pythonapi.PyCapsule_New
        new_capsule.restype = ctypes.py_object
        new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new_capsule(ctypes.addressof(self.managed), b"dltensor", None)

    def __dlpack_device__(self):
        return (self.managed.dl_tensor.device.device_type, 0)


@pytest.fixture(scope="module")
def engine():
    hvd.init()
    yield hvd
    hvd.shutdown()


def test_any_dlpack_producer_is_read_in_place(engine):
    source = HandMadeTensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    out = np.zeros((2, 3), dtype=np.float32)
    handle = runtime().engine().allreduce(source, out, op="sum", name="hand")
    assert handle.wait(30)
    handle.check()
    assert np.array_equal(out, source.array)
    source.array[0, 0] = 42.0  # the engine read the producer's memory, not a copy
    handle = runtime().engine().allreduce(source, out, op="sum", name="hand")
    assert handle.wait(30)
    assert out[0, 0] == 42.0


def test_gpu_tensors_get_a_clear_error(engine):
    # The reason itself is checked in test_gpu_refusal.py.
    cuda = HandMadeTensor(np.zeros(4, dtype=np.float32), device_type=K_DL_CUDA)
    with pytest.raises(ValueError, match="cuda:0"):
        runtime().engine().allreduce(cuda, cuda, name="gpu")


def test_unknown_dtype_is_named(engine):
    weird = HandMadeTensor(np.zeros(4, dtype=np.float32), dtype=(K_DL_FLOAT, 8))
    with pytest.raises(TypeError, match="float8"):
        runtime().engine().allgather(weird, name="fp8")


def test_engine_outputs_are_zero_copy_and_outlive_the_handle(engine):
    source = torch.arange(5)  # the engine reads it after the call returns: keep it alive
    handle = runtime().engine().allgather(source, name="out")
    assert handle.wait(30)
    del source
    array = handle.output()
    first = torch.from_dlpack(array)
    second = np.from_dlpack(array)
    assert second.ctypes.data == first.data_ptr()  # both views of the engine's buffer
    del handle, array
    assert first.tolist() == [0, 1, 2, 3, 4]


def test_kolo_internal_error_is_the_binding_exception():
    assert _core.KoloInternalError is hvd.KoloInternalError
    assert issubclass(_core.KoloInternalError, RuntimeError)
