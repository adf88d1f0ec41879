"""NumPy arrays on their way into and out of the engine.

The engine reads and writes memory through DLPack views, which NumPy 1.x
restricts in three ways this module works around without copying data:
bool arrays cannot be exported (they travel as uint8 with dtype "bool"),
read-only arrays cannot be exported (the engine only reads inputs, so a
writable alias of the same memory is safe), and arrays imported from DLPack
come back read-only (an engine output belongs to the caller alone, so it is
handed out writable). Only layout problems the engine cannot read at all,
non-contiguous or byte-swapped arrays, cost a copy.
"""

import ctypes

import numpy as np

# NumPy dtype -> the engine's dtype name (src/common/types.cc).
_ENGINE_DTYPES = {
    np.dtype(np.uint8): "uint8",
    np.dtype(np.int8): "int8",
    np.dtype(np.int16): "int16",
    np.dtype(np.int32): "int32",
    np.dtype(np.int64): "int64",
    np.dtype(np.float16): "float16",
    np.dtype(np.float32): "float32",
    np.dtype(np.float64): "float64",
    np.dtype(np.bool_): "bool",
}

SUPPORTED_DTYPES = tuple(str(d) for d in _ENGINE_DTYPES)


class EngineArray:
    """An input as the engine reads it: `array` is what goes through DLPack
    (kept alive by whoever holds this until the operation completes),
    `dtype_name` the engine dtype to declare, `dtype` the user's dtype."""

    __slots__ = ("array", "dtype_name", "dtype")

    def __init__(self, array, dtype_name, dtype):
        self.array = array
        self.dtype_name = dtype_name
        self.dtype = dtype

    @property
    def shape(self):
        return self.array.shape


def engine_input(value, what="tensor"):
    """Converts an array-like to what the engine can read, copying only when
    the layout requires it. Raises TypeError naming the dtype when the engine
    has no such type (complex, uint16, object, ...)."""
    array = np.asarray(value)
    if array.dtype.newbyteorder("=") not in _ENGINE_DTYPES:
        raise TypeError(
            f"kolo.numpy: {what} has dtype {array.dtype}, which Kolo cannot reduce or send; "
            f"supported dtypes: {', '.join(SUPPORTED_DTYPES)}")
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    if not array.flags.c_contiguous:
        array = array.copy(order="C")
    dtype = array.dtype
    if dtype == np.bool_:
        array = array.view(np.uint8)
    if not array.flags.writeable:
        array = _writable_alias(array)
    return EngineArray(array, _ENGINE_DTYPES[dtype], dtype)


def engine_output(like, engine):
    """An array the engine writes a result of `like`'s shape and dtype into;
    returns (user_array, array_for_the_engine), which share memory.

    The memory comes from `engine`'s output cache rather than np.empty:
    NumPy's allocator takes large blocks straight from mmap and unmaps them
    on free, so every call's output would fault in fresh pages. The cache
    hands a block out again only once no array refers to it any more."""
    out = from_engine(engine.allocate_output(list(like.shape), like.dtype_name), like.dtype)
    return out, (out.view(np.uint8) if out.dtype == np.bool_ else out)


def in_place_target(array, what="tensor"):
    """Checks that `array` can receive a result in place (Horovod's
    allreduce_/broadcast_ write into the caller's array)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"kolo.numpy: in-place operations need a numpy.ndarray {what}, "
                        f"got {type(array).__name__}")
    if not array.flags.writeable:
        raise ValueError(f"kolo.numpy: the {what} of an in-place operation is read-only")
    return array


def from_engine(dlpack_array, dtype):
    """The engine-allocated output of a finished operation as a writable
    ndarray of `dtype`, sharing the engine's memory (kept alive by the array)."""
    array = np.from_dlpack(dlpack_array)
    if not array.flags.writeable:
        array = _writable_alias(array)
    return array.view(np.bool_) if dtype == np.bool_ else array


def _writable_alias(array):
    """A writable ndarray over `array`'s memory that keeps `array` (and so the
    memory's owner) alive. NumPy refuses to export read-only arrays through
    DLPack and imports DLPack arrays read-only, because DLPack 0.x carries no
    read-only flag; ctypes exposes the same bytes as a writable buffer."""
    if array.nbytes == 0:
        return np.empty(array.shape, dtype=array.dtype)
    address = array.__array_interface__["data"][0]
    buffer = (ctypes.c_byte * array.nbytes).from_address(address)
    buffer._kolo_owner = array  # the ctypes view alone would not keep the memory alive
    return np.frombuffer(buffer, dtype=array.dtype).reshape(array.shape)
