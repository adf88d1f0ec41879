"""bench/compare-horovod without Horovod: its round order and commands (--dry-run), its
argument errors, and a real Kolo-only run (--kolo-only --quick) whose table has every row.
Building Horovod is never part of these tests (bench/compare-horovod/run.sh does that); speed
is not checked here."""

import os
import re
import subprocess
import sys

from elastic_job import job_env

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))
RUN = os.path.join(REPO, "bench", "compare-horovod", "run.py")
VENV = os.path.dirname(os.path.dirname(sys.executable))


def run(args, timeout):
    job = subprocess.run([sys.executable, RUN, "--kolo-venv", VENV, *args], capture_output=True,
                         text=True, timeout=timeout, cwd=REPO, env=job_env())
    return job, f"exit status {job.returncode}\nstdout:\n{job.stdout}\nstderr:\n{job.stderr}"


def test_dry_run_interleaves_the_same_scripts_under_every_framework(tmp_path):
    job, report = run(["--dry-run", "--horovod-venv", str(tmp_path / "absent")], timeout=60)
    assert job.returncode == 0, report
    lines = job.stdout.splitlines()
    frameworks = [line.split(",")[0] for line in lines]
    assert frameworks == ["Horovod-Gloo", "Horovod-MPI", "Kolo"] * 3 + ["DDP (gloo)"], report
    # One script file per job kind, whatever runs it.
    for script, jobs in (("collectives.py", lines[:3]), ("synthetic_benchmark.py", lines[3:])):
        paths = {re.search(r"(\S+/" + script + ")", line).group(1) for line in jobs}
        assert len(paths) == 1, report
    assert "--gloo" in lines[0] and "--mpi" in lines[1] and "kolorun" in lines[2], report
    assert "--ddp --np 2" in lines[-1], report


def test_bad_arguments_end_with_one_error_line(tmp_path):
    job, report = run(["--rounds", "0"], timeout=60)
    assert job.returncode == 2, report
    assert job.stderr.strip().splitlines()[-1].endswith("must be positive"), report
    job, report = run(["--horovod-venv", str(tmp_path / "absent")], timeout=60)
    assert job.returncode == 2, report
    last = job.stderr.strip().splitlines()[-1]
    assert "not found:" in last and str(tmp_path / "absent" / "bin" / "horovodrun") in last, \
        report


def test_kolo_only_run_writes_the_table(tmp_path):
    out = tmp_path / "results.md"
    job, report = run(["--kolo-only", "--quick", "--rounds", "1", "--out", str(out)], timeout=600)
    assert job.returncode == 0, report
    text = out.read_text()
    assert text.strip() == job.stdout.strip(), report
    header = "| median over rounds | Kolo | DDP (gloo) | Kolo vs DDP |"
    assert header in text, report
    rows = [line for line in text.splitlines() if line.startswith("| ") and line != header]
    # Eight collective rows (Kolo only) and the synthetic benchmark on 1 and 2 ranks.
    assert len(rows) == 10, report
    for row in rows[:8]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert float(cells[1]) > 0 and cells[2] == "-", report
    two_ranks = [c.strip() for c in rows[9].strip("|").split("|")]
    assert float(two_ranks[1]) > 0 and float(two_ranks[2]) > 0, report
    assert re.fullmatch(r"[0-9.]+×", two_ranks[3]), report
    assert "64 MB out of place / in place" in text, report
