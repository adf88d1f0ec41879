"""Kolo jobs started by a real Slurm: `srun -n 2` and `-n 3` on a one-node
cluster (munged, slurmctld and slurmd of Debian's packages) that this
module starts once in a temporary directory (slurm_cluster.py) and stops
at the end, failing if any of its processes is left.

The ranks are started by slurmd, not kolorun: each learns its place from
Slurm's variables (SLURM_PROCID, SLURM_STEP_NUM_TASKS, SLURM_LOCALID, ...)
and the ranks meet without any address given to them. A job whose ranks
cannot all meet fails with an error and a non-zero exit, never as worlds
of one rank each.

Needs root and the Slurm and munge packages; skipped otherwise (CI runs as
root after scripts/install-deps.sh).
"""

import re
import signal
import subprocess
import sys
import textwrap

import pytest

from slurm_cluster import SlurmCluster, node_name, running_cluster, unavailable_reason

JOB_TIMEOUT = 60  # seconds for one srun, start to exit; the jobs take 1 to 3 s

# One line per rank: its layout, the SLURM_PROCID it ran as and the sum of
# rank+1 over the world (1+2+...+size when every rank took part).
RANK_SCRIPT = textwrap.dedent("""
    import os
    import torch
    import kolo.torch as hvd

    hvd.init()
    total = hvd.allreduce(torch.tensor([hvd.rank() + 1.0]), op=hvd.Sum, name="ranks")
    print(f"rank {hvd.rank()} size {hvd.size()} local_rank {hvd.local_rank()} "
          f"local_size {hvd.local_size()} procid {os.environ['SLURM_PROCID']} "
          f"sum {total.item():g}", flush=True)
    hvd.shutdown()
""")

# Task 1 dies before init, so the others can never form the world.
DIES_BEFORE_INIT = textwrap.dedent("""
    import os, signal
    if os.environ["SLURM_PROCID"] == "1":
        os.kill(os.getpid(), signal.SIGKILL)
    import kolo.torch as hvd
    hvd.init()
    print(f"rank {hvd.rank()} size {hvd.size()} joined", flush=True)
    hvd.shutdown()
""")

RANK_LINE = re.compile(r"rank (\d+) size (\d+) local_rank (\d+) local_size (\d+) procid (\d+) "
                       r"sum (\S+)")


@pytest.fixture(scope="module")
def cluster():
    reason = unavailable_reason()
    if reason:
        pytest.skip(f"jobs under a real Slurm: {reason}")
    with running_cluster() as started:
        yield started


def per_task(output):
    """{task: {variable: value}} from the output of `srun -l ... env`."""
    tasks = {}
    for line in output.splitlines():
        task, sep, rest = line.partition(": ")
        name, eq, value = rest.partition("=")
        if sep and eq and task.strip().isdigit():
            tasks.setdefault(int(task), {})[name] = value
    return tasks


def describe(result, cluster):
    return (f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}\n"
            + cluster.logs())


@pytest.mark.parametrize("np_", [2, 3])
def test_srun_gives_each_task_its_place(cluster, np_):
    result = cluster.srun(["-l", "-n", str(np_), "env"], timeout=JOB_TIMEOUT)
    context = describe(result, cluster)
    assert result.returncode == 0, context
    tasks = per_task(result.stdout)
    assert sorted(tasks) == list(range(np_)), context
    for task, env in tasks.items():
        assert env.get("SLURM_PROCID") == str(task), context
        assert env.get("SLURM_STEP_NUM_TASKS") == str(np_), context
        assert env.get("SLURM_LOCALID") == str(task), context  # one node holds every task
        assert env.get("SLURMD_NODENAME") == node_name(), context
        assert env.get("SLURM_STEP_NODELIST") == node_name(), context
        assert env.get("SLURM_CONF") == cluster.conf, context  # this cluster, no other


@pytest.mark.parametrize("np_", [2, 3])
def test_srun_job_allreduces_across_all_tasks(cluster, tmp_path, np_):
    script = tmp_path / "ranks.py"
    script.write_text(RANK_SCRIPT)
    result = cluster.srun(["-n", str(np_), sys.executable, str(script)], timeout=JOB_TIMEOUT,
                          cwd=str(tmp_path))
    context = describe(result, cluster)
    assert result.returncode == 0, context
    lines = sorted(RANK_LINE.findall(result.stdout), key=lambda line: int(line[0]))
    expected_sum = np_ * (np_ + 1) // 2
    assert lines == [(str(r), str(np_), str(r), str(np_), str(r), str(expected_sum))
                     for r in range(np_)], context


def test_task_lost_before_init_fails_the_job(cluster, tmp_path):
    script = tmp_path / "dies.py"
    script.write_text(DIES_BEFORE_INIT)
    env = cluster.env(KOLO_START_TIMEOUT=5)
    # Slurm leaves task 0 running after task 1 died: Kolo itself must end it.
    result = cluster.srun(["-n", "2", "--kill-on-bad-exit=0", sys.executable, str(script)],
                          timeout=JOB_TIMEOUT, env=env, cwd=str(tmp_path))
    context = describe(result, cluster)
    assert result.returncode != 0, context
    assert "joined" not in result.stdout, context  # no rank went on alone
    # The error names the rank that never came and the limit it missed.
    assert re.search(r"\brank(\(s\))? 1\b.*KOLO_START_TIMEOUT", result.stderr), context


def test_a_second_cluster_beside_it_is_independent_and_checked_at_close(cluster):
    """Two clusters on one machine (another test's, Debian's own) share
    nothing: each job runs under its own controller only. Closing a cluster
    fails when one of its processes outlived the daemons."""
    other = SlurmCluster()
    try:
        other.setup()
        assert set(other.ports).isdisjoint(cluster.ports)
        for c in (cluster, other):
            result = c.srun(["-l", "-n", "2", "env"], timeout=JOB_TIMEOUT)
            assert result.returncode == 0, describe(result, c)
            assert {env.get("SLURM_CONF") for env in per_task(result.stdout).values()} == {
                c.conf}, describe(result, c)
        stray = subprocess.Popen(["sleep", "60"], env=other.env(), start_new_session=True)
    except BaseException:
        other.close()
        raise
    with pytest.raises(RuntimeError, match=r"processes left .*sleep 60"):
        other.close()
    assert stray.wait(10) == -signal.SIGKILL
    result = cluster.srun(["-n", "1", "true"], timeout=JOB_TIMEOUT)  # still up after the other
    assert result.returncode == 0, describe(result, cluster)
