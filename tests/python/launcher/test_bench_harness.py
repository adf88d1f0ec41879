"""The comparison harnesses of bench/ on a tiny alltoall: the gloo harness checks its own
results (`#wrong`, exit status) under kolo-bench's size convention, and bench/compare runs
Kolo and gloo side by side and prints the alltoall table. The process-set harness runs under
kolorun and checks its own results; the fused-alignment harness prints a ratio per gradient set.
Speed is not checked here."""

import os
import re
import shutil
import subprocess
import sys

import pytest

from elastic_job import job_env, kolorun

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))
BENCH = os.path.join(REPO, "bench")


def run(args, timeout):
    job = subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=REPO)
    return job, f"exit status {job.returncode}\nstdout:\n{job.stdout}\nstderr:\n{job.stderr}"


def table_rows(text):
    """(size, count, #wrong) of every result line of an nccl-tests table."""
    rows = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) == 9 and fields[0].isdigit():
            rows.append((int(fields[0]), int(fields[1]), int(fields[8])))
    return rows


def test_gloo_harness_alltoall_is_checked_and_sized_like_kolo_bench():
    job, report = run([sys.executable, os.path.join(BENCH, "torch_collective_bench.py"), "--np",
                       "3", "alltoall", "-b", "1K", "-e", "16K", "-f", "4", "-n", "2", "-w", "1",
                       "-c", "1"], timeout=120)
    assert job.returncode == 0, report
    rows = table_rows(job.stdout)
    assert [size for size, _, _ in rows] == [1020, 4092, 16380], report  # 3 whole-float blocks
    for size, count, wrong in rows:
        assert wrong == 0, report
        assert count * 4 == size, report  # what each rank sends, in float32 elements


def test_compare_prints_the_alltoall_table():
    job, report = run([os.path.join(BENCH, "compare"), "--tools", "kolo,gloo", "--collectives",
                       "alltoall", "--np", "2", "-b", "1K", "-e", "4K", "-f", "4", "-n", "2",
                       "-w", "1", "-r", "1", "--wait-idle", "0"], timeout=180)
    assert job.returncode == 0, report
    assert "## alltoall, 2 ranks (size: what each rank sends)" in job.stdout, report
    sizes = re.findall(r"^\s+(\d+)\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+$",
                       job.stdout, re.MULTILINE)
    assert sizes == ["1024", "4096"], report


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="mpirun is not installed")
def test_compare_runs_kolo_over_its_mpi_backend_beside_openmpi():
    job, report = run([os.path.join(BENCH, "compare"), "--tools", "mpi,kolo-mpi", "--collectives",
                       "allreduce", "--np", "2", "-b", "1K", "-e", "4K", "-f", "4", "-n", "2",
                       "-w", "1", "-r", "1", "--wait-idle", "0"], timeout=180)
    assert job.returncode == 0, report
    assert "kolo-mpi/mpi" in job.stdout and "Kolo over MPI busbw" in job.stdout, report
    sizes = re.findall(r"^\s+(\d+)(?:\s+[0-9.]+){5}$", job.stdout, re.MULTILINE)
    assert sizes == ["1024", "4096"], report


def test_process_set_bench_prints_a_row_per_size():
    args = [kolorun(), "-np", "2", sys.executable, os.path.join(BENCH, "process_set_bench.py"),
            "--sizes", "16K,1M", "--iters", "3"]
    job = subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=REPO,
                         env=job_env())
    report = f"exit status {job.returncode}\nstdout:\n{job.stdout}\nstderr:\n{job.stderr}"
    assert job.returncode == 0, report
    rows = re.findall(r"^\[0\]<stdout>:\s+(\d+)\s+[0-9.]+\s+[0-9.]+$", job.stdout, re.MULTILINE)
    assert rows == ["16384", "1048576"], report


def test_fused_alignment_bench_prints_a_ratio_per_gradient_set():
    args = [kolorun(), "-np", "2", sys.executable, os.path.join(BENCH, "torch_fused_alignment.py"),
            "--rounds", "1"]
    job = subprocess.run(args, capture_output=True, text=True, timeout=180, cwd=REPO,
                         env=job_env())
    report = f"exit status {job.returncode}\nstdout:\n{job.stdout}\nstderr:\n{job.stderr}"
    assert job.returncode == 0, report
    rows = re.findall(r"^\[0\]<stdout>:(\S+): [0-9.]+ ms, raw [0-9.]+ ms, [0-9.]+x$", job.stdout,
                      re.MULTILINE)
    assert rows == ["resnet50", "resnet50_large_only", "160_equal_odd", "two_halves"], report
