"""A user's elastic TF-Keras script, unchanged
(seeds/tensorflow2_keras_mnist_elastic.py, see seeds/README.md), under
kolorun's elastic mode on three loopback "hosts" with tf-keras
(TF_USE_LEGACY_KERAS=1: the script's compile(experimental_run_tf_function=False)
needs it). One worker is SIGKILLed from outside in the second epoch; the
job must finish: exit 0, the interrupted epoch trained once more from the
last commit (not both epochs: the first one was committed), the rank-0
checkpoint and TensorBoard logs written.

The script loads its --data-dir npz when it exists and downloads MNIST
otherwise: the test writes an MNIST-shaped npz from scikit-learn's digits
(mnist_npz.py) instead, so nothing is downloaded. HOME and KERAS_HOME
point into the test's temp dir, and so does $OCI__SYNC_DIR, under which
the script writes.
"""

import os
import re
import sys
import time

import pytest

from elastic_job import (
    HERE, LOOPBACK_HOSTS, Job, assert_worker1_killed_and_job_went_on, job_env, kill_worker)
from mnist_npz import write_mnist_npz

SCRIPT = os.path.join(HERE, "seeds", "tensorflow2_keras_mnist_elastic.py")
# The script trains 2 epochs of 500 // size() steps of 128 images: 166 at 3 workers,
# then 250 at 2. Its CNN costs about the same CPU time per image at any size; on 2
# loaded cores the whole job takes 2 to 10 minutes.
JOB_TIMEOUT = 840
KILL_DELAY = 5  # seconds into the second epoch


def _missing_dependency():
    for module in ("tensorflow", "tf_keras", "sklearn", "h5py", "tensorboard"):
        try:
            __import__(module)
        except Exception as error:  # ImportError, or a package failing to load
            return f"{module} cannot be imported: {type(error).__name__}: {error}"
    import horovod.tensorflow.keras as hvd

    for name in ("DistributedOptimizer", "callbacks"):
        if not hasattr(hvd, name):
            return f"horovod.tensorflow.keras has no {name} yet"
    if not hasattr(hvd.callbacks, "MetricAverageCallback"):
        return "horovod.tensorflow.keras.callbacks has no MetricAverageCallback yet"
    return None


def worker_output(text, worker):
    """What elastic worker `worker` printed to stdout: kolorun tags each line
    with the worker's number, which it keeps when its rank changes. Keras's
    progress bar rewrites one line (with carriage returns and backspaces)
    until the epoch ends, so a whole epoch's progress arrives as one line."""
    tag = f"[{worker}]<stdout>:"
    # split("\n"), not splitlines(): that would also split at the bar's \r.
    return "\n".join(line[len(tag):] for line in text.split("\n") if line.startswith(tag))


def steps_shown(text, steps):
    """Every step count a `steps`-step Keras progress bar in `text` showed."""
    return [int(n) for n in re.findall(rf"(\d+)/{steps} \[", text)]


@pytest.mark.timeout(JOB_TIMEOUT + 60)
def test_users_tf_keras_mnist_elastic_script_survives_a_killed_worker(tmp_path):
    missing = _missing_dependency()
    if missing:
        pytest.skip(f"the seed script needs tf-keras, h5py, tensorboard, scikit-learn's digits "
                    f"and horovod.tensorflow.keras's optimizer and callbacks: {missing}")
    data, home, sync = tmp_path / "data", tmp_path / "home", tmp_path / "sync"
    for folder in (data, home, sync):
        folder.mkdir()
    npz = data / "mnist.npz"
    write_mnist_npz(str(npz))

    env = job_env(TF_USE_LEGACY_KERAS="1", HOME=str(home), KERAS_HOME=str(home / ".keras"),
                  OCI__SYNC_DIR=str(sync))
    # One failure blacklists the host (horovodrun's rule), as the assertions expect.
    job = Job(["--elastic-host-failures", "1", "-np", "3", "--min-np", "2",
               "-H", ",".join(f"{h}:1" for h in LOOPBACK_HOSTS),
               sys.executable, SCRIPT, "--data-dir", str(npz)],
              tmp_path, env=env, marker=str(npz))
    try:
        # Progress bars print nothing whole until their epoch ends, so the kill
        # comes a few seconds into the second epoch (of 25 s or more), by the clock.
        job.wait_for(lambda: re.search(r"^\[0\]<stdout>:Epoch 2/2$", job.stdout(), re.MULTILINE),
                     "the second epoch", timeout=JOB_TIMEOUT - 120)
        time.sleep(KILL_DELAY)
        kill_worker(job, 1, SCRIPT)
        rc = job.wait(timeout=JOB_TIMEOUT)
    finally:
        job.stop()

    report = job.report()
    assert rc == 0, report
    assert_worker1_killed_and_job_went_on(job)
    with open(job.stdout_path, errors="replace", newline="") as f:
        raw = f.read()  # newline="": keep the bar's carriage returns as they are
    for worker in (0, 2):
        out = worker_output(raw, worker)
        # The first epoch was committed: the retry runs fit(epochs=2 - state.epoch),
        # one epoch (Keras prints no "Epoch" line for a single one) of 500 // 2 steps.
        assert out.count("Epoch 2/2") == 1 and out.count("Epoch 1/2") == 1, report
        second = out.split("Epoch 2/2", 1)[1]
        interrupted = second.split("250/250", 1)[0]
        shown = steps_shown(interrupted, 166)
        assert shown and max(shown) < 166, (
            f"worker {worker}'s second epoch was not interrupted: {shown}\n{report}")
        finished = re.findall(r"250/250 \[=+\] - \d+s", second)
        assert len(finished) == 1, (f"worker {worker} finished the 250-step epoch "
                                    f"{len(finished)} times\n{report}")

    artifacts = sync / "artifacts"
    checkpoints = sorted(os.listdir(artifacts / "ckpts"))
    assert checkpoints == ["checkpoint-1.h5"], report  # each fit() numbers its epochs from 1
    import h5py

    with h5py.File(artifacts / "ckpts" / "checkpoint-1.h5", "r") as saved:
        assert "model_weights" in saved, list(saved)
    logs = [name for _, _, names in os.walk(artifacts / "logs") for name in names]
    assert any(name.startswith("events.out.tfevents") for name in logs), logs
    assert not (home / ".keras" / "datasets").exists(), "the script downloaded MNIST"
