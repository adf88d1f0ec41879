"""A local stand-in for Keras's mnist.npz, built from the handwritten
digits Debian's scikit-learn ships (8x8 images, 0-16 grey levels), so the
TensorFlow seed script trains on real digits without a download.

    write_mnist_npz(path)

The file has what keras.datasets.mnist.load_data() returns and the seed
script reads: x_train, y_train, x_test, y_test; images 28x28 uint8 (each
8x8 digit scaled 3x to 24x24, grey levels stretched to 0-255, and padded by
2 pixels as MNIST centres its digits in a 20x20 box inside 28x28), labels
uint8.
"""

import numpy as np


def mnist_like_digits():
    """(images, labels): every scikit-learn digit as a 28x28 uint8 image."""
    from sklearn.datasets import load_digits  # Debian's python3-sklearn; no download

    digits = load_digits()
    scaled = np.kron(digits.images, np.ones((3, 3)))  # (n, 24, 24), 0-16
    images = np.zeros((len(scaled), 28, 28), np.uint8)
    images[:, 2:26, 2:26] = np.round(scaled * (255.0 / 16.0)).astype(np.uint8)
    return images, digits.target.astype(np.uint8)


def write_mnist_npz(path, test_fraction=0.2, seed=0):
    """Writes the npz; returns (train count, test count)."""
    images, labels = mnist_like_digits()
    order = np.random.default_rng(seed).permutation(len(images))
    test_count = int(len(images) * test_fraction)
    test, train = order[:test_count], order[test_count:]
    np.savez_compressed(path, x_train=images[train], y_train=labels[train],
                        x_test=images[test], y_test=labels[test])
    return len(train), len(test)
