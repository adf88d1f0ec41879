"""Jobs started without kolorun: Debian's OpenMPI mpirun and torch's torchrun
start `python train.py` processes, and each rank takes its place from the
launcher's variables (rank, size, local rank) and meets the others through
a store its rank 0 hosts. A launcher that says N processes gets a world of
N or a clear error, never N worlds of one."""

import os
import re
import shutil
import socket
import subprocess
import sys
import textwrap

import pytest

# Every rank prints its place and the result of one allreduce and one
# allgather; the test checks them against what the launcher was asked for.
_TRAIN = textwrap.dedent("""
    import torch
    import kolo.torch as hvd
    hvd.init()
    total = hvd.allreduce(torch.tensor([float(hvd.rank() + 1)]), op=hvd.Sum)
    gathered = hvd.allgather(torch.tensor([hvd.rank()]))
    print(f"RANK {hvd.rank()} SIZE {hvd.size()} LOCAL {hvd.local_rank()}/{hvd.local_size()} "
          f"CROSS {hvd.cross_rank()}/{hvd.cross_size()} SUM {int(total.item())} "
          f"GATHER {gathered.tolist()}", flush=True)
    hvd.shutdown()
""")


def _clean_env(**extra):
    """This environment without any job of its own around it."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("KOLO_", "HOROVOD_", "OMPI_", "PMIX_", "PMI_", "SLURM_"))
           and k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
    env["KOLO_START_TIMEOUT"] = "30"
    env.update(extra)
    return env


def _script(tmp_path, text=_TRAIN):
    path = tmp_path / "train.py"
    path.write_text(text)
    return str(path)


def _ranks(output):
    lines = re.findall(r"RANK (\d+) SIZE (\d+) LOCAL (\d+)/(\d+) CROSS (\d+)/(\d+) SUM (\d+) "
                       r"GATHER (\[[^]]*\])", output)
    return sorted((tuple(int(x) for x in line[:7]) + (line[7],) for line in lines))


def _expected(size):
    everyone = str(list(range(size)))
    return [(r, size, r, size, 0, 1, size * (size + 1) // 2, everyone) for r in range(size)]


def _mpirun(np):
    command = [shutil.which("mpirun") or "mpirun", "-np", str(np), "--oversubscribe"]
    if os.geteuid() == 0:
        command.append("--allow-run-as-root")
    return command


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="OpenMPI's mpirun is not installed")
@pytest.mark.parametrize("np", [2, 3, 4])
def test_mpirun_forms_one_world_of_np_ranks(tmp_path, np):
    result = subprocess.run(_mpirun(np) + [sys.executable, _script(tmp_path)],
                            capture_output=True, text=True, env=_clean_env(), timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    assert _ranks(result.stdout) == _expected(np), result.stdout + result.stderr


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(shutil.which("torchrun") is None, reason="torchrun is not installed")
def test_torchrun_forms_one_world(tmp_path):
    # Debian 12's torchrun (torch 1.13 on Python 3.11) fails before starting
    # anything with its default --redirects 0 (an enum lookup that Python
    # 3.11 changed); -r 1 -t 1 is the same output through its log files.
    # torchrun is torch.distributed.run; run with the venv's Python, its
    # workers get that Python too (Debian's /usr/bin/torchrun uses its own).
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port", str(_free_port()), "-r", "1", "-t", "1",
               _script(tmp_path)]
    result = subprocess.run(command, capture_output=True, text=True, env=_clean_env(),
                            timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    assert _ranks(result.stdout) == _expected(2), result.stdout + result.stderr


def _alone_as_open_mpi_rank(tmp_path, rank, size, local_rank, local_size, timeout="30"):
    """One process with the variables mpirun would give one of its ranks,
    and no other rank started: what a launcher that lies looks like."""
    env = _clean_env(OMPI_COMM_WORLD_RANK=str(rank), OMPI_COMM_WORLD_SIZE=str(size),
                     OMPI_COMM_WORLD_LOCAL_RANK=str(local_rank),
                     OMPI_COMM_WORLD_LOCAL_SIZE=str(local_size),
                     OMPI_MCA_ess_base_jobid=f"test{os.getpid()}", KOLO_START_TIMEOUT=timeout)
    result = subprocess.run([sys.executable, _script(tmp_path)], capture_output=True, text=True,
                            env=env, timeout=120)
    assert result.returncode != 0, result.stdout
    assert "RANK" not in result.stdout, "trained alone"
    return result.stderr


def test_a_launcher_that_promises_more_ranks_than_start_fails_loudly(tmp_path):
    """Rank 0 of 2, but no rank 1 ever starts: the rank waits for its peer
    and fails with the reason, never trains alone."""
    stderr = _alone_as_open_mpi_rank(tmp_path, 0, 2, 0, 2, timeout="3")
    assert "mpirun (OpenMPI) said it started 2 ranks, but rank(s) 1 did not reach" in stderr, \
        stderr


def test_a_rank_whose_rank_zero_never_comes_names_the_launcher(tmp_path):
    stderr = _alone_as_open_mpi_rank(tmp_path, 1, 2, 1, 2, timeout="2")
    assert "did not find rank 0's rendezvous store" in stderr, stderr
    assert "mpirun (OpenMPI)" in stderr, stderr


def test_bad_launcher_variables_are_refused_by_name(tmp_path):
    stderr = _alone_as_open_mpi_rank(tmp_path, 2, 2, 0, 1)
    assert "rank 2 of 2" in stderr, stderr


_INIT_ONLY = "import kolo.numpy as hvd\nhvd.init()\nprint('INITIALIZED', flush=True)\n"


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="OpenMPI's mpirun is not installed")
@pytest.mark.parametrize("variables, message", [
    ({"KOLO_STALL_CHECK_TIME_SECONDS": "100", "KOLO_STALL_SHUTDOWN_TIME_SECONDS": "10"},
     "KOLO_STALL_SHUTDOWN_TIME_SECONDS (10 s) must be 0 or at least "
     "KOLO_STALL_CHECK_TIME_SECONDS (100 s)"),
    ({"HOROVOD_CYCLE_TIME": "-5"}, "HOROVOD_CYCLE_TIME"),
], ids=["stall warning above shutdown", "out of range"])
def test_a_wrong_setting_under_mpirun_is_one_line_on_each_rank(tmp_path, variables, message):
    # kolorun refuses these before starting anything; mpirun passes them
    # on, and each rank's init() used to end in a ValueError traceback.
    result = subprocess.run(_mpirun(2) + [sys.executable, _script(tmp_path, _INIT_ONLY)],
                            capture_output=True, text=True, env=_clean_env(**variables),
                            timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "INITIALIZED" not in result.stdout, output
    assert "Traceback" not in output, output
    ours = [line for line in result.stderr.splitlines() if line.startswith("kolo: ")]
    assert len(ours) == 2, output
    for line in ours:
        assert line.startswith("kolo: bad setting: ") and message in line, output
