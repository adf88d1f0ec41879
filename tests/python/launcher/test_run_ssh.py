"""kolo.run across real hosts reached over ssh, as users run it.

Three network namespaces stand in for machines (see netns_hosts.py): the
caller's, and two hosts at 198.19.0.2 and 198.19.0.3, each with its own
sshd on port 2222. The caller runs as a script inside its namespace (this
pytest process cannot move into one) and calls
kolo.run(fn, np=4, hosts="198.19.0.2:2,198.19.0.3:2", ssh_port=2222, ...):
kolorun reaches the ranks over ssh, and the ranks connect back to the
caller over the veth network. The functions are defined in the script's
__main__, so cloudpickle sends them by value.

Needs root, `ip netns`, sshd and ssh; skipped otherwise (CI runs as root).
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from netns_hosts import NetnsHosts, unavailable_reason

_CALLER_TIMEOUT = 90  # seconds for one caller script, ssh and the ranks included

_CALLER = textwrap.dedent('''
    import json
    import os
    import sys

    import kolo
    from kolo.runner import RankFailedError

    mode, hosts, identity, known_hosts, caller_address = sys.argv[1:6]

    def make_work(offset):
        def work(scale):  # a closure over offset and caller_address
            import socket

            import numpy as np

            import kolo.numpy as hvd

            hvd.init()
            total = hvd.allreduce(np.array([hvd.rank() + 1.0]), op=hvd.Sum)
            # The address of the "host" this rank runs on: the one its
            # namespace uses to reach the caller (namespaces share a hostname).
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
                probe.connect((caller_address, 9))
                address = probe.getsockname()[0]
            result = (hvd.rank(), hvd.size(), hvd.local_rank(), hvd.cross_rank(),
                      hvd.cross_size(), address, os.environ["KOLO_HOSTNAME"],
                      float(total[0]) * scale + offset)
            hvd.shutdown()
            return result
        return work

    def fails_on_one():
        rank = int(os.environ["KOLO_RANK"])
        if rank == 1:
            raise ValueError(f"bad shard on rank {rank}")
        return rank

    env = {"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else None
    options = dict(hosts=hosts, ssh_port=2222, ssh_identity_file=identity, env=env,
                   timeout=60, start_timeout=20,
                   kolorun_args=("--ssh-host-key-checking", "yes",
                                 "--ssh-known-hosts-file", known_hosts))
    if mode == "ok":
        results = kolo.run(lambda s: make_work(100)(s), args=(2.0,), np=4, **options)
        print("RESULT " + json.dumps(results))
    else:
        try:
            kolo.run(fails_on_one, np=4, **options)
        except RankFailedError as error:
            print("RESULT " + json.dumps({
                "rank": error.rank, "message": str(error), "failures": error.failures,
                "exception": type(error.exception).__name__,
                "traceback": error.remote_traceback}))
        else:
            print("RESULT no exception")
''')


@pytest.fixture(scope="module")
def hosts():
    reason = unavailable_reason()
    if reason:
        pytest.skip(f"kolo.run over ssh between network namespaces: {reason}")
    with NetnsHosts(2) as cluster:
        yield cluster


def _run_caller(hosts, mode):
    """Runs the caller script in the caller namespace; returns its RESULT."""
    script = os.path.join(hosts.dir, "caller.py")
    with open(script, "w") as f:
        f.write(_CALLER)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("KOLO_", "HOROVOD_"))}  # no job around
    argv = hosts.exec_argv(hosts.caller_ns, [
        sys.executable, script, mode, ",".join(f"{a}:2" for a in hosts.addresses),
        hosts.user_key, hosts.known_hosts, hosts.caller_address])
    result = subprocess.run(argv, capture_output=True, text=True, env=env,
                            timeout=_CALLER_TIMEOUT)
    output = f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert result.returncode == 0, output
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    assert len(lines) == 1, output
    return json.loads(lines[0][len("RESULT "):]), output


def test_ranks_on_two_hosts_over_ssh_allreduce_and_return_in_rank_order(hosts):
    results, output = _run_caller(hosts, "ok")
    a, b = hosts.addresses
    total = (1 + 2 + 3 + 4) * 2.0 + 100
    assert results == [
        # rank, size, local_rank, cross_rank, cross_size, address, KOLO_HOSTNAME, allreduce
        [0, 4, 0, 0, 2, a, a, total],
        [1, 4, 1, 0, 2, a, a, total],
        [2, 4, 0, 1, 2, b, b, total],
        [3, 4, 1, 1, 2, b, b, total],
    ], output


def test_exception_on_rank_1_of_a_remote_host_reaches_the_caller(hosts):
    error, output = _run_caller(hosts, "fail")
    assert error != "no exception", output
    assert error["rank"] == 1, output
    assert "rank 1 raised: ValueError: bad shard on rank 1" in error["message"], output
    assert "Traceback on rank 1" in error["message"], output
    assert "fails_on_one" in error["traceback"], output
    assert error["exception"] == "ValueError", output
    assert error["failures"] == {"1": "ValueError: bad shard on rank 1"}, output
