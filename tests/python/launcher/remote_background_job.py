"""A kolorun job whose ranks run on the "hosts" of netns_hosts.py (reached
over ssh) and start processes in the background: what is left on the hosts
once kolorun is gone. Used by test_remote_orphans.py and the fault matrix's
"kolorun killed, ranks over ssh" case (tests/faults/remote_cases.py).

Two kinds of rank:
  "training"  fault_worker.py --background: real ranks training (each with
              a sleeping child, a daemon in its own session on odd ranks);
              they fail by themselves once the job's store is gone, so the
              remote helper's sweep of what they started is what counts.
  "shell"     a shell script that ignores SIGTERM, never ends by itself and
              starts two children that ignore SIGTERM too, one of them a
              daemon (setsid): only the remote helper's SIGKILL of the
              rank's group after the grace period and its sweep of the
              orphans it adopted (it is a subreaper) end them."""

import os
import sys
import time

from elastic_job import Job, job_env

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fault_worker.py")
KINDS = ("training", "shell")
# Marked processes per rank once it runs: the rank and its background ones.
MARKED_PER_RANK = {"training": 2, "shell": 3}

SHELL_RANK = """trap '' TERM
forever='trap "" TERM; while :; do sleep 1; done'
sh -c "$forever" "$1" &
setsid sh -c "$forever" "$1" &
while :; do sleep 1; done
"""


def start(hosts, workdir, marker, ranks_per_host, kind="shell"):
    """kolorun in the caller namespace, `ranks_per_host` ranks of `kind` on
    each host; returns the elastic_job.Job."""
    os.chmod(workdir, 0o755)
    forward = ["-x", "PYTHONPATH"] if os.environ.get("PYTHONPATH") else []
    slots = ",".join(f"{a}:{ranks_per_host}" for a in hosts.addresses)
    if kind == "training":
        program = [sys.executable, WORKER, workdir, "--marker", marker, "--steps", 100000,
                   "--step-sleep", 0.01, "--background"]
    else:
        script = os.path.join(workdir, "rank.sh")
        with open(script, "w") as f:
            f.write(SHELL_RANK)
        program = ["/bin/sh", script, marker]
    args = (["-np", ranks_per_host * len(hosts.addresses), "-H", slots, "--start-timeout", "30"]
            + hosts.kolorun_ssh_args() + forward + program)
    return Job(args, workdir, env=job_env(), marker=marker,
               argv_prefix=hosts.exec_argv(hosts.caller_ns, []))


def marked(hosts, marker):
    """{pid: command line} of this job's processes on the hosts: the ranks
    and their background children carry the marker."""
    return {pid: cmd for pid, cmd in hosts.job_processes().items() if marker in cmd}


def wait_running(job, hosts, marker, ranks, kind, limit):
    """Until every rank and its background processes run; fails when the
    job ends first or after `limit` s."""
    job.wait_for(lambda: len(marked(hosts, marker)) >= MARKED_PER_RANK[kind] * ranks,
                 f"{ranks} ranks with their background processes on the hosts", timeout=limit)


def left_after(hosts, limit):
    """{pid: command line} of the processes on the hosts (ssh sessions,
    remote helpers, ranks, anything they started) still alive `limit`
    seconds from now; empty as soon as none is."""
    deadline = time.monotonic() + limit
    while True:
        left = hosts.job_processes()
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)
