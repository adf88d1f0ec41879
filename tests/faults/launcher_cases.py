"""Fault cases of the launcher: input kolorun must refuse (hosts, hostfiles,
-np, programs, settings), host discovery scripts that fail, print garbage
or hang, kolorun itself killed by a random signal while its ranks run (with
processes started in the background), and timeline paths that cannot be
written. Each function runs one randomized trial and returns its
trial.Outcome."""

import os
import signal
import sys
import time

from trial import (WORKER, Outcome, finish, judge_failure, judge_success, new_marker, orphans,
                   start_job)
from elastic_job import kolorun
import subprocess

PRINTABLE = set(range(0x20, 0x7F)) | {0x0A}


def _bad_inputs(workdir):
    """(name, kolorun arguments, what its one line must say) of input that
    must fail at once, with exit code 2."""
    garbage_hosts = os.path.join(workdir, "garbage-hosts")
    with open(garbage_hosts, "wb") as f:
        f.write(b"localhost slots=1 \x1b[2J" + b"x" * 100_000 + b"\n")
    missing = os.path.join(workdir, "none")
    return [
        ("-H ''", ["-np", "1", "-H", "", "true"], "-H: no hosts given"),
        ("-np 100000 without hosts", ["-np", "100000", "true"],
         "-np 100000 without -H or --hostfile would start 100000 ranks on this host"),
        ("-np 0", ["-np", "0", "true"], "-np must be at least 1, not 0"),
        ("-np -3", ["-np", "-3", "true"], "-np must be at least 1, not -3"),
        ("-np of letters", ["-np", "two", "true"], "--num-proc = two"),
        ("-H with a bad slot count", ["-np", "1", "-H", "localhost:x", "true"],
         "-H: slots 'x' is not a number"),
        ("more ranks than -H slots", ["-np", "5", "-H", "localhost:2", "true"],
         "-np 5 is more than the 2 slots of the hosts given"),
        ("a missing hostfile", ["-np", "1", "--hostfile", missing, "true"],
         f"cannot read hostfile '{missing}': No such file or directory"),
        # Cut and escaped: the terminal control sequence shows as text.
        ("a hostfile line of garbage", ["-np", "1", "--hostfile", garbage_hosts, "true"],
         "garbage-hosts:1: expected 'host slots=N', got 'localhost slots=1 \\x1b[2Jxxx"),
        ("a program that is not there", ["-np", "2", "./no-such-program"],
         "./no-such-program: no executable file there"),
        ("a command that is not there", ["-np", "2", "no-such-command-kolo"],
         "no-such-command-kolo: command not found"),
        ("an unknown flag", ["--no-such-flag", "-np", "1", "true"], "--no-such-flag"),
        ("a stall warning above the shutdown time",
         ["-np", "1", "--stall-check-warning-time-seconds", "100",
          "--stall-check-shutdown-time-seconds", "10", "true"],
         "KOLO_STALL_SHUTDOWN_TIME_SECONDS (10 s) must be 0 or at least "
         "KOLO_STALL_CHECK_TIME_SECONDS (100 s)"),
        ("a setting out of range", ["-np", "1", "--cycle-time-ms", "-5", "true"],
         "--cycle-time-ms -5: KOLO_CYCLE_TIME='-5' must be above 0"),
    ]


def bad_input(rng, workdir):
    name, args, expected = rng.choice(_bad_inputs(str(workdir)))
    started = time.monotonic()
    try:
        job = subprocess.run([kolorun()] + args, capture_output=True, cwd=workdir, timeout=30)
    except subprocess.TimeoutExpired:
        return Outcome("hang", 30, name)
    took = time.monotonic() - started
    lines = job.stderr.decode(errors="replace").splitlines()
    detail = f"{name}: exit {job.returncode}, stderr {job.stderr[:600]!r}, expected {expected!r}"
    if job.returncode < 0 or b"terminate called" in job.stderr:
        return Outcome("crash", took, detail)
    if len(lines) > 1 or len(job.stderr) > 1000:
        return Outcome("flood", took, detail)
    clear = (job.returncode == 2 and job.stdout == b"" and len(lines) == 1
             and lines[0].startswith("kolorun: ") and expected in lines[0]
             and set(job.stderr) <= PRINTABLE)
    return Outcome("clear error" if clear else "unclear error", took, detail)


