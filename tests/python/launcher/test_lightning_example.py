"""examples/pytorch/lightning_mnist.py under kolorun -np 2: a Lightning 2 Trainer with
KoloStrategy must learn the digits (the accuracy rank 0 reports), with both ranks in
the job (Lightning's world size and rank on each) and each training on its own shard
of the data (the samples each saw in its first epoch). Skipped only when Lightning is
not installed (`make python-test` installs the pinned version)."""

import importlib.util
import os
import re
import shutil
import subprocess
import sys

import pytest

# Looked up, not imported: on torch 1.13 + Python 3.11 only kolo.lightning makes
# Lightning importable, and the example imports it first.
if importlib.util.find_spec("pytorch_lightning") is None:
    pytest.skip("PyTorch Lightning is not installed (make python-test installs the version "
                "the Makefile pins)", allow_module_level=True)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))
SCRIPT = os.path.join(REPO, "examples", "pytorch", "lightning_mnist.py")
TRAIN_SAMPLES = 1437  # scikit-learn's digits, 80% of 1,797
SHARD_LINE = re.compile(r"rank (\d) of world size (\d+) \(KoloStrategy\): epoch 0 trained on "
                        r"(\d+) distinct samples, index sum (\d+)")


def kolorun():
    beside = os.path.join(os.path.dirname(sys.executable), "kolorun")
    return beside if os.path.exists(beside) else os.path.join(REPO, "python", "kolo", "bin",
                                                              "kolorun")


def run_example(*args, launcher=None, env=None, timeout=240):
    launcher = launcher or [kolorun(), "-np", "2"]
    job = subprocess.run([*launcher, sys.executable, SCRIPT, *args], capture_output=True,
                         text=True, env=env, timeout=timeout)
    return job, f"exit status {job.returncode}\nstdout:\n{job.stdout}\nstderr:\n{job.stderr}"


def check_both_ranks_split_the_data(job, report):
    shards = {int(m[0]): m for m in SHARD_LINE.findall(job.stdout)}
    assert sorted(shards) == [0, 1], report
    assert all(int(world) == 2 for _, world, _, _ in shards.values()), report
    counts = [int(shards[r][2]) for r in (0, 1)]
    sums = [int(shards[r][3]) for r in (0, 1)]
    # Halves of the data: together every sample, at most one repeated as padding.
    assert all(abs(n - TRAIN_SAMPLES / 2) <= 1 for n in counts), report
    assert TRAIN_SAMPLES <= sum(counts) <= TRAIN_SAMPLES + 1, report
    all_indices = TRAIN_SAMPLES * (TRAIN_SAMPLES - 1) // 2
    assert all_indices <= sum(sums) < all_indices + TRAIN_SAMPLES, report
    assert sums[0] != sums[1], report


def reported_accuracy(job, report):
    found = re.findall(r"test accuracy: ([0-9.]+)%", job.stdout)
    assert len(found) == 1, report  # rank 0 alone reports
    return float(found[0])


@pytest.mark.parametrize("extra", [[], ["--strategy", "kolo"]], ids=["object", "name"])
def test_lightning_example_learns_on_two_ranks(extra):
    job, report = run_example("--min-accuracy", "0.9", *extra)
    assert job.returncode == 0, report
    assert reported_accuracy(job, report) > 90, report
    check_both_ranks_split_the_data(job, report)


def test_lightning_example_accumulates_and_checkpoints_under_horovod_name(tmp_path):
    # strategy="horovod", two batches per step, and ModelCheckpoint (which
    # broadcasts the file name from rank 0 and waits at barriers).
    job, report = run_example("--strategy", "horovod", "--accumulate-grad-batches", "2",
                              "--checkpoint-dir", str(tmp_path), "--min-accuracy", "0.85")
    assert job.returncode == 0, report
    assert reported_accuracy(job, report) > 85, report
    check_both_ranks_split_the_data(job, report)
    saved = re.findall(r"checkpoint: (\S+\.ckpt)", job.stdout)
    assert len(saved) == 1 and os.path.isfile(saved[0]), report
    # 20 epochs of 23 batches per rank, one step per two batches: 12 steps an epoch.
    assert saved[0].endswith("epoch=19-step=240.ckpt"), report


def test_lightning_example_fails_loudly_below_min_accuracy():
    job, report = run_example("--epochs", "1", "--min-accuracy", "1.0")
    assert job.returncode != 0, report
    assert "below --min-accuracy" in job.stderr, report


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="OpenMPI's mpirun is not installed")
def test_lightning_example_under_mpirun():
    # Another launcher starts the ranks; Kolo (not Lightning) reads its variables.
    mpirun = [shutil.which("mpirun"), "-np", "2", "--oversubscribe"]
    if os.geteuid() == 0:
        mpirun.append("--allow-run-as-root")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("KOLO_", "HOROVOD_", "OMPI_", "PMIX_", "PMI_", "SLURM_"))}
    job, report = run_example("--epochs", "10", "--min-accuracy", "0.9", launcher=mpirun,
                              env=env)
    assert job.returncode == 0, report
    assert reported_accuracy(job, report) > 90, report
    check_both_ranks_split_the_data(job, report)
