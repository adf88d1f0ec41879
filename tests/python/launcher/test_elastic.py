"""kolorun's elastic mode end to end: real worker processes training a small
PyTorch model with hvd.elastic (elastic_train.py), on three loopback
"hosts" (127.0.0.1, 127.0.0.2, 127.0.0.3: this machine, started without
ssh, but a separate host each to kolorun, so a failure blacklists one).

Each test checks kolorun's exit code, its own message lines and the
workers' JSON-lines logs: which steps were committed, with which weights
(a checksum of the model and optimizer state), in which round, with which
size, and which samples each step processed.
"""

import collections
import os
import re
import sys
import time

import pytest

from elastic_job import (
    LOOPBACK_HOSTS, TRAIN, Job, assert_line, assert_line_matching, assert_third_host_joined,
    commits_in, describe_logs, events, read_logs, write_atomically)

EPOCHS = 2
SAMPLES = 96
BATCH = 4
HOSTS_1_SLOT = ",".join(f"{h}:1" for h in LOOPBACK_HOSTS)
# horovodrun's rule, one failure blacklists the host, for the tests written
# around it (test_elastic_failures.py covers the default threshold).
ONE_FAILURE = ["--elastic-host-failures", "1"]


def train_args(outdir, marker, *options):
    return [sys.executable, TRAIN, outdir, "--marker", marker, "--samples", SAMPLES,
            "--batch-size", BATCH] + list(options)


def start(tmp_path, kolorun_args, *options):
    """Starts kolorun_args + elastic_train.py with `options`; returns
    (job, outdir)."""
    outdir = tmp_path / "out"
    outdir.mkdir()
    marker = f"helper-e2e-{os.getpid()}-{time.monotonic_ns()}"
    job = Job(list(kolorun_args) + train_args(outdir, marker, *options), tmp_path, marker=marker)
    return job, str(outdir)


@pytest.fixture
def stop_jobs():
    """Stops every job a test started, however the test ends."""
    jobs = []
    yield jobs
    for job in jobs:
        job.stop()


def check_commits_agree(logs, context):
    """Every step was committed with one set of weights by every worker that
    logged it, and each worker's steps follow one another without gaps."""
    checksums = collections.defaultdict(set)
    for worker, log in logs.items():
        steps = [e["step"] for e in events(log, "commit")]
        consecutive = list(range(steps[0], steps[0] + len(steps))) if steps else []
        assert steps == consecutive, f"worker {worker} committed steps {steps}\n{context}"
        for e in events(log, "commit"):
            checksums[e["step"]].add(e["checksum"])
    split = {step: sums for step, sums in checksums.items() if len(sums) > 1}
    assert not split, f"workers disagree on the weights of steps {sorted(split)}\n{context}"


def check_finished_together(logs, workers, context, epochs=EPOCHS):
    """`workers` all finished every epoch with the same weights, those of
    their last commit."""
    done = {w: events(logs[w], "done") for w in workers}
    assert all(len(d) == 1 for d in done.values()), f"'done' events: {done}\n{context}"
    finals = {(d[0]["step"], d[0]["epoch"], d[0]["checksum"]) for d in done.values()}
    assert len(finals) == 1, f"the workers finished differently: {finals}\n{context}"
    step, epoch, checksum = finals.pop()
    assert epoch == epochs, context
    for w in workers:
        last = events(logs[w], "commit")[-1]
        assert (last["step"], last["checksum"]) == (step, checksum), context
    return step, checksum


# --- a worker killed mid-epoch ---------------------------------------------------

KILLED_WORKER, KILL_AFTER_STEP = 1, 5  # 8 steps per epoch with 3 workers


@pytest.fixture(scope="module")
def killed_run(tmp_path_factory):
    """3 workers on 3 hosts, --min-np 2; worker 1 SIGKILLs itself after
    committing step 5 (mid-epoch 0). Shared by the tests below."""
    tmp_path = tmp_path_factory.mktemp("elastic-kill")
    job, outdir = start(tmp_path, ONE_FAILURE + ["-np", "3", "--min-np", "2", "-H", HOSTS_1_SLOT],
                        "--epochs", EPOCHS, "--kill", f"{KILLED_WORKER}:{KILL_AFTER_STEP}")
    try:
        rc = job.wait()
        yield job, rc, read_logs(outdir)
    finally:
        job.stop()


