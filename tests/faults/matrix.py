"""The fault matrix: runs each case RUNS times (each trial randomized from
its own seed, printed with any bad outcome so it can be replayed) and
prints a table of cases, runs, outcomes and time to error.

  python tests/faults/matrix.py --runs 50            # what `make faults RUNS=50` runs
  python tests/faults/matrix.py --runs 3 --case SIGSTOP --seed 7

Exits 1 when any trial hung, crashed, left orphans, lost a committed step,
flooded, failed without naming its root cause or named it too late."""

import argparse
import os
import random
import shutil
import signal
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# The case modules import each other and tests/python/launcher's helpers
# (elastic_job, test_elastic) by name.
sys.path[:0] = [HERE, os.path.join(os.path.dirname(HERE), "python", "launcher")]

import elastic_cases  # noqa: E402
import engine_cases  # noqa: E402
import launcher_cases  # noqa: E402
import remote_cases  # noqa: E402
import store_cases  # noqa: E402
from trial import OUTCOMES, Outcome  # noqa: E402

# Cases this machine cannot run (no root for network namespaces), with why.
SKIPPED = remote_cases.unavailable()
CASES = {name: run for name, run in {
    **launcher_cases.CASES, **remote_cases.CASES, **engine_cases.CASES, **store_cases.CASES,
    **elastic_cases.CASES}.items() if name not in SKIPPED}
BAD = {"slow", "unclear error", "flood", "lost step", "crash", "orphans", "hang"}


def run_trial(name, seed):
    """One trial of case `name` in a fresh directory; never raises."""
    workdir = tempfile.mkdtemp(prefix="kolo-fault-")
    try:
        return CASES[name](random.Random(seed), workdir)
    except Exception as e:  # a broken trial is reported, not the end of the matrix
        return Outcome("unclear error", None, f"the trial itself failed: {type(e).__name__}: {e}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def seconds_text(values):
    if not values:
        return "-"
    return f"{statistics.median(values):.2f} / {max(values):.2f}"


def table(results):
    """Markdown table: one row per case."""
    head = ["case", "runs", "ok", "clear errors", "too slow", "unclear errors", "hangs",
            "crashes", "orphans", "lost steps", "floods", "time to error s (median / max)"]
    keys = ["ok", "clear error", "slow", "unclear error", "hang", "crash", "orphans",
            "lost step", "flood"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, outcomes in results.items():
        counts = [sum(1 for _, o in outcomes if o.kind == k) for k in keys]
        times = [o.seconds for _, o in outcomes
                 if o.kind in ("clear error", "slow", "unclear error") and o.seconds is not None]
        rows.append("| " + " | ".join([name, str(len(outcomes))] + [str(c) for c in counts]
                                      + [seconds_text(times)]) + " |")
    return "\n".join(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="trials per case")
    parser.add_argument("--case", action="append", default=[],
                        help="only cases whose name contains this (repeatable)")
    parser.add_argument("--seed", type=int, default=None, help="first seed (default: random)")
    args = parser.parse_args(argv)
    # `timeout` (make faults) ends the run with SIGTERM: unwind, so the trial
    # in progress stops its job instead of leaving it running.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    names = [n for n in CASES if not args.case or any(c.lower() in n.lower() for c in args.case)]
    if not names:
        parser.error(f"no case matches {args.case}; cases: {', '.join(CASES)}")
    for name, reason in SKIPPED.items():
        print(f"skipped case {name}: {reason}", flush=True)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 30)
    print(f"fault matrix: {len(names)} cases x {args.runs} runs, first seed {seed}", flush=True)
    results = {name: [] for name in names}
    started = time.monotonic()
    for run in range(args.runs):
        for name in names:
            trial_seed = seed + run * 1000 + names.index(name)
            outcome = run_trial(name, trial_seed)
            results[name].append((trial_seed, outcome))
            took = f"{outcome.seconds:.2f} s" if outcome.seconds is not None else ""
            print(f"  {name} (seed {trial_seed}): {outcome.kind} {took}", flush=True)
            if outcome.kind in BAD:
                print("    " + outcome.detail[:3000].replace("\n", "\n    "), flush=True)
    print(f"\n{table(results)}\n\n{sum(len(v) for v in results.values())} trials in "
          f"{time.monotonic() - started:.0f} s")
    bad = sum(1 for v in results.values() for _, o in v if o.kind in BAD)
    return 1 if bad else 0


assert set(OUTCOMES) >= BAD
if __name__ == "__main__":
    sys.exit(main())
