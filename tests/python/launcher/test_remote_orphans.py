"""No process of a job outlives kolorun on the hosts its ranks run on over
ssh, whatever signal ends kolorun, SIGKILL included.

Two network namespaces with their own sshd stand in for hosts
(netns_hosts.py); kolorun runs in a third. Each rank is a shell script that
ignores SIGTERM, never ends by itself and starts two processes that ignore
it too, one a daemon in its own session (remote_background_job.py's "shell"
kind): only the remote helper's SIGKILL of the rank's group after the grace
period and its sweep of the orphans it adopted (it is a subreaper) end
them. After kolorun is signalled, every process in the host namespaces but
sshd itself (ssh sessions, remote helpers, ranks, their children) must be
gone within the grace period plus a margin. The fault matrix
(tests/faults/remote_cases.py) also runs training ranks this way.

Needs root, `ip netns`, sshd and ssh; skipped otherwise (CI runs as root).
"""

import signal
import time

import pytest

import remote_background_job as remote
from netns_hosts import NetnsHosts, unavailable_reason

RANKS_PER_HOST = 2
GRACE = 5  # kolorun's and the remote helper's SIGTERM-to-SIGKILL grace period, seconds
# Beyond the grace: ssh's connection drop reaching the helper, the SIGKILL
# and the sweep, on a loaded 2-core host.
MARGIN = 10


@pytest.fixture(scope="module")
def hosts():
    reason = unavailable_reason()
    if reason:
        pytest.skip(f"ranks over ssh between network namespaces: {reason}")
    with NetnsHosts(2) as cluster:
        yield cluster


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT],
                         ids=lambda s: s.name)
def test_nothing_of_the_job_survives_on_the_hosts_when_kolorun_is_signalled(
        hosts, tmp_path, sig):
    marker = f"remote-orphans-{sig.name}-{tmp_path.name}"
    ranks = RANKS_PER_HOST * len(hosts.addresses)
    job = remote.start(hosts, str(tmp_path), marker, RANKS_PER_HOST, kind="shell")
    try:
        remote.wait_running(job, hosts, marker, ranks, "shell", limit=60)
        before = remote.marked(hosts, marker)
        job.process.send_signal(sig)
        # kolorun ends at once, or (SIGTERM, SIGINT) once its SIGKILL after the grace is sent.
        job.wait(timeout=time.monotonic() - job.started + GRACE + MARGIN)
        left = remote.left_after(hosts, GRACE + MARGIN)
        assert left == {}, (f"alive on the hosts {GRACE + MARGIN} s after kolorun got "
                            f"{sig.name}: {left}\n(the job's processes before: {before})\n"
                            + job.report())
    finally:
        job.stop()
