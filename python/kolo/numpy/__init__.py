"""Kolo for NumPy: Horovod's API on NumPy arrays, without torch.

    import kolo.numpy as hvd
    hvd.init()
    grad = hvd.allreduce(local_grad)               # average over every rank
    rows = hvd.allgather(np.full((hvd.rank() + 1, 3), hvd.rank()))
    state = hvd.broadcast_object(state, root_rank=0)

Arrays go to the engine without copies when they are C-contiguous (others
are copied once) and results come back as ordinary writable arrays over the
engine's buffers. Supported dtypes: uint8, int8, int16, int32, int64, float16,
float32, float64 and bool. Failures of the job or disagreements between
ranks raise KoloInternalError (Horovod's HorovodInternalError).
"""

from kolo.common.basics import *  # noqa: F401,F403  init, rank, size, process sets, ...
from kolo.common.basics import __all__ as _basics_all
from kolo.common.exceptions import HostsUpdatedInterrupt, KoloInternalError
from kolo.common.reduce_ops import Adasum, Average, Max, Min, Product, Sum
from kolo.numpy.collectives import (
    allgather, allgather_async, allreduce, allreduce_, allreduce_async, allreduce_async_,
    alltoall, alltoall_async, barrier, broadcast, broadcast_, broadcast_async, broadcast_async_,
    grouped_allgather, grouped_allgather_async, grouped_allreduce, grouped_allreduce_,
    grouped_allreduce_async, grouped_allreduce_async_, grouped_reducescatter,
    grouped_reducescatter_async, join, poll, reducescatter, reducescatter_async, synchronize)
from kolo.numpy.objects import allgather_object, broadcast_object

__all__ = list(_basics_all) + [
    "KoloInternalError", "HostsUpdatedInterrupt",
    "Average", "Sum", "Adasum", "Min", "Max", "Product",
    "allreduce", "allreduce_async", "allreduce_", "allreduce_async_",
    "grouped_allreduce", "grouped_allreduce_async", "grouped_allreduce_",
    "grouped_allreduce_async_", "allgather", "allgather_async", "grouped_allgather",
    "grouped_allgather_async", "broadcast", "broadcast_async", "broadcast_",
    "broadcast_async_", "alltoall", "alltoall_async", "reducescatter", "reducescatter_async",
    "grouped_reducescatter", "grouped_reducescatter_async", "barrier", "join",
    "poll", "synchronize", "broadcast_object", "allgather_object",
]
