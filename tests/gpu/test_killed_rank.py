"""A rank killed while the others run CUDA collectives: every survivor fails
within the peer timeout, naming the lost rank, and the job ends (a GPU
collective whose peer died must never hang: the watchdog aborts it)."""

import os
import subprocess
import sys
import textwrap
import time

from gpu_env import kolorun

SCRIPT = textwrap.dedent("""
    import os, signal, sys, time
    import torch
    import kolo.torch as hvd

    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # report before kolorun's SIGKILL
    hvd.init()
    torch.cuda.set_device(0)
    report = os.path.join(sys.argv[1], f"rank{hvd.rank()}.txt")
    grad = torch.ones(1 << 20, device="cuda")
    hvd.allreduce(grad, name="warmup")
    if hvd.rank() == 1:
        os.kill(os.getpid(), signal.SIGKILL)

    def outcome(steps):
        # What the survivor saw: the first error of `steps` CUDA allreduces.
        begin = time.monotonic()
        try:
            for _ in range(steps):
                hvd.allreduce(grad, name="grad.fc1.weight")
        except hvd.KoloInternalError as e:
            return f"KoloInternalError after {time.monotonic() - begin:.1f}s: {e}"
        except Exception as e:
            return f"{type(e).__name__}: {e}"
        return "no error"

    result = outcome(1000)
    with open(report, "w") as f:
        f.write(result)
""")


def test_killed_rank_fails_the_others(gpu, tmp_path):
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    started = time.monotonic()
    job = subprocess.run([kolorun(), "-np", "3", sys.executable, str(script), str(tmp_path)],
                         capture_output=True, text=True, timeout=240,
                         env={**os.environ, "KOLO_PEER_TIMEOUT_SECONDS": "30"})
    assert job.returncode != 0, job.stdout + job.stderr
    assert time.monotonic() - started < 200
    assert "rank 1" in job.stderr, job.stderr
    for rank in (0, 2):
        outcome = (tmp_path / f"rank{rank}.txt").read_text()
        assert outcome.startswith("KoloInternalError"), outcome
        assert "rank 1" in outcome, outcome
