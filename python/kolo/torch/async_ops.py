"""Horovod's asynchronous torch ops: each enqueues on the engine and returns
an integer handle; poll() asks whether it finished and synchronize() waits
and returns the output. In-place variants (trailing underscore) write into
the given tensor. Every tensor the engine reads or writes stays referenced
until the engine is done with it (kolo.common.pending), also when a wait is
interrupted."""

import torch

from kolo.common.pending import engine_value
from kolo.common.process_sets import process_set_id
from kolo.common.reduce_ops import Average, Max, Min, Product, Sum, engine_op_name, resolve_op
from kolo.common.runtime import runtime
from kolo.torch.tensors import (_ENGINE_CODES, check_writable, engine_view, from_engine,
                                new_output, raw_view)

_GLOBAL = 0
_OWNER = "kolo.torch"


# Ops allreduce_async_'s hot path takes (Adasum checks the world first).
_PLAIN_OP_NAMES = {op: engine_op_name(op) for op in (Average, Sum, Min, Max, Product)}


def _register(handles, finish, keep):
    """The integer handle of an operation whose `handles` the engine just
    enqueued; `keep`: every tensor it reads or writes, `finish(handles)` its
    result."""
    return runtime().register_operation(handles, keep, finish, _OWNER)


def _engine():
    return runtime().engine()


def _name(name):
    return "" if name is None else str(name)


def _check_group(tensors):
    if not isinstance(tensors, (list, tuple)):
        raise ValueError("kolo: grouped operations take a list of tensors")


def _empty_group():
    """An empty group is nothing to do (as in kolo.numpy): no collective runs."""
    return _register([], lambda _: [], ())


def _engine_output(tensor):
    """finish() of an operation whose output the engine allocates."""
    return lambda handles: from_engine(handles[0].output(), tensor.dtype)


def _engine_outputs(tensors):
    """finish() of a grouped operation whose outputs the engine allocates."""
    return lambda handles: [from_engine(handle.output(), tensor.dtype)
                            for handle, tensor in zip(handles, tensors)]


def _group_views(tensors):
    views = [engine_view(t) for t in tensors]
    overrides = {dtype for _, dtype in views}
    if len(overrides) > 1:
        raise ValueError("kolo: a group cannot mix bool tensors with other dtypes")
    return [v for v, _ in views], overrides.pop()


# --- allreduce -----------------------------------------------------------

def _allreduce(tensor, output, name, op, average, prescale_factor, postscale_factor,
               process_set):
    op = resolve_op(op, average)
    src = raw_view(tensor)
    dst = src if output is tensor else raw_view(output)
    if src is None or dst is None:
        return _allreduce_dlpack(tensor, output, name, op, prescale_factor, postscale_factor,
                                 process_set)
    handle = _engine().allreduce_raw(src[1], dst[1], src[2], src[3], engine_op_name(op),
                                     prescale_factor, postscale_factor, _name(name),
                                     process_set_id(process_set))
    return _register([handle], lambda _: output, (tensor, src[0], dst[0]))


def _allreduce_dlpack(tensor, output, name, op, prescale_factor, postscale_factor, process_set):
    """_allreduce for tensors raw_view leaves to DLPack (CUDA)."""
    src, dtype = engine_view(tensor)
    dst, _ = engine_view(output)
    handle = _engine().allreduce(src, dst, op=engine_op_name(op), prescale=prescale_factor,
                                 postscale=postscale_factor, name=_name(name),
                                 process_set=process_set_id(process_set), dtype=dtype)
    return _register([handle], lambda _: output, (tensor, src, dst))


def allreduce_async(tensor, average=None, name=None, op=None, prescale_factor=1.0,
                    postscale_factor=1.0, process_set=_GLOBAL):
    """Reduces `tensor` over the process set into a new tensor."""
    output = new_output(tensor)
    return _allreduce(tensor, output, name, op, average, prescale_factor, postscale_factor,
                      process_set)


