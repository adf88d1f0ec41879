"""deploy/compose run for real with the CPU image: MAIN + 2 WORKERs train the
users' seed-002 PyTorch elastic script (tests/python/launcher/seeds,
unchanged, mounted at /code as users mount theirs) to the end; a WORKER
killed with `docker kill` mid-run leaves the job to finish on the others
from its committed state; a WORKER added with `--scale` joins the job.
The data is a small synthetic MNIST in torchvision's raw format, written
here: nothing is downloaded at test time.

Each test prints the times it saw (compose up -> first training step,
kill -> training again), which docs/benchmarks.md records."""

import json
import re
import shutil
import time

import pytest
import torch

from conftest import REPO, readable_by_all
from docker_host import docker
from test_elastic_seed import write_mnist

SEED_SCRIPT = REPO / "tests" / "python" / "launcher" / "seeds" / "pytorch_mnist_elastic.py"
ELASTIC_SCRIPT = REPO / "tests" / "python" / "launcher" / "elastic_train.py"
# MAIN takes a rank too: 3 ranks on MAIN + 2 WORKERs, 4 once a third joins.
STEP = r"<stdout>:Train Epoch: \d+ "
ACCURACY = r"^\[0\]<stdout>:Test set: Average loss: \d+\.\d{4}, Accuracy: (\d+\.\d{2})%$"

# Each test builds or reuses the image first (minutes on a fresh machine),
# then runs one job; every wait inside has its own limit.
pytestmark = pytest.mark.timeout(3600)


def seed_job(compose_job, tmp_path, train_images, epochs):
    code = tmp_path / "code"
    code.mkdir()
    shutil.copy(SEED_SCRIPT, code / "train.py")
    write_mnist(str(code / "data"), train_images, 200)
    readable_by_all(code)
    # --batch-size 8: the script's 64 would end before a worker can be killed or added.
    command = ["python", "/code/train.py", "--epochs", str(epochs), "--data-dir", "/code/data", "--batch-size", "8"]
    return compose_job(code, command, {"MIN_NP": "2", "MAX_NP": "4"})


def assert_finished(job, output):
    accuracy = re.findall(ACCURACY, output, re.MULTILINE)
    assert len(accuracy) == 1, job.report()
    checkpoints = sorted(p.name for p in (job.artifacts / "artifacts" / "ckpts").iterdir())
    assert checkpoints[-1] == "checkpoint-3.pth.tar", checkpoints
    final = torch.load(job.artifacts / "artifacts" / "ckpts" / checkpoints[-1])
    assert set(final) == {"model", "optimizer"} and "fc2.weight" in final["model"]
    logs = job.artifacts / "artifacts" / "logs"
    assert any(p.name.startswith("events.out.tfevents") for p in logs.iterdir())


def finishes(job, changed_before=None):
    """Waits for the job to end; checks it ended well and, when a worker
    was killed or added, that training was not over by then."""
    rc = job.wait_main(timeout=600)
    output = job.main_output()
    assert rc == 0, job.report()
    if changed_before is not None:
        assert "Train Epoch: 2" not in changed_before, "the change came too late to test\n" + job.report()
    assert_finished(job, output)
    return output


def test_main_and_two_workers_train_the_seed_script_to_the_end(compose_job, tmp_path):
    job = seed_job(compose_job, tmp_path, train_images=1200, epochs=2)
    job.up(workers=2)
    first_step = job.wait_for_output(STEP, timeout=300)
    output = finishes(job)
    # Three ranks (MAIN's and one per WORKER), each with a third of the 1200 images.
    assert re.search(r"^\[2\]<stdout>:Train Epoch: 1 \[0/400 ", output, re.MULTILINE), job.report()
    print(f"\ncompose up -> first training step: {first_step:.1f} s")


def change_mid_run(job, change, new_round, training=None):
    """Starts MAIN + 2 WORKERs, applies `change` once training runs (a
    training line in MAIN's output, or `training()` true) and waits for
    kolorun's round that follows. Returns MAIN's output before the change
    and the time of the change."""
    job.up(workers=2)
    if training is None:
        job.wait_for_output(STEP, timeout=300)
    else:
        deadline = time.monotonic() + 300
        while not training():
            assert time.monotonic() < deadline, "training did not start\n" + job.report()
            time.sleep(0.5)
    before = job.main_output()
    changed_at = time.monotonic()
    change(job)
    job.wait_for_output(new_round, timeout=180, after=before)
    return before, changed_at


def test_a_killed_worker_leaves_the_job_to_finish_on_the_others(compose_job, tmp_path):
    job = seed_job(compose_job, tmp_path, train_images=24000, epochs=2)
    at_kill, killed_at = change_mid_run(job, lambda job: docker("kill", job.containers("worker")[0]),
                                        r"kolorun: round 2: 2 workers")
    job.wait_for_output(STEP, timeout=180, after=job.main_output())
    recovery = time.monotonic() - killed_at
    finishes(job, changed_before=at_kill)
    print(f"\ndocker kill of a worker -> training again: {recovery:.1f} s")


def test_a_worker_added_with_scale_joins_the_job(compose_job, tmp_path):
    """The seed script cannot grow (its sampler keeps the first world's
    size, so a new rank runs fewer steps than the others), so this job is
    the launcher tests' elastic script, whose ElasticSampler follows the
    world; each worker logs its steps with the world size."""
    code = tmp_path / "code"
    code.mkdir()
    shutil.copy(ELASTIC_SCRIPT, code / "elastic_train.py")
    readable_by_all(code)
    command = ["python", "/code/elastic_train.py", "/kolo/artifacts/out", "--epochs", "2", "--samples", "2400",
               "--batch-size", "4", "--step-sleep", "0.1"]
    job = compose_job(code, command, {"MIN_NP": "2", "MAX_NP": "4"})
    (job.artifacts / "out").mkdir()
    shutil.chown(job.artifacts / "out", 1000, 1000)
    out = job.artifacts / "out"
    change_mid_run(job, lambda job: job.scale_workers(3), r"kolorun: round 2: 4 workers",
                   training=lambda: any('"commit"' in log.read_text() for log in out.glob("worker*.jsonl")))
    rc = job.wait_main(timeout=600)
    assert rc == 0, job.report()
    events = [json.loads(line) for log in (job.artifacts / "out").glob("worker*.jsonl")
              for line in log.read_text().splitlines()]
    sizes = {e["size"] for e in events if e["event"] == "commit"}
    assert sizes == {3, 4}, (sizes, job.report())
    assert sum(e["event"] == "done" for e in events) == 4, job.report()
