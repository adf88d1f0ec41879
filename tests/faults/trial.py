"""One trial of the fault matrix: a real kolorun job, a fault put into it,
and the outcome classified with the time from the fault to kolorun's exit.

Outcomes, worst first (the table in docs/reliability.md counts them):
  hang          kolorun still running at the case's limit (then stopped)
  orphans       a process of the job alive after kolorun exited
  crash         a rank or kolorun died without saying why (terminate, abort,
                segfault), or kolorun printed no last line
  lost step     an elastic job lost or disagreed on a committed step
  flood         more lines than the fault could justify (every line on
                stderr counts: kolorun's, the store's log, the ranks')
  unclear error the job failed, but kolorun's last line or a rank's own
                report does not name the root cause
  slow          a clear error, but later than the case allows (a frozen
                rank named after more than 10 s)
  clear error   the job failed, and kolorun's last line and every rank in
                the job name the root cause
  ok            the job did what it should despite the fault (it finished,
                or was meant to end and left nothing behind)
The helpers of tests/python/launcher (elastic_job.Job and its cleanup by
marker) start and stop the jobs."""

import os
import sys
import time
import uuid
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
LAUNCHER_TESTS = os.path.join(os.path.dirname(HERE), "python", "launcher")
if LAUNCHER_TESTS not in sys.path:
    sys.path.insert(0, LAUNCHER_TESTS)

from elastic_job import Job, environ_of, job_env, pids_with  # noqa: E402
from test_launcher_faults import alive  # noqa: E402

WORKER = os.path.join(LAUNCHER_TESTS, "fault_worker.py")
OUTCOMES = ["ok", "clear error", "slow", "unclear error", "flood", "lost step", "crash", "orphans",
            "hang"]
CRASH_WORDS = ("terminate called", "Segmentation fault", "core dumped", "signal 6 (SIGABRT)",
               "signal 11 (SIGSEGV)", "Fatal Python error")


@dataclass
class Outcome:
    kind: str
    seconds: float = None  # from the fault to kolorun's exit, where that means something
    detail: str = ""


def new_marker():
    return f"fault-{uuid.uuid4().hex[:12]}"


def start_job(workdir, kolorun_args, env=None, marker=None):
    """kolorun with `kolorun_args` (the marker must appear in them if the
    job's processes are to be found); env: extra settings over none."""
    return Job(kolorun_args, workdir, env=job_env(**(env or {})), marker=marker)


def finish(job, limit):
    """kolorun's exit code, or None when it ran past `limit` seconds from its
    start (it is stopped then)."""
    try:
        return job.wait(timeout=limit)
    except AssertionError:
        return None


def orphans(job, grace=5.0):
    """The job's processes still alive `grace` seconds after kolorun ended."""
    deadline = time.monotonic() + grace
    while True:
        left = [pid for pid in pids_with(job.marker) if alive(pid)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def rank_pids(job):
    """{rank: pid} of the rank programs themselves (not their supervisors)."""
    found = {}
    for pid in pids_with(job.marker):
        try:
            exe = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            continue
        rank = environ_of(pid).get("KOLO_RANK")
        if "python" in os.path.basename(exe) and rank is not None:
            found[int(rank)] = pid
    return found


def last_line(job):
    lines = job.kolorun_lines()
    return lines[-1] if lines else ""


def judge_failure(job, rc, cause, reports, fault_at, limit_hit=False):
    """The outcome of a job that should fail naming `cause` (a string every
    rank's report and kolorun's last line must contain). `reports`:
    {rank: text} of the ranks that were in the job when the fault came."""
    took = (job.ended or time.monotonic()) - fault_at if fault_at else None
    if rc is None or limit_hit:
        return Outcome("hang", took, f"kolorun still running\n{job.report()}")
    left = orphans(job)
    if left:
        return Outcome("orphans", took, f"alive after kolorun: {left}\n{job.report()}")
    text = job.stdout() + job.stderr()
    crashed = [w for w in CRASH_WORDS if w in text]
    if crashed or not last_line(job):
        return Outcome("crash", took, f"{crashed or 'no kolorun line'}\n{job.report()}")
    if rc == 0:
        return Outcome("unclear error", took, f"the job succeeded despite the fault\n"
                                              f"{job.report()}")
    silent = {r: t for r, t in reports.items() if cause not in t}
    if cause not in last_line(job) or silent:
        return Outcome("unclear error", took,
                       f"cause {cause!r}; ranks not naming it: {silent}\n{job.report()}")
    return Outcome("clear error", took, last_line(job))


def judge_success(job, rc, fault_at, max_lines=20):
    """The outcome of a job that should finish despite the fault, printing
    at most `max_lines` lines on stderr. Every line counts, not only
    kolorun's own: the store logs into kolorun's stderr as "[kolo ...
    WARNING ...]", and a log flood is a flood whoever prints it. The ranks'
    progress goes to stdout."""
    took = (job.ended or time.monotonic()) - fault_at if fault_at else None
    if rc is None:
        return Outcome("hang", took, job.report())
    left = orphans(job)
    if left:
        return Outcome("orphans", took, f"alive after kolorun: {left}\n{job.report()}")
    text = job.stdout() + job.stderr()
    if any(w in text for w in CRASH_WORDS):
        return Outcome("crash", took, job.report())
    lines = job.stderr().splitlines()
    if len(lines) > max_lines:
        return Outcome("flood", took, f"{len(lines)} lines on stderr\n{job.report()[:4000]}")
    if rc != 0:
        return Outcome("unclear error", took, f"the job failed\n{job.report()}")
    return Outcome("ok", took, "")


def read_reports(workdir, ranks):
    """{rank: the report fault_worker.py wrote} for `ranks` ("" if none)."""
    found = {}
    for rank in ranks:
        path = os.path.join(str(workdir), f"rank{rank}.txt")
        try:
            with open(path) as f:
                found[rank] = f.read()
        except OSError:
            found[rank] = ""
    return found
