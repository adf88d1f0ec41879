"""torch.Tensor <-> engine: what the engine reads (contiguous CPU memory
through DLPack) and how its outputs become tensors without a copy."""

import torch

from kolo import _core
from kolo.common.process_sets import process_set_id as _process_set_id
from kolo.common.runtime import runtime

# DLPack as torch 1.x exports it has no bool; bool tensors travel as their
# uint8 bytes and the engine is told the real type.
_BOOL = "bool"


def _require_tensor(tensor):
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"kolo: expected a torch.Tensor, got {type(tensor).__name__}")


# torch dtype -> the engine's dtype name (src/common/types.cc).
_ENGINE_DTYPES = {
    torch.uint8: "uint8", torch.int8: "int8", torch.int16: "int16", torch.int32: "int32",
    torch.int64: "int64", torch.float16: "float16", torch.bfloat16: "bfloat16",
    torch.float32: "float32", torch.float64: "float64", torch.bool: _BOOL,
}


# torch dtype -> the engine's dtype code, for the engine's *_raw entry points
# (bool included: they take the real type, so no uint8 view is needed).
_ENGINE_CODES = {dtype: _core.dtype_code(name) for dtype, name in _ENGINE_DTYPES.items()}


def new_output(tensor):
    """A contiguous tensor shaped like `tensor` for an out-of-place result.

    Its memory comes from the engine's output cache (kolo.Engine's
    allocate_output), not from torch's CPU allocator: that one takes large
    blocks straight from mmap and unmaps them on free, so each call's output
    would fault in and zero fresh pages (three times the cost of a 64 MB
    allreduce itself). The cache hands the block out again only once torch
    has freed every tensor over it. A tensor the engine cannot take (CUDA,
    complex) gets torch's memory, and the collective reports the problem.
    """
    _require_tensor(tensor)
    name = _ENGINE_DTYPES.get(tensor.dtype)
    if name is None or tensor.device.type != "cpu":
        return torch.empty_like(tensor, memory_format=torch.contiguous_format)
    return from_engine(runtime().engine().allocate_output(list(tensor.shape), name), tensor.dtype)


def engine_view(tensor):
    """(object the engine reads, dtype override) for `tensor`.

    The engine never sees autograd: detach() shares memory, contiguous()
    copies only when the layout demands it.
    """
    _require_tensor(tensor)
    # A CUDA tensor goes on to kolo._core, which names what is missing (no
    # CUDA plugin built or loadable, no device) or hands it to the engine.
    view = tensor.detach()
    if not view.is_contiguous():
        view = view.contiguous()
    if view.dtype == torch.bool:
        return view.view(torch.uint8), _BOOL
    return view, None


def raw_view(tensor):
    """(tensor the engine reads, its data pointer, shape, dtype code), or None
    for a CUDA tensor, which takes the DLPack path (engine_view: the device
    travels in the capsule).

    The cheap way to hand a CPU tensor to the engine (kolo._core's
    allreduce_raw): no DLPack export and no autograd view, a few hundred
    nanoseconds where engine_view costs microseconds, which is what a step of
    many small gradients pays per tensor. A non-contiguous tensor is copied;
    the caller keeps the returned tensor alive until the handle completes.
    """
    code = _ENGINE_CODES.get(getattr(tensor, "dtype", None))
    if code is None:
        _require_tensor(tensor)
        raise TypeError(f"kolo: unsupported tensor dtype {str(tensor.dtype)[6:]}")
    if not tensor.is_cpu:
        if tensor.is_cuda:
            return None
        raise ValueError(f"kolo: tensors on device {tensor.device} are not supported; move "
                         "the tensor to the CPU first")
    if not tensor.is_contiguous():
        tensor = tensor.contiguous()
    return tensor, tensor.data_ptr(), tensor.shape, code


def check_writable(tensor, what):
    """In-place ops write the result into `tensor`'s own memory."""
    _require_tensor(tensor)
    if not tensor.is_contiguous():
        raise ValueError(f"kolo: {what} needs a contiguous tensor (it writes the result in place)")


def from_engine(array, dtype):
    """A tensor over an engine-owned output (kept alive by the tensor)."""
    out = torch.utils.dlpack.from_dlpack(array.__dlpack__())
    return out.view(torch.bool) if dtype == torch.bool else out


def process_set_id(process_set):
    return _process_set_id(process_set)
