"""kolorun killed while its ranks run on other hosts over ssh: two network
namespaces with their own sshd stand in for the hosts (netns_hosts.py, made
afresh for each trial), 1-2 ranks on each, every rank with a process in the
background, ranks training or shell scripts that ignore SIGTERM and never
end by themselves (remote_background_job.py's two kinds). kolorun gets
SIGKILL, SIGTERM, SIGINT or SIGHUP at a random moment, ssh connections
still opening included; nothing of the job may be left on either host once
the grace period and a margin have passed.

Needs root, `ip netns`, sshd and ssh: unavailable_reason() says why not."""

import signal
import time

import remote_background_job as remote
from netns_hosts import NetnsHosts, unavailable_reason
from trial import Outcome, finish, new_marker

SIGNALS = [signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP]
GRACE = 5  # seconds from kolorun's (or the remote helper's) SIGTERM to its SIGKILL
MARGIN = 10


def kolorun_killed_remote(rng, workdir):
    per_host = rng.choice([1, 2])
    kind = rng.choice(remote.KINDS)
    sig = rng.choice(SIGNALS)
    delay = rng.uniform(0.2, 6)
    what = f"{sig.name} {delay:.1f} s in, {per_host} {kind} rank(s) per host"
    with NetnsHosts(2) as hosts:
        marker = new_marker()
        job = remote.start(hosts, workdir, marker, per_host, kind)
        try:
            time.sleep(delay)
            running = remote.marked(hosts, marker)
            fault_at = time.monotonic()
            job.process.send_signal(sig)
            rc = finish(job, fault_at - job.started + GRACE + MARGIN)
            if rc is None:
                return Outcome("hang", time.monotonic() - fault_at,
                               f"{what}: kolorun still running\n{job.report()}")
            left = remote.left_after(hosts, GRACE + MARGIN)
            took = time.monotonic() - fault_at
            if left:
                return Outcome("orphans", took, f"{what}: alive on the hosts: {left}\n"
                                                f"(marked processes at the fault: {running})")
            return Outcome("ok", took, f"{what}; {len(running)} marked processes at the fault, "
                                       f"all gone {took:.1f} s after it")
        finally:
            job.stop()


def unavailable():
    """{case name: why it cannot run here} ({} when it can)."""
    reason = unavailable_reason()
    return {NAME: reason} if reason else {}


NAME = "kolorun killed, ranks over ssh"
CASES = {NAME: kolorun_killed_remote}
