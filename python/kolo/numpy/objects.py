"""Any picklable Python object across ranks, as Horovod's
broadcast_object / allgather_object do it: cloudpickle to bytes (so lambdas
and locally defined classes work), the bytes travel as uint8 arrays, sizes
first so every rank knows how much to expect.
"""

import io

import cloudpickle
import numpy as np

from kolo.common.basics import rank
from kolo.numpy.collectives import _root_in_set, allgather, broadcast_


def _dumps(obj):
    buffer = io.BytesIO()
    cloudpickle.dump(obj, buffer)
    return np.frombuffer(buffer.getbuffer(), dtype=np.uint8)


def _loads(array):
    return cloudpickle.loads(array.tobytes())


def broadcast_object(obj, root_rank=0, name=None, process_set=None):
    """Returns the root's `obj` on every rank (the root gets a copy too, as
    every rank unpickles the same bytes). Collective over `process_set`;
    `obj` is ignored on the other ranks."""
    name = name if name is not None else "kolo.broadcast_object"
    _root_in_set(root_rank, process_set)  # a bad root fails here, before any collective
    is_root = rank() == int(root_rank)
    payload = _dumps(obj) if is_root else None
    size = np.array([payload.size if is_root else 0], dtype=np.int64)
    broadcast_(size, root_rank, name=f"{name}.size", process_set=process_set)
    if not is_root:
        payload = np.empty(int(size[0]), dtype=np.uint8)
    broadcast_(payload, root_rank, name=f"{name}.data", process_set=process_set)
    return _loads(payload)


def allgather_object(obj, name=None, process_set=None):
    """Returns the list of every rank's `obj`, in rank order within
    `process_set`."""
    name = name if name is not None else "kolo.allgather_object"
    payload = _dumps(obj)
    sizes = allgather(np.array([payload.size], dtype=np.int64), name=f"{name}.sizes",
                      process_set=process_set)
    gathered = allgather(payload, name=f"{name}.data", process_set=process_set)
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    return [_loads(gathered[offsets[i]:offsets[i + 1]]) for i in range(len(sizes))]


__all__ = ["broadcast_object", "allgather_object"]
