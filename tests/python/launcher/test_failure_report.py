"""kolorun's last line names what ended the job, not an error the program
caught and survived (src/rendezvous/failure_report.h,
src/core/program_progress.h): tests and programs provoke a mismatch on
purpose, catch it and go on, and a later failure must not be blamed on it."""

import os
import sys
import uuid

from elastic_job import Job, job_env
from test_elastic import stop_jobs  # noqa: F401  (the fixture)

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "survived_error_worker.py")
CAUGHT = "Mismatched shapes for allreduce of tensor 'caught'"


def run(tmp_path, stop_jobs, mode, np_=3):
    marker = f"report-{uuid.uuid4().hex[:12]}"
    job = Job(["-np", np_, sys.executable, WORKER, mode, marker], tmp_path, env=job_env(),
              marker=marker)
    stop_jobs.append(job)
    rc = job.wait(timeout=60)
    assert rc == 1, job.report()
    return job.kolorun_lines()[-1], job.report()


def test_a_later_mismatch_is_named_not_the_one_caught_before(tmp_path, stop_jobs):
    last, context = run(tmp_path, stop_jobs, "mismatch")
    assert "went on" in context, context
    assert "Mismatched data types for allreduce of tensor 'fatal'" in last, context
    assert CAUGHT not in last, context


def test_a_program_error_after_a_caught_mismatch_is_not_blamed_on_it(tmp_path, stop_jobs):
    last, context = run(tmp_path, stop_jobs, "python")
    assert "went on" in context and "the program's own failure" in context, context
    assert last.startswith("kolorun: job failed: rank ") and "exited with code 1" in last, context
    assert "Mismatched" not in last, context


def test_operations_submitted_before_the_program_looks_keep_the_mismatch_named(
        tmp_path, stop_jobs):
    last, context = run(tmp_path, stop_jobs, "async", np_=2)
    assert "Mismatched shapes for allreduce of tensor 'first'" in last, context
