"""Fault cases in a running engine job (fault_worker.py under kolorun, 2 to
4 ranks, default settings unless the case is about one): a rank killed
with SIGKILL or frozen with SIGSTOP at a random moment, a rank whose
engine thread is wedged, every kind of
mismatch between ranks, a tensor one rank never submits. Each function runs
one randomized trial and returns its trial.Outcome."""

import os
import re
import signal
import sys
import time

from test_liveness import FROZEN_NAMED_WITHIN  # issue 27's target: 10 s
from trial import (WORKER, Outcome, finish, judge_failure, new_marker, rank_pids, read_reports,
                   start_job)

READY = re.compile(r"ready rank (\d+) pid (\d+)")
# fault_worker.py's --mismatch kinds, each with the coordinator's words for
# it (src/core/coordinator.cc), given the culprit: the error must say what
# differs, not only which tensor. The operation named is rank 0's.
MISMATCH_CAUSES = {
    "shape": lambda culprit: "Mismatched shapes for allreduce of tensor 'grad.1'",
    "dtype": lambda culprit: "Mismatched data types for allreduce of tensor 'grad.1'",
    "op": lambda culprit: "Mismatched reduce ops for allreduce of tensor 'grad.1'",
    "collective": lambda culprit: ("Mismatched operations for "
                                   f"{'allgather' if culprit == 0 else 'allreduce'}"
                                   " of tensor 'grad.1'"),
    "root": lambda culprit: "Mismatched root ranks for broadcast of tensor 'grad.1'",
    "prescale": lambda culprit: "Mismatched prescale factors for allreduce of tensor 'grad.1'",
    "postscale": lambda culprit: "Mismatched postscale factors for allreduce of tensor 'grad.1'",
    "allgather-shape": lambda culprit: ("Mismatched shapes (all dimensions but the first must "
                                        "match) for allgather of tensor 'grad.1'"),
    "process-set": lambda culprit: "Mismatched process sets for add_process_set of tensor '",
    # Not a mismatch of fields but of operations: the culprit joins while the
    # others broadcast; the joined rank's join() must fail with the same words.
    "joined": lambda culprit: (f"broadcast of tensor 'grad.1' cannot run while rank {culprit} "
                               "has joined"),
}


def _start(workdir, np_, worker_args, env=None):
    marker = new_marker()
    args = ["-np", np_, sys.executable, WORKER, workdir, "--marker", marker] + worker_args
    return start_job(workdir, args, env=env, marker=marker)


def _ready(job):
    return {int(r): int(p) for r, p in READY.findall(job.stdout())}


def _wait_ready(job, np_, limit=60):
    deadline = time.monotonic() + limit
    while len(_ready(job)) < np_:
        if job.process.poll() is not None or time.monotonic() > deadline:
            return None
        time.sleep(0.02)
    return _ready(job)


def _wait_pid(job, rank, limit=30):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and job.process.poll() is None:
        pid = rank_pids(job).get(rank)
        if pid:
            return pid
        time.sleep(0.01)
    return None


def _signal_at_random_moment(rng, job, np_, target, sig, early_share):
    """Sends `sig` to rank `target` while the job starts (with probability
    early_share) or while it trains; returns (when, the ranks then ready)
    or (None, {}) if the moment never came."""
    if rng.random() < early_share:
        pid = _wait_pid(job, target)
        if pid is None:
            return None, {}
        time.sleep(rng.uniform(0, 1.5))
    else:
        ready = _wait_ready(job, np_)
        if ready is None:
            return None, {}
        pid = ready[target]
        time.sleep(rng.uniform(0, 2))
    ready = set(_ready(job)) - {target}
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return None, {}
    return time.monotonic(), ready


def _too_slow(outcome, within, fault, job):
    """A clear error named more than `within` seconds after `fault` is "slow"."""
    if outcome.kind != "clear error" or outcome.seconds <= within:
        return outcome
    return Outcome("slow", outcome.seconds, f"named {outcome.seconds:.2f} s after {fault}, "
                                            f"more than {within} s\n{job.report()}")


