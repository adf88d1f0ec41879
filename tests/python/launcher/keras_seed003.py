"""Seed 003's Keras example ("Horovod" notes, section Example), made
runnable: its own lines are kept as written (DistributedOptimizer, compile
with experimental_run_tf_function=False, BroadcastGlobalVariablesCallback,
rank-0 ModelCheckpoint to ./checkpoint-{epoch}.h5, fit with
steps_per_epoch=500 // hvd.size()); the `dataset = ...` and `model = ...`
it leaves out are filled in as Horovod's tensorflow2_keras_mnist example
has them, reading a local mnist.npz. Epochs and steps are arguments so the
test stays short. experimental_run_tf_function is a tf-keras argument:
run it with TF_USE_LEGACY_KERAS=1, as such scripts are run on TF >= 2.16."""

import argparse

import numpy as np
import tensorflow as tf
from tensorflow import keras
import horovod.tensorflow.keras as hvd

parser = argparse.ArgumentParser()
parser.add_argument("--data", required=True, help="an mnist.npz")
parser.add_argument("--epochs", type=int, default=24)
parser.add_argument("--steps", type=int, default=500)
args = parser.parse_args()

hvd.init()

gpus = tf.config.experimental.list_physical_devices('GPU')
for gpu in gpus:
    tf.config.experimental.set_memory_growth(gpu, True)
if gpus:
    tf.config.experimental.set_visible_devices(gpus[hvd.local_rank()], 'GPU')

with np.load(args.data) as f:
    images, labels = f["x_train"], f["y_train"]
dataset = tf.data.Dataset.from_tensor_slices(
    (tf.cast(images[..., tf.newaxis] / 255.0, tf.float32), tf.cast(labels, tf.int64)))
dataset = dataset.repeat().shuffle(10000, seed=hvd.rank()).batch(128)
model = tf.keras.Sequential([
    tf.keras.layers.Conv2D(32, [3, 3], activation='relu'),
    tf.keras.layers.Conv2D(64, [3, 3], activation='relu'),
    tf.keras.layers.MaxPooling2D(pool_size=(2, 2)),
    tf.keras.layers.Dropout(0.25),
    tf.keras.layers.Flatten(),
    tf.keras.layers.Dense(128, activation='relu'),
    tf.keras.layers.Dropout(0.5),
    tf.keras.layers.Dense(10, activation='softmax')
])
mnist_model = model

scaled_lr = 0.001 * hvd.size()
opt = tf.optimizers.Adam(scaled_lr)

opt = hvd.DistributedOptimizer(opt)

mnist_model.compile(loss=tf.losses.SparseCategoricalCrossentropy(),
                    optimizer=opt,
                    metrics=['accuracy'],
                    experimental_run_tf_function=False)

callbacks = [
    hvd.callbacks.BroadcastGlobalVariablesCallback(0),
]

if hvd.rank() == 0:
    callbacks.append(keras.callbacks.ModelCheckpoint('./checkpoint-{epoch}.h5'))

history = model.fit(dataset,
                    steps_per_epoch=args.steps // hvd.size(),
                    callbacks=callbacks,
                    epochs=args.epochs,
                    verbose=1 if hvd.rank() == 0 else 0)

# Not in the seed: what the test checks.
print(f"rank {hvd.rank()} final accuracy {history.history['accuracy'][-1]:.4f} weights "
      f"{float(sum(np.sum(w) for w in model.get_weights())):.6f}", flush=True)
