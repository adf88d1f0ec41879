"""OpenMPI's mpirun across two hosts reached over ssh, as Kubeflow's MPIJob
and clusters without kolorun run it: `mpirun -np 4 -H hostA:2,hostB:2
python train.py`, with no KOLO_SECRET and no port. The ranks meet through
the store their rank 0 hosts, whose address, port and secret travel over
MPI (core/launch/store_over_mpi.h). Also `kolorun --mpi` across the same
hosts, and the MPI backend (KOLO_BACKEND=mpi) over OpenMPI's TCP BTL.

The hosts are network namespaces with their own sshd (netns_hosts.py);
mpirun runs in the caller's namespace, whose first network (decoy0) no
host can reach, so rank 0's first advertised address must be skipped when
rank 0 runs there. Needs root, `ip netns`, sshd, ssh and mpirun; skipped
otherwise.
"""

import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

from netns_hosts import NetnsHosts, unavailable_reason

_JOB_TIMEOUT = 120  # seconds for one mpirun job: ssh, MPI's start, the ranks

# Each rank prints its place, the address of its host (the one it uses to
# reach the caller's network; the hosts share a host name) and the results
# of one allreduce and one allgather.
_TRAIN = textwrap.dedent("""
    import socket
    import sys

    import torch
    import kolo.torch as hvd

    hvd.init()
    total = hvd.allreduce(torch.tensor([float(hvd.rank() + 1)]), op=hvd.Sum)
    gathered = hvd.allgather(torch.tensor([[hvd.rank(), hvd.local_rank()]]))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect((sys.argv[1], 9))
        address = probe.getsockname()[0]
    print(f"RANK {hvd.rank()} SIZE {hvd.size()} LOCAL {hvd.local_rank()}/{hvd.local_size()} "
          f"CROSS {hvd.cross_rank()}/{hvd.cross_size()} HOST {address} "
          f"SUM {total.item():g} GATHER {gathered.tolist()} "
          f"MPI {hvd.mpi_enabled()}", flush=True)
    hvd.shutdown()
""")


@pytest.fixture(scope="module")
def hosts():
    reason = unavailable_reason()
    if reason:
        pytest.skip(f"mpirun over ssh between network namespaces: {reason}")
    if shutil.which("mpirun") is None:
        pytest.skip("OpenMPI's mpirun is not installed")
    with NetnsHosts(2) as cluster:
        yield cluster


def _clean_env(**extra):
    """This environment without a job around it, and without a secret."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("KOLO_", "HOROVOD_", "OMPI_", "PMIX_", "PMI_", "SLURM_"))}
    env["KOLO_START_TIMEOUT"] = "40"
    env.update(extra)
    return env


def _ssh_words(hosts):
    """mpirun's ssh options for the hosts: their port, key and known hosts."""
    return (f"-p {hosts.port} -i {hosts.user_key} -o BatchMode=yes "
            f"-o StrictHostKeyChecking=yes -o UserKnownHostsFile={hosts.known_hosts}")


def _run_in_caller(hosts, argv, env):
    result = subprocess.run(hosts.exec_argv(hosts.caller_ns, argv), capture_output=True,
                            text=True, env=env, timeout=_JOB_TIMEOUT)
    return result, f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"


