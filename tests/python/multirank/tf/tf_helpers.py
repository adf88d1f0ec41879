"""Shared pieces of the TensorFlow multirank tests: each rank's input as a
known function of its rank (so every rank computes the expected result
itself), and running a test body eagerly or inside tf.function."""

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow", reason="TensorFlow is not installed (make test installs "
                         "tensorflow-cpu into the venv)")

DTYPES = [tf.uint8, tf.int8, tf.int16, tf.int32, tf.int64, tf.float16, tf.bfloat16, tf.float32,
          tf.float64, tf.bool]
IDS = [d.name for d in DTYPES]
NUMERIC = [d for d in DTYPES if d != tf.bool]
MODES = ["eager", "function"]


def value_np(r, rows, cols=3):
    """Rank r's input as int64: rows x cols, different per rank and element;
    small enough for uint8 sums and products over three ranks."""
    base = np.arange(rows * cols).reshape(rows, cols)
    return (base % 3) + r + 1


def value(r, rows, dtype, cols=3):
    if dtype == tf.bool:
        base = np.arange(rows * cols).reshape(rows, cols)
        return tf.constant((base + r) % 3 == 0)
    return tf.cast(tf.constant(value_np(r, rows, cols)), dtype)


def run(mode, body, *args):
    """body(*args), eagerly or as a tf.function traced for this call."""
    if mode == "eager":
        return body(*args)
    return tf.function(body)(*args)


def as_np(tensor):
    """A result as a NumPy array of int64/bool/float64 for exact comparison."""
    if tensor.dtype == tf.bool:
        return tensor.numpy()
    if tensor.dtype.is_floating:
        return tf.cast(tensor, tf.float64).numpy()
    return tf.cast(tensor, tf.int64).numpy()


def embedding_data(rows, vocab, seed=5):
    """`rows` pairs of token ids below `vocab` (so ids repeat within and
    across the ranks' shards) and a float target per row."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, vocab, size=(rows, 2)).astype(np.int32)
    y = rng.normal(size=(rows, 1)).astype(np.float32)
    return ids, y
