#!/usr/bin/env python3
"""Recovery time of an elastic job: from SIGKILL of one worker to the next
training step completed by the survivors, over N runs (median, min, max).

    .venv/bin/python bench/elastic_recovery.py [--runs 10] [--workers 3]

Each run starts `kolorun --min-np 2` with one worker per loopback host
(127.0.0.1, 127.0.0.2, ...), lets it train (bench/elastic_recovery_train.py,
a small MLP, commit every step), kills the last worker with SIGKILL and
reads the survivors' step logs. Phases per run: until a survivor's reset
callback ran (failure seen, state restored, new round joined), and until
every survivor completed a step in the new round."""

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def read_events(outdir):
    events = []
    for name in os.listdir(outdir):
        if name.endswith(".jsonl"):
            with open(os.path.join(outdir, name)) as f:
                events += [dict(json.loads(line), worker=name[6:-6]) for line in f if line.strip()]
    return events


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise TimeoutError(f"timed out waiting for {what}")


def one_run(kolorun, python, workers, steps):
    outdir = tempfile.mkdtemp(prefix="kolo-recovery-")
    hosts = ",".join(f"127.0.0.{i + 1}:1" for i in range(workers))
    cmd = [kolorun, "-np", str(workers), "--min-np", "2", "-H", hosts, python,
           os.path.join(HERE, "elastic_recovery_train.py"), outdir, str(steps)]
    job = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        victim = str(workers - 1)

        def trained():
            ev = read_events(outdir)
            return all(any(e["event"] == "step" and e["step"] >= 30 and e["worker"] == str(w)
                           for e in ev) for w in range(workers))

        wait_for(trained, 120, "every worker to reach step 30")
        pid = next(e["pid"] for e in read_events(outdir) if e["worker"] == victim)
        killed_at = time.time()
        os.kill(pid, signal.SIGKILL)
        _, err = job.communicate(timeout=300)
        if job.returncode != 0:
            raise RuntimeError(f"kolorun exited with {job.returncode}:\n{err}")
        ev = read_events(outdir)
        survivors = [str(w) for w in range(workers - 1)]
        reset = min(e["t"] for e in ev if e["event"] == "reset" and e["worker"] in survivors)
        first_steps = [min(e["t"] for e in ev if e["event"] == "step" and e["worker"] == w
                           and e["t"] > killed_at and e["size"] == workers - 1)
                       for w in survivors]
        return reset - killed_at, max(first_steps) - killed_at
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()
        shutil.rmtree(outdir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--steps", type=int, default=80)
    parser.add_argument("--kolorun", default=os.path.join(os.path.dirname(sys.executable),
                                                         "kolorun"))
    args = parser.parse_args()
    print(f"# {args.runs} runs, {args.workers} workers on loopback hosts, SIGKILL of one")
    print(f"{'run':>4} {'reset_s':>9} {'next_step_s':>12}")
    resets, recoveries = [], []
    for i in range(args.runs):
        reset, recovery = one_run(args.kolorun, sys.executable, args.workers, args.steps)
        resets.append(reset)
        recoveries.append(recovery)
        print(f"{i + 1:>4} {reset:>9.3f} {recovery:>12.3f}", flush=True)
    print(f"median reset {statistics.median(resets):.3f} s; median recovery (kill -> next "
          f"step on every survivor) {statistics.median(recoveries):.3f} s "
          f"(min {min(recoveries):.3f}, max {max(recoveries):.3f})")


if __name__ == "__main__":
    main()
