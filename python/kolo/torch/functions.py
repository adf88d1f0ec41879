"""Horovod's helpers for starting every rank from the same point:
broadcast_parameters and broadcast_optimizer_state copy root_rank's model
and optimizer to the other ranks; broadcast_object and allgather_object move
arbitrary picklable Python objects (as uint8 tensors)."""

import collections.abc

import cloudpickle
import torch

from kolo.common.basics import global_process_set
from kolo.common.runtime import runtime
from kolo.torch.async_ops import allgather_async, broadcast_async_, result


def _rank():
    return runtime().engine().rank


def _broadcast_all(named_tensors, root_rank, process_set):
    """In-place broadcasts of every (name, tensor), all in flight at once."""
    handles = [broadcast_async_(tensor, root_rank, name=name, process_set=process_set)
               for name, tensor in named_tensors]
    for handle in handles:
        result(handle)


# --- parameters -----------------------------------------------------------------

def broadcast_parameters(params, root_rank, process_set=global_process_set):
    """Overwrites `params` in place with root_rank's values.

    `params` is a dict of tensors (model.state_dict()), or a sequence of
    (name, tensor) pairs (model.named_parameters()) or of tensors
    (model.parameters()). Names pair the broadcasts up across ranks; bare
    tensors are paired by their order.
    """
    if isinstance(params, dict):
        items = sorted(params.items())
    elif isinstance(params, collections.abc.Iterable) and not isinstance(
            params, (torch.Tensor, str, bytes)):
        items = [p if isinstance(p, tuple) else (None, p) for p in params]
    else:
        raise ValueError(f"invalid params of type: {type(params)}")
    _broadcast_all([(None if name is None else f"broadcast.{name}", tensor)
                    for name, tensor in items], root_rank, process_set)


# --- optimizer state -----------------------------------------------------------------

class _TensorSlot:
    """Stands for the index-th tensor of an optimizer state_dict in its layout."""

    def __init__(self, index, shape, dtype):
        self.index, self.shape, self.dtype = index, tuple(shape), dtype


def _strip_tensors(obj, tensors):
    """A copy of `obj` with every tensor moved to `tensors` and replaced by a
    _TensorSlot; everything else (numbers, None, strings) stays in place."""
    if isinstance(obj, torch.Tensor):
        tensors.append(obj)
        return _TensorSlot(len(tensors) - 1, obj.shape, obj.dtype)
    if isinstance(obj, dict):
        return type(obj)((k, _strip_tensors(v, tensors)) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return type(obj)(_strip_tensors(v, tensors) for v in obj)
    return obj


def _fill_tensors(layout, tensors):
    if isinstance(layout, _TensorSlot):
        return tensors[layout.index]
    if isinstance(layout, dict):
        return type(layout)((k, _fill_tensors(v, tensors)) for k, v in layout.items())
    if isinstance(layout, (list, tuple)):
        return type(layout)(_fill_tensors(v, tensors) for v in layout)
    return layout


def broadcast_optimizer_state(optimizer, root_rank, process_set=global_process_set):
    """Makes every rank's optimizer state and hyperparameters (lr, momentum,
    betas, ...) root_rank's.

    The root's state_dict layout (nesting, Python scalars, tensor shapes and
    dtypes) travels as one pickled object; its tensors are then broadcast
    directly and the other ranks load the result. This covers any optimizer,
    including L-BFGS's nested lists and None entries, needs no dummy step to
    create state first, and leaves a rank whose root has no state yet with
    none either, so every rank ends up identical.
    """
    _give_zero_gradients(optimizer)
    is_root = _rank() == root_rank
    tensors = []
    layout = _strip_tensors(optimizer.state_dict(), tensors) if is_root else None
    layout = broadcast_object(layout, root_rank, name="broadcast_optimizer_state.layout",
                              process_set=process_set)
    if is_root:
        tensors = [t.detach() if t.is_contiguous() else t.detach().contiguous() for t in tensors]
    else:
        slots = []
        _collect_slots(layout, slots)
        tensors = [torch.empty(s.shape, dtype=s.dtype)
                   for s in sorted(slots, key=lambda s: s.index)]
    _broadcast_all([(f"broadcast_optimizer_state.{i}", t) for i, t in enumerate(tensors)],
                   root_rank, process_set)
    if not is_root:
        optimizer.load_state_dict(_fill_tensors(layout, tensors))


def _give_zero_gradients(optimizer):
    """Horovod prepares an optimizer without state by giving every trainable
    parameter without a gradient a zero one (sparse for SparseAdam), and code
    written for Horovod reads p.grad afterwards. Horovod then also takes an
    optimizer step on those zeros to create the state, which under weight
    decay moves the weights; Kolo takes no step (it broadcasts the root's
    state as it is, see broadcast_optimizer_state)."""
    if optimizer.state_dict()["state"]:
        return
    for group in optimizer.param_groups:
        for p in group["params"]:
            if p.requires_grad and p.grad is None:
                p.grad = torch.zeros_like(p)
                if isinstance(optimizer, torch.optim.SparseAdam):
                    p.grad = p.grad.to_sparse()


def _collect_slots(layout, slots):
    if isinstance(layout, _TensorSlot):
        slots.append(layout)
    elif isinstance(layout, dict):
        for v in layout.values():
            _collect_slots(v, slots)
    elif isinstance(layout, (list, tuple)):
        for v in layout:
            _collect_slots(v, slots)


# --- Python objects ------------------------------------------------------------------

def _to_tensor(obj):
    return torch.frombuffer(bytearray(cloudpickle.dumps(obj)), dtype=torch.uint8)


def _from_tensor(tensor):
    return cloudpickle.loads(tensor.numpy().tobytes())


def broadcast_object(obj, root_rank=0, name=None, process_set=global_process_set):
    """Returns root_rank's `obj` (cloudpickled) on every rank of the set;
    other ranks' `obj` is ignored. Typical use: the epoch to resume from, or
    a state_dict loaded only on rank 0."""
    base = "broadcast_object" if name is None else str(name)
    if _rank() == root_rank:
        payload = _to_tensor(obj)
        length = torch.tensor([payload.numel()], dtype=torch.int64)
    else:
        length = torch.zeros(1, dtype=torch.int64)
    result(broadcast_async_(length, root_rank, name=f"{base}.size", process_set=process_set))
    if _rank() != root_rank:
        payload = torch.empty(int(length), dtype=torch.uint8)
    result(broadcast_async_(payload, root_rank, name=f"{base}.bytes", process_set=process_set))
    return obj if _rank() == root_rank else _from_tensor(payload)


def allgather_object(obj, name=None, process_set=global_process_set):
    """Returns the list of every set member's `obj`, in the set's rank order."""
    base = "allgather_object" if name is None else str(name)
    payload = _to_tensor(obj)
    length = torch.tensor([payload.numel()], dtype=torch.int64)
    lengths_handle = allgather_async(length, name=f"{base}.size", process_set=process_set)
    bytes_handle = allgather_async(payload, name=f"{base}.bytes", process_set=process_set)
    lengths = result(lengths_handle).tolist()
    gathered = result(bytes_handle)
    return [_from_tensor(chunk) for chunk in torch.split(gathered, lengths)]


__all__ = ["broadcast_parameters", "broadcast_optimizer_state", "broadcast_object",
           "allgather_object"]
