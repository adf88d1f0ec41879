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

import pytest

from elastic_job import (
    HERE, LOOPBACK_HOSTS, Job, assert_worker1_killed_and_job_went_on, job_env, kill_worker)
from mnist_npz import write_mnist_npz

SCRIPT = os.path.join(HERE, "seeds", "tensorflow2_keras_mnist_elastic.py")
# The script trains 2 epochs of 500 // size() steps of 128 images: 166 at 3 workers,
# then 250 at 2. Its CNN costs about the same CPU time per image at any size; on 2
# loaded cores the whole job takes 2 to 10 minutes.
JOB_TIMEOUT = 840
KILL_AFTER_STEP = 5  # of the second epoch


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


def progress(text, steps):
    """The highest step of a `steps`-step Keras progress bar in `text`."""
    found = [int(n) for n in re.findall(rf"(\d+)/{steps} \[", text)]
    return max(found, default=0)


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
        def in_second_epoch():
            out = job.stdout()
            return "Epoch 2/2" in out and progress(out.split("Epoch 2/2", 1)[1],
                                                   166) >= KILL_AFTER_STEP
        job.wait_for(in_second_epoch, f"step {KILL_AFTER_STEP} of the second epoch",
                     timeout=JOB_TIMEOUT - 120)
        kill_worker(job, 1, SCRIPT)
        output_at_kill = job.stdout()
        rc = job.wait(timeout=JOB_TIMEOUT)
    finally:
        job.stop()

    report = job.report()
    assert rc == 0, report
    assert_worker1_killed_and_job_went_on(job)
    assert progress(output_at_kill.split("Epoch 2/2", 1)[1], 166) < 166, (
        "the worker was killed too late: the epoch was over\n" + report)
    after_kill = job.stdout()[len(output_at_kill):]
    # The first epoch was committed: the retry runs fit(epochs=2 - state.epoch) = 1
    # epoch (Keras prints no "Epoch" line for a single one) of 500 // 2 steps.
    assert "Epoch 1/2" not in after_kill and "Epoch 2/2" not in after_kill, report
    for worker in (0, 2):  # output is tagged by worker, which keeps its number
        finished = re.findall(rf"^\[{worker}\]<stdout>:.*250/250 \[=+\]", after_kill,
                              re.MULTILINE)
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
