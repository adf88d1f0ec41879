#!/usr/bin/env python3
"""What TensorFlow elastic training and SyncBatchNormalization add to a
training step, measured directly (medians of repeated runs; the two
normalization layers interleaved, so a loaded host slows both alike).

    .venv/bin/kolorun -np 2 .venv/bin/python bench/tf_elastic_overhead.py [--rounds 15]

- commit: KerasState.commit() (host copies of every model and optimizer
  variable, and the host-update check) for seed 002's MNIST CNN with Adam,
  3.6 M values; beside it, one fit() step of that model at batch 128 per
  rank, so the ratio is the share a commit after every batch costs.
- syncbn: one training forward and backward pass (in a tf.function) of
  hvd.SyncBatchNormalization against tf.keras's BatchNormalization on a
  128 x 24 x 24 x 64 input (the CNN's second convolution's output): the
  difference is the allreduce of the statistics and its gradient's.

Rank 0 prints a table.
"""

import argparse
import statistics
import time

import numpy as np
import tensorflow as tf

import kolo.tensorflow as hvd
import kolo.tensorflow.keras.elastic as elastic


class AveragingModel(tf.keras.Sequential):
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(
                y, self(x, training=True)))
        grads = hvd.DistributedGradientTape(tape).gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


def seed_cnn():
    model = AveragingModel([
        tf.keras.Input(shape=(28, 28, 1)),
        tf.keras.layers.Conv2D(32, [3, 3], activation="relu"),
        tf.keras.layers.Conv2D(64, [3, 3], activation="relu"),
        tf.keras.layers.MaxPooling2D(pool_size=(2, 2)), tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(128, activation="relu"),
        tf.keras.layers.Dense(10, activation="softmax")])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.001))
    return model


def median_seconds(fn, rounds, repeat=1):
    times = []
    for _ in range(rounds):
        hvd.barrier()
        start = time.perf_counter()
        for _ in range(repeat):
            fn()
        times.append((time.perf_counter() - start) / repeat)
    return statistics.median(times)


def layer_step(layer):
    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(layer(x, training=True))
        return tape.gradient(y, [x, layer.gamma])
    return step


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    hvd.init()
    rng = np.random.default_rng(hvd.rank())

    model = seed_cnn()
    images = rng.random((256, 28, 28, 1), dtype=np.float32)
    data = tf.data.Dataset.from_tensor_slices((images, rng.integers(0, 10, 256))).repeat()
    data = data.batch(128)
    model.fit(data, steps_per_epoch=2, epochs=1, verbose=0)  # trace, build the optimizer
    state = elastic.KerasState(model, epoch=0, batch=0)
    values = sum(int(np.prod(v.shape)) for group in state._variables() for v in group)
    commit = median_seconds(state.commit, args.rounds)
    step = median_seconds(lambda: model.fit(data, steps_per_epoch=4, epochs=1, verbose=0),
                          max(3, args.rounds // 3)) / 4

    x = tf.constant(rng.random((128, 24, 24, 64), dtype=np.float32))
    layers = {"batchnorm": layer_step(tf.keras.layers.BatchNormalization()),
              "syncbn": layer_step(hvd.SyncBatchNormalization())}
    for fn in layers.values():
        fn(x)
    norm_times = {name: [] for name in layers}
    for _ in range(args.rounds):  # interleaved
        for name, fn in layers.items():
            norm_times[name].append(median_seconds(lambda: fn(x)[0].numpy(), 1, repeat=10))
    norm = {name: statistics.median(t) for name, t in norm_times.items()}

    if hvd.rank() == 0:
        print(f"ranks={hvd.size()} rounds={args.rounds} keras={tf.keras.__name__}")
        print("| measured | median | ratio |")
        print("|---|---|---|")
        print(f"| KerasState.commit(), {values / 1e6:.1f} M values | {commit * 1e3:.1f} ms | "
              f"{commit / step:.3f} of a fit() step ({step * 1e3:.0f} ms) |")
        print(f"| BatchNormalization fwd+bwd | {norm['batchnorm'] * 1e3:.1f} ms | 1 |")
        print(f"| SyncBatchNormalization fwd+bwd | {norm['syncbn'] * 1e3:.1f} ms | "
              f"{norm['syncbn'] / norm['batchnorm']:.3f} |")


if __name__ == "__main__":
    main()
