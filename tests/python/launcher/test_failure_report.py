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


def run(tmp_path, stop_jobs, mode, np_=3, want_rc=1):
    marker = f"report-{uuid.uuid4().hex[:12]}"
    job = Job(["-np", np_, sys.executable, WORKER, mode, marker], tmp_path, env=job_env(),
              marker=marker)
    stop_jobs.append(job)
    rc = job.wait(timeout=60)
    assert rc == want_rc, job.report()
    lines = job.kolorun_lines()
    return (lines[-1] if lines else ""), job.report()


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


def test_a_failure_after_elastic_run_retried_past_a_mismatch_is_named(tmp_path, stop_jobs):
    # kolo.elastic.run answers the mismatch by leaving that engine and
    # starting another one in the same process; the program going on in the
    # new engine withdraws what the old one reported.
    last, context = run(tmp_path, stop_jobs, "rejoin", np_=2)
    assert "went on in a new engine" in context, context
    assert "Mismatched data types for allreduce of tensor 'fatal'" in last, context
    assert CAUGHT not in last, context
    # Outside an elastic job a second failure from the same commit ends the
    # loop (the same world and state would fail the same way forever).
    assert context.count("giving up: Mismatched data types") == 2, context


def test_elastic_run_retries_each_failure_that_follows_a_commit(tmp_path, stop_jobs):
    _, context = run(tmp_path, stop_jobs, "commits", np_=2, want_rc=0)
    assert context.count("finished after two retries") == 2, context
    assert "giving up" not in context, context


def test_operations_submitted_before_the_program_looks_keep_the_mismatch_named(
        tmp_path, stop_jobs):
    last, context = run(tmp_path, stop_jobs, "async", np_=2)
    assert "Mismatched shapes for allreduce of tensor 'first'" in last, context
