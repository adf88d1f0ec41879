"""Horovod's collective operations on NumPy arrays.

Each operation has a synchronous form returning NumPy arrays and an
`_async` form returning an integer handle for poll()/synchronize(); the
in-place forms (trailing underscore) write the result into the caller's
array. Arguments and defaults follow horovod.torch, less what only makes
sense for torch (compression, devices).

Errors: arguments the engine rejects at once (unknown op or process set, a
rank outside the set, a name already in flight) raise ValueError or
TypeError on the calling rank only; disagreements between ranks (shapes,
dtypes, ops, roots) and failures of the job raise KoloInternalError on
every rank involved, from the synchronous call or from synchronize().
"""

import numpy as np

from kolo.common.pending import engine_value
from kolo.common.process_sets import process_set_id
from kolo.common.reduce_ops import Average, engine_op_name, resolve_op
from kolo.common.runtime import runtime
from kolo.numpy import _arrays

_OWNER = "kolo.numpy"


def _engine():
    return runtime().engine()


def register(operation):
    """The integer handle of an asynchronous call, for poll() and synchronize()."""
    return runtime().register(operation, _OWNER)


def _name(name):
    # An empty name makes the engine match tensors across ranks by call order.
    return "" if name is None else str(name)


def _scale(factor, what):
    try:
        return float(factor)
    except (TypeError, ValueError):
        raise TypeError(f"kolo.numpy: {what} must be a number, got {factor!r}") from None


def _group_dtype(sources):
    """The dtype override for a grouped call: the binding applies one to the
    whole group, and bool arrays need "bool" to travel as uint8."""
    bools = sum(src.dtype == np.bool_ for src in sources)
    if bools == 0:
        return None
    if bools == len(sources):
        return "bool"
    raise TypeError("kolo.numpy: a grouped operation cannot mix bool arrays with other "
                    "dtypes; group the bool arrays separately")


def _group(tensors):
    """The arrays of a grouped call; a lone array would iterate as its rows."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError("kolo.numpy: grouped operations take a list of arrays, got "
                        f"{type(tensors).__name__}")
    return list(tensors)


def _group_inputs(tensors):
    return [_arrays.engine_input(t, what=f"tensor {i}") for i, t in enumerate(_group(tensors))]


def _root_in_set(root_rank, process_set):
    """Horovod names broadcast roots by global rank; the engine wants the
    root's index within the process set."""
    return runtime().set_root(process_set_id(process_set), int(root_rank))


def _first_dim_splits(splits):
    if splits is None:
        return []
    values = np.asarray(splits)
    if values.ndim != 1 or not np.issubdtype(values.dtype, np.integer):
        raise ValueError(f"kolo.numpy: alltoall splits must be a 1-D list of integers, "
                         f"got {splits!r}")
    return [int(v) for v in values]


def _empty_group():
    """A grouped call on an empty list: nothing to run, an empty result."""
    return runtime().operation([], None, lambda _: [])


def _engine_output(src):
    """finish() of an operation whose output the engine allocates."""
    return lambda handles: _arrays.from_engine(handles[0].output(), src.dtype)


def _engine_outputs(sources):
    """finish() of a grouped operation whose outputs the engine allocates."""
    return lambda handles: [_arrays.from_engine(handle.output(), src.dtype)
                            for handle, src in zip(handles, sources)]


# --- allreduce -------------------------------------------------------------


def _allreduce(tensor, op, prescale_factor, postscale_factor, name, process_set):
    src = _arrays.engine_input(tensor)
    out, engine_out = _arrays.engine_output(src, _engine())
    handle = _engine().allreduce(
        src.array, engine_out, op=op, prescale=_scale(prescale_factor, "prescale_factor"),
        postscale=_scale(postscale_factor, "postscale_factor"), name=_name(name),
        process_set=process_set_id(process_set), dtype=src.dtype_name)
    return runtime().operation([handle], (src, engine_out), lambda _: out)


def _in_place_sources(tensors):
    """Engine inputs for in-place operations, each also the engine's output,
    and a function that copies results back into arrays the engine could not
    write directly (non-contiguous or byte-swapped ones)."""
    targets = [_arrays.in_place_target(t) for t in _group(tensors)]
    sources = [_arrays.engine_input(t) for t in targets]

    def copy_back():
        for target, src in zip(targets, sources):
            if not np.may_share_memory(target, src.array):
                target[...] = src.array.view(src.dtype)
        return targets

    return sources, copy_back


