"""The Keras scripts run as users run them, under kolorun -np 2:
examples/tensorflow/keras_mnist.py (the `make demo`-style example) must
reach its accuracy under both Kerases; seed 003's Keras example
(keras_seed003.py) must train from a local mnist.npz with rank 0 alone
writing its checkpoints, every rank ending with the same weights."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("tensorflow", reason="TensorFlow is not installed (make test installs "
                    "tensorflow-cpu into the venv)")

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
EXAMPLE = os.path.join(REPO, "examples", "tensorflow", "keras_mnist.py")
SEED003 = os.path.join(HERE, "keras_seed003.py")


def kolorun():
    return os.path.join(os.path.dirname(sys.executable), "kolorun")


def run_job(args, legacy, timeout, cwd=None):
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1" if legacy else "0",
               TF_CPP_MIN_LOG_LEVEL="2")
    job = subprocess.run([kolorun(), "-np", "2", sys.executable, *args], capture_output=True,
                         text=True, timeout=timeout, env=env, cwd=cwd)
    return job, f"exit status {job.returncode}\nstdout:\n{job.stdout}\nstderr:\n{job.stderr}"


@pytest.mark.parametrize("legacy", [False, True], ids=["keras3", "tf-keras"])
def test_keras_mnist_learns_the_digits(legacy, tmp_path):
    job, report = run_job([EXAMPLE, "--min-accuracy", "0.85", "--checkpoint-dir",
                           str(tmp_path)], legacy, timeout=240)
    assert job.returncode == 0, report
    found = re.findall(r"test accuracy: ([0-9.]+)%", job.stdout)
    assert len(found) == 1, report  # rank 0 alone reports
    assert float(found[0]) > 85, report
    assert "finished gradual learning rate warmup" in job.stdout, report
    assert sorted(os.listdir(tmp_path)) == sorted(f"checkpoint-{e}.keras"
                                                  for e in range(1, 16)), report


def test_keras_mnist_fails_loudly_below_min_accuracy():
    job, report = run_job([EXAMPLE, "--epochs", "1", "--min-accuracy", "1.0"], False,
                          timeout=240)
    assert job.returncode != 0, report
    assert "below --min-accuracy" in job.stderr, report


def write_mnist_npz(path):
    """scikit-learn's 8x8 digits in Keras's mnist.npz layout (uint8 pixels)."""
    from sklearn.datasets import load_digits
    digits = load_digits()
    images = (digits.images * (255 / 16)).round().astype(np.uint8)
    np.savez(path, x_train=images[:1500], y_train=digits.target[:1500].astype(np.uint8),
             x_test=images[1500:], y_test=digits.target[1500:].astype(np.uint8))


def test_seed003_keras_example_trains_and_checkpoints_on_rank_0(tmp_path):
    data = tmp_path / "mnist.npz"
    write_mnist_npz(data)
    workdir = tmp_path / "run"
    workdir.mkdir()
    job, report = run_job([SEED003, "--data", str(data), "--epochs", "4", "--steps", "60"],
                          True, timeout=300, cwd=workdir)
    assert job.returncode == 0, report
    finals = re.findall(r"rank (\d) final accuracy ([0-9.]+) weights (-?[0-9.]+)", job.stdout)
    assert sorted(r for r, _, _ in finals) == ["0", "1"], report
    assert float(finals[0][1]) > 0.8, report
    assert finals[0][2] == finals[1][2], report  # the same weights on both ranks
    assert sorted(os.listdir(workdir)) == [f"checkpoint-{e}.h5" for e in range(1, 5)], report
