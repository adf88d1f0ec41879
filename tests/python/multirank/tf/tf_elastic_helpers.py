"""Shared by the TensorFlow elastic multirank tests (test_elastic_tensorflow.py,
test_elastic_keras_callbacks.py): a small compiled Keras model, local
training steps, snapshots of a state's variables (the call counters are
elastic_helpers.counting, shared with the PyTorch tests)."""

import numpy as np

from tf_helpers import tf

import kolo.tensorflow as hvd
from elastic_helpers import counting  # noqa: F401  (re-exported to the TF elastic tests)


def make_model(seed, wrap=None):
    """A compiled model with trainable and non-trainable variables (batch
    normalization's moving statistics) and an Adam optimizer (slots and an
    iteration count), given to `wrap` if set (a DistributedOptimizer): its
    weights depend on `seed`."""
    tf.keras.utils.set_random_seed(seed)
    model = tf.keras.Sequential([
        tf.keras.Input(shape=(4,)),
        tf.keras.layers.Dense(5, activation="tanh"),
        tf.keras.layers.BatchNormalization(),
        tf.keras.layers.Dense(2),
    ])
    optimizer = tf.keras.optimizers.Adam(0.05)
    model.compile(optimizer=wrap(optimizer) if wrap else optimizer, loss="mse")
    return model


def batch(seed, rows=6):
    rng = np.random.default_rng(1000 + seed)
    return (rng.normal(size=(rows, 4)).astype(np.float32),
            rng.normal(size=(rows, 2)).astype(np.float32))


def train_locally(model, seed, steps=1):
    """`steps` optimizer steps without collectives (the plain optimizer)."""
    x, y = batch(seed)
    for _ in range(steps):
        model.train_on_batch(x, y)


def snapshot(state):
    """Copies of the values of every variable the state keeps (the model's,
    then the optimizer's)."""
    model_vars, optimizer_vars = state._variables()
    return [np.array(v.numpy()) for v in model_vars + optimizer_vars]


def every_rank_holds_the_same(arrays, name):
    everyone = hvd.allgather_object([a.tolist() for a in arrays], name=name)
    assert all(theirs == everyone[0] for theirs in everyone), f"ranks differ after {name}"


def engine_works():
    out = hvd.allreduce(tf.ones([2]), op=hvd.Sum, name="tfelastic.engine_works")
    return np.array_equal(out.numpy(), np.full(2, float(hvd.size()), np.float32))
