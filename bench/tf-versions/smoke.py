"""A short 2-rank check that one Kolo build works with the installed TF:

    kolorun -np 2 python bench/tf-versions/smoke.py

allreduce (Sum and Average) eagerly and inside tf.function, a grouped
allreduce and a broadcast in a tf.function, and two Keras fit() steps with
horovod.tensorflow.keras's DistributedOptimizer, after which both ranks must
hold the same weights. Under TF_USE_LEGACY_KERAS=1 the fit runs on tf-keras.
Exits 1 with the first wrong result; rank 0 prints "smoke ok" and the
versions when everything held.
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # before TF loads: no info lines

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import horovod.tensorflow.keras as hvd_keras  # noqa: E402
import horovod.tensorflow as hvd  # noqa: E402


def expect(what, got, want):
    if not np.allclose(np.asarray(got), np.asarray(want)):
        print(f"smoke FAILED on rank {hvd.rank()}: {what}: got {got}, want {want}",
              file=sys.stderr, flush=True)
        sys.exit(1)


def main():
    hvd.init()
    rank, size = hvd.rank(), hvd.size()
    x = tf.fill([4], float(rank + 1))
    ranks_sum = size * (size + 1) / 2

    expect("eager allreduce Sum", hvd.allreduce(x, op=hvd.Sum), [ranks_sum] * 4)
    expect("eager allreduce Average", hvd.allreduce(x), [ranks_sum / size] * 4)

    @tf.function
    def graph_ops(t):
        summed = hvd.allreduce(t, op=hvd.Sum)
        grouped = hvd.grouped_allreduce([t, 2 * t], op=hvd.Sum)
        root = hvd.broadcast(t, root_rank=size - 1)
        return summed, grouped, root

    summed, grouped, root = graph_ops(x)
    expect("tf.function allreduce Sum", summed, [ranks_sum] * 4)
    expect("tf.function grouped_allreduce", grouped[1], [2 * ranks_sum] * 4)
    expect("tf.function broadcast", root, [float(size)] * 4)

    keras = tf.keras
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    opt = hvd_keras.DistributedOptimizer(keras.optimizers.SGD(0.1))
    model.compile(optimizer=opt, loss="mse")
    rng = np.random.default_rng(rank)  # different data per rank: only the exchange syncs
    features = rng.standard_normal((8, 3)).astype(np.float32)
    targets = rng.standard_normal((8, 1)).astype(np.float32)
    model.fit(features, targets, batch_size=4, epochs=1, verbose=0,
              callbacks=[hvd_keras.callbacks.BroadcastGlobalVariablesCallback(0)])
    flat = np.concatenate([np.ravel(w) for w in model.get_weights()]).astype(np.float32)
    gathered = hvd.allgather(tf.constant(flat[np.newaxis, :])).numpy()
    expect("weights after a DistributedOptimizer fit", gathered, np.repeat(gathered[:1], size, 0))

    if rank == 0:
        legacy = type(opt).__module__.split(".")[0]
        print(f"smoke ok: tf {tf.__version__}, keras from {legacy}, ranks {size}", flush=True)
    hvd.shutdown()


if __name__ == "__main__":
    main()
