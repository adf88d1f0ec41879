"""Horovod's Adasum examples, as users run them, under kolorun: the
stand-ins of adasum_examples/ (see its README.md) make the same calls as
Horovod's examples/adasum/adasum_small_model.py and
examples/pytorch/pytorch_mnist.py --use-adasum. MNIST is a small synthetic
set in torchvision's raw format (no download)."""

import os
import re
import subprocess
import sys

import pytest

from test_elastic_seed import write_mnist
from test_examples import kolorun

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "adasum_examples")


def run_job(np_, script, *args, timeout):
    job = subprocess.run([kolorun(), "-np", str(np_), sys.executable, os.path.join(HERE, script),
                          *args], capture_output=True, text=True, timeout=timeout)
    return job, f"exit status {job.returncode}\nstdout:\n{job.stdout}\nstderr:\n{job.stderr}"


@pytest.mark.parametrize("np_", [2, 4])
def test_small_model_converges_with_adasum(np_):
    job, report = run_job(np_, "adasum_small_model.py", "--use-adasum", timeout=120)
    assert job.returncode == 0, report
    found = re.findall(r"rank (\d+) of (\d+): weight ([-0-9.]+) loss ([-0-9.e]+)", job.stdout)
    assert sorted(int(r) for r, *_ in found) == list(range(np_)), report
    weights = {w for *_, w, _ in found}
    assert len(weights) == 1, report  # every rank holds the same model
    assert abs(float(weights.pop()) - 2.0) < 1e-2, report


def test_small_model_refuses_three_ranks_as_horovod_does():
    job, report = run_job(3, "adasum_small_model.py", "--use-adasum", timeout=120)
    assert job.returncode != 0, report
    assert "Running Adasum with non-power of 2 ranks is not supported yet." in job.stderr, report


@pytest.mark.parametrize("np_", [2, 4])
def test_pytorch_mnist_use_adasum_learns(np_, tmp_path):
    try:
        import torchvision  # noqa: F401
    except ImportError as error:
        pytest.skip(f"torchvision cannot be imported: {error}")
    write_mnist(str(tmp_path), 1600, 400)
    job, report = run_job(np_, "pytorch_mnist.py", "--use-adasum", "--epochs", "2",
                          "--batch-size", "32", "--lr", "0.05", "--data-dir", str(tmp_path),
                          timeout=300)
    assert job.returncode == 0, report
    accuracy = re.findall(r"Test set: Average loss: [0-9.]+, Accuracy: ([0-9.]+)%", job.stdout)
    assert len(accuracy) == 2, report  # rank 0, once per epoch
    assert float(accuracy[-1]) > 80, report
    assert len(re.findall(r"rank \d+ of %d done" % np_, job.stdout)) == np_, report
