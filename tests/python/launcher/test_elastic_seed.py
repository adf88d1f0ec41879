"""A user's PyTorch elastic script, unchanged (seeds/pytorch_mnist_elastic.py,
see seeds/README.md), under kolorun's elastic mode on three loopback
"hosts"; one worker is killed with SIGKILL from outside once training
output appears, and the job must still finish: exit 0, the test-set
accuracy printed, the checkpoints and TensorBoard logs written.

The script downloads MNIST unless it is there: the test writes a small
synthetic MNIST in torchvision's raw format instead (no network). The
script also locks ~/.horovod_lock and writes under $OCI__SYNC_DIR, so both
point into the test's temp dir.
"""

import os
import re
import struct
import sys

import numpy as np
import pytest

from elastic_job import (
    HERE, LOOPBACK_HOSTS, Job, assert_worker1_killed_and_job_went_on, job_env, kill_worker)

SCRIPT = os.path.join(HERE, "seeds", "pytorch_mnist_elastic.py")
TRAIN_IMAGES = 2400  # 800 per worker: 100 steps of 8 per epoch, so there is time to kill one
TEST_IMAGES = 200


def _missing_dependency():
    for module in ("torchvision", "filelock", "torch.utils.tensorboard"):
        try:
            __import__(module)
        except Exception as error:  # ImportError, or tensorboard failing to load
            return f"{module} cannot be imported: {type(error).__name__}: {error}"
    return None


def write_mnist(root, train, test, seed=3):
    """A learnable stand-in for MNIST in torchvision's raw format: digit d
    is a bright bar at a position of its own over faint noise."""
    raw = os.path.join(root, "MNIST", "raw")
    os.makedirs(raw)
    rng = np.random.default_rng(seed)
    for prefix, count in (("train", train), ("t10k", test)):
        labels = rng.integers(0, 10, count).astype(np.uint8)
        images = rng.integers(0, 40, (count, 28, 28)).astype(np.uint8)
        for i, digit in enumerate(labels):
            row, col = 2 + (digit // 5) * 12, 2 + (digit % 5) * 5
            images[i, row:row + 10, col:col + 4] = rng.integers(200, 256, (10, 4))
        with open(os.path.join(raw, f"{prefix}-images-idx3-ubyte"), "wb") as f:
            f.write(struct.pack(">IIII", 0x803, count, 28, 28) + images.tobytes())
        with open(os.path.join(raw, f"{prefix}-labels-idx1-ubyte"), "wb") as f:
            f.write(struct.pack(">II", 0x801, count) + labels.tobytes())


def test_users_pytorch_mnist_elastic_script_survives_a_killed_worker(tmp_path):
    missing = _missing_dependency()
    if missing:
        pytest.skip(f"the seed script needs torchvision, filelock and tensorboard: {missing}")
    data, home, sync = tmp_path / "data", tmp_path / "home", tmp_path / "sync"
    home.mkdir()
    sync.mkdir()
    write_mnist(str(data), TRAIN_IMAGES, TEST_IMAGES)

    env = job_env(HOME=str(home), OCI__SYNC_DIR=str(sync))
    # --batch-size 8: the script's 64 would finish 2400 images in a blink.
    # One failure blacklists the host (horovodrun's rule), as the assertions expect.
    job = Job(["--elastic-host-failures", "1", "-np", "3", "--min-np", "2",
               "-H", ",".join(f"{h}:1" for h in LOOPBACK_HOSTS),
               sys.executable, SCRIPT, "--epochs", "2", "--data-dir", str(data),
               "--batch-size", "8"],
              tmp_path, env=env, marker=str(data))
    try:
        job.wait_for(lambda: "Train Epoch" in job.stdout(), "training output", timeout=30)
        kill_worker(job, 1, SCRIPT)
        output_at_kill = job.stdout()
        rc = job.wait(timeout=40)
    finally:
        job.stop()

    report = job.report()
    assert rc == 0, report
    assert_worker1_killed_and_job_went_on(job)
    assert "Train Epoch: 2" not in output_at_kill, (
        "the worker was killed too late: training was almost done\n" + report)
    after_kill = job.stdout()[len(output_at_kill):]
    assert re.search(r"<stdout>:Train Epoch: 2 ", after_kill), report
    accuracy = re.findall(r"^\[0\]<stdout>:Test set: Average loss: \d+\.\d{4}, "
                          r"Accuracy: (\d+\.\d{2})%$", job.stdout(), re.MULTILINE)
    assert len(accuracy) == 1, report

    artifacts = sync / "artifacts"
    checkpoints = sorted(os.listdir(artifacts / "ckpts"))
    # Epochs 1 and 2 (the script counts from 1), saved as epoch + 1.
    assert checkpoints == ["checkpoint-2.pth.tar", "checkpoint-3.pth.tar"], report
    import torch

    for name in checkpoints:
        checkpoint = torch.load(artifacts / "ckpts" / name)
        assert set(checkpoint) == {"model", "optimizer"}, name
        assert "fc2.weight" in checkpoint["model"], name
    assert any(name.startswith("events.out.tfevents") for name in os.listdir(artifacts / "logs"))
    assert (home / ".horovod_lock").exists()