def allreduce_async_(tensor, average=None, name=None, op=None, prescale_factor=1.0,
                     postscale_factor=1.0, process_set=_GLOBAL):
    """Reduces `tensor` over the process set in place."""
    # The hot path: a backward pass calls this once per gradient, so a
    # contiguous CPU tensor with a plain op in a set given by its id goes to
    # the engine in this one frame (each helper frame below costs a share of
    # a small tensor's whole step). Anything else takes the general path,
    # which also gives every error.
    code = _ENGINE_CODES.get(getattr(tensor, "dtype", None))
    if (code is not None and average is None and type(process_set) is int
            and isinstance(tensor, torch.Tensor) and tensor.is_cpu and tensor.is_contiguous()):
        op_name = _PLAIN_OP_NAMES.get(Average if op is None else op)
        if op_name is not None:
            rt = runtime()
            operation = rt.engine().allreduce_in_place_raw(
                tensor.data_ptr(), tensor.shape, code, op_name, prescale_factor,
                postscale_factor, "" if name is None else str(name), process_set, tensor,
                rt.interrupted_operations())
            return rt.register(operation, _OWNER)
    check_writable(tensor, "allreduce_async_")
    return _allreduce(tensor, tensor, name, op, average, prescale_factor, postscale_factor,
                      process_set)


def _grouped_allreduce(tensors, outputs, name, op, average, prescale_factor, postscale_factor,
                       process_set):
    op = resolve_op(op, average)
    _check_group(tensors)
    if not tensors:
        return _empty_group()
    srcs = [raw_view(t) for t in tensors]
    dsts = srcs if outputs is tensors else [raw_view(o) for o in outputs]
    if None in srcs or None in dsts:
        return _grouped_allreduce_dlpack(tensors, outputs, name, op, prescale_factor,
                                         postscale_factor, process_set)
    group = _engine().grouped_allreduce_raw(
        [ptr for _, ptr, _, _ in srcs], [ptr for _, ptr, _, _ in dsts],
        [shape for _, _, shape, _ in srcs], [code for _, _, _, code in srcs],
        engine_op_name(op), prescale_factor, postscale_factor, _name(name),
        process_set_id(process_set))
    # One HandleGroup for the whole group: one object and one wait.
    return _register([group], lambda _: list(outputs), (tensors, srcs, dsts))


def _grouped_allreduce_dlpack(tensors, outputs, name, op, prescale_factor, postscale_factor,
                              process_set):
    """_grouped_allreduce for groups with a tensor raw_view leaves to DLPack (CUDA)."""
    srcs, dtype = _group_views(tensors)
    dsts = [engine_view(o)[0] for o in outputs]
    handles = _engine().grouped_allreduce(srcs, dsts, op=engine_op_name(op),
                                          prescale=prescale_factor, postscale=postscale_factor,
                                          name=_name(name),
                                          process_set=process_set_id(process_set), dtype=dtype)
    return _register(handles, lambda _: list(outputs), (tensors, srcs, dsts))


def grouped_allreduce_async(tensors, average=None, name=None, op=None, prescale_factor=1.0,
                            postscale_factor=1.0, process_set=_GLOBAL):
    """Reduces a list of tensors as one negotiated, fused unit."""
    outputs = [new_output(t) for t in tensors] if isinstance(tensors, (list, tuple)) else None
    return _grouped_allreduce(tensors, outputs, name, op, average, prescale_factor,
                              postscale_factor, process_set)


def grouped_allreduce_async_(tensors, average=None, name=None, op=None, prescale_factor=1.0,
                             postscale_factor=1.0, process_set=_GLOBAL):
    _check_group(tensors)
    for t in tensors:
        check_writable(t, "grouped_allreduce_async_")
    return _grouped_allreduce(tensors, tensors, name, op, average, prescale_factor,
                              postscale_factor, process_set)


# --- allgather -------------------------------------------------------------

def allgather_async(tensor, name=None, process_set=_GLOBAL):
    """Concatenates every rank's `tensor` along the first dimension (which may
    differ per rank)."""
    src, dtype = engine_view(tensor)
    handle = _engine().allgather(src, name=_name(name), process_set=process_set_id(process_set),
                                 dtype=dtype)
    return _register([handle], _engine_output(tensor), (tensor, src))


def grouped_allgather_async(tensors, name=None, process_set=_GLOBAL):
    _check_group(tensors)
    if not tensors:
        return _empty_group()
    srcs, dtype = _group_views(tensors)
    handles = _engine().grouped_allgather(srcs, name=_name(name),
                                          process_set=process_set_id(process_set), dtype=dtype)
    return _register(handles, _engine_outputs(tensors), (tensors, srcs))


# --- broadcast ---------------------------------------------------------------

