"""The synchronous torch ops of Horovod's API. Out-of-place ops are autograd
functions with Horovod's gradients, so they can sit inside a model:
allreduce -> allreduce of the gradient with the same op; allgather -> this
rank's rows of the averaged gradient; broadcast -> the averaged gradient on
the root, zeros elsewhere; alltoall -> the reverse alltoall; reducescatter
-> allgather of the gradient, times the set size for Sum (and times the
prescale and postscale factors)."""

import torch

from kolo.common.reduce_ops import Average, Sum, resolve_op
from kolo.common.runtime import runtime
from kolo.torch import async_ops as _async
from kolo.torch.compression import Compression

_GLOBAL = 0


def _set_size_and_rank(process_set):
    ranks = runtime().process_set_ranks(_async.process_set_id(process_set))
    me = runtime().engine().rank
    return len(ranks), ranks.index(me) if me in ranks else -1


class _Allreduce(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, name, op, prescale_factor, postscale_factor, process_set):
        ctx.args = (op, prescale_factor, postscale_factor, process_set)
        return _async.result(_async.allreduce_async(
            tensor, name=name, op=op, prescale_factor=prescale_factor,
            postscale_factor=postscale_factor, process_set=process_set))

    @staticmethod
    def backward(ctx, grad_output):
        op, prescale, postscale, process_set = ctx.args
        grad = _async.result(_async.allreduce_async(
            grad_output.contiguous(), op=op, prescale_factor=prescale,
            postscale_factor=postscale, process_set=process_set))
        return grad, None, None, None, None, None


def allreduce(tensor, average=None, name=None, compression=Compression.none, op=None,
              prescale_factor=1.0, postscale_factor=1.0, process_set=_GLOBAL):
    """Reduces `tensor` over the process set (Average by default) and returns
    the result as a new tensor; differentiable."""
    op = resolve_op(op, average)
    compressed, ctx = compression.compress(tensor)
    reduced = _Allreduce.apply(compressed, name, op, prescale_factor, postscale_factor,
                               process_set)
    return compression.decompress(reduced, ctx)


def allreduce_(tensor, average=None, name=None, op=None, prescale_factor=1.0,
               postscale_factor=1.0, process_set=_GLOBAL):
    """Reduces `tensor` in place and returns it."""
    return _async.result(_async.allreduce_async_(
        tensor, average=average, name=name, op=op, prescale_factor=prescale_factor,
        postscale_factor=postscale_factor, process_set=process_set))


class _GroupedAllreduce(torch.autograd.Function):
    @staticmethod
    def forward(ctx, name, op, prescale_factor, postscale_factor, process_set, *tensors):
        ctx.args = (op, prescale_factor, postscale_factor, process_set)
        return tuple(_async.result(_async.grouped_allreduce_async(
            list(tensors), name=name, op=op, prescale_factor=prescale_factor,
            postscale_factor=postscale_factor, process_set=process_set)))

    @staticmethod
    def backward(ctx, *grad_outputs):
        op, prescale, postscale, process_set = ctx.args
        grads = _async.result(_async.grouped_allreduce_async(
            [g.contiguous() for g in grad_outputs], op=op, prescale_factor=prescale,
            postscale_factor=postscale, process_set=process_set))
        return (None, None, None, None, None, *grads)


def grouped_allreduce(tensors, average=None, name=None, compression=Compression.none, op=None,
                      prescale_factor=1.0, postscale_factor=1.0, process_set=_GLOBAL):
    """Reduces a list of tensors as one negotiated, fused unit; differentiable."""
    op = resolve_op(op, average)
    compressed = [compression.compress(t) for t in tensors]
    reduced = _GroupedAllreduce.apply(name, op, prescale_factor, postscale_factor, process_set,
                                      *[t for t, _ in compressed])
    return [compression.decompress(r, c) for r, (_, c) in zip(reduced, compressed)]


def grouped_allreduce_(tensors, average=None, name=None, op=None, prescale_factor=1.0,
                       postscale_factor=1.0, process_set=_GLOBAL):
    return _async.result(_async.grouped_allreduce_async_(
        tensors, average=average, name=name, op=op, prescale_factor=prescale_factor,
        postscale_factor=postscale_factor, process_set=process_set))


def _own_rows(grad, rows, process_set):
    """This rank's slice of an allgathered gradient (rows differ per rank)."""
    counts = _async.result(_async.allgather_async(
        torch.tensor([rows], dtype=torch.int64), process_set=process_set))
    _, me = _set_size_and_rank(process_set)
    offset = int(counts[:me].sum())
    return grad.narrow(0, offset, rows)


class _Allgather(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, name, process_set):
        ctx.rows = tensor.shape[0] if tensor.dim() > 0 else 1
        ctx.process_set = process_set
        return _async.result(_async.allgather_async(tensor, name=name,
                                                    process_set=process_set))

    @staticmethod
    def backward(ctx, grad_output):
        reduced = _async.result(_async.allreduce_async(
            grad_output.contiguous(), op=Average, process_set=ctx.process_set))
        return _own_rows(reduced, ctx.rows, ctx.process_set), None, None


def allgather(tensor, name=None, process_set=_GLOBAL):
    """Concatenates every rank's tensor along dimension 0; differentiable."""
    return _Allgather.apply(tensor, name, process_set)


