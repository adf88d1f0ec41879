"""A rank program for fault tests (tests/python/launcher/test_liveness.py and
the fault matrix of tests/faults/): a few allreduces per step over
kolo.numpy, with faults asked for on the command line. Each rank writes
what happened to it into OUTDIR/rank<R>.txt ("ok", or the error it got and
how long after the step began), so a test can check every rank's own
words, not only kolorun's.

  --gap R:SECONDS[:gil]   rank R computes SECONDS before step 1 (":gil":
                          the first half inside a C call that holds the GIL)
  --mismatch KIND:R       rank R submits step 1's tensor differently
  --skip R                rank R never submits step 1's tensor
  --die R:STEP            rank R SIGKILLs itself at STEP
  --background            every rank starts a sleeping child, in a session
                          of its own on odd ranks (a daemon), which must
                          not outlive the job

Every rank but --spare ignores SIGTERM: it ends by itself once its
collective fails, so it always gets to write its report, while the rank a
test freezes (--spare) still dies of kolorun's SIGTERM at once."""

import argparse
import ctypes
import os
import signal
import subprocess
import sys
import time


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("outdir")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--step-sleep", type=float, default=0.0)
    parser.add_argument("--gap", default="")
    parser.add_argument("--mismatch", default="")
    parser.add_argument("--skip", type=int, default=-1)
    parser.add_argument("--die", default="")
    parser.add_argument("--spare", type=int, default=-1)
    parser.add_argument("--background", action="store_true")
    parser.add_argument("--marker", default="", help="ignored: tells this job's processes apart")
    return parser.parse_args()


def compute(seconds, hold_gil):
    """A compute gap: with hold_gil, half of it in a C call that keeps the
    GIL (ctypes.PyDLL does not release it), as a long C extension does."""
    if hold_gil:
        ctypes.PyDLL(None).usleep(ctypes.c_uint(int(seconds * 1e6 / 2)))
        seconds /= 2
    time.sleep(seconds)


def step_tensors(hvd, np, args, step):
    """The (call, array, kwargs) of this rank's collectives at `step`."""
    rank = hvd.rank()
    base = np.full(1024, float(rank + step), dtype=np.float32)
    calls = [(hvd.allreduce, base, {"name": f"grad.{step}", "op": hvd.Sum})]
    kind, _, who = args.mismatch.partition(":")
    if step != 1 or not kind:
        return calls
    if kind == "root":  # every rank broadcasts; one names another root
        return [(hvd.broadcast, base, {"name": f"grad.{step}",
                                       "root_rank": 1 if int(who) == rank else 0})]
    if int(who) != rank:
        return calls
    if kind == "shape":
        calls[0] = (hvd.allreduce, np.ones(7, np.float32), calls[0][2])
    elif kind == "dtype":
        calls[0] = (hvd.allreduce, base.astype(np.float64), calls[0][2])
    elif kind == "op":
        calls[0] = (hvd.allreduce, base, {"name": f"grad.{step}", "op": hvd.Max})
    elif kind == "collective":
        calls[0] = (hvd.allgather, base, {"name": f"grad.{step}"})
    else:
        raise SystemExit(f"fault_worker: unknown mismatch kind {kind!r}")
    return calls


def main():
    args = parse_args()
    if args.spare >= 0 and str(args.spare) != os.environ.get("KOLO_RANK", ""):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    import numpy as np
    import kolo.numpy as hvd

    hvd.init()
    rank = hvd.rank()
    report = os.path.join(args.outdir, f"rank{rank}.txt")
    hvd.allreduce(np.ones(4, np.float32), name="warmup")
    if args.background:
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", args.marker],
                         start_new_session=rank % 2 == 1)
    print(f"ready rank {rank} pid {os.getpid()}", flush=True)
    gap_rank, _, gap = args.gap.partition(":")
    die_rank, _, die_step = args.die.partition(":")
    started = time.monotonic()
    try:
        for step in range(1, args.steps + 1):
            started = time.monotonic()
            if gap and int(gap_rank) == rank and step == 1:
                seconds, _, gil = gap.partition(":")
                compute(float(seconds), gil == "gil")
            if die_rank and int(die_rank) == rank and int(die_step) == step:
                os.kill(os.getpid(), signal.SIGKILL)
            if step == 1 and args.skip == rank:
                continue
            for call, array, kwargs in step_tensors(hvd, np, args, step):
                call(array, **kwargs)
            print(f"step {step} rank {rank}", flush=True)
            time.sleep(args.step_sleep)
        outcome = "ok"
    except Exception as e:  # every failure is the outcome being tested
        outcome = f"{type(e).__name__} after {time.monotonic() - started:.1f}s: {e}"
    with open(report, "w") as f:
        f.write(outcome)
    print(f"rank {rank}: {outcome}", file=sys.stderr if outcome != "ok" else sys.stdout,
          flush=True)
    hvd.shutdown()
    return 0 if outcome == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