DISCOVERY_SCRIPTS = {
    "exits 3": ("echo 'no cluster here' >&2; exit 3\n",
                "the host discovery script failed: exited with code 3"),
    "prints garbage": ("head -c 3000 /dev/urandom\n", "the host discovery script failed: "),
    "hangs": ("sleep 600\n", "host discovery script"),
    "lists no hosts": ("true\n", "fewer than --min-np 2 workers were possible"),
}


def discovery_script(rng, workdir):
    """An elastic job whose discovery script never gives a usable host ends
    within --elastic-timeout with one line saying why."""
    name = rng.choice(sorted(DISCOVERY_SCRIPTS))
    text, cause = DISCOVERY_SCRIPTS[name]
    script = os.path.join(str(workdir), "discover.sh")
    with open(script, "w") as f:
        f.write(text)
    timeout = rng.choice([2, 3, 4])
    marker = new_marker()
    job = start_job(workdir, ["-np", "2", "--min-np", "2", "--elastic-timeout", timeout,
                              "--host-discovery-script", f"sh {script} {marker}", "true"],
                    marker=marker)
    try:
        rc = finish(job, timeout + 20)
        outcome = judge_failure(job, rc, cause, {}, job.started)
        if outcome.kind == "clear error":
            # Every line on stderr counts, the script's own output too.
            if len(job.stderr().splitlines()) > 5 or not set(job.stderr().encode()) <= PRINTABLE:
                outcome = Outcome("flood", outcome.seconds, job.report()[:4000])
            elif outcome.seconds > timeout + 5:
                outcome = Outcome("unclear error", outcome.seconds,
                                  f"ended {outcome.seconds:.1f} s in, asked {timeout} s")
        outcome.detail = f"script {name}: {outcome.detail}"
        return outcome
    finally:
        job.stop()


KOLORUN_SIGNALS = [signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP]


def kolorun_killed(rng, workdir):
    """kolorun killed at a random moment: nothing of the job may outlive it,
    neither the ranks nor what they started in the background."""
    np_ = rng.choice([1, 2, 3])
    sig = rng.choice(KOLORUN_SIGNALS)
    marker = new_marker()
    job = start_job(workdir, ["-np", np_, sys.executable, WORKER, workdir, "--marker", marker,
                              "--steps", 100000, "--step-sleep", 0.01, "--background"],
                    marker=marker)
    try:
        time.sleep(rng.uniform(0.2, 4))
        fault_at = time.monotonic()
        job.process.send_signal(sig)
        rc = finish(job, fault_at - job.started + 15)
        took = time.monotonic() - fault_at
        if rc is None:
            return Outcome("hang", took, f"{sig.name}: kolorun still running\n{job.report()}")
        left = orphans(job)
        if left:
            return Outcome("orphans", took, f"{sig.name}: alive after kolorun: {left}")
        return Outcome("ok", took, sig.name)
    finally:
        job.stop()


def unwritable_timeline(rng, workdir):
    where = rng.choice(["missing directory", "a directory", "no permission"])
    if where == "missing directory":
        path = os.path.join(str(workdir), "missing", "timeline.json")
    elif where == "a directory":
        path = str(workdir)
    elif os.geteuid() == 0:
        path = "/proc/self/timeline.json"  # root may write anywhere else
    else:
        path = os.path.join(str(workdir), "readonly")
        os.mkdir(path, 0o555)
        path = os.path.join(path, "timeline.json")
    np_ = rng.choice([1, 2, 3])
    marker = new_marker()
    job = start_job(workdir, ["-np", np_, "--timeline-filename", path, sys.executable, WORKER,
                              workdir, "--marker", marker], marker=marker)
    try:
        rc = finish(job, 60)
        outcome = judge_failure(job, rc, f"timeline: cannot open '{path}'", {}, job.started)
        outcome.detail = f"{where}: {outcome.detail}"
        return outcome
    finally:
        job.stop()


def succeeds(rng, workdir):
    """The control: the same job without a fault finishes."""
    np_ = rng.choice([1, 2, 3, 4])
    marker = new_marker()
    job = start_job(workdir, ["-np", np_, sys.executable, WORKER, workdir, "--marker", marker,
                              "--steps", 5], marker=marker)
    try:
        return judge_success(job, finish(job, 60), job.started)
    finally:
        job.stop()


CASES = {
    "no fault (control)": succeeds,
    "bad launcher input": bad_input,
    "discovery script fails": discovery_script,
    "kolorun killed": kolorun_killed,
    "unwritable timeline path": unwritable_timeline,
}
