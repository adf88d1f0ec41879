"""2 and 3 ranks sharing the one GPU: NCCL refuses that, so CUDA tensors go
through Kolo's host-staged path (pinned buffers, chunked copies overlapped
with the CPU collectives). Real processes under kolorun."""

import os
import subprocess
import sys

import pytest

from gpu_env import kolorun

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.parametrize("np_", [2, 3])
def test_ranks_sharing_a_gpu(gpu, np_):
    job = subprocess.run([kolorun(), "-np", str(np_), sys.executable,
                          os.path.join(HERE, "staged_worker.py")],
                         capture_output=True, text=True, timeout=300)
    assert job.returncode == 0, job.stdout + job.stderr