def test_killed_worker_job_recovers_from_last_commit_and_finishes(killed_run):
    job, rc, logs = killed_run
    context = job.report() + "\n--- worker logs:\n" + describe_logs(logs)
    assert rc == 0, context
    assert_line(job, "kolorun: rank 1 (host 127.0.0.2) was killed by signal 9 (SIGKILL); "
                     "host 127.0.0.2 is blacklisted for the rest of the job")
    assert_line(job, "kolorun: round 2: 2 workers on 127.0.0.1, 127.0.0.3 "
                     "(worker 1 (rank 1, host 127.0.0.2) failed)")
    lines = job.kolorun_lines()
    assert not [line for line in lines if "round 3" in line or "job failed" in line], context

    assert sorted(logs) == [0, 1, 2], context
    killed = logs[KILLED_WORKER]
    assert events(killed, "commit")[-1]["step"] == KILL_AFTER_STEP, context
    assert not events(killed, "done") and not events(killed, "reset"), context
    committed_before = {e["step"]: e["checksum"] for e in events(killed, "commit")}

    check_commits_agree(logs, context)
    survivors = [0, 2]
    for w in survivors:
        log = logs[w]
        resets = events(log, "reset")
        assert len(resets) == 1, context
        reset = resets[0]
        last_before = events(log, "commit", round=1)[-1]
        # Nothing committed is lost: the state after the reset is the last commit.
        assert last_before["step"] == KILL_AFTER_STEP, context
        assert reset["restored_step"] == last_before["step"], context
        assert reset["checksum"] == last_before["checksum"], context
        assert reset["checksum"] == committed_before[KILL_AFTER_STEP], context
        assert (reset["round"], reset["size"]) == (2, 2), context
        after = events(log, "commit", round=2)
        assert after and after[0]["step"] == KILL_AFTER_STEP + 1, context
        assert all(e["size"] == 2 for e in after), context
    assert {events(logs[w], "commit", round=2)[0]["rank"] for w in survivors} == {0, 1}, context
    check_finished_together(logs, survivors, context)


def test_elastic_sampler_loses_and_repeats_no_sample_across_the_kill(killed_run):
    job, rc, logs = killed_run
    context = job.report() + "\n--- worker logs:\n" + describe_logs(logs)
    assert rc == 0, context
    for epoch in range(EPOCHS):
        seen = set()
        for log in logs.values():
            for e in events(log, "commit", epoch=epoch):
                seen.update(e["indices"])
        assert seen == set(range(SAMPLES)), (
            f"epoch {epoch} never processed samples {sorted(set(range(SAMPLES)) - seen)}\n"
            + context)

    # The kill is in epoch 0: round 1 processed part of it, round 2 the rest.
    after = set()
    for log in logs.values():
        for e in events(log, "commit", epoch=0, round=2):
            after.update(e["indices"])
    assert after, context
    for worker in sorted(logs):
        before = set()
        for e in events(logs[worker], "commit", epoch=0, round=1):
            before.update(e["indices"])
        again = sorted(before & after)
        who = "the killed worker" if worker == KILLED_WORKER else "a survivor"
        assert not again, (
            f"samples that worker {worker} ({who}) processed and committed before the reset "
            f"were processed again after it, in the same epoch: {again}\n" + context)


# --- hosts added and removed by the discovery script -----------------------------


def discovery_job(tmp_path, hosts, kolorun_args, *options):
    hosts_file = tmp_path / "hosts"
    write_atomically(hosts_file, "".join(f"{h}\n" for h in hosts))
    job, outdir = start(tmp_path, list(kolorun_args) + [
        "--host-discovery-script", f"cat {hosts_file}"], *options)
    return job, outdir, hosts_file


