"""Liveness at default settings, with real ranks under kolorun: a frozen
rank (SIGSTOP) is named by every other rank and by kolorun's last line
within a few seconds (the peer timeout, 6 s by default; the test allows
10 s, issue 27's target); a rank that computes for 20 s between
collectives (over three peer timeouts), half of it in a C call that holds
the GIL, is not taken for a frozen one; a rank thawed (SIGCONT) before the timeout lets the job
finish."""

import os
import re
import signal
import sys
import time
import uuid

import pytest

from elastic_job import Job, job_env
from test_elastic import stop_jobs  # noqa: F401  (the fixture)

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "fault_worker.py")
# Seconds; the default peer timeout is 6 s, and the fault matrix measured
# 5.95 s median, 6.65 s at most over 50 trials (docs/reliability.md).
FROZEN_NAMED_WITHIN = 10


def start(tmp_path, np_, *worker_args):
    """kolorun -np np_ fault_worker.py at default settings (no KOLO_ variable)."""
    marker = f"liveness-{uuid.uuid4().hex[:12]}"
    return Job(["-np", np_, sys.executable, WORKER, tmp_path, "--marker", marker, *worker_args],
               tmp_path, env=job_env(), marker=marker)


def ready_pids(job, np_):
    """{rank: pid} once every rank has done its first collective."""
    pattern = re.compile(r"ready rank (\d+) pid (\d+)")
    job.wait_for(lambda: len(pattern.findall(job.stdout())) == np_, "every rank ready", 60)
    return {int(r): int(p) for r, p in pattern.findall(job.stdout())}


def report(tmp_path, rank):
    path = tmp_path / f"rank{rank}.txt"
    return path.read_text() if path.exists() else "(no report)"


@pytest.mark.parametrize("np_, frozen", [(2, 0), (3, 1), (3, 2)])
def test_a_frozen_rank_is_named_by_every_rank_and_kolorun_within_the_default_timeout(
        tmp_path, stop_jobs, np_, frozen):
    job = start(tmp_path, np_, "--steps", 1000, "--step-sleep", 0.05, "--spare", frozen)
    stop_jobs.append(job)
    pids = ready_pids(job, np_)
    os.kill(pids[frozen], signal.SIGSTOP)
    stopped = time.monotonic()
    rc = job.wait(timeout=stopped - job.started + FROZEN_NAMED_WITHIN)
    took = time.monotonic() - stopped
    context = f"kolorun ended {took:.1f} s after the SIGSTOP\n" + job.report()
    assert rc == 1, context
    cause = f"rank {frozen} (host localhost) stopped answering"
    for rank in set(range(np_)) - {frozen}:
        assert cause in report(tmp_path, rank), f"rank {rank}: {report(tmp_path, rank)}\n{context}"
    last = job.kolorun_lines()[-1]
    assert last.startswith("kolorun: job failed: ") and cause in last, context


@pytest.mark.parametrize("np_, wedged", [(2, 1), (3, 0)])
def test_a_wedged_engine_thread_is_named_by_every_rank_and_kolorun_within_the_default_bound(
        tmp_path, stop_jobs, np_, wedged):
    # Its transport thread keeps beating, so the peer timeout never fires:
    # only the rank's own watchdog (KOLO_ENGINE_WEDGED_SECONDS, 5 s) tells.
    # The wedge itself is a test hook (fault_worker.py --wedge).
    job = start(tmp_path, np_, "--steps", 1000, "--step-sleep", 0.05, "--spare", wedged,
                "--wedge", wedged)
    stop_jobs.append(job)
    ready_pids(job, np_)
    wedged_by = time.monotonic()  # from its first collective, before it said ready
    rc = job.wait(timeout=wedged_by - job.started + FROZEN_NAMED_WITHIN)
    context = f"kolorun ended {time.monotonic() - wedged_by:.1f} s after the wedge\n" + job.report()
    assert rc == 1, context
    cause = f"rank {wedged} (host localhost) is wedged"
    for rank in set(range(np_)) - {wedged}:
        assert cause in report(tmp_path, rank), f"rank {rank}: {report(tmp_path, rank)}\n{context}"
    last = job.kolorun_lines()[-1]
    assert last.startswith("kolorun: job failed: ") and cause in last, context


@pytest.mark.parametrize("gil", ["gil", "nogil"])
def test_a_rank_computing_for_20_s_between_collectives_is_not_declared_lost(
        tmp_path, stop_jobs, gil):
    job = start(tmp_path, 3, "--steps", 3, "--gap", f"1:20:{gil}")
    stop_jobs.append(job)
    rc = job.wait(timeout=120)
    assert rc == 0, job.report()
    for rank in range(3):
        assert report(tmp_path, rank) == "ok", job.report()


def test_a_rank_thawed_before_the_timeout_lets_the_job_finish(tmp_path, stop_jobs):
    job = start(tmp_path, 2, "--steps", 40, "--step-sleep", 0.1)
    stop_jobs.append(job)
    pids = ready_pids(job, 2)
    os.kill(pids[1], signal.SIGSTOP)
    time.sleep(3)  # half the default peer timeout
    os.kill(pids[1], signal.SIGCONT)
    rc = job.wait(timeout=90)
    assert rc == 0, job.report()
    assert report(tmp_path, 0) == "ok" and report(tmp_path, 1) == "ok", job.report()
