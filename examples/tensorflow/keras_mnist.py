"""Handwritten-digit classification with Kolo: a Horovod-style Keras script.

    kolorun -np 2 python examples/tensorflow/keras_mnist.py                 # 8x8 digits
    kolorun -np 2 python examples/tensorflow/keras_mnist.py --data-dir DIR  # DIR/mnist.npz
    TF_USE_LEGACY_KERAS=1 kolorun -np 2 python examples/tensorflow/keras_mnist.py  # tf-keras

It needs no download. By default it trains on the 1,797 8x8 digits that ship with
scikit-learn (Debian's python3-sklearn); with --data-dir it reads Keras's mnist.npz
(x_train, y_train, x_test, y_test) from there. It runs under Keras 3 (tf.keras on
TF >= 2.16) and under tf-keras (TF_USE_LEGACY_KERAS=1).

The Kolo lines are exactly Horovod's: `import horovod.tensorflow.keras as hvd` runs
this script unchanged through Kolo's drop-in package. Each one is marked "Horovod:".
"""

import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # before TF loads: no info lines

import numpy as np
import tensorflow as tf

import kolo.tensorflow.keras as hvd  # or: import horovod.tensorflow.keras as hvd


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--epochs", type=int, default=None,
                   help="passes over the training set (default: 15 on the 8x8 digits, 3 on "
                        "MNIST)")
    p.add_argument("--batch-size", type=int, default=32, help="samples per step on each rank")
    p.add_argument("--lr", type=float, default=0.001,
                   help="Adam's learning rate on one rank; multiplied by the number of ranks")
    p.add_argument("--warmup-epochs", type=int, default=2,
                   help="epochs of gradual learning-rate warmup from lr to lr * ranks")
    p.add_argument("--seed", type=int, default=42, help="random seed (the same on every rank)")
    p.add_argument("--data-dir", default=None,
                   help="directory with Keras's mnist.npz (default: scikit-learn's digits)")
    p.add_argument("--checkpoint-dir", default=None,
                   help="rank 0 saves checkpoint-{epoch}.keras here after every epoch")
    p.add_argument("--min-accuracy", type=float, default=0.9,
                   help="exit with status 1 when the test accuracy ends below this fraction")
    return p.parse_args()


def load_data(data_dir):
    """(x_train, y_train, x_test, y_test, source, default epochs), pixels in [0, 1]."""
    if data_dir:
        path = os.path.join(data_dir, "mnist.npz")
        if not os.path.exists(path):
            sys.exit(f"error: no mnist.npz in {data_dir}")
        with np.load(path) as f:
            arrays = f["x_train"], f["y_train"], f["x_test"], f["y_test"]
        scale, source, epochs = 255.0, f"MNIST from {path}", 3
    else:
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split
        digits = load_digits()
        # A fixed split seed: every rank holds the same split.
        x_train, x_test, y_train, y_test = train_test_split(
            digits.images, digits.target, test_size=0.2, random_state=0,
            stratify=digits.target)
        arrays = x_train, y_train, x_test, y_test
        scale, source, epochs = 16.0, "scikit-learn's 8x8 digits", 15
    x_train, y_train, x_test, y_test = arrays
    return (x_train[..., None].astype(np.float32) / scale, y_train.astype(np.int64),
            x_test[..., None].astype(np.float32) / scale, y_test.astype(np.int64),
            source, epochs)


def build_model(image_size):
    keras = tf.keras
    return keras.Sequential([
        keras.Input((image_size, image_size, 1)),
        keras.layers.Conv2D(16, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(2),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(2),
        keras.layers.Flatten(),
        keras.layers.Dropout(0.25),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(10, activation="softmax"),
    ])


def main():
    args = parse_args()
    # Horovod: initialize.
    hvd.init()
    tf.keras.utils.set_random_seed(args.seed + hvd.rank())  # ranks start apart on purpose
    x_train, y_train, x_test, y_test, source, default_epochs = load_data(args.data_dir)
    epochs = args.epochs or default_epochs
    if hvd.rank() == 0:
        print(f"training on {source}: {len(x_train)} images, {hvd.size()} rank(s), "
              f"{epochs} epochs, Keras {tf.keras.__name__.split('.')[0]}", flush=True)

    # Horovod: each rank trains on its own share of the training set.
    x_mine, y_mine = x_train[hvd.rank()::hvd.size()], y_train[hvd.rank()::hvd.size()]
    model = build_model(x_train.shape[1])
    # Horovod: scale the learning rate by the number of ranks, and wrap the
    # optimizer so the gradients are averaged over the ranks.
    scaled_lr = args.lr * hvd.size()
    optimizer = hvd.DistributedOptimizer(tf.keras.optimizers.Adam(scaled_lr))
    model.compile(loss="sparse_categorical_crossentropy", optimizer=optimizer,
                  metrics=["accuracy"])

    callbacks = [
        # Horovod: start every rank from rank 0's weights.
        hvd.callbacks.BroadcastGlobalVariablesCallback(0),
        # Horovod: report the metrics averaged over the ranks.
        hvd.callbacks.MetricAverageCallback(),
        # Horovod: ramp the learning rate up to scaled_lr over the first epochs.
        hvd.callbacks.LearningRateWarmupCallback(initial_lr=scaled_lr,
                                                 warmup_epochs=args.warmup_epochs,
                                                 verbose=1),
    ]
    # Horovod: only rank 0 writes checkpoints, so ranks never overwrite each other.
    if hvd.rank() == 0 and args.checkpoint_dir:
        os.makedirs(args.checkpoint_dir, exist_ok=True)
        callbacks.append(tf.keras.callbacks.ModelCheckpoint(
            os.path.join(args.checkpoint_dir, "checkpoint-{epoch}.keras")))

    model.fit(x_mine, y_mine, batch_size=args.batch_size, epochs=epochs, callbacks=callbacks,
              verbose=2 if hvd.rank() == 0 else 0)

    # Every rank evaluates its share of the test set; the accuracy is averaged.
    _, accuracy = model.evaluate(x_test[hvd.rank()::hvd.size()], y_test[hvd.rank()::hvd.size()],
                                 verbose=0)
    accuracy = float(hvd.allreduce(accuracy, name="test_accuracy"))
    if hvd.rank() == 0:
        print(f"test accuracy: {100 * accuracy:.2f}%", flush=True)
    if accuracy < args.min_accuracy:
        print(f"error: test accuracy {accuracy:.4f} is below --min-accuracy "
              f"{args.min_accuracy}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