class _GroupedAllgather(torch.autograd.Function):
    @staticmethod
    def forward(ctx, name, process_set, *tensors):
        ctx.rows = [t.shape[0] if t.dim() > 0 else 1 for t in tensors]
        ctx.process_set = process_set
        return tuple(_async.result(_async.grouped_allgather_async(
            list(tensors), name=name, process_set=process_set)))

    @staticmethod
    def backward(ctx, *grad_outputs):
        reduced = _async.result(_async.grouped_allreduce_async(
            [g.contiguous() for g in grad_outputs], op=Average, process_set=ctx.process_set))
        grads = [_own_rows(g, rows, ctx.process_set) for g, rows in zip(reduced, ctx.rows)]
        return (None, None, *grads)


def grouped_allgather(tensors, name=None, process_set=_GLOBAL):
    return list(_GroupedAllgather.apply(name, process_set, *tensors))


class _Broadcast(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, root_rank, name, process_set):
        ctx.root_rank = root_rank
        ctx.process_set = process_set
        return _async.result(_async.broadcast_async(tensor, root_rank, name=name,
                                                    process_set=process_set))

    @staticmethod
    def backward(ctx, grad_output):
        reduced = _async.result(_async.allreduce_async(
            grad_output.contiguous(), op=Average, process_set=ctx.process_set))
        if runtime().engine().rank != ctx.root_rank:
            reduced.zero_()
        return reduced, None, None, None


def broadcast(tensor, root_rank, name=None, process_set=_GLOBAL):
    """Returns root_rank's `tensor` (root_rank is a global rank) on every rank
    of the set; differentiable."""
    return _Broadcast.apply(tensor, root_rank, name, process_set)


def broadcast_(tensor, root_rank, name=None, process_set=_GLOBAL):
    """Overwrites `tensor` with root_rank's value and returns it."""
    return _async.result(_async.broadcast_async_(tensor, root_rank, name=name,
                                                 process_set=process_set))


class _Alltoall(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, splits, name, process_set):
        output, received = _async.result(_async.alltoall_async(
            tensor, splits=splits, name=name, process_set=process_set))
        ctx.received = received
        ctx.process_set = process_set
        ctx.mark_non_differentiable(received)
        return output, received

    @staticmethod
    def backward(ctx, grad_output, _received_grad):
        grad, _ = _async.result(_async.alltoall_async(
            grad_output.contiguous(), splits=ctx.received, process_set=ctx.process_set))
        return grad, None, None, None


def alltoall(tensor, splits=None, name=None, process_set=_GLOBAL):
    """Sends splits[i] rows to rank i of the set (equal parts without splits).
    Returns the received rows, and with `splits` given also the rows received
    from each rank; differentiable."""
    output, received = _Alltoall.apply(tensor, splits, name, process_set)
    return output if splits is None else (output, received)


def _reducescatter_grad(grad_outputs, op, process_set, prescale, postscale):
    """Horovod's closed form: the allgather of the output gradients, times the
    set size for Sum (1 for Average), times prescale and postscale. Like
    allreduce's gradient (the allreduce of the gradient with the same op),
    it reads each rank's output gradient as the same loss seen on every rank."""
    factor = prescale * postscale
    if op == Sum:
        factor *= _set_size_and_rank(process_set)[0]
    scaled = [(g * factor if factor != 1.0 else g).contiguous() for g in grad_outputs]
    return _async.result(_async.grouped_allgather_async(scaled, process_set=process_set))


class _Reducescatter(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, name, op, process_set, prescale_factor, postscale_factor):
        ctx.args = (op, process_set, prescale_factor, postscale_factor)
        return _async.result(_async.reducescatter_async(
            tensor, name=name, op=op, process_set=process_set,
            prescale_factor=prescale_factor, postscale_factor=postscale_factor))

    @staticmethod
    def backward(ctx, grad_output):
        (grad,) = _reducescatter_grad([grad_output], *ctx.args)
        return grad, None, None, None, None, None


def reducescatter(tensor, name=None, compression=Compression.none, op=Average,
                  process_set=_GLOBAL, prescale_factor=1.0, postscale_factor=1.0):
    """Reduces `tensor` over the set and returns this rank's block of rows;
    differentiable."""
    op = resolve_op(op)
    compressed, ctx = compression.compress(tensor)
    reduced = _Reducescatter.apply(compressed, name, op, process_set, prescale_factor,
                                   postscale_factor)
    return compression.decompress(reduced, ctx)


class _GroupedReducescatter(torch.autograd.Function):
    @staticmethod
    def forward(ctx, name, op, process_set, prescale_factor, postscale_factor, *tensors):
        ctx.args = (op, process_set, prescale_factor, postscale_factor)
        return tuple(_async.result(_async.grouped_reducescatter_async(
            list(tensors), name=name, op=op, process_set=process_set,
            prescale_factor=prescale_factor, postscale_factor=postscale_factor)))

    @staticmethod
    def backward(ctx, *grad_outputs):
        grads = _reducescatter_grad(grad_outputs, *ctx.args)
        return (None, None, None, None, None, *grads)


def grouped_reducescatter(tensors, name=None, compression=Compression.none, op=Average,
                          process_set=_GLOBAL, prescale_factor=1.0, postscale_factor=1.0):
    op = resolve_op(op)
    compressed = [compression.compress(t) for t in tensors]
    reduced = _GroupedReducescatter.apply(name, op, process_set, prescale_factor,
                                          postscale_factor, *[t for t, _ in compressed])
    return [compression.decompress(r, c) for r, (_, c) in zip(reduced, compressed)]


__all__ = [
    "allreduce", "allreduce_", "grouped_allreduce", "grouped_allreduce_", "allgather",
    "grouped_allgather", "broadcast", "broadcast_", "alltoall", "reducescatter",
    "grouped_reducescatter",
]