def _allreduce_in_place(tensor, op, prescale_factor, postscale_factor, name, process_set):
    (src,), copy_back = _in_place_sources([tensor])
    handle = _engine().allreduce(
        src.array, src.array, op=op, prescale=_scale(prescale_factor, "prescale_factor"),
        postscale=_scale(postscale_factor, "postscale_factor"), name=_name(name),
        process_set=process_set_id(process_set), dtype=src.dtype_name)
    return runtime().operation([handle], src, lambda _: copy_back()[0])


def allreduce(tensor, average=None, name=None, op=None, prescale_factor=1.0,
              postscale_factor=1.0, process_set=None):
    """Reduces `tensor` over the ranks of `process_set` (default: every rank)
    and returns the result as a new array; op defaults to Average.
    `prescale_factor` multiplies the input, `postscale_factor` the result."""
    op = engine_op_name(resolve_op(op, average))
    return _allreduce(tensor, op, prescale_factor, postscale_factor, name, process_set).result()


def allreduce_async(tensor, average=None, name=None, op=None, prescale_factor=1.0,
                    postscale_factor=1.0, process_set=None):
    """allreduce() that returns a handle at once; synchronize(handle) gives the result."""
    op = engine_op_name(resolve_op(op, average))
    return register(_allreduce(tensor, op, prescale_factor, postscale_factor, name, process_set))


def allreduce_(tensor, average=None, name=None, op=None, prescale_factor=1.0,
               postscale_factor=1.0, process_set=None):
    """allreduce() that writes the result into `tensor` and returns it."""
    op = engine_op_name(resolve_op(op, average))
    return _allreduce_in_place(tensor, op, prescale_factor, postscale_factor, name,
                               process_set).result()


def allreduce_async_(tensor, average=None, name=None, op=None, prescale_factor=1.0,
                     postscale_factor=1.0, process_set=None):
    """allreduce_() that returns a handle at once; `tensor` holds the result
    once synchronize(handle) returned."""
    op = engine_op_name(resolve_op(op, average))
    return register(_allreduce_in_place(tensor, op, prescale_factor, postscale_factor, name,
                                        process_set))


# --- grouped allreduce ---------------------------------------------------------


def _grouped_allreduce(tensors, op, prescale_factor, postscale_factor, name, process_set,
                       in_place):
    if in_place:
        sources, copy_back = _in_place_sources(tensors)
        engine_outs = [src.array for src in sources]
        finish = lambda _: copy_back()  # noqa: E731
    else:
        sources = _group_inputs(tensors)
        pairs = [_arrays.engine_output(src, _engine()) for src in sources]
        outs = [user for user, _ in pairs]
        engine_outs = [engine for _, engine in pairs]
        finish = lambda _: outs  # noqa: E731
    if not sources:
        return _empty_group()
    handles = _engine().grouped_allreduce(
        [src.array for src in sources], engine_outs, op=op,
        prescale=_scale(prescale_factor, "prescale_factor"),
        postscale=_scale(postscale_factor, "postscale_factor"), name=_name(name),
        process_set=process_set_id(process_set), dtype=_group_dtype(sources))
    return runtime().operation(handles, (sources, engine_outs), finish)


def grouped_allreduce(tensors, average=None, name=None, op=None, prescale_factor=1.0,
                      postscale_factor=1.0, process_set=None):
    """Reduces a list of arrays as one operation (negotiated and fused
    together); returns the list of results."""
    op = engine_op_name(resolve_op(op, average))
    return _grouped_allreduce(tensors, op, prescale_factor, postscale_factor, name,
                              process_set, in_place=False).result()


def grouped_allreduce_async(tensors, average=None, name=None, op=None, prescale_factor=1.0,
                            postscale_factor=1.0, process_set=None):
    op = engine_op_name(resolve_op(op, average))
    return register(_grouped_allreduce(tensors, op, prescale_factor, postscale_factor, name,
                                       process_set, in_place=False))


