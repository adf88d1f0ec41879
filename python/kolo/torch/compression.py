"""Gradient compression for allreduce (Horovod's hvd.Compression): fp16
halves the bytes on the wire for float32/float64 gradients."""

import abc

import torch


class Compressor(abc.ABC):
    """The interface users subclass for their own compression (as in Horovod):
    compress() returns (tensor to send, context); decompress() undoes it."""

    @staticmethod
    @abc.abstractmethod
    def compress(tensor):
        """Returns (tensor to send, context for decompress)."""

    @staticmethod
    @abc.abstractmethod
    def decompress(tensor, ctx):
        """Returns the tensor in its original form."""


class NoneCompressor(Compressor):
    @staticmethod
    def compress(tensor):
        return tensor, None

    @staticmethod
    def decompress(tensor, ctx):
        return tensor


class FP16Compressor(Compressor):
    """Sends floating-point tensors as float16; other dtypes pass unchanged."""

    @staticmethod
    def compress(tensor):
        if tensor.dtype.is_floating_point and tensor.dtype != torch.float16:
            return tensor.type(torch.float16), tensor.dtype
        return tensor, None

    @staticmethod
    def decompress(tensor, ctx):
        return tensor if ctx is None else tensor.type(ctx)


class Compression:
    none = NoneCompressor
    fp16 = FP16Compressor


__all__ = ["Compression", "Compressor", "NoneCompressor", "FP16Compressor"]
