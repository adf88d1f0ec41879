"""The MNIST example training on CUDA with 2 ranks (sharing the GPU where
there is one): it must learn as it does on the CPU."""

import os
import re
import subprocess
import sys

import pytest

from gpu_env import REPO, kolorun


def test_mnist_learns_on_cuda(gpu):
    pytest.importorskip("sklearn", reason="the example's default data set is scikit-learn's digits")
    job = subprocess.run([kolorun(), "-np", "2", sys.executable,
                          os.path.join(REPO, "examples", "pytorch", "mnist.py"), "--cuda",
                          "--min-accuracy", "0.8"],
                         capture_output=True, text=True, timeout=300)
    report = f"exit {job.returncode}\n{job.stdout}\n{job.stderr}"
    assert job.returncode == 0, report
    found = re.findall(r"test accuracy: ([0-9.]+)%", job.stdout)
    assert len(found) == 1 and float(found[0]) > 80, report