def test_host_added_by_discovery_grows_the_world_at_the_next_commit(tmp_path, stop_jobs):
    job, outdir, hosts_file = discovery_job(
        tmp_path, LOOPBACK_HOSTS[:2], ["-np", "2", "--min-np", "2", "--max-np", "3"],
        "--epochs", 3, "--step-sleep", 0.1)
    stop_jobs.append(job)
    job.wait_for(lambda: commits_in(outdir, 0) >= 3, "3 commits of worker 0")
    write_atomically(hosts_file, "".join(f"{h}\n" for h in LOOPBACK_HOSTS))
    rc = job.wait()
    logs = read_logs(outdir)
    context = job.report() + "\n--- worker logs:\n" + describe_logs(logs)
    assert rc == 0, context
    assert_third_host_joined(job)

    assert sorted(logs) == [0, 1, 2], context
    check_commits_agree(logs, context)
    last_small = events(logs[0], "commit", round=1)[-1]
    for w in (0, 1):
        reset = events(logs[w], "reset")
        assert len(reset) == 1 and reset[0]["restored_step"] == last_small["step"], context
        assert reset[0]["checksum"] == last_small["checksum"], context
    new = logs[2]
    start_event = events(new, "start")[0]
    # The new worker starts from the state the others committed last...
    assert (start_event["round"], start_event["size"]) == (2, 3), context
    assert start_event["step"] == last_small["step"], context
    assert start_event["checksum"] == last_small["checksum"], context
    # ...and its first commit continues the count, at size 3, with the others' weights.
    first = events(new, "commit")[0]
    assert first["step"] == last_small["step"] + 1 and first["size"] == 3, context
    for w in (0, 1):
        grown = events(logs[w], "commit", round=2)
        assert grown and grown[0]["step"] == first["step"], context
        assert all(e["size"] == 3 for e in grown), context
    assert {events(logs[w], "commit", round=2)[0]["rank"] for w in (0, 1, 2)} == {0, 1, 2}
    check_finished_together(logs, [0, 1, 2], context, epochs=3)


def test_host_removed_by_discovery_shrinks_the_world_and_its_worker_leaves(tmp_path, stop_jobs):
    job, outdir, hosts_file = discovery_job(
        tmp_path, LOOPBACK_HOSTS, ["-np", "3", "--min-np", "2"],
        "--epochs", 3, "--step-sleep", 0.1)
    stop_jobs.append(job)
    job.wait_for(lambda: commits_in(outdir, 0) >= 3, "3 commits of worker 0")
    write_atomically(hosts_file, "".join(f"{h}\n" for h in LOOPBACK_HOSTS[:2]))
    rc = job.wait()
    logs = read_logs(outdir)
    context = job.report() + "\n--- worker logs:\n" + describe_logs(logs)
    assert rc == 0, context
    assert_line(job, "kolorun: hosts changed (removed 127.0.0.3); the workers re-form at their "
                     "next commit")
    assert_line(job, "kolorun: worker 2 (rank 2, host 127.0.0.3) leaves the job: its host is no "
                     "longer usable or the job is at --max-np")
    assert_line(job, "kolorun: round 2: 2 workers on 127.0.0.1, 127.0.0.2 (hosts changed)")
    lines = job.kolorun_lines()
    assert not [line for line in lines if "blacklisted" in line or "failed" in line], context

    assert sorted(logs) == [0, 1, 2], context
    check_commits_agree(logs, context)
    removed = logs[2]
    # The removed worker trained in round 1 only and went away without
    # failing: either run() ended it (exit status 0) or kolorun stopped it.
    assert events(removed, "commit") and not events(removed, "commit", round=2), context
    assert not events(removed, "done"), context
    assert all(e["code"] in (0, None) for e in events(removed, "exit")), context
    last_big = events(logs[0], "commit", round=1)[-1]
    for w in (0, 1):
        reset = events(logs[w], "reset")
        assert len(reset) == 1 and reset[0]["restored_step"] == last_big["step"], context
        assert reset[0]["checksum"] == last_big["checksum"], context
        assert (reset[0]["round"], reset[0]["size"]) == (2, 2), context
        shrunk = events(logs[w], "commit", round=2)
        assert shrunk and shrunk[0]["step"] == last_big["step"] + 1, context
        assert all(e["size"] == 2 for e in shrunk), context
    check_finished_together(logs, [0, 1], context, epochs=3)


