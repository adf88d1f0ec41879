"""torch.Tensor <-> engine: what the engine reads (contiguous CPU memory
through DLPack) and how its outputs become tensors without a copy."""

import torch

from kolo.common.process_sets import process_set_id as _process_set_id

# DLPack as torch 1.x exports it has no bool; bool tensors travel as their
# uint8 bytes and the engine is told the real type.
_BOOL = "bool"


def _require_tensor(tensor):
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"kolo: expected a torch.Tensor, got {type(tensor).__name__}")


def new_output(tensor):
    """A contiguous tensor shaped like `tensor` for an out-of-place result."""
    _require_tensor(tensor)
    return torch.empty_like(tensor, memory_format=torch.contiguous_format)


def engine_view(tensor):
    """(object the engine reads, dtype override) for `tensor`.

    The engine never sees autograd: detach() shares memory, contiguous()
    copies only when the layout demands it.
    """
    _require_tensor(tensor)
    if tensor.is_cuda:
        raise ValueError("kolo: this Kolo build has no GPU support; move the tensor to the CPU "
                         "(tensor.cpu()) or run without CUDA")
    view = tensor.detach()
    if not view.is_contiguous():
        view = view.contiguous()
    if view.dtype == torch.bool:
        return view.view(torch.uint8), _BOOL
    return view, None


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