def grouped_allreduce_(tensors, average=None, name=None, op=None, prescale_factor=1.0,
                       postscale_factor=1.0, process_set=None):
    """grouped_allreduce() writing each result into its input array."""
    op = engine_op_name(resolve_op(op, average))
    return _grouped_allreduce(tensors, op, prescale_factor, postscale_factor, name,
                              process_set, in_place=True).result()


def grouped_allreduce_async_(tensors, average=None, name=None, op=None, prescale_factor=1.0,
                             postscale_factor=1.0, process_set=None):
    op = engine_op_name(resolve_op(op, average))
    return register(_grouped_allreduce(tensors, op, prescale_factor, postscale_factor, name,
                                       process_set, in_place=True))


# --- allgather ---------------------------------------------------------------


def _allgather(tensor, name, process_set):
    src = _arrays.engine_input(tensor)
    handle = _engine().allgather(src.array, name=_name(name),
                                 process_set=process_set_id(process_set), dtype=src.dtype_name)
    return runtime().operation([handle], src, _engine_output(src))


def allgather(tensor, name=None, process_set=None):
    """Concatenates every rank's `tensor` along the first dimension, in rank
    order; first dimensions may differ between ranks, the others may not."""
    return _allgather(tensor, name, process_set).result()


def allgather_async(tensor, name=None, process_set=None):
    return register(_allgather(tensor, name, process_set))


def _grouped_allgather(tensors, name, process_set):
    sources = _group_inputs(tensors)
    if not sources:
        return _empty_group()
    handles = _engine().grouped_allgather([src.array for src in sources], name=_name(name),
                                          process_set=process_set_id(process_set),
                                          dtype=_group_dtype(sources))
    return runtime().operation(handles, sources, _engine_outputs(sources))


def grouped_allgather(tensors, name=None, process_set=None):
    """allgather() of a list of arrays as one operation; returns a list."""
    return _grouped_allgather(tensors, name, process_set).result()


def grouped_allgather_async(tensors, name=None, process_set=None):
    return register(_grouped_allgather(tensors, name, process_set))


# --- broadcast ---------------------------------------------------------------


def _broadcast(tensor, root_rank, name, process_set, in_place):
    root = _root_in_set(root_rank, process_set)
    if in_place:
        (src,), copy_back = _in_place_sources([tensor])
        engine_out = src.array
        finish = lambda _: copy_back()[0]  # noqa: E731
    else:
        src = _arrays.engine_input(tensor)
        out, engine_out = _arrays.engine_output(src, _engine())
        finish = lambda _: out  # noqa: E731
    handle = _engine().broadcast(src.array, engine_out, root=root, name=_name(name),
                                 process_set=process_set_id(process_set), dtype=src.dtype_name)
    return runtime().operation([handle], (src, engine_out), finish)


def broadcast(tensor, root_rank, name=None, process_set=None):
    """Returns the root's `tensor` on every rank (a new array; the input is
    left alone). `root_rank` is a global rank, a member of `process_set`."""
    return _broadcast(tensor, root_rank, name, process_set, in_place=False).result()


def broadcast_async(tensor, root_rank, name=None, process_set=None):
    return register(_broadcast(tensor, root_rank, name, process_set, in_place=False))


def broadcast_(tensor, root_rank, name=None, process_set=None):
    """broadcast() into `tensor` itself; returns it."""
    return _broadcast(tensor, root_rank, name, process_set, in_place=True).result()


def broadcast_async_(tensor, root_rank, name=None, process_set=None):
    return register(_broadcast(tensor, root_rank, name, process_set, in_place=True))


# --- alltoall ----------------------------------------------------------------


def _alltoall(tensor, splits, name, process_set):
    src = _arrays.engine_input(tensor)
    handle = _engine().alltoall(src.array, splits=_first_dim_splits(splits), name=_name(name),
                                process_set=process_set_id(process_set), dtype=src.dtype_name)

    def finish(handles):
        received = np.asarray(handles[0].received_splits, dtype=np.int32)
        return _arrays.from_engine(handles[0].output(), src.dtype), received

    return runtime().operation([handle], src, finish)


def alltoall(tensor, splits=None, name=None, process_set=None):
    """Sends `splits[i]` rows of `tensor` (first dimension, in order) to rank
    i of the set and returns (rows received, concatenated in rank order;
    int32 array of the rows received from each rank). Without splits the
    first dimension is divided equally."""
    return _alltoall(tensor, splits, name, process_set).result()