# --- the ways an elastic job ends in failure -------------------------------------


def test_every_worker_failing_fails_the_job(tmp_path, stop_jobs):
    job, outdir = start(tmp_path, ONE_FAILURE + ["-np", "3", "--min-np", "2", "-H", HOSTS_1_SLOT],
                        "--fail-at-once")
    stop_jobs.append(job)
    rc = job.wait()
    assert rc != 0, job.report()
    # Each failure blacklists its host; once two are out, --min-np 2 cannot be
    # reached and nothing can add a host, so the job may end before the
    # third worker's exit is even seen.
    blacklisted = [line for line in job.kolorun_lines() if "is blacklisted" in line]
    assert len(blacklisted) >= 2, job.report()
    for line in blacklisted:
        assert re.fullmatch(r"kolorun: rank (\d) \(host (127\.0\.0\.\d)\) exited with code 1; "
                            r"host \2 is blacklisted for the rest of the job", line), line
    assert_line_matching(job, r"kolorun: job failed: (every worker has failed; the last: rank \d "
                              r"\(host 127\.0\.0\.\d\) exited with code 1|1 of at least 2 "
                              r"workers \(--min-np\) possible, and no host can be added .*)")
    assert not [line for line in job.kolorun_lines() if "round 2" in line], job.report()


def test_reset_limit_fails_the_job_at_the_second_failure(tmp_path, stop_jobs):
    job, outdir = start(tmp_path, ONE_FAILURE + ["-np", "3", "--min-np", "1", "--reset-limit", "1",
                                   "-H", HOSTS_1_SLOT],
                        "--epochs", EPOCHS, "--kill", "1:3", "--kill", "2:6")
    stop_jobs.append(job)
    rc = job.wait()
    logs = read_logs(outdir)
    context = job.report() + "\n--- worker logs:\n" + describe_logs(logs)
    assert rc != 0, context
    assert_line(job, "kolorun: round 2: 2 workers on 127.0.0.1, 127.0.0.3 "
                     "(worker 1 (rank 1, host 127.0.0.2) failed)")
    assert_line(job, "kolorun: job failed: the job needs a new round (worker 2 (rank 1, host "
                     "127.0.0.3) failed) but --reset-limit 1 is reached")
    assert not [line for line in job.kolorun_lines() if "round 3" in line], context
    # The second failure came after the first reset, from the committed step 6.
    assert events(logs[2], "commit")[-1]["step"] == 6, context
    assert not events(logs[0], "done"), context
    # Worker 2 was rank 1 of round 2 when it died: the failure names that rank.
    assert_line(job, "kolorun: rank 1 (host 127.0.0.3) was killed by signal 9 (SIGKILL); "
                     "host 127.0.0.3 is blacklisted for the rest of the job")


def test_below_min_np_with_no_host_to_come_fails_the_job_at_once(tmp_path, stop_jobs):
    # No discovery script and no cooldown: nothing can bring a slot back, so
    # the job does not wait out --elastic-timeout (60 s here).
    job, outdir = start(tmp_path, ONE_FAILURE + ["-np", "2", "--min-np", "2", "--elastic-timeout",
                                                 "60", "-H",
                                                 ",".join(f"{h}:1" for h in LOOPBACK_HOSTS[:2])],
                        "--epochs", EPOCHS, "--kill", "1:3")
    stop_jobs.append(job)
    rc = job.wait()
    ended = time.time()
    context = job.report() + "\n--- worker logs:\n" + describe_logs(read_logs(outdir))
    assert rc != 0, context
    assert_line(job, "kolorun: rank 1 (host 127.0.0.2) was killed by signal 9 (SIGKILL); "
                     "host 127.0.0.2 is blacklisted for the rest of the job")
    assert_line(job, "kolorun: job failed: 1 of at least 2 workers (--min-np) possible, and no "
                     "host can be added (no --host-discovery-script; usable slots: 1; "
                     "blacklisted: 127.0.0.2)")
    killed_at = os.path.getmtime(os.path.join(outdir, "killed-worker1"))
    assert ended - killed_at < 60, context  # before --elastic-timeout would have ended it
    assert not [line for line in job.kolorun_lines() if "waiting up to" in line], context
    assert not [line for line in job.kolorun_lines() if "round 2" in line], context


