"""Shared pieces of the Keras multirank tests. They run twice in `make
test`: under Keras 3 (tf.keras on TF 2.21) and under tf-keras
(TF_USE_LEGACY_KERAS=1, set by scripts/run-python-tests.sh); LEGACY says
which. Data and initial weights are fixed functions of a seed, so every
rank can compute the single-process reference itself."""

import os

import numpy as np

from tf_helpers import tf

keras = tf.keras
LEGACY = os.environ.get("TF_USE_LEGACY_KERAS", "0") not in ("", "0", "false", "False")
BATCH = 12  # divisible by 2 and 3 ranks


def optimizer_factories():
    """(id, factory(lr)) of the optimizers the equivalence tests train with;
    tf-keras adds its optimizer_v2 ("legacy") kinds, the ones seed scripts
    written for TF < 2.11 use."""
    kinds = [("sgd", lambda lr: keras.optimizers.SGD(lr)),
             ("momentum", lambda lr: keras.optimizers.SGD(lr, momentum=0.9)),
             ("adam", lambda lr: keras.optimizers.Adam(lr))]
    if LEGACY:
        kinds += [("legacy-sgd", lambda lr: keras.optimizers.legacy.SGD(lr, momentum=0.9)),
                  ("legacy-adam", lambda lr: keras.optimizers.legacy.Adam(lr))]
    return kinds


def data(rows=BATCH, seed=7):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, 4)).astype(np.float32)
    y = rng.normal(size=(rows, 1)).astype(np.float32)
    return x, y


def model(seed=11, keras=keras):
    """A small MLP with weights from `seed` (not Keras's global RNG), made
    with `keras` (tf.keras unless given another Keras module)."""
    m = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="tanh"),
                          keras.layers.Dense(1)])
    rng = np.random.default_rng(seed)
    m.set_weights([rng.normal(size=w.shape).astype(np.float32) * 0.5 for w in m.get_weights()])
    return m


def shard(array, rank, size):
    """Rank `rank`'s contiguous share of each batch of BATCH rows."""
    per = BATCH // size
    batches = array.reshape(-1, BATCH, *array.shape[1:])
    return batches[:, rank * per:(rank + 1) * per].reshape(-1, *array.shape[1:])


def gathered_equal(hvd, arrays):
    """True when every rank holds exactly these arrays."""
    mine = [np.asarray(a).tolist() for a in arrays]
    return all(g == mine for g in hvd.allgather_object(mine))
