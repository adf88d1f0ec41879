"""A rank program for fault tests (tests/python/launcher/test_liveness.py and
the fault matrix of tests/faults/): a few allreduces per step over
kolo.numpy, with faults asked for on the command line. Each rank writes
what happened to it into OUTDIR/rank<R>.txt ("ok", or the error it got and
how long after the step began), so a test can check every rank's own
words, not only kolorun's.

  --gap R:SECONDS[:gil]   rank R computes SECONDS before step 1 (":gil":
                          the first half inside a C call that holds the GIL)
  --mismatch KIND:R       rank R submits step 1's tensor differently (KIND:
                          root, joined or one of MISMATCHES)
  --skip R                rank R never submits step 1's tensor
  --die R:STEP            rank R SIGKILLs itself at STEP
  --wedge R               rank R's engine thread blocks for 30 s after its
                          first collective (KOLO_TEST_WEDGE_ENGINE_SECONDS,
                          a test hook), while its transport thread beats
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
    parser.add_argument("--wedge", type=int, default=-1)
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


# --mismatch KIND:R: what every rank submits at step 1 when all must agree
# (None: the usual allreduce), and what rank R submits instead. One kind per
# check of the coordinator's (src/core/coordinator.cc) that a CPU job can
# reach; "root": every rank broadcasts and rank R names another root.
MISMATCHES = {
    "shape": (None, lambda hvd, np, base: (hvd.allreduce, np.ones(7, np.float32), {})),
    "dtype": (None, lambda hvd, np, base: (hvd.allreduce, base.astype(np.float64), {})),
    "op": (None, lambda hvd, np, base: (hvd.allreduce, base, {"op": hvd.Max})),
    "collective": (None, lambda hvd, np, base: (hvd.allgather, base, {})),
    "prescale": (None, lambda hvd, np, base: (hvd.allreduce, base, {"prescale_factor": 2.0})),
    "postscale": (None, lambda hvd, np, base: (hvd.allreduce, base, {"postscale_factor": 0.5})),
    "allgather-shape": (lambda hvd, np, base: (hvd.allgather, base.reshape(256, 4), {}),
                        lambda hvd, np, base: (hvd.allgather, base.reshape(128, 8), {})),
    "process-set": (lambda hvd, np, base: (hvd.add_process_set, list(range(hvd.size())), {}),
                    lambda hvd, np, base: (hvd.add_process_set, [0], {})),
}


def step_tensors(hvd, np, args, step):
    """The (call, argument, kwargs) of this rank's collectives at `step`."""
    rank = hvd.rank()
    base = np.full(1024, float(rank + step), dtype=np.float32)
    usual = (hvd.allreduce, base, {"name": f"grad.{step}", "op": hvd.Sum})
    kind, _, who = args.mismatch.partition(":")
    if step != 1 or not kind:
        return [usual]
    if kind == "root":
        return [(hvd.broadcast, base, {"name": f"grad.{step}",
                                       "root_rank": 1 if int(who) == rank else 0})]
    if kind == "joined":
        # Rank R joins (out of data) while the others broadcast, which the
        # coordinator refuses while a rank has joined: every rank, the
        # joined one too, must get its error.
        if int(who) == rank:
            return [(lambda _array: hvd.join(), None, {})]
        root = 1 if int(who) == 0 else 0
        return [(hvd.broadcast, base, {"name": f"grad.{step}", "root_rank": root})]
    if kind not in MISMATCHES:
        raise SystemExit(f"fault_worker: unknown mismatch kind {kind!r}")
    agreed, culprits = MISMATCHES[kind]
    call, argument, kwargs = (culprits if int(who) == rank else agreed or (lambda *_: usual))(
        hvd, np, base)
    if call is hvd.allreduce:  # the usual op, so only what the kind names differs
        kwargs = {"op": hvd.Sum, **kwargs}
    if call is not hvd.add_process_set:  # a process set has no name of its own
        kwargs = {"name": f"grad.{step}", **kwargs}
    return [(call, argument, kwargs)]


def main():
    args = parse_args()
    if args.spare >= 0 and str(args.spare) != os.environ.get("KOLO_RANK", ""):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if str(args.wedge) == os.environ.get("KOLO_RANK", ""):
        os.environ["KOLO_TEST_WEDGE_ENGINE_SECONDS"] = "30"  # read by init below
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
