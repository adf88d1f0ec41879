"""kolorun --mpi: the system's mpirun starts the ranks, kolorun hosts the
rendezvous store. Real mpirun (OpenMPI), real ranks, a real allreduce.

The allreduce tests need each rank to take its layout from OpenMPI's
OMPI_COMM_WORLD_* variables (the core's detection of foreign launchers);
mpirun cannot hand each rank its own KOLO_RANK.
"""

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest

pytestmark = pytest.mark.skipif(shutil.which("mpirun") is None, reason="needs OpenMPI's mpirun")

ALLREDUCE = textwrap.dedent("""
    import os

    import numpy as np
    import kolo.numpy as hvd

    hvd.init()
    total = hvd.allreduce(np.array([hvd.rank() + 1.0]), op=hvd.Sum)
    os.write(1, f"rank {hvd.rank()} of {hvd.size()} total {float(total[0])}\\n".encode())
    hvd.shutdown()
""")


def launcher(name):
    path = os.path.join(os.path.dirname(sys.executable), name)
    assert os.path.exists(path), f"{name} is not installed beside {sys.executable}"
    return path


def run(args, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, timeout=120, **kwargs)


def rank_lines(stdout):
    # mpirun --tag-output writes "[1,R]<stdout>:line".
    return sorted(line.split(":", 1)[1] for line in stdout.splitlines() if "<stdout>:" in line)


def test_kolorun_mpi_runs_an_allreduce():
    job = run([launcher("kolorun"), "--mpi", "-np", "2", sys.executable, "-c", ALLREDUCE])
    assert job.returncode == 0, job.stdout + job.stderr
    assert rank_lines(job.stdout) == ["rank 0 of 2 total 3.0", "rank 1 of 2 total 3.0"], job.stdout


def test_horovodrun_mpi_args_alone_mean_mpirun(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(ALLREDUCE)
    job = run([launcher("horovodrun"), "-np", "2", "--mpi-args", "--tag-output",
               sys.executable, str(script)])
    assert job.returncode == 0, job.stdout + job.stderr
    assert rank_lines(job.stdout) == ["rank 0 of 2 total 3.0", "rank 1 of 2 total 3.0"], job.stdout


def test_ranks_get_the_store_and_settings_but_no_kolo_layout():
    # One write per line: mpirun tags every chunk it reads.
    show = ("import os; e = os.environ; os.write(1, ' '.join(str(v) for v in ("
            "e['OMPI_COMM_WORLD_RANK'], e.get('KOLO_RANK'), e['KOLO_CYCLE_TIME'], e['MY_VAR'], "
            "bool(e['KOLO_SECRET']), e['KOLO_RENDEZVOUS_PORT'].isdigit())).encode() + b'\\n')")
    job = run([launcher("kolorun"), "--mpi", "-np", "2", "--cycle-time-ms", "3", "-x", "MY_VAR=v",
               "--verbose", sys.executable, "-c", show])
    assert job.returncode == 0, job.stdout + job.stderr
    assert rank_lines(job.stdout) == ["0 None 3 v True True", "1 None 3 v True True"], job.stdout
    # --verbose prints the mpirun command; the secret's value is not in it.
    command = [line for line in job.stderr.splitlines() if "mpirun" in line]
    assert command and "-x KOLO_SECRET" in command[0] and "-np 2" in command[0], job.stderr


def test_exit_code_is_mpiruns():
    job = run([launcher("kolorun"), "--mpi", "-np", "2", sys.executable, "-c",
               "import sys; sys.exit(3)"])
    assert job.returncode == 3, job.stdout + job.stderr
    assert "kolorun: mpirun exited with code 3" in job.stderr, job.stderr


def test_sigterm_reaches_the_ranks_through_mpirun(tmp_path):
    marker = tmp_path / "started"
    wait = (f"import os, time; open('{marker}' + os.environ['OMPI_COMM_WORLD_RANK'], 'w').close(); "
            "time.sleep(60)")
    job = subprocess.Popen([launcher("kolorun"), "--mpi", "-np", "2", sys.executable, "-c", wait],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not all((tmp_path / f"started{r}").exists() for r in range(2)):
            assert time.monotonic() < deadline, "the ranks did not start"
            assert job.poll() is None, job.communicate()
            time.sleep(0.1)
        job.send_signal(signal.SIGTERM)
        out, err = job.communicate(timeout=30)
    finally:
        if job.poll() is None:
            job.kill()
            job.wait(timeout=10)
    assert job.returncode == 128 + signal.SIGTERM, out + err


def test_without_mpirun_one_line_and_exit_2(tmp_path):
    env = dict(os.environ, PATH=str(tmp_path))
    for flags in (["--mpi"], ["--mpi-args", "--tag-output"]):
        job = run([launcher("kolorun"), "-np", "2", *flags, sys.executable, "-c", "pass"], env=env)
        assert job.returncode == 2, job.stderr
        assert job.stderr == f"kolorun: {flags[0]} needs mpirun, which is not in PATH\n"
