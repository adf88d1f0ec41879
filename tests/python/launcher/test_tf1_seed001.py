"""Seed 001's TensorFlow MNIST job (TF1 graph code: placeholders,
DistributedOptimizer over a tf.compat.v1 optimizer, BroadcastGlobalVariablesHook,
MonitoredTrainingSession checkpointing on rank 0) under kolorun -np 2, as
its platform runs it on 2 learners: tf1_mnist_seed001.py, reading a local
MNIST-shaped npz (mnist_npz.py: scikit-learn's digits, no download).

It must train (the logged loss falls, the test accuracy ends far above
chance), keep both ranks' weights identical, and leave rank 0's checkpoint
of the last step in ./checkpoints (rank 1 has none to write)."""

import os
import re
import subprocess
import sys

import pytest

from mnist_npz import write_mnist_npz

pytest.importorskip("tensorflow", reason="TensorFlow is not installed (make test installs "
                    "tensorflow-cpu into the venv)")

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "tf1_mnist_seed001.py")
STEPS = 300  # the job's --steps: 150 steps per rank at 2 ranks
JOB_TIMEOUT = 300  # 150 steps of 100 images take 20-60 s on 2 loaded cores


def kolorun():
    return os.path.join(os.path.dirname(sys.executable), "kolorun")


@pytest.mark.timeout(JOB_TIMEOUT + 60)
def test_seed001_tf1_mnist_job_trains_and_checkpoints_on_rank_0(tmp_path):
    data = tmp_path / "mnist.npz"
    write_mnist_npz(str(data))
    workdir = tmp_path / "run"
    workdir.mkdir()
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="1", HOME=str(tmp_path))
    job = subprocess.run([kolorun(), "-np", "2", sys.executable, SCRIPT, "--data", str(data),
                          "--steps", str(STEPS)], capture_output=True, text=True,
                         timeout=JOB_TIMEOUT, env=env, cwd=workdir)
    report = f"exit status {job.returncode}\nstdout:\n{job.stdout}\nstderr:\n{job.stderr}"
    assert job.returncode == 0, report
    last_step = STEPS // 2

    # LoggingTensorHook's lines from rank 0: "loss = 2.30..., step = 0 (...)".
    logged = [(int(step), float(loss)) for loss, step in re.findall(
        r"\[0\]<stderr>:.*loss = ([0-9.e+-]+), step = (\d+)", job.stdout + job.stderr)]
    assert len(logged) >= last_step // 10 - 1, report
    assert [s for s, _ in logged] == sorted(s for s, _ in logged), report
    first = sum(loss for _, loss in logged[:3]) / 3
    last = sum(loss for _, loss in logged[-3:]) / 3
    assert last < 0.5 * first, f"the loss did not fall: {logged}\n{report}"

    finals = re.findall(r"rank (\d) test accuracy ([0-9.]+) weights (-?[0-9.]+)", job.stdout)
    assert sorted(rank for rank, _, _ in finals) == ["0", "1"], report
    assert all(float(acc) > 0.8 for _, acc, _ in finals), report  # chance: 0.1
    assert finals[0][2] == finals[1][2], report  # the broadcast and averaged steps held

    import tensorflow as tf

    checkpoints = workdir / "checkpoints"
    assert sorted(os.listdir(workdir)) == ["checkpoints"], report  # rank 0's, nobody else's
    latest = tf.train.latest_checkpoint(str(checkpoints))
    assert latest and latest.endswith(f"model.ckpt-{last_step}"), (os.listdir(checkpoints),
                                                                   report)
    reader = tf.train.load_checkpoint(latest)
    assert reader.get_tensor("global_step") == last_step, report
