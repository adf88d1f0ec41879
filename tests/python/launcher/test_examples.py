"""The PyTorch examples run as users run them: under kolorun -np 2, checked through
what they print. mnist.py must really learn (the accuracy it reports, and its exit
status, which `make demo` relies on); synthetic_benchmark.py must print Horovod's
report."""

import os
import re
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))
EXAMPLES = os.path.join(REPO, "examples", "pytorch")


def kolorun():
    beside = os.path.join(os.path.dirname(sys.executable), "kolorun")
    return beside if os.path.exists(beside) else os.path.join(REPO, "python", "kolo", "bin",
                                                              "kolorun")


def run_example(script, *args, timeout):
    job = subprocess.run([kolorun(), "-np", "2", sys.executable, os.path.join(EXAMPLES, script),
                          *args], capture_output=True, text=True, timeout=timeout)
    return job, f"exit status {job.returncode}\nstdout:\n{job.stdout}\nstderr:\n{job.stderr}"


def test_mnist_learns_the_digits():
    # `make demo`'s settings (a few seconds on two cores); it reaches ~98%.
    job, report = run_example("mnist.py", "--min-accuracy", "0.8", timeout=120)
    assert job.returncode == 0, report
    found = re.findall(r"test accuracy: ([0-9.]+)%", job.stdout)
    assert len(found) == 1, report  # rank 0 alone reports
    assert float(found[0]) > 80, report


def test_mnist_fails_loudly_below_min_accuracy():
    # One epoch cannot reach 100%: the script must say so and exit non-zero on every rank.
    job, report = run_example("mnist.py", "--epochs", "1", "--min-accuracy", "1.0", timeout=120)
    assert job.returncode != 0, report
    assert "below --min-accuracy" in job.stderr, report


@pytest.mark.parametrize("extra", [[], ["--fp16-allreduce"]], ids=["fp32", "fp16"])
def test_synthetic_benchmark_reports_throughput(extra):
    job, report = run_example("synthetic_benchmark.py", "--batch-size", "4",
                              "--num-warmup-batches", "1", "--num-batches-per-iter", "2",
                              "--num-iters", "2", *extra, timeout=60)
    assert job.returncode == 0, report
    assert len(re.findall(r"Iter #\d+: [0-9.]+ img/sec per worker", job.stdout)) == 2, report
    total = re.search(r"Total img/sec on 2 worker\(s\): ([0-9.]+) \+-[0-9.]+", job.stdout)
    assert total and float(total.group(1)) > 0, report
