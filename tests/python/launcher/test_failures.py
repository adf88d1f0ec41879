"""A rank that dies mid-job: the survivors' pending operation fails with
KoloInternalError naming the lost rank, instead of hanging. Real processes
under kolorun; the survivor ignores kolorun's SIGTERM long enough to report
what it saw into a file."""

import os
import subprocess
import sys
import textwrap

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))

SCRIPT = textwrap.dedent("""
    import os, signal, sys, time
    import torch
    import kolo.torch as hvd

    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # report before kolorun's SIGKILL
    hvd.init()
    report = os.path.join(sys.argv[1], f"rank{hvd.rank()}.txt")
    hvd.allreduce(torch.ones(4), name="warmup")
    if hvd.rank() == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    started = time.monotonic()
    try:
        hvd.allreduce(torch.ones(1 << 16), name="grad.fc1.weight")
        outcome = "no error"
    except hvd.KoloInternalError as e:
        outcome = f"KoloInternalError after {time.monotonic() - started:.1f}s: {e}"
    except Exception as e:
        outcome = f"{type(e).__name__}: {e}"
    with open(report, "w") as f:
        f.write(outcome)
""")


def kolorun():
    beside = os.path.join(os.path.dirname(sys.executable), "kolorun")
    return beside if os.path.exists(beside) else os.path.join(REPO, "python", "kolo", "bin",
                                                              "kolorun")


@pytest.mark.parametrize("np_", [2, 3])
def test_killed_rank_fails_survivors_with_its_name(tmp_path, np_):
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    job = subprocess.run([kolorun(), "-np", str(np_), sys.executable, str(script), str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert job.returncode != 0, job.stdout + job.stderr
    assert "rank 1" in job.stderr, job.stderr
    for rank in [0] + list(range(2, np_)):
        outcome = (tmp_path / f"rank{rank}.txt").read_text()
        assert outcome.startswith("KoloInternalError"), outcome
        assert "rank 1" in outcome, outcome
    assert not (tmp_path / "rank1.txt").exists()


def test_survivors_name_the_lost_rank_by_the_host_given_to_kolorun(tmp_path):
    # 127.0.0.2 is this machine, started without ssh, but a host of its own to
    # kolorun; the error must say so instead of the machine's hostname.
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    hosts = "127.0.0.1:1,127.0.0.2:1,127.0.0.3:1"
    job = subprocess.run([kolorun(), "-np", "3", "-H", hosts, sys.executable, str(script),
                          str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert job.returncode != 0, job.stdout + job.stderr
    for rank, host in ((0, "127.0.0.1"), (2, "127.0.0.3")):
        outcome = (tmp_path / f"rank{rank}.txt").read_text()
        assert outcome.startswith("KoloInternalError"), outcome
        assert "rank 1 (host 127.0.0.2)" in outcome, outcome


@pytest.mark.parametrize("np_", [1, 2])
@pytest.mark.parametrize("where", ["missing directory", "a directory", "no permission"])
def test_unwritable_timeline_path_fails_init_naming_it(tmp_path, np_, where):
    if where == "missing directory":
        path = tmp_path / "missing" / "timeline.json"
    elif where == "a directory":
        path = tmp_path
    elif os.geteuid() == 0:
        path = "/proc/self/timeline.json"  # root may write anywhere else
    else:
        readonly = tmp_path / "readonly"
        readonly.mkdir(mode=0o555)
        path = readonly / "timeline.json"
    job = subprocess.run([kolorun(), "-np", str(np_), "--timeline-filename", str(path),
                          sys.executable, "-c", "import kolo.numpy as hvd; hvd.init()"],
                         capture_output=True, text=True, timeout=120)
    assert job.returncode == 1, job.stderr
    assert f"timeline: cannot open '{path}'" in job.stderr, job.stderr
    assert "terminate called" not in job.stderr, job.stderr
    assert "signal 6" not in job.stderr, job.stderr


@pytest.mark.parametrize("kind", ["shape", "dtype"])
def test_a_mismatch_that_ends_the_job_is_named_in_kolorun_last_line(tmp_path, kind):
    # Every rank fails with the same error and exits 1; kolorun's last line
    # used to say only which rank exited first.
    worker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fault_worker.py")
    job = subprocess.run([kolorun(), "-np", "3", sys.executable, worker, str(tmp_path),
                          "--mismatch", f"{kind}:2"], capture_output=True, text=True, timeout=120)
    assert job.returncode == 1, job.stderr
    reports = {(tmp_path / f"rank{r}.txt").read_text().split(": ", 1)[1] for r in range(3)}
    assert len(reports) == 1, reports
    cause = reports.pop()
    assert "Mismatched" in cause and "'grad.1'" in cause, cause
    last = [line for line in job.stderr.splitlines() if line.startswith("kolorun: ")][-1]
    assert last.startswith("kolorun: job failed: rank ") and cause in last, job.stderr


def test_a_rank_that_has_joined_gets_the_error_of_the_operation_refused(tmp_path):
    # Rank 1 joins while the others broadcast, which the coordinator refuses
    # while a rank has joined. The joined rank submitted nothing, and its
    # join() used to end only with "Kolo has been shut down".
    worker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fault_worker.py")
    job = subprocess.run([kolorun(), "-np", "3", sys.executable, worker, str(tmp_path),
                          "--mismatch", "joined:1"], capture_output=True, text=True, timeout=120)
    assert job.returncode == 1, job.stderr
    reports = {r: (tmp_path / f"rank{r}.txt").read_text().split(": ", 1)[1] for r in range(3)}
    cause = "broadcast of tensor 'grad.1' cannot run while rank 1 has joined"
    assert all(cause in text for text in reports.values()), reports
    assert len(set(reports.values())) == 1, reports
    last = [line for line in job.stderr.splitlines() if line.startswith("kolorun: ")][-1]
    assert cause in last, job.stderr
