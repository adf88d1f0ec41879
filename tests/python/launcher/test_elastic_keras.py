"""Elastic training with Keras under kolorun's elastic mode, end to end:
real worker processes training with model.fit() under hvd.elastic.run
(elastic_keras_train.py) on three loopback "hosts", one of them SIGKILLed
mid-run. (The multirank tests of the elastic states and callbacks run
under both Kerases: scripts/run-python-tests.sh.)
"""

import os
import sys
import time

import pytest

from elastic_job import (
    HERE, LOOPBACK_HOSTS, Job, assert_third_host_joined, assert_worker1_killed_and_job_went_on,
    commits_in, describe_logs, events, read_logs, write_atomically)

pytest.importorskip("tensorflow", reason="TensorFlow is not installed (make test installs "
                    "tensorflow-cpu into the venv)")

TRAIN = os.path.join(HERE, "elastic_keras_train.py")
EPOCHS, STEPS = 3, 6
KILLED_WORKER, KILL_AT = 1, 8  # after committing iteration 8: epoch 1, its second batch
JOB_TIMEOUT = 240  # three TensorFlow processes starting on a loaded 2-core host take a while


def describe(logs):
    """describe_logs' layout for this job's events (iterations for steps)."""
    for log in logs.values():
        for e in log:
            e.setdefault("step", e["iterations"])
    return describe_logs(logs)


def run_job(tmp_path, kolorun_args, *options, while_running=None):
    """kolorun_args + elastic_keras_train.py OUTDIR options, to its end
    (while_running(job, outdir) first, if given); returns (job, exit code,
    the workers' logs, a context for assertion messages)."""
    outdir = tmp_path / "out"
    outdir.mkdir()
    marker = f"keras-elastic-{os.getpid()}-{time.monotonic_ns()}"
    job = Job(list(kolorun_args) + [sys.executable, TRAIN, str(outdir), "--epochs", EPOCHS,
                                    "--steps", STEPS, "--marker", marker] + list(options),
              tmp_path, marker=marker)
    try:
        if while_running:
            while_running(job, str(outdir))
        rc = job.wait(timeout=JOB_TIMEOUT)
    finally:
        job.stop()
    logs = read_logs(str(outdir))
    return job, rc, logs, job.report() + "\n--- worker logs:\n" + describe(logs)


@pytest.mark.timeout(JOB_TIMEOUT + 60)
def test_keras_fit_survives_a_killed_worker_and_loses_no_committed_step(tmp_path):
    job, rc, logs, context = run_job(
        tmp_path, ["--elastic-host-failures", "1", "-np", "3", "--min-np", "2",
                   "-H", ",".join(f"{h}:1" for h in LOOPBACK_HOSTS)],
        "--kill", f"{KILLED_WORKER}:{KILL_AT}")
    assert rc == 0, context
    assert_worker1_killed_and_job_went_on(job)
    assert sorted(logs) == [0, 1, 2], context

    # Every iteration committed by several workers was committed with the same weights.
    by_iteration = {}
    for log in logs.values():
        for e in events(log, "commit"):
            by_iteration.setdefault(e["iterations"], set()).add(e["checksum"])
    assert all(len(sums) == 1 for sums in by_iteration.values()), context
    killed = logs[KILLED_WORKER]
    assert events(killed, "commit")[-1]["iterations"] == KILL_AT, context
    assert not events(killed, "done"), context

    survivors = [0, 2]
    for w in survivors:
        log = logs[w]
        last_before = events(log, "commit", round=1)[-1]
        starts = events(log, "start", round=2)
        assert len(starts) == 1 and len(events(log, "reset")) == 1, context
        restart = starts[0]
        # Nothing committed is lost, nothing uncommitted kept: the retry starts
        # from the last commit (rank 0's, which the sync gives everyone).
        assert restart["iterations"] >= KILL_AT, context
        assert restart["iterations"] in (last_before["iterations"],
                                         events(logs[0], "commit", round=1)[-1]["iterations"])
        assert restart["checksum"] == by_iteration[restart["iterations"]].copy().pop(), context
        assert (restart["epoch"], restart["size"]) == (1, 2), context
        done = events(log, "done")
        assert len(done) == 1, context
        # The retry ran the rest of the job: fit(epochs=EPOCHS - state.epoch).
        assert done[0]["iterations"] == restart["iterations"] + (EPOCHS - 1) * STEPS, context
        assert (done[0]["epoch"], done[0]["batch"]) == (EPOCHS, 0), context
    finals = {events(logs[w], "done")[0]["checksum"] for w in survivors}
    assert len(finals) == 1, context


@pytest.mark.timeout(JOB_TIMEOUT + 60)
def test_a_worker_added_by_discovery_gets_rank0s_keras_state(tmp_path):
    """Two workers train; the discovery script then reports a third host:
    at the next commit every worker raises HostsUpdatedInterrupt, the new
    worker (whose optimizer was built by KerasState, not by a step) syncs
    from rank 0 alongside them, and all three finish with the same weights."""
    hosts_file = tmp_path / "hosts"
    write_atomically(hosts_file, "".join(f"{h}\n" for h in LOOPBACK_HOSTS[:2]))

    def add_third_host(job, outdir):
        job.wait_for(lambda: commits_in(outdir, 0) >= 3, "3 commits of worker 0",
                     timeout=JOB_TIMEOUT - 60)
        write_atomically(hosts_file, "".join(f"{h}\n" for h in LOOPBACK_HOSTS))

    job, rc, logs, context = run_job(
        tmp_path, ["-np", "2", "--min-np", "2", "--max-np", "3",
                   "--host-discovery-script", f"cat {hosts_file}"],
        "--step-sleep", 0.3, while_running=add_third_host)
    assert rc == 0, context
    assert_third_host_joined(job)
    assert sorted(logs) == [0, 1, 2], context
    starts = {w: events(logs[w], "start", round=2) for w in logs}
    assert all(len(s) == 1 for s in starts.values()), context
    # The newcomer starts where the others left off, with their weights and optimizer.
    assert len({(s[0]["iterations"], s[0]["epoch"], s[0]["checksum"])
                for s in starts.values()}) == 1, context
    restart = starts[0][0]
    assert restart["iterations"] >= 3 and restart["size"] == 3, context
    last_before = events(logs[0], "commit", round=1)[-1]
    # The interrupt comes out of a commit (after it saved), before the commit
    # was logged: the restart is at the last logged commit or the one after.
    assert restart["iterations"] - last_before["iterations"] in (0, 1), context
    done = [events(logs[w], "done") for w in logs]
    assert all(len(d) == 1 for d in done), context
    assert len({d[0]["checksum"] for d in done}) == 1, context
    assert done[0][0]["iterations"] == (restart["iterations"]
                                        + (EPOCHS - restart["epoch"]) * STEPS), context
