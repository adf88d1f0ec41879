"""Horovod's sparse allreduce: the ranks' (indices, values) of a sparse COO
tensor are allgathered, and their concatenation is the reduced tensor (the
duplicate indices sum when it is coalesced or used). Average divides the
values by the set size. DistributedOptimizer uses it for sparse gradients
(nn.Embedding(sparse=True)) unless sparse_as_dense=True."""

import torch

from kolo.common.basics import global_process_set
from kolo.common.process_sets import process_set_id
from kolo.common.reduce_ops import Average, Sum, resolve_op
from kolo.common.runtime import runtime
from kolo.torch.async_ops import allgather_async, result


def _set_size(process_set):
    return len(runtime().process_set_ranks(process_set_id(process_set)))


def _part_name(name, part):
    return None if name is None else f"{name}.{part}"


def sparse_allreduce_async(tensor, name=None, op=Average, process_set=global_process_set):
    """Starts the two allgathers and returns a callable (Horovod's handle):
    calling it waits for them and returns the reduced sparse tensor, of the
    same size as `tensor`, uncoalesced."""
    if not isinstance(tensor, torch.Tensor) or not tensor.is_sparse:
        raise ValueError("kolo: sparse_allreduce_async takes a sparse COO tensor "
                         "(tensor.to_sparse()); use allreduce_async for dense tensors")
    op = resolve_op(op)
    if op not in (Average, Sum):
        raise ValueError("kolo: a sparse allreduce can only average or sum "
                         "(it allgathers the indices and values)")
    # allgather concatenates rows, so the indices travel as [nnz, sparse_dim]
    # and are transposed back afterwards.
    indices = allgather_async(tensor._indices().t().contiguous(), name=_part_name(name, "indices"),
                              process_set=process_set)
    values = allgather_async(tensor._values().contiguous(), name=_part_name(name, "values"),
                             process_set=process_set)
    divisor = _set_size(process_set) if op == Average else 1
    size = tensor.size()

    def handle():
        gathered_values = result(values)
        gathered_indices = result(indices)
        if divisor != 1:
            gathered_values = gathered_values / divisor
        return torch.sparse_coo_tensor(gathered_indices.t(), gathered_values, size)

    return handle


def sparse_allreduce(tensor, name=None, op=Average, process_set=global_process_set):
    """sparse_allreduce_async(...)(): the reduced sparse tensor."""
    return sparse_allreduce_async(tensor, name, op, process_set)()


__all__ = ["sparse_allreduce_async", "sparse_allreduce"]
