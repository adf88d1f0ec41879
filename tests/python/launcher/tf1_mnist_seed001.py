"""A TensorFlow MNIST job in the shape of seed 001's (the Horovod job its
platform submits with `python tensorflow_mnist.py` on 2 learners): TF1 graph
code, placeholders fed by a batch generator, a two-conv-layer model, RMSProp
with the learning rate scaled by the number of ranks, Horovod's
DistributedOptimizer, a global step, the hooks BroadcastGlobalVariablesHook(0),
StopAtStepHook(last_step=steps // size) and LoggingTensorHook(step, loss every
10 steps), and a MonitoredTrainingSession that checkpoints on rank 0 only
(checkpoint_dir None elsewhere).

Written for this test, not copied. What had to change for TF 2: the
tf.contrib calls that no longer exist became their tf.compat.v1 and tf.nn
equivalents (run under `tensorflow.compat.v1` with v2 behaviour off, as TF1
scripts are carried to TF 2). What the test adapts: the data comes from a
local mnist.npz (--data) instead of object storage, the step count is an
argument, and a last hook (marked "Not in the seed") prints what the test
checks.
"""

import argparse

import numpy as np
import tensorflow.compat.v1 as tf

import horovod.tensorflow as hvd

tf.disable_v2_behavior()
tf.logging.set_verbosity(tf.logging.INFO)


def conv_layer(inputs, filters, scope):
    """5x5 convolution with ReLU, then 2x2 max pooling."""
    with tf.variable_scope(scope):
        kernel = tf.get_variable("kernel", [5, 5, inputs.shape[-1], filters],
                                 initializer=tf.glorot_uniform_initializer())
        bias = tf.get_variable("bias", [filters], initializer=tf.zeros_initializer())
        conv = tf.nn.relu(tf.nn.conv2d(inputs, kernel, [1, 1, 1, 1], "SAME") + bias)
        return tf.nn.max_pool(conv, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")


def dense_layer(inputs, units, scope, activation=None):
    with tf.variable_scope(scope):
        weights = tf.get_variable("weights", [inputs.shape[-1], units],
                                  initializer=tf.glorot_uniform_initializer())
        bias = tf.get_variable("bias", [units], initializer=tf.zeros_initializer())
        out = tf.matmul(inputs, weights) + bias
        return activation(out) if activation else out


def conv_model(feature, target, training):
    """Two conv layers (32 and 64 filters), a 1024-unit dense layer with
    dropout, 10 logits; returns (predicted class, loss)."""
    target = tf.one_hot(tf.cast(target, tf.int32), 10, 1, 0)
    feature = tf.reshape(feature, [-1, 28, 28, 1])
    pooled = conv_layer(conv_layer(feature, 32, "conv_layer1"), 64, "conv_layer2")
    flat = tf.reshape(pooled, [-1, 7 * 7 * 64])
    hidden = dense_layer(flat, 1024, "fc1", tf.nn.relu)
    hidden = tf.nn.dropout(hidden, rate=0.5 if training else 0.0)
    logits = dense_layer(hidden, 10, "logits")
    loss = tf.losses.softmax_cross_entropy(target, logits)
    return tf.argmax(logits, 1), loss


def batches(images, labels, size, seed):
    """Endless shuffled batches of `size`, as the seed's next_batch(100) gives."""
    rng = np.random.default_rng(seed)
    while True:
        order = rng.permutation(len(images))
        for start in range(0, len(order) - size + 1, size):
            chosen = order[start:start + size]
            yield images[chosen], labels[chosen]


class ReportHook(tf.train.SessionRunHook):
    """Not in the seed: at the end, this rank's test accuracy and a checksum
    of its weights (the same on every rank when training kept them in step)."""

    def __init__(self, predict, image, test_images, test_labels):
        self.predict, self.image = predict, image
        self.test_images, self.test_labels = test_images, test_labels

    def end(self, session):
        predicted = session.run(self.predict, feed_dict={self.image: self.test_images})
        accuracy = float(np.mean(predicted == self.test_labels))
        weights = session.run(tf.trainable_variables())
        checksum = float(sum(np.sum(w, dtype=np.float64) for w in weights))
        print(f"rank {hvd.rank()} test accuracy {accuracy:.4f} weights {checksum:.6f}",
              flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="an mnist.npz (x_train, y_train, ...)")
    parser.add_argument("--steps", type=int, default=20000, help="steps of one rank's job")
    parser.add_argument("--checkpoint-dir", default="./checkpoints")
    args = parser.parse_args()

    hvd.init()

    with np.load(args.data) as f:
        x_train = f["x_train"].reshape(-1, 784).astype(np.float32) / 255.0
        y_train = f["y_train"].astype(np.float32)
        x_test = f["x_test"].reshape(-1, 784).astype(np.float32) / 255.0
        y_test = f["y_test"]

    with tf.name_scope("input"):
        image = tf.placeholder(tf.float32, [None, 784], name="image")
        label = tf.placeholder(tf.float32, [None], name="label")
    predict, loss = conv_model(image, label, training=True)

    opt = tf.train.RMSPropOptimizer(0.001 * hvd.size())
    opt = hvd.DistributedOptimizer(opt)

    global_step = tf.train.get_or_create_global_step()
    train_op = opt.minimize(loss, global_step=global_step)

    hooks = [
        hvd.BroadcastGlobalVariablesHook(0),
        tf.train.StopAtStepHook(last_step=args.steps // hvd.size()),
        tf.train.LoggingTensorHook(tensors={"step": global_step, "loss": loss},
                                   every_n_iter=10),
        ReportHook(predict, image, x_test, y_test),
    ]

    config = tf.ConfigProto()
    config.gpu_options.allow_growth = True
    config.gpu_options.visible_device_list = str(hvd.local_rank())

    checkpoint_dir = args.checkpoint_dir if hvd.rank() == 0 else None
    training_batches = batches(x_train, y_train, 100, seed=hvd.rank())
    with tf.train.MonitoredTrainingSession(checkpoint_dir=checkpoint_dir, hooks=hooks,
                                           config=config) as mon_sess:
        while not mon_sess.should_stop():
            image_, label_ = next(training_batches)
            mon_sess.run(train_op, feed_dict={image: image_, label: label_})


if __name__ == "__main__":
    main()
