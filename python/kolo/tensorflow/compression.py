"""Gradient compression for allreduce (Horovod's hvd.Compression): fp16
halves the bytes on the wire for floating-point tensors."""

import tensorflow as tf

from kolo.common.compression import Compressor, NoneCompressor


class FP16Compressor(Compressor):
    """Floating-point tensors travel as float16; others unchanged."""

    @staticmethod
    def compress(tensor):
        if tensor.dtype.is_floating and tensor.dtype != tf.float16:
            return tf.cast(tensor, tf.float16), tensor.dtype
        return tensor, None

    @staticmethod
    def decompress(tensor, ctx):
        return tensor if ctx is None else tf.cast(tensor, ctx)


class Compression:
    none = NoneCompressor
    fp16 = FP16Compressor


__all__ = ["Compression", "Compressor", "NoneCompressor", "FP16Compressor"]