# --- a discovery script that misbehaves --------------------------------------------

DISCOVERY = """\
echo run >> {dir}/runs
mode=$(cat {dir}/mode)
case "$mode" in
  garbage) echo "127.0.0.1:many" ;;
  fail) echo "inventory service unreachable" >&2; exit 3 ;;
  *) cat {dir}/hosts ;;
esac
"""


def test_discovery_errors_are_reported_once_each_and_the_job_runs_once_it_recovers(
        tmp_path, stop_jobs):
    (tmp_path / "hosts").write_text("127.0.0.1\n127.0.0.2\n")
    write_atomically(tmp_path / "mode", "garbage")
    script = tmp_path / "discover.sh"
    script.write_text(DISCOVERY.format(dir=tmp_path))
    job, outdir = start(tmp_path, ["-np", "2", "--min-np", "2", "--elastic-timeout", "30",
                                   "--host-discovery-script", f"sh {script}"],
                        "--epochs", 1)
    stop_jobs.append(job)

    def printed(text):
        return lambda: any(text in line for line in job.kolorun_lines())

    garbage = "line 1 '127.0.0.1:many': slots must be a positive integer"
    job.wait_for(printed(garbage), "the discovery error for the bad output")
    time.sleep(2.5)  # the script runs every second: two more times with the same error
    runs = (tmp_path / "runs").read_text().count("run")
    assert runs >= 3, f"the discovery script ran {runs} times in 2.5 s\n" + job.report()
    write_atomically(tmp_path / "mode", "fail")
    failing = "exited with code 3: inventory service unreachable"
    job.wait_for(printed(failing), "the discovery error for the failing script")
    time.sleep(2.5)
    assert not os.listdir(outdir), "workers started without hosts\n" + job.report()
    write_atomically(tmp_path / "mode", "ok")
    rc = job.wait()
    logs = read_logs(outdir)
    context = job.report() + "\n--- worker logs:\n" + describe_logs(logs)
    assert rc == 0, context

    lines = job.kolorun_lines()
    for text in (garbage, failing):
        matching = [line for line in lines if text in line]
        assert len(matching) == 1, f"{text!r} printed {len(matching)} times\n" + context
        assert matching[0].startswith("kolorun: host discovery script"), context
        assert matching[0].endswith("(retrying every 1 s)"), context
    assert lines.count("kolorun: host discovery script works again") == 1, context
    assert sorted(logs) == [0, 1], context
    check_commits_agree(logs, context)
    assert {e["size"] for log in logs.values() for e in events(log, "commit")} == {2}, context
    check_finished_together(logs, [0, 1], context, epochs=1)


def test_discovery_that_never_works_fails_after_the_elastic_timeout(tmp_path, stop_jobs):
    job, outdir = start(tmp_path, ["-np", "2", "--min-np", "2", "--elastic-timeout", "2",
                                   "--host-discovery-script", "echo no hosts today >&2; exit 4"],
                        "--epochs", 1)
    stop_jobs.append(job)
    rc = job.wait(timeout=20)
    assert rc != 0, job.report()
    assert_line_matching(job, r"kolorun: host discovery script .*failed: exited with code 4: "
                              r"no hosts today \(retrying every 1 s\)")
    assert_line_matching(job, r"kolorun: job failed: .*")
    assert job.ended - job.started < 15, job.report()
    assert not os.listdir(outdir), job.report()
