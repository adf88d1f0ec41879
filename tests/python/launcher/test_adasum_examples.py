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


SUMMARY = r"(?:^|:)([-0-9.]+) (Average|Adasum) ([0-9.]+) (\d+) (\d+)$"


@pytest.mark.parametrize("np_", [2, 4])
def test_small_model_learns_with_adasum(np_):
    job, report = run_job(np_, "adasum_small_model.py", "--op", "Adasum", timeout=120)
    assert job.returncode == 0, report
    # Horovod's summary line, from rank 0: x_max, op, learning rate, size, steps.
    summary = re.findall(SUMMARY, job.stdout, re.MULTILINE)
    assert len(summary) == 1 and summary[0][:4] == ("1.0", "Adasum", "0.1", str(np_)), report
    found = re.findall(r"rank (\d+) of \d+: coefficients ([-0-9. ]+) loss", job.stdout)
    assert sorted(int(r) for r, _ in found) == list(range(np_)), report
    coefficients = {c for _, c in found}
    assert len(coefficients) == 1, report  # every rank holds the same model
    # x^2 - 20x + 50 from the start (1, -1): the constant term moves most.
    slope, constant = (float(c) for c in coefficients.pop().split())
    assert abs(constant - 50) < 0.5 * abs(-1 - 50), report
    assert abs(slope + 20) < abs(1 + 20), report


def test_small_model_refuses_three_ranks_as_horovod_does():
    job, report = run_job(3, "adasum_small_model.py", "--op", "Adasum", timeout=120)
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


def test_pytorch_mnist_through_horovod_run(tmp_path):
    """The stand-in's other start: no kolorun, --num-proc 2 and horovod.run."""
    write_mnist(str(tmp_path), 800, 200)
    job = subprocess.run([sys.executable, os.path.join(HERE, "pytorch_mnist.py"), "--num-proc",
                          "2", "--use-adasum", "--epochs", "1", "--batch-size", "32", "--lr",
                          "0.05", "--data-dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=300)
    report = f"exit status {job.returncode}\nstdout:\n{job.stdout}\nstderr:\n{job.stderr}"
    assert job.returncode == 0, report
    assert "Running training through horovod.run" in job.stdout, report
    assert re.search(r"Test set: Average loss: [0-9.]+, Accuracy: [0-9.]+%", job.stdout), report


# Horovod's own examples, run unchanged where a copy of them is given: a
# directory laid out as Horovod's examples/ (pytorch/pytorch_mnist.py,
# adasum/adasum_small_model.py). They are not part of this repository.
HOROVOD_EXAMPLES = os.environ.get("KOLO_TEST_HOROVOD_EXAMPLES", "")


def horovod_example(relative):
    path = os.path.join(HOROVOD_EXAMPLES, relative)
    if not HOROVOD_EXAMPLES or not os.path.isfile(path):
        pytest.skip(f"no copy of Horovod's examples/{relative} "
                    "(KOLO_TEST_HOROVOD_EXAMPLES names a directory laid out as examples/)")
    return path


def test_horovods_pytorch_mnist_use_adasum_unchanged(tmp_path):
    script = horovod_example("pytorch/pytorch_mnist.py")
    write_mnist(str(tmp_path), 1600, 400)
    job = subprocess.run([kolorun(), "-np", "2", sys.executable, script, "--use-adasum",
                          "--epochs", "2", "--batch-size", "32", "--lr", "0.05", "--data-dir",
                          str(tmp_path)], capture_output=True, text=True, timeout=300)
    report = f"exit status {job.returncode}\nstdout:\n{job.stdout}\nstderr:\n{job.stderr}"
    assert job.returncode == 0, report
    accuracy = re.findall(r"Test set: Average loss: [0-9.]+, Accuracy: ([0-9.]+)%", job.stdout)
    assert len(accuracy) == 2 and float(accuracy[-1]) > 80, report


def test_horovods_adasum_small_model_unchanged():
    script = horovod_example("adasum/adasum_small_model.py")
    job = subprocess.run([kolorun(), "-np", "2", sys.executable, script, "--op", "Adasum"],
                         capture_output=True, text=True, timeout=120)
    report = f"exit status {job.returncode}\nstdout:\n{job.stdout}\nstderr:\n{job.stderr}"
    assert job.returncode == 0, report
    summary = re.findall(SUMMARY, job.stdout, re.MULTILINE)
    assert len(summary) == 1 and summary[0][:4] == ("1.0", "Adasum", "0.1", "2"), report