def alltoall_async(tensor, splits=None, name=None, process_set=None):
    return register(_alltoall(tensor, splits, name, process_set))


# --- reducescatter -------------------------------------------------------------


def _reducescatter(tensor, op, prescale_factor, postscale_factor, name, process_set):
    src = _arrays.engine_input(tensor)
    handle = _engine().reducescatter(
        src.array, op=op, prescale=_scale(prescale_factor, "prescale_factor"),
        postscale=_scale(postscale_factor, "postscale_factor"), name=_name(name),
        process_set=process_set_id(process_set), dtype=src.dtype_name)
    return runtime().operation([handle], src, _engine_output(src))


def reducescatter(tensor, name=None, op=Average, process_set=None, prescale_factor=1.0,
                  postscale_factor=1.0):
    """Reduces `tensor` over the ranks and returns this rank's share of the
    first dimension (the first `rows % size` ranks get one row more)."""
    op = engine_op_name(resolve_op(op))
    return _reducescatter(tensor, op, prescale_factor, postscale_factor, name,
                          process_set).result()


def reducescatter_async(tensor, name=None, op=Average, process_set=None, prescale_factor=1.0,
                        postscale_factor=1.0):
    op = engine_op_name(resolve_op(op))
    return register(_reducescatter(tensor, op, prescale_factor, postscale_factor, name,
                                   process_set))


def _grouped_reducescatter(tensors, op, prescale_factor, postscale_factor, name, process_set):
    sources = _group_inputs(tensors)
    if not sources:
        return _empty_group()
    handles = _engine().grouped_reducescatter(
        [src.array for src in sources], op=op,
        prescale=_scale(prescale_factor, "prescale_factor"),
        postscale=_scale(postscale_factor, "postscale_factor"), name=_name(name),
        process_set=process_set_id(process_set), dtype=_group_dtype(sources))
    return runtime().operation(handles, sources, _engine_outputs(sources))


def grouped_reducescatter(tensors, name=None, op=Average, process_set=None,
                          prescale_factor=1.0, postscale_factor=1.0):
    """reducescatter() of a list of arrays as one operation; returns a list."""
    op = engine_op_name(resolve_op(op))
    return _grouped_reducescatter(tensors, op, prescale_factor, postscale_factor, name,
                                  process_set).result()


def grouped_reducescatter_async(tensors, name=None, op=Average, process_set=None,
                                prescale_factor=1.0, postscale_factor=1.0):
    op = engine_op_name(resolve_op(op))
    return register(_grouped_reducescatter(tensors, op, prescale_factor, postscale_factor,
                                           name, process_set))


# --- synchronization -----------------------------------------------------------


def poll(handle):
    """True when the asynchronous operation behind `handle` has finished;
    synchronize(handle) then returns without blocking."""
    return runtime().poll(handle, _OWNER)


def synchronize(handle):
    """Waits for the asynchronous operation behind `handle` and returns its
    result; raises KoloInternalError if it failed. The handle is spent
    afterwards, unless the wait itself was interrupted (then it may be
    synchronized again)."""
    return runtime().synchronize(handle, _OWNER)


def barrier(process_set=None):
    """Returns once every rank of the set has called barrier()."""
    handle = _engine().barrier(process_set_id(process_set))
    runtime().operation([handle]).result()


def join(process_set=None):
    """Declares that this rank has no more work (uneven data across ranks):
    until every rank of the set has joined, the others' allreduces run with
    this rank contributing zeros (other collectives fail meanwhile). Blocks
    until all have joined and returns the rank that joined last."""
    handle = _engine().join(process_set_id(process_set))
    return runtime().operation([handle], finish=engine_value).result()


__all__ = [
    "allreduce", "allreduce_async", "allreduce_", "allreduce_async_",
    "grouped_allreduce", "grouped_allreduce_async", "grouped_allreduce_",
    "grouped_allreduce_async_", "allgather", "allgather_async", "grouped_allgather",
    "grouped_allgather_async", "broadcast", "broadcast_async", "broadcast_",
    "broadcast_async_", "alltoall", "alltoall_async", "reducescatter", "reducescatter_async",
    "grouped_reducescatter", "grouped_reducescatter_async", "barrier", "join", "poll",
    "synchronize",
]