def _signal_trial(rng, workdir, sig, cause, early_share, limit_after_fault, within=None):
    """2-4 ranks training; a random rank (rank 0 too) gets `sig` at a random
    moment. Every rank running then, and kolorun's last line, must name it:
    cause.format(rank=...); with `within`, no later than that many seconds
    after the signal ("slow" otherwise)."""
    np_ = rng.choice([2, 3, 4])
    target = rng.randrange(np_)
    job = _start(workdir, np_, ["--steps", 100000, "--step-sleep", 0.01, "--spare", target])
    try:
        fault_at, ready = _signal_at_random_moment(rng, job, np_, target, sig, early_share)
        rc = finish(job, (fault_at or time.monotonic()) - job.started + limit_after_fault)
        outcome = judge_failure(job, rc, cause.format(rank=target),
                                read_reports(workdir, ready), fault_at,
                                limit_hit=fault_at is None)
        return _too_slow(outcome, within, "the signal", job) if within is not None else outcome
    finally:
        job.stop()


def kill9(rng, workdir):
    """kolorun's last line says how the rank ended ("rank N (host h) was
    killed by signal 9"); the others name the peer they lost the same way."""
    return _signal_trial(rng, workdir, signal.SIGKILL, "rank {rank} (host localhost)", 0.3, 60)


def sigstop(rng, workdir):
    """At default settings: named within the peer timeout (6 s) and the exits."""
    return _signal_trial(rng, workdir, signal.SIGSTOP,
                         "rank {rank} (host localhost) stopped answering", 0.0, 30,
                         within=FROZEN_NAMED_WITHIN)


def wedged_engine(rng, workdir):
    """A rank whose engine thread is stuck in its own code (a test hook,
    KOLO_TEST_WEDGE_ENGINE_SECONDS, from its first collective on) while its
    transport thread keeps beating: at default settings every other rank and
    kolorun's last line name it within 10 s of the wedge, although its
    heartbeats never stop."""
    np_ = rng.choice([2, 3, 4])
    target = rng.randrange(np_)
    job = _start(workdir, np_, ["--steps", 100000, "--step-sleep", 0.01, "--spare", target,
                                "--wedge", target])
    try:
        # The wedge begins with the warm-up allreduce, just before the rank
        # says it is ready: timed from then, a little late, never early.
        deadline = time.monotonic() + 60
        while target not in _ready(job) and job.process.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.01)
        fault_at = time.monotonic() if target in _ready(job) else None
        rc = finish(job, 60)
        others = set(range(np_)) - {target}
        outcome = judge_failure(job, rc, f"rank {target} (host localhost) is wedged",
                                read_reports(workdir, others), fault_at,
                                limit_hit=fault_at is None)
        return _too_slow(outcome, FROZEN_NAMED_WITHIN, "the wedge", job)
    finally:
        job.stop()


def mismatch(rng, workdir):
    np_ = rng.choice([2, 3, 4])
    kind = rng.choice(sorted(MISMATCH_CAUSES))
    culprit = rng.randrange(np_)
    job = _start(workdir, np_, ["--steps", 3, "--mismatch", f"{kind}:{culprit}"])
    try:
        started = time.monotonic()
        rc = finish(job, 90)
        reports = read_reports(workdir, range(np_))
        outcome = judge_failure(job, rc, MISMATCH_CAUSES[kind](culprit), reports, started)
        texts = {t.split(": ", 1)[-1] for t in reports.values()}
        if outcome.kind == "clear error" and len(texts) != 1:
            outcome.kind = "unclear error"
            outcome.detail = f"{kind} mismatch: the ranks' messages differ: {reports}"
        outcome.detail = f"{kind} mismatch by rank {culprit}: {outcome.detail}"
        return outcome
    finally:
        job.stop()


def missing_tensor(rng, workdir):
    """A tensor one rank never submits: the stall inspector (asked for here,
    2 s warning, 4 s shutdown) fails it on the others naming that rank. The
    rank that skipped it has meanwhile submitted the next one, which stalls
    too; which of the two errors kolorun's last line gives depends on which
    rank reports first, so the cause checked is the stall shutdown itself."""
    np_ = rng.choice([2, 3, 4])
    skip = rng.randrange(np_)
    job = _start(workdir, np_, ["--steps", 3, "--skip", skip, "--spare", skip],
                 env={"KOLO_STALL_CHECK_TIME_SECONDS": "2",
                      "KOLO_STALL_SHUTDOWN_TIME_SECONDS": "4"})
    try:
        started = time.monotonic()
        rc = finish(job, 90)
        others = [r for r in range(np_) if r != skip]
        return judge_failure(job, rc, "within 4 s (KOLO_STALL_SHUTDOWN_TIME_SECONDS)",
                             read_reports(workdir, others), started)
    finally:
        job.stop()


CASES = {
    "kill -9 a rank": kill9,
    "SIGSTOP a rank": sigstop,
    "wedged engine thread": wedged_engine,
    "mismatch": mismatch,
    "tensor missing on one rank": missing_tensor,
}
