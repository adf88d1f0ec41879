"""The engine's output cache (KOLO_OUTPUT_CACHE) in real kolorun jobs: it stays
within its limit, and out-of-place results stop faulting in fresh pages
once it is on (with it off every 64 MB call faults in its 16384 pages, which
shows the count measures what it should). bench/torch_out_of_place.py runs
and checks its results. Speed is not checked here."""

import os
import re
import subprocess
import sys

from elastic_job import job_env, kolorun

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
JOB = os.path.join(HERE, "output_cache_job.py")
PAGES_OF_64MB = 64 * 1024 * 1024 // 4096


def run_job(args, **env):
    job = subprocess.run([kolorun(), "-np", "2", sys.executable, *args], capture_output=True,
                         text=True, timeout=180, cwd=REPO, env=job_env(**env))
    report = f"exit status {job.returncode}\nstdout:\n{job.stdout}\nstderr:\n{job.stderr}"
    return job, report


def faults(**env):
    job, report = run_job([JOB, "faults"], **env)
    assert job.returncode == 0, report
    counts = re.findall(r"^\[\d\]<stdout>:faults per call: (\d+)$", job.stdout, re.MULTILINE)
    assert len(counts) == 2, report
    return [int(c) for c in counts], report


def test_cache_stays_within_its_limit():
    limit = 1024 * 1024
    job, report = run_job([JOB, "bound", str(limit)], KOLO_OUTPUT_CACHE="1M")
    assert job.returncode == 0, report
    assert job.stdout.count("bound ok") == 2, report


def test_out_of_place_outputs_fault_in_no_fresh_pages():
    cached, report = faults()
    assert max(cached) < PAGES_OF_64MB // 16, report
    uncached, report = faults(KOLO_OUTPUT_CACHE="0")
    assert min(uncached) >= PAGES_OF_64MB * 9 // 10, report


def test_out_of_place_bench_prints_a_row_per_size():
    job, report = run_job([os.path.join(REPO, "bench", "torch_out_of_place.py"), "--sizes",
                           "64K,1M", "--iters", "3"])
    assert job.returncode == 0, report
    rows = re.findall(r"^\[0\]<stdout>:\s+(\d+)(?:\s+[0-9.]+){3}\s+\d+\s+\d+$", job.stdout,
                      re.MULTILINE)
    assert rows == ["65536", "1048576"], report


def test_a_bad_cache_size_is_one_clear_error():
    job, report = run_job([JOB, "faults"], KOLO_OUTPUT_CACHE="lots")
    assert job.returncode != 0, report
    assert "KOLO_OUTPUT_CACHE" in job.stdout + job.stderr, report
