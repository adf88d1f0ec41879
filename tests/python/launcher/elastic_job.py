"""Helpers for the end-to-end tests of kolorun's elastic mode: start a job
in the background, watch its output and the workers' JSON-lines logs
(elastic_train.py), always with a time limit, and clean up every process
of the job afterwards.

Every job gets a unique marker (an argument of each worker's command line),
so a job that went wrong is cleaned up by the pids that carry its marker,
never by a name other jobs could share.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
TRAIN = os.path.join(HERE, "elastic_train.py")

LOOPBACK_HOSTS = ["127.0.0.1", "127.0.0.2", "127.0.0.3"]  # distinct "hosts", all this machine
JOB_TIMEOUT = 30  # seconds for one job, start to exit; jobs take 2 to 8 s


def kolorun():
    """The kolorun beside this Python (the venv of `make test`), else the
    development tree's."""
    beside = os.path.join(os.path.dirname(sys.executable), "kolorun")
    return beside if os.path.exists(beside) else os.path.join(REPO, "python", "kolo", "bin",
                                                              "kolorun")


def job_env(**extra):
    """This environment without any job around it, Python output unbuffered."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KOLO_", "HOROVOD_"))}
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


def pids_with(marker):
    """Pids of processes whose command line contains `marker`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline:
            found.append(int(entry))
    return found


def environ_of(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            entries = f.read().split(b"\0")
    except OSError:
        return {}
    env = {}
    for entry in entries:
        key, sep, value = entry.decode(errors="replace").partition("=")
        if sep:
            env[key] = value
    return env


def descendants(pid):
    """Pids of every process below `pid` (children, their children, ...)."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    found, frontier = [], [pid]
    while frontier:
        for child in children.get(frontier.pop(), []):
            found.append(child)
            frontier.append(child)
    return found


class Job:
    """kolorun with `args` (a list), started at once; its stdout and stderr
    go to files in `workdir`. `marker` (made unique if not given) should
    appear in every worker's command line; see stop()."""

    def __init__(self, args, workdir, env=None, marker=None, argv_prefix=None):
        self.marker = marker or f"helper-e2e-{uuid.uuid4().hex[:12]}"
        self.workdir = str(workdir)
        self.stdout_path = os.path.join(self.workdir, "kolorun.stdout")
        self.stderr_path = os.path.join(self.workdir, "kolorun.stderr")
        self.argv = list(argv_prefix or []) + [kolorun()] + [str(a) for a in args]
        self.started = time.monotonic()
        self.ended = None
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.process = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=out,
                                            stderr=err, env=env or job_env(),
                                            cwd=self.workdir, start_new_session=True)

    # --- output -----------------------------------------------------------

    def stdout(self):
        with open(self.stdout_path, errors="replace") as f:
            return f.read()

    def stderr(self):
        with open(self.stderr_path, errors="replace") as f:
            return f.read()

    def kolorun_lines(self):
        """kolorun's own messages ("kolorun: ..."), from both streams."""
        return [line for line in (self.stderr() + self.stdout()).splitlines()
                if line.startswith("kolorun: ")]

    def report(self):
        rc = self.process.poll()
        return (f"command: {' '.join(self.argv)}\nexit: {rc}\n--- kolorun stdout:\n"
                f"{self.stdout()}\n--- kolorun stderr:\n{self.stderr()}")

    # --- waiting ------------------------------------------------------------

    def wait(self, timeout=JOB_TIMEOUT):
        """kolorun's exit code; a job still running after `timeout` seconds
        (counted from its start) is stopped and the test fails."""
        remaining = timeout - (time.monotonic() - self.started)
        try:
            rc = self.process.wait(max(remaining, 0.1))
        except subprocess.TimeoutExpired:
            self.stop()
            raise AssertionError(f"the job did not end within {timeout} s (stopped it)\n"
                                 + self.report()) from None
        self.ended = time.monotonic()
        return rc

    def wait_for(self, predicate, what, timeout=20):
        """Polls predicate() until true; fails when the job ends first or
        after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            if predicate():
                return
            if self.process.poll() is not None:
                if predicate():
                    return
                raise AssertionError(f"the job ended before {what}\n" + self.report())
            if time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"no {what} within {timeout} s (stopped the job)\n"
                                     + self.report())
            time.sleep(0.05)

    def stop(self):
        """Ends kolorun and every process carrying this job's marker
        (SIGTERM first, then SIGKILL). Safe to call more than once."""
        if self.process.poll() is None:
            try:
                self.process.send_signal(signal.SIGTERM)
                self.process.wait(7)  # kolorun passes it on, SIGKILLs the ranks after 5 s
            except (OSError, subprocess.TimeoutExpired):
                pass
            if self.process.poll() is None:
                try:
                    os.killpg(self.process.pid, signal.SIGKILL)
                except OSError:
                    pass
                self.process.wait(10)
        for pid in pids_with(self.marker):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def assert_line(job, expected):
    """kolorun printed exactly this line."""
    lines = job.kolorun_lines()
    assert expected in lines, f"missing kolorun line:\n  {expected}\n" + job.report()


def assert_line_matching(job, pattern):
    lines = job.kolorun_lines()
    assert any(re.fullmatch(pattern, line) for line in lines), (
        f"no kolorun line matches:\n  {pattern}\n" + job.report())


def read_logs(outdir):
    """{worker id: [events]} from elastic_train.py's worker<N>.jsonl files."""
    logs = {}
    for name in os.listdir(outdir):
        match = re.fullmatch(r"worker(\d+)\.jsonl", name)
        if not match:
            continue
        with open(os.path.join(outdir, name)) as f:
            logs[int(match.group(1))] = [json.loads(line) for line in f if line.strip()]
    return logs


