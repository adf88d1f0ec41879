"""kolorun's elastic mode across real hosts reached over ssh: three network
namespaces with their own sshd (netns_hosts.py), one worker slot each.
kolorun runs in the caller namespace; once training is under way, the
worker on the second host is killed with SIGKILL (found by its pid in that
namespace), and the other two finish the training from the last commit.

Needs root, `ip netns`, sshd and ssh; skipped otherwise (CI runs as root).
"""

import os
import signal
import sys
import time

import pytest

from elastic_job import (
    TRAIN, Job, assert_line, assert_line_matching, commits_in, describe_logs, events,
    job_env, read_logs)
from netns_hosts import NetnsHosts, unavailable_reason

EPOCHS = 2


@pytest.fixture(scope="module")
def hosts():
    reason = unavailable_reason()
    if reason:
        pytest.skip(f"elastic kolorun over ssh between network namespaces: {reason}")
    with NetnsHosts(3) as cluster:
        yield cluster


def training_pid(hosts, ns, marker):
    """The elastic_train.py process of this job in namespace `ns` (not the
    shell ssh started it from)."""
    for pid in hosts.pids_in(ns):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        if len(argv) > 1 and argv[1] == TRAIN and marker in argv:
            return pid
    return None


def run_in_caller(hosts, args, tmp_path, outdir, marker, timeout, during=None):
    """Runs kolorun `args` in the caller namespace, calls during(job) while it
    runs, waits up to `timeout` s; stops kolorun and anything of the job left
    on the hosts. Returns (job, exit code, worker logs, context)."""
    job = Job(args, tmp_path, env=job_env(), marker=marker,
              argv_prefix=hosts.exec_argv(hosts.caller_ns, []))
    try:
        if during is not None:
            during(job)
        rc = job.wait(timeout=timeout)
    finally:
        job.stop()
        for ns in hosts.host_ns:
            pid = training_pid(hosts, ns, marker)
            if pid is not None:
                os.kill(pid, signal.SIGKILL)
    logs = read_logs(str(outdir))
    return job, rc, logs, job.report() + "\n--- worker logs:\n" + describe_logs(logs)


def test_worker_killed_on_a_remote_host_the_others_finish(hosts, tmp_path):
    outdir = tmp_path / "out"
    outdir.mkdir()
    os.chmod(tmp_path, 0o755)
    marker = f"helper-e2e-ssh-{os.getpid()}-{time.monotonic_ns()}"
    forward = ["-x", "PYTHONPATH"] if os.environ.get("PYTHONPATH") else []
    args = ["--elastic-host-failures", "1", "-np", "3", "--min-np", "2", "-H",
            ",".join(f"{a}:1" for a in hosts.addresses),
            "-p", str(hosts.port), "-i", hosts.user_key, "--ssh-host-key-checking", "yes",
            "--ssh-known-hosts-file", hosts.known_hosts, "--start-timeout", "20"] + forward + [
            sys.executable, TRAIN, str(outdir), "--marker", marker, "--epochs", EPOCHS,
            "--step-sleep", "0.05"]
    victim_host = hosts.addresses[1]

    def kill_the_second_worker(job):
        job.wait_for(lambda: commits_in(str(outdir), 1) >= 3, "3 commits of worker 1",
                     timeout=30)
        pid = training_pid(hosts, hosts.host_ns[1], marker)
        assert pid is not None, f"no training process in {hosts.host_ns[1]}\n" + job.report()
        os.kill(pid, signal.SIGKILL)

    job, rc, logs, context = run_in_caller(hosts, args, tmp_path, outdir, marker, 40,
                                           kill_the_second_worker)
    assert rc == 0, context
    assert_line_matching(job, rf"kolorun: rank 1 \(host {victim_host}\) .*; host {victim_host} "
                              r"is blacklisted for the rest of the job")
    a, _, c = hosts.addresses
    assert_line(job, f"kolorun: round 2: 2 workers on {a}, {c} "
                     f"(worker 1 (rank 1, host {victim_host}) failed)")

    assert sorted(logs) == [0, 1, 2], context
    killed_at = events(logs[1], "commit")[-1]
    assert not events(logs[1], "done"), context
    for w in (0, 2):
        reset = events(logs[w], "reset")
        assert len(reset) == 1, context
        last_before = events(logs[w], "commit", round=1)[-1]
        assert reset[0]["restored_step"] == last_before["step"], context
        assert reset[0]["checksum"] == last_before["checksum"], context
        # Killed between steps (it sleeps there), so the survivors committed
        # what it committed last, give or take the step it died in.
        assert abs(last_before["step"] - killed_at["step"]) <= 1, context
        assert events(logs[w], "commit", round=2)[0]["step"] == last_before["step"] + 1, context
    done = [events(logs[w], "done") for w in (0, 2)]
    assert all(len(d) == 1 and d[0]["epoch"] == EPOCHS for d in done), context
    assert done[0][0]["checksum"] == done[1][0]["checksum"], context
    assert done[0][0]["step"] == done[1][0]["step"], context


def test_discovered_hosts_reach_the_store_on_the_address_that_routes_to_them(hosts, tmp_path):
    # The caller's first non-loopback interface is decoy0, which no host can
    # reach; the store must be advertised on the address that routes to the
    # discovered hosts (br0), or the workers never connect and the job waits
    # out --elastic-timeout.
    outdir = tmp_path / "out"
    outdir.mkdir()
    os.chmod(tmp_path, 0o755)
    script = tmp_path / "discover.sh"
    script.write_text("".join(f"echo {a}:1\n" for a in hosts.addresses[:2]))
    marker = f"helper-e2e-ssh-discovery-{os.getpid()}-{time.monotonic_ns()}"
    forward = ["-x", "PYTHONPATH"] if os.environ.get("PYTHONPATH") else []
    args = ["-np", "2", "--min-np", "2", "--host-discovery-script", f"sh {script}",
            "--elastic-timeout", "20", "-p", str(hosts.port), "-i", hosts.user_key,
            "--ssh-host-key-checking", "yes", "--ssh-known-hosts-file", hosts.known_hosts,
            "--start-timeout", "20", "--verbose"] + forward + [
            sys.executable, TRAIN, str(outdir), "--marker", marker, "--epochs", 1]
    job, rc, logs, context = run_in_caller(hosts, args, tmp_path, outdir, marker, 60)
    assert rc == 0, context
    assert sorted(logs) == [0, 1], context
    for w in (0, 1):
        assert len(events(logs[w], "done")) == 1, context
    assert hosts.decoy_address not in job.stderr(), context