def _broadcast(tensor, output, root_rank, name, process_set):
    ps = process_set_id(process_set)
    root = runtime().set_root(ps, int(root_rank))
    src, dtype = engine_view(tensor)
    dst, _ = engine_view(output)
    handle = _engine().broadcast(src, dst, root=root, name=_name(name), process_set=ps,
                                 dtype=dtype)
    return _register([handle], lambda _: output, (tensor, src, dst))


def broadcast_async(tensor, root_rank, name=None, process_set=_GLOBAL):
    """Copies root_rank's `tensor` (root_rank is a global rank) to a new tensor
    on every rank of the set."""
    output = new_output(tensor)
    return _broadcast(tensor, output, root_rank, name, process_set)


def broadcast_async_(tensor, root_rank, name=None, process_set=_GLOBAL):
    check_writable(tensor, "broadcast_async_")
    return _broadcast(tensor, tensor, root_rank, name, process_set)


# --- alltoall ----------------------------------------------------------------

def _splits_list(splits):
    if splits is None:
        return []
    if isinstance(splits, torch.Tensor):
        if splits.dtype.is_floating_point or splits.dim() != 1:
            raise ValueError("kolo: alltoall splits must be a 1-D integer tensor or a list")
        return [int(s) for s in splits.tolist()]
    return [int(s) for s in splits]


def alltoall_async(tensor, splits=None, name=None, process_set=_GLOBAL):
    """Sends splits[i] rows of `tensor` to rank i of the set; synchronize()
    returns (output, received_splits)."""
    src, dtype = engine_view(tensor)
    handle = _engine().alltoall(src, splits=_splits_list(splits), name=_name(name),
                                process_set=process_set_id(process_set), dtype=dtype)

    def finish(handles):
        received = torch.tensor(handles[0].received_splits, dtype=torch.int32)
        return from_engine(handles[0].output(), tensor.dtype), received

    return _register([handle], finish, (tensor, src))


# --- reducescatter -------------------------------------------------------------

def reducescatter_async(tensor, name=None, op=Average, process_set=_GLOBAL, prescale_factor=1.0,
                        postscale_factor=1.0):
    """Reduces `tensor` over the set; rank r keeps its block of rows (the
    first size % n ranks get one row more)."""
    op = resolve_op(op)
    src, dtype = engine_view(tensor)
    handle = _engine().reducescatter(src, op=engine_op_name(op), prescale=prescale_factor,
                                     postscale=postscale_factor, name=_name(name),
                                     process_set=process_set_id(process_set), dtype=dtype)
    return _register([handle], _engine_output(tensor), (tensor, src))


def grouped_reducescatter_async(tensors, name=None, op=Average, process_set=_GLOBAL,
                                prescale_factor=1.0, postscale_factor=1.0):
    op = resolve_op(op)
    _check_group(tensors)
    if not tensors:
        return _empty_group()
    srcs, dtype = _group_views(tensors)
    handles = _engine().grouped_reducescatter(srcs, op=engine_op_name(op),
                                              prescale=prescale_factor,
                                              postscale=postscale_factor, name=_name(name),
                                              process_set=process_set_id(process_set),
                                              dtype=dtype)
    return _register(handles, _engine_outputs(tensors), (tensors, srcs))


# --- completion ----------------------------------------------------------------

def poll(handle):
    """True once the operation behind `handle` finished (successfully or not)."""
    return runtime().poll(handle, _OWNER)


def synchronize(handle):
    """Waits for the operation and returns its output; raises
    KoloInternalError if it failed. The handle is spent then, failed or not;
    after an interrupted wait (Ctrl-C) it stays valid and may be synchronized
    again."""
    return runtime().synchronize(handle, _OWNER)


def result(handle):
    """synchronize() for a handle that never leaves kolo.torch (the
    synchronous ops): it is spent even when the wait is interrupted, as
    nobody could synchronize it again. The runtime still keeps the
    operation's tensors until the engine is done with them."""
    try:
        return synchronize(handle)
    finally:
        runtime().release(handle)


def barrier(process_set=_GLOBAL):
    """Returns once every rank of the set reached the barrier."""
    runtime().operation([_engine().barrier(process_set_id(process_set))]).result()


def join(device=-1, process_set=_GLOBAL):
    """Marks this rank as out of data: until every rank joined, its share of
    other ranks' allreduces is zeros. Returns the last rank to join."""
    del device  # CPU only; kept for Horovod's signature
    handle = _engine().join(process_set_id(process_set))
    return runtime().operation([handle], finish=engine_value).result()