def events(log, kind, **where):
    return [e for e in log if e["event"] == kind and all(e[k] == v for k, v in where.items())]


def commits_in(outdir, worker):
    """How many commits `worker` logged so far (0 if none)."""
    try:
        with open(os.path.join(outdir, f"worker{worker}.jsonl")) as f:
            return sum(1 for line in f if '"event": "commit"' in line)
    except OSError:
        return 0


def write_atomically(path, text):
    temp = f"{path}.tmp"
    with open(temp, "w") as f:
        f.write(text)
    os.replace(temp, path)


def describe_logs(logs):
    """One line per event, for assertion messages."""
    lines = []
    for worker in sorted(logs):
        for e in logs[worker]:
            extra = ""
            if "restored_step" in e:
                extra = f" restored_step={e['restored_step']}"
            if "code" in e:
                extra = f" code={e['code']}"
            lines.append(f"worker {worker}: {e['event']:9} round={e['round']} rank={e['rank']} "
                         f"size={e['size']} step={e['step']} epoch={e['epoch']} "
                         f"batch={e['batch']} checksum={e['checksum'][:10]}{extra}"
                         + (f" indices={e['indices']}" if "indices" in e else ""))
    return "\n".join(lines)


def assert_worker1_killed_and_job_went_on(job):
    """kolorun saw worker 1 (rank 1, on 127.0.0.2 of LOOPBACK_HOSTS, one slot
    each) die of SIGKILL, blacklisted its host (--elastic-host-failures 1) and
    went on with the two others in round 2."""
    assert_line(job, "kolorun: rank 1 (host 127.0.0.2) was killed by signal 9 (SIGKILL); "
                     "host 127.0.0.2 is blacklisted for the rest of the job")
    assert_line(job, "kolorun: round 2: 2 workers on 127.0.0.1, 127.0.0.3 "
                     "(worker 1 (rank 1, host 127.0.0.2) failed)")


def worker_pid(job, worker, script):
    """The pid of the training process of elastic worker `worker`: a
    descendant of kolorun running `script` with KOLO_ELASTIC_WORKER set."""
    for pid in descendants(job.process.pid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        if script in argv[1:2] and environ_of(pid).get("KOLO_ELASTIC_WORKER") == str(worker):
            return pid
    return None


def kill_worker(job, worker, script, timeout=10):
    """SIGKILLs elastic worker `worker`'s training process (waiting up to
    `timeout` s for it to appear); fails the test if there is none."""
    victim = None
    deadline = time.monotonic() + timeout
    while victim is None and time.monotonic() < deadline:
        victim = worker_pid(job, worker, script)
        if victim is None:
            time.sleep(0.05)
    assert victim is not None, f"no process of worker {worker} under kolorun\n" + job.report()
    os.kill(victim, signal.SIGKILL)


def assert_third_host_joined(job):
    """kolorun saw the discovery script add 127.0.0.3 to a job on the first
    two LOOPBACK_HOSTS, and round 2 formed with a worker on each of the three."""
    assert_line(job, "kolorun: hosts changed (added 127.0.0.3); the workers re-form at their "
                     "next commit")
    assert_line(job, "kolorun: round 2: 3 workers on 127.0.0.1, 127.0.0.2, 127.0.0.3 "
                     "(hosts changed)")
