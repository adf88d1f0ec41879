"""kolorun against bad input and hostile conditions, with real processes:
input it must refuse with one line and exit code 2 before starting
anything (-H "", an -np no host could hold, a program path that leads
nowhere, a hostfile line of garbage), ranks it cannot start (fork refused:
it stops at the first, ends the ranks already started and says so in one
line), and processes the ranks start in the background, which must not
outlive the job, also when kolorun itself is killed with SIGKILL. The ranks
here are shell scripts: none of this needs the engine."""

import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from elastic_job import kolorun


def run(args, timeout=60, **kwargs):
    started = time.monotonic()
    job = subprocess.run([kolorun()] + [str(a) for a in args], capture_output=True, text=True,
                         timeout=timeout, **kwargs)
    return job, time.monotonic() - started


def alive(pid):
    """Running (a zombie or a reused pid with another command line is not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def kill_all(pids):
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def wait_gone(pids, limit):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


# --- input refused before anything starts ---------------------------------

@pytest.mark.parametrize("args, line", [
    (["-np", "1", "-H", "", "true"], "kolorun: -H: no hosts given"),
    (["-np", "100000", "true"],
     "kolorun: -np 100000 without -H or --hostfile would start 100000 ranks on this host"),
    (["-np", "2", "./no-such-program"], "kolorun: ./no-such-program: no executable file there"),
    (["-np", "1", "--stall-check-warning-time-seconds", "100",
      "--stall-check-shutdown-time-seconds", "10", "true"],
     "kolorun: KOLO_STALL_SHUTDOWN_TIME_SECONDS (10 s) must be 0 or at least "
     "KOLO_STALL_CHECK_TIME_SECONDS (100 s)"),
])
def test_input_that_cannot_be_right_is_one_line_and_exit_code_2(tmp_path, args, line):
    job, took = run(args, cwd=tmp_path)
    assert job.returncode == 2, job.stderr
    assert job.stdout == ""
    lines = job.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(line), job.stderr
    assert took < 10


def test_a_hostfile_line_of_garbage_is_quoted_short_and_escaped(tmp_path):
    hostfile = tmp_path / "hosts"
    hostfile.write_bytes(b"localhost slots=1 " + b"\x1b[2J" + b"x" * 100_000 + b"\n")
    job, _ = run(["-np", "1", "--hostfile", hostfile, "true"])
    assert job.returncode == 2, job.stderr[:500]
    lines = job.stderr.splitlines()
    assert len(lines) == 1 and len(lines[0]) < 400, lines[0][:500]
    assert "\x1b" not in job.stderr and "\\x1b[2J" in job.stderr
    assert "(100022 bytes)" in lines[0], lines[0]  # the line without its newline


# --- ranks that cannot be started -----------------------------------------

def world_readable_dir():
    path = tempfile.mkdtemp(prefix="kolo-fork-")
    os.chmod(path, 0o755)
    return path


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root to run kolorun as another user with a process limit")
def test_when_fork_fails_kolorun_stops_at_once_and_says_so_in_one_line():
    # RLIMIT_NPROC does not bind root, so kolorun runs as nobody, whose
    # limit leaves room for a few ranks of the 40 asked for.
    nobody = pwd.getpwnam("nobody")
    workdir = world_readable_dir()
    try:
        rank = os.path.join(workdir, "rank.sh")
        with open(rank, "w") as f:
            f.write("exec sleep 60\n")
        started = time.monotonic()
        job = subprocess.run(["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}",
                              "--clear-groups", "prlimit", "--nproc=24", kolorun(), "-np", "40",
                              "-H", "localhost:40", "/bin/sh", rank],
                             capture_output=True, text=True, timeout=60, cwd=workdir)
        took = time.monotonic() - started
        lines = job.stderr.splitlines()
        assert job.returncode == 1, job.stderr
        # The refused fork is kolorun's own (it then says so itself) or that
        # of a rank's supervisor (which says so on the rank's stderr, and
        # the rank exits 127); either way the launch stops there.
        assert len(lines) <= 3, job.stderr
        last = lines[-1]
        assert (last.startswith("kolorun: job failed: cannot start rank ")
                and "started before it were stopped" in last) or (
                last.startswith("kolorun: job failed: rank ")
                and last.endswith("exited with code 127")), job.stderr
        assert took < 15, job.stderr
        left = subprocess.run(["pgrep", "-f", rank], capture_output=True, text=True).stdout
        assert left == "", f"ranks left running: {left}"
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


# --- nothing a rank started outlives the job ------------------------------

BACKGROUND = """
# A child in the rank's process group and one that left it (setsid).
sleep 300 & echo $! > "$1/child.$KOLO_RANK"
setsid sh -c 'echo $$ > "$0/daemon.$KOLO_RANK.tmp"; mv "$0/daemon.$KOLO_RANK.tmp" \
    "$0/daemon.$KOLO_RANK"; exec sleep 300' "$1" &
