"""The framework-independent half of Horovod's hvd.Compression: the
interface users subclass for their own compression, and the compressor
that does nothing. kolo.torch and kolo.tensorflow add their fp16 one."""

import abc


class Compressor(abc.ABC):
    """compress() returns (tensor to send, context); decompress() undoes it."""

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
