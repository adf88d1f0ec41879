"""kolo.torch: Horovod's PyTorch API on Kolo's engine.

    import kolo.torch as hvd          # or: import horovod.torch as hvd
    hvd.init()
    optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters())
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
"""

from kolo.common.basics import *  # noqa: F401,F403  init, rank, size, process sets, ...
from kolo.common.basics import __all__ as _basics_all
from kolo.common.exceptions import HostsUpdatedInterrupt, KoloInternalError
from kolo.common.reduce_ops import Adasum, Average, Max, Min, Product, Sum
from kolo.torch.async_ops import (
    allgather_async, allreduce_async, allreduce_async_, alltoall_async, barrier, broadcast_async,
    broadcast_async_, grouped_allgather_async, grouped_allreduce_async, grouped_allreduce_async_,
    grouped_reducescatter_async, join, poll, reducescatter_async, synchronize)
from kolo.torch.compression import Compression
from kolo.torch.functions import (
    allgather_object, broadcast_object, broadcast_optimizer_state, broadcast_parameters)
from kolo.torch.optimizer import DistributedOptimizer
from kolo.torch.sparse_ops import sparse_allreduce, sparse_allreduce_async
from kolo.torch.ops import (
    allgather, allreduce, allreduce_, alltoall, broadcast, broadcast_, grouped_allgather,
    grouped_allreduce, grouped_allreduce_, grouped_reducescatter, reducescatter)
from kolo.torch.sync_batch_norm import SyncBatchNorm
from kolo.torch import elastic  # last: it builds on the functions above

__all__ = list(_basics_all) + [
    "KoloInternalError", "HostsUpdatedInterrupt",
    "Average", "Sum", "Adasum", "Min", "Max", "Product", "Compression",
    "allreduce", "allreduce_", "allreduce_async", "allreduce_async_",
    "grouped_allreduce", "grouped_allreduce_", "grouped_allreduce_async",
    "grouped_allreduce_async_", "allgather", "allgather_async", "grouped_allgather",
    "grouped_allgather_async", "broadcast", "broadcast_", "broadcast_async", "broadcast_async_",
    "alltoall", "alltoall_async", "reducescatter", "reducescatter_async",
    "grouped_reducescatter", "grouped_reducescatter_async", "sparse_allreduce",
    "sparse_allreduce_async", "barrier", "join", "poll",
    "synchronize", "DistributedOptimizer", "broadcast_parameters", "broadcast_optimizer_state",
    "broadcast_object", "allgather_object", "SyncBatchNorm", "elastic",
]
