"""Shared memory and hierarchical collectives with real processes under
kolorun: ranks on one host share a segment, ranks on two loopback "hosts"
(127.0.0.1 and 127.0.0.2, local to kolorun but separate hosts to Kolo) go
hierarchical. Every result is checked against its known value, the backend
says which transport it chose, and no segment outlives the job, even when a
rank is killed."""

import os
import subprocess
import sys
import textwrap

import pytest

from test_failures import SCRIPT as KILLED_RANK_SCRIPT
from test_failures import kolorun

SCRIPT = textwrap.dedent("""
    import sys
    import torch
    import kolo.torch as hvd

    hvd.init()
    rank, size = hvd.rank(), hvd.size()
    torch.set_num_threads(1)
    for n in (1, 7, 1000, 65537, 100003, (1 << 20) + 3):
        x = torch.arange(n, dtype=torch.float32) * (rank + 1)
        total = hvd.allreduce(x, op=hvd.Sum, name=f"sum.{n}")
        assert torch.equal(total, torch.arange(n, dtype=torch.float32) * (size * (size + 1) // 2)), n
        avg = hvd.allreduce(x.double(), op=hvd.Average, name=f"avg.{n}")
        assert torch.allclose(avg, torch.arange(n, dtype=torch.float64) * (size + 1) / 2), n
        rows = hvd.allgather(torch.full((rank + 1, 3), float(rank)), name=f"gather.{n}")
        want = torch.cat([torch.full((r + 1, 3), float(r)) for r in range(size)])
        assert torch.equal(rows, want), n
        data = torch.full((n,), float(rank))
        hvd.broadcast_(data, root_rank=size - 1, name=f"bcast.{n}")
        assert torch.equal(data, torch.full((n,), float(size - 1))), n
    # Several tensors in flight fuse into one response (the in-place parts path).
    grads = [torch.full((k * 1000 + 1,), float(rank + 1)) for k in range(20)]
    handles = [hvd.allreduce_async_(g, op=hvd.Sum, name=f"grad.{k}") for k, g in enumerate(grads)]
    for h, g in zip(handles, grads):
        hvd.synchronize(h)
        assert torch.equal(g, torch.full_like(g, float(size * (size + 1) // 2)))
    print(f"rank {rank} ok", flush=True)
""")


def run_job(tmp_path, hosts_args, env_extra=None, np_=4):
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, KOLO_LOG_LEVEL="debug", **(env_extra or {}))
    return subprocess.run([kolorun(), "-np", str(np_), *hosts_args, sys.executable, str(script)],
                          capture_output=True, text=True, timeout=240, env=env)


def backend_lines(output):
    return [line for line in output.splitlines() if ": backend " in line]


def test_one_host_uses_shared_memory(tmp_path):
    job = run_job(tmp_path, [], np_=3)
    assert job.returncode == 0, job.stdout + job.stderr
    assert job.stdout.count(" ok") == 3, job.stdout
    lines = backend_lines(job.stderr)
    assert len(lines) == 3 and all("backend shm+tcp over 3 ranks" in l for l in lines), job.stderr


def test_two_hosts_of_two_go_hierarchical(tmp_path):
    job = run_job(tmp_path, ["-H", "127.0.0.1:2,127.0.0.2:2"])
    assert job.returncode == 0, job.stdout + job.stderr
    assert job.stdout.count(" ok") == 4, job.stdout
    topology = [l for l in job.stderr.splitlines() if "host(s)" in l]
    assert len(topology) == 4, job.stderr
    assert all("2 host(s), 2 rank(s) on this one, shared memory on, hierarchical possible" in l
               for l in topology), job.stderr


def test_shared_memory_off_is_plain_tcp(tmp_path):
    job = run_job(tmp_path, ["-H", "127.0.0.1:2,127.0.0.2:2"], {"KOLO_SHM": "0"})
    assert job.returncode == 0, job.stdout + job.stderr
    lines = backend_lines(job.stderr)
    assert len(lines) == 4 and all("backend tcp over 4 ranks" in l for l in lines), job.stderr


def kolo_segments():
    return {name for name in os.listdir("/dev/shm") if name.startswith("kolo-")}


def test_a_killed_rank_fails_its_host_peers_and_leaves_no_segment(tmp_path):
    # test_failures' job (rank 1 kills itself mid-job), here for what it
    # leaves behind: its three ranks share a segment, whose name is gone.
    before = kolo_segments()
    script = tmp_path / "killed.py"
    script.write_text(KILLED_RANK_SCRIPT)
    job = subprocess.run([kolorun(), "-np", "3", sys.executable, str(script), str(tmp_path)],
                         capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, KOLO_LOG_LEVEL="debug"))
    assert job.returncode != 0, job.stdout + job.stderr
    assert "backend shm+tcp" in job.stderr, job.stderr
    for rank in (0, 2):
        outcome = (tmp_path / f"rank{rank}.txt").read_text()
        assert outcome.startswith("KoloInternalError") and "rank 1" in outcome, outcome
    assert kolo_segments() <= before, "a segment outlived its job"