def _script(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(_TRAIN)
    return str(path)


def _ranks(output):
    pattern = (r"RANK (\d+) SIZE (\d+) LOCAL (\d+)/(\d+) CROSS (\d+)/(\d+) HOST (\S+) SUM (\S+) "
               r"GATHER (\[.*?\]\]) MPI (\w+)")
    return sorted(re.findall(pattern, output))


def _expected(hosts, mpi):
    a, b = hosts.addresses
    gathered = "[[0, 0], [1, 1], [2, 0], [3, 1]]"
    return [(str(rank), "4", str(rank % 2), "2", str(rank // 2), "2", (a, b)[rank // 2], "10",
             gathered, str(mpi)) for rank in range(4)]


def _mpirun(hosts):
    # MPI between the ranks over TCP only: the namespaces share /tmp and the
    # host name, so OpenMPI's shared-memory segments (named by host name,
    # job and local rank) of local rank 0 on one "host" and on the other
    # would be the same file. Real hosts do not share them.
    return ["mpirun", "--allow-run-as-root", "-np", "4", "-H",
            ",".join(f"{address}:2" for address in hosts.addresses),
            "--mca", "plm_rsh_args", _ssh_words(hosts), "--mca", "btl", "tcp,self",
            "-x", "PATH", "-x", "KOLO_START_TIMEOUT"] \
        + (["-x", "PYTHONPATH"] if "PYTHONPATH" in os.environ else [])


def test_plain_mpirun_across_hosts_needs_no_secret(hosts, tmp_path):
    env = _clean_env()
    result, output = _run_in_caller(
        hosts, _mpirun(hosts) + [sys.executable, _script(tmp_path), hosts.caller_address], env)
    assert result.returncode == 0, output
    assert _ranks(result.stdout) == _expected(hosts, mpi=False), output


def test_users_secret_and_port_still_win_under_plain_mpirun(hosts, tmp_path):
    env = _clean_env(KOLO_SECRET="a-secret-of-the-users", KOLO_RENDEZVOUS_PORT="29611")
    show_port = textwrap.dedent("""
        import socket
        import torch
        import kolo.torch as hvd
        hvd.init()
        if hvd.rank() != 0:
            # Rank 0 listens on the user's port; the others reach it there.
            with socket.create_connection(("%s", 29611), timeout=5):
                pass
        hvd.allreduce(torch.zeros(1), name="checked")  # rank 0's store stays up until here
        print(f"RANK {hvd.rank()} PORT OK", flush=True)
        hvd.shutdown()
    """)
    script = tmp_path / "port.py"
    # Rank 0 runs on the first host: the others connect to its address.
    script.write_text(show_port % hosts.addresses[0])
    result, output = _run_in_caller(
        hosts, _mpirun(hosts) + ["-x", "KOLO_SECRET", "-x", "KOLO_RENDEZVOUS_PORT",
                                 sys.executable, str(script)], env)
    assert result.returncode == 0, output
    assert sorted(re.findall(r"RANK (\d) PORT OK", result.stdout)) == ["0", "1", "2", "3"], output


def test_kolorun_mpi_across_hosts(hosts, tmp_path):
    kolorun = os.path.join(os.path.dirname(sys.executable), "kolorun")
    argv = [kolorun, "--mpi", "-np", "4", "-H",
            ",".join(f"{address}:2" for address in hosts.addresses),
            "-p", str(hosts.port), "-i", hosts.user_key, "--ssh-host-key-checking", "yes",
            "--ssh-known-hosts-file", hosts.known_hosts, "-x", "KOLO_START_TIMEOUT",
            sys.executable, _script(tmp_path), hosts.caller_address]
    result, output = _run_in_caller(hosts, argv, _clean_env())
    assert result.returncode == 0, output
    assert _ranks(result.stdout) == _expected(hosts, mpi=False), output


def test_mpi_backend_across_hosts_over_openmpis_tcp(hosts, tmp_path):
    env = _clean_env(KOLO_BACKEND="mpi")
    result, output = _run_in_caller(
        hosts, _mpirun(hosts) + ["-x", "KOLO_BACKEND", sys.executable, _script(tmp_path), hosts.caller_address], env)
    assert result.returncode == 0, output
    assert _ranks(result.stdout) == _expected(hosts, mpi=True), output


_DIES = textwrap.dedent("""
    import os
    import signal

    import torch
    import kolo.torch as hvd

    hvd.init()
    hvd.allreduce(torch.ones(4), name="warm-up")
    if hvd.rank() == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    try:
        hvd.allreduce(torch.ones(4), name="after")
    except Exception as error:  # KoloInternalError naming the lost rank
        print(f"ERROR on rank {hvd.rank()}: {error}".replace("\\n", " "), flush=True)
        os._exit(1)
""")


def test_a_lost_rank_is_named_with_its_host_as_mpirun_names_it(hosts, tmp_path):
    script = tmp_path / "dies.py"
    script.write_text(_DIES)
    result, output = _run_in_caller(hosts, _mpirun(hosts) + [sys.executable, str(script)],
                                    _clean_env())
    assert result.returncode != 0, output
    errors = [line for line in result.stdout.splitlines() if line.startswith("ERROR on rank")]
    # mpirun ends the job once rank 3 dies, so not every rank may get to say it.
    assert errors, output
    for line in errors:
        assert "rank 3" in line and hosts.addresses[1] in line, output


def test_an_offer_mpi_cannot_deliver_ends_the_job_in_time_with_the_reason(hosts, tmp_path):
    """Rank 0 runs beside mpirun, in the caller's namespace, whose first
    network (decoy0) no host can reach. OpenMPI's TCP then cannot connect
    it with the others (without btl_tcp_if_include), so MPI's broadcast of
    rank 0's offer would wait forever: the job ends after KOLO_START_TIMEOUT
    with the reason instead."""
    command = _mpirun(hosts)
    command[command.index("-np") + 1] = "3"
    command[command.index("-H") + 1] = f"localhost:1,{hosts.addresses[0]}:2"
    result, output = _run_in_caller(
        hosts, command + [sys.executable, _script(tmp_path), hosts.caller_address],
        _clean_env(KOLO_START_TIMEOUT="8"))
    assert result.returncode != 0, output
    assert "MPI did not carry rank 0's rendezvous offer within 8000 ms" in output, output
    assert "btl_tcp_if_include" in output, output
    assert "RANK" not in result.stdout, output


def test_rank_zero_beside_mpirun_is_reached_past_an_unreachable_first_network(hosts, tmp_path):
    """The same job with MPI's own TCP told which network the hosts share:
    the others skip rank 0's first address (decoy0) to reach its store,
    and the mesh takes the network on which they reached it."""
    command = _mpirun(hosts)
    command[command.index("-np") + 1] = "3"
    command[command.index("-H") + 1] = f"localhost:1,{hosts.addresses[0]}:2"
    command += ["--mca", "btl_tcp_if_include", "198.19.0.0/24", "-x", "KOLO_LOG_LEVEL"]
    result, output = _run_in_caller(
        hosts, command + [sys.executable, _script(tmp_path), hosts.caller_address],
        _clean_env(KOLO_LOG_LEVEL="debug"))
    assert result.returncode == 0, output
    ranks = re.findall(r"RANK (\d) SIZE 3 LOCAL (\d)/(\d) CROSS (\d)/2 HOST (\S+) SUM 6 ", output)
    assert sorted(ranks) == [("0", "0", "1", "0", hosts.caller_address),
                             ("1", "0", "2", "1", hosts.addresses[0]),
                             ("2", "1", "2", "1", hosts.addresses[0])], output
    assert re.search(rf"offered its rendezvous store over MPI at port \d+ on "
                     rf"{re.escape(hosts.decoy_address)}, {re.escape(hosts.caller_address)}",
                     output), output
    assert re.search(rf"rank 1 reached rank 0's rendezvous store at "
                     rf"{re.escape(hosts.caller_address)}:", output), output