while [ ! -e "$1/daemon.$KOLO_RANK" ]; do sleep 0.01; done
"""


def background_pids(directory, np_, limit=20):
    names = [f"{kind}.{r}" for kind in ("child", "daemon") for r in range(np_)]
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            pids = [int((directory / n).read_text()) for n in names]
            return pids
        except (OSError, ValueError):
            time.sleep(0.05)
    raise AssertionError(f"the ranks did not record their background processes in {limit} s")


def test_processes_a_rank_started_end_when_kolorun_is_killed(tmp_path):
    rank = tmp_path / "rank.sh"
    rank.write_text(BACKGROUND + "exec sleep 300\n")
    job = subprocess.Popen([kolorun(), "-np", "2", "/bin/sh", str(rank), str(tmp_path)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)
    pids = []
    try:
        pids = background_pids(tmp_path, 2)
        job.kill()
        job.wait(timeout=10)
        left = wait_gone(pids, limit=10)
        assert left == [], f"still running after kolorun was killed: {left}"
    finally:
        job.kill()
        kill_all(pids)


def test_processes_a_rank_started_end_with_the_job(tmp_path):
    rank = tmp_path / "rank.sh"
    rank.write_text(BACKGROUND + "exit 0\n")
    job, _ = run(["-np", "2", "/bin/sh", rank, tmp_path])
    pids = background_pids(tmp_path, 2, limit=1)
    try:
        assert job.returncode == 0, job.stderr
        left = wait_gone(pids, limit=10)
        assert left == [], f"still running after the job ended: {left}"
    finally:
        kill_all(pids)


def test_processes_of_a_rank_that_ignores_sigterm_end_with_it_after_the_grace(tmp_path):
    rank = tmp_path / "rank.sh"
    rank.write_text("trap '' TERM\n" + BACKGROUND + "while :; do sleep 0.1; done\n")
    job = subprocess.Popen([kolorun(), "-np", "2", "/bin/sh", str(rank), str(tmp_path)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    pids = []
    try:
        pids = background_pids(tmp_path, 2)
        job.send_signal(signal.SIGTERM)
        _, err = job.communicate(timeout=30)  # 5 s of grace, then SIGKILL
        assert job.returncode == 128 + signal.SIGTERM, err
        left = wait_gone(pids, limit=10)
        assert left == [], f"still running after the job was killed: {left}\n{err}"
    finally:
        job.kill()
        kill_all(pids)


# A rank that records its supervisor (its parent), starts BACKGROUND's two
# processes and ignores SIGTERM, so only its supervisor's kill ends its tree.
SUPERVISED = ("trap '' TERM\necho $PPID > \"$1/supervisor.$KOLO_RANK\"\n" + BACKGROUND
              + "while :; do sleep 0.1; done\n")


def start_with_stopped_supervisors(directory, np_):
    """kolorun with `np_` SUPERVISED ranks, once each has started its
    background processes and its supervisor has been SIGSTOPped; returns
    (kolorun's Popen, the supervisors' pids, every pid of the ranks' trees)."""
    rank = directory / "rank.sh"
    rank.write_text(SUPERVISED)
    job = subprocess.Popen([kolorun(), "-np", str(np_), "/bin/sh", str(rank), str(directory)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    try:
        pids = background_pids(directory, np_)
        supervisors = [int((directory / f"supervisor.{r}").read_text()) for r in range(np_)]
        for pid in supervisors:
            os.kill(pid, signal.SIGSTOP)
    except BaseException:
        job.kill()
        raise
    return job, supervisors, pids + supervisors


def test_a_stopped_supervisor_still_ends_its_ranks_tree_when_kolorun_stops_the_job(tmp_path):
    # A stopped process acts on no signal but SIGKILL until continued; the
    # supervisor's kill request (a real-time signal, after the grace period)
    # must still reach it, or the daemon that left the rank's group survives
    # the group SIGKILL that follows. kolorun continues the group after
    # each signal it sends.
    job, _, pids = start_with_stopped_supervisors(tmp_path, 2)
    try:
        job.send_signal(signal.SIGTERM)
        _, err = job.communicate(timeout=30)  # 5 s of grace, then the supervisors' kill
        left = wait_gone(pids, limit=10)
        assert left == [], f"still running after the job was stopped: {left}\n{err}"
    finally:
        job.kill()
        kill_all(pids)


def test_a_supervisor_stopped_when_kolorun_is_killed_ends_the_tree_once_continued(tmp_path):
    # Nothing runs to act while the supervisor is stopped and kolorun is
    # gone; the parent-death signal waits pending, and the tree ends as soon
    # as anyone continues the supervisor (it is not lost).
    job, supervisors, pids = start_with_stopped_supervisors(tmp_path, 2)
    try:
        job.kill()
        job.wait(timeout=10)
        for pid in supervisors:
            os.kill(pid, signal.SIGCONT)
        left = wait_gone(pids, limit=10)
        assert left == [], f"still running after the supervisors were continued: {left}"
    finally:
        job.kill()
        kill_all(pids)


def test_a_rank_killed_by_a_signal_is_reported_as_such_through_its_supervisor(tmp_path):
    rank = tmp_path / "rank.sh"
    rank.write_text('if [ "$KOLO_RANK" = 1 ]; then kill -9 $$; fi; exec sleep 30\n')
    job, took = run(["-np", "2", "/bin/sh", rank])
    assert job.returncode == 1, job.stderr
    assert job.stderr.splitlines()[-1] == (
        "kolorun: job failed: rank 1 (host localhost) was killed by signal 9 (SIGKILL)"), job.stderr
    assert took < 20


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


def test_a_stopped_rank_acts_on_kolorun_sigterm_at_once(tmp_path):
    # A frozen (SIGSTOPped) process acts on no signal but SIGKILL until it
    # is continued: kolorun's SIGTERM used to stay pending until the SIGKILL
    # 5 s later, so the rank's handler never ran. kolorun continues the
    # group after the signal, and the handler runs.
    script = (f"trap 'echo TERM > {tmp_path}/handled.$$; exit 0' TERM; echo rank $$; "
              "while :; do sleep 0.05; done")
    job = subprocess.Popen([kolorun(), "-np", "2", "sh", "-c", script], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        pids = []
        deadline = time.monotonic() + 20
        while len(pids) < 2 and time.monotonic() < deadline:
            line = job.stdout.readline()
            if "rank " in line:
                pids.append(int(line.rsplit(" ", 1)[1]))
        assert len(pids) == 2, "the ranks did not start"
        os.kill(pids[1], signal.SIGSTOP)
        job.send_signal(signal.SIGTERM)
        job.wait(30)
        assert (tmp_path / f"handled.{pids[0]}").exists(), "the running rank's handler never ran"
        assert (tmp_path / f"handled.{pids[1]}").exists(), (
            "the stopped rank's SIGTERM handler never ran")
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.wait(10)
        job.stdout.close()
        job.stderr.close()
