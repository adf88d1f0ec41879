"""horovodrun's flags through the real horovodrun/kolorun binaries: a sample
of tests/unit/runner/horovodrun_flags_test.cc's table, end to end (what the
ranks see, what kolorun prints, the exit code)."""

import os
import sys

import pytest

from test_mpi_launch import launcher, run

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SHOW = ("import os; print(' '.join(os.environ.get(n, '-') for n in "
        "('KOLO_RANK', 'KOLO_SIZE', 'KOLO_HIERARCHICAL_ALLREDUCE', 'KOLO_LOG_HIDE_TIME', "
        "'KOLO_TIMEOUT_SECONDS', 'KOLO_TIMELINE_MARK_CYCLES')))")


def outputs(stdout):
    return sorted(line.split(":", 1)[1] for line in stdout.splitlines() if "<stdout>:" in line)


def test_abbreviations_and_horovod_switches_reach_the_ranks():
    job = run([launcher("horovodrun"), "-n", "2", "--verb", "--hierarchical-allreduce",
               "--log-without-timestamp", "--gloo-timeout-seconds", "45", "--no-autotune",
               "--tcp", "--disable-cache", "--no-timeline-mark-cycles", "--gloo",
               sys.executable, "-c", SHOW])
    assert job.returncode == 0, job.stderr
    assert outputs(job.stdout) == ["0 2 1 1 45 0", "1 2 1 1 45 0"], job.stdout
    assert "rank 1: host localhost" in job.stderr  # --verb is --verbose


def test_horovods_config_test_file_is_accepted():
    config = os.path.join(REPO, "tests", "unit", "runner", "data", "horovod_config.test.yaml")
    job = run([launcher("horovodrun"), "-np", "1", "--config-file", config, sys.executable, "-c",
               SHOW])
    assert job.returncode == 0, job.stderr
    assert outputs(job.stdout) == ["0 1 1 1 60 1"], job.stdout
    warnings = [line for line in job.stderr.splitlines() if line.startswith("kolorun: warning:")]
    assert len(warnings) == 2, job.stderr  # NCCL streams, thread affinity
    assert "Kolo has no NCCL" in warnings[0]


@pytest.mark.parametrize("flags, warning", [
    (["--max-np", "4"], "--max-np applies only to elastic jobs"),
    (["--torus-allreduce"], "Kolo has no torus allreduce"),
    (["--binding-args", "--bind-to core"], "--binding-args applies only with --mpi"),
])
def test_accepted_with_one_warning(flags, warning):
    job = run([launcher("kolorun"), "-np", "1", *flags, sys.executable, "-c", "pass"])
    assert job.returncode == 0, job.stderr
    assert job.stderr.count("kolorun: warning:") == 1 and warning in job.stderr, job.stderr


@pytest.mark.parametrize("flags, line", [
    (["--jsrun"], "kolorun: --jsrun needs IBM's jsrun, which is not in PATH"),
    (["--log"], "kolorun: ambiguous option --log: could be --log-level, --log-without-timestamp, "
                "--log-hide-timestamp, --log-with-timestamp"),
    (["--autotune", "--no-autotune"],
         "kolorun: --autotune and --no-autotune cannot be given together"),
    (["--hierarchical-allgather", "--no-hierarchical-allgather"],
     "kolorun: --hierarchical-allgather and --no-hierarchical-allgather cannot be given together"),
])
def test_refused_with_one_line_and_exit_2(tmp_path, flags, line):
    env = dict(os.environ, PATH=str(tmp_path))  # no jsrun here
    job = run([launcher("kolorun"), "-np", "1", *flags, sys.executable, "-c", "pass"], env=env)
    assert job.returncode == 2, job.stderr
    assert line in job.stderr, job.stderr
