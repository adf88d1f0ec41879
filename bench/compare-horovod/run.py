"""Runs the same PyTorch scripts under Horovod-Gloo, Horovod-MPI and Kolo, interleaved.

    bench/compare-horovod/run.py [--rounds N] [--kolo-only] [--quick] [--dry-run]

bench/compare-horovod/run.sh builds Horovod first and then calls this. Every round runs each job
(collectives.py on 2 ranks; synthetic_benchmark.py on 1 and 2 ranks, and under DDP on 2) under
Horovod-Gloo, Horovod-MPI and Kolo in that order, so the shared host's drift hits all of them
alike; the table holds each value's median over the rounds. It is printed and written as
markdown to --out. Only the standard library is needed to run this file.
"""

import argparse
import datetime
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
MARKER = "COMPARE_RESULT "

FRAMEWORKS = {"hgloo": "Horovod-Gloo", "hmpi": "Horovod-MPI", "kolo": "Kolo", "ddp": "DDP (gloo)"}
HOROVOD = ("hgloo", "hmpi")

# (case, ranks, label, unit): the table's rows in order. ms rows: lower is better; img/s rows:
# higher is better.
ROWS = [
    ("inplace_1mb", 2, "allreduce_ in place, 1 MB", "ms"),
    ("inplace_64mb", 2, "allreduce_ in place, 64 MB", "ms"),
    ("outplace_64mb", 2, "allreduce out of place, 64 MB", "ms"),
    ("small_step", 2, "step: 200 × 16 KB `allreduce_async_` then synchronize", "ms"),
    ("small_grouped", 2, "the same 200 tensors as one `grouped_allreduce_async_` call", "ms"),
    ("small_raw", 2, "allreduce_ in place, 3.2 MB (that step's total as one tensor)", "ms"),
    ("resnet50_step", 2, "step: ResNet-50's gradients (160 tensors, 25.6 M floats)", "ms"),
    ("resnet50_raw", 2, "allreduce_ in place, 102 MB (that step's total as one tensor)", "ms"),
    ("synthetic", 1, "synthetic benchmark, 1 rank (img/sec)", "img/s"),
    ("synthetic", 2, "synthetic benchmark, 2 ranks (img/sec, total)", "img/s"),
]

# The targets, each as (what, numerator row, denominator row, limit): Kolo's own ratios.
TARGETS = [
    ("200 × 16 KB step / one 3.2 MB allreduce", ("small_step", 2), ("small_raw", 2), 1.1),
    ("200 × 16 KB as one grouped call / one 3.2 MB allreduce", ("small_grouped", 2),
     ("small_raw", 2), 1.1),
    ("ResNet-50 step / one 102 MB allreduce", ("resnet50_step", 2), ("resnet50_raw", 2), 1.05),
    ("64 MB out of place / in place", ("outplace_64mb", 2), ("inplace_64mb", 2), 1.2),
]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5, help="interleaved rounds (medians over them)")
    p.add_argument("--kolo-only", action="store_true",
                   help="run Kolo (and DDP) only: no Horovod venv needed")
    p.add_argument("--quick", action="store_true",
                   help="few iterations and tiny synthetic batches: checks the harness, not speed")
    p.add_argument("--dry-run", action="store_true", help="print the commands and exit")
    p.add_argument("--no-synthetic", action="store_true", help="skip the synthetic benchmark")
    p.add_argument("--horovod-venv", type=Path, default=REPO / "build/compare-horovod/venv")
    p.add_argument("--kolo-venv", type=Path, default=REPO / ".venv")
    p.add_argument("--out", type=Path, default=REPO / "build/compare-horovod/results.md")
    p.add_argument("--job-timeout", type=float, default=600, help="seconds per job")
    args = p.parse_args(argv)
    if args.rounds <= 0 or args.job_timeout <= 0:
        p.error("--rounds and --job-timeout must be positive")
    needed = [args.kolo_venv / "bin/python", args.kolo_venv / "bin/kolorun"]
    if not args.kolo_only:
        needed += [args.horovod_venv / "bin/python", args.horovod_venv / "bin/horovodrun"]
    if not args.dry_run:
        missing = [str(n) for n in needed if not os.access(n, os.X_OK)]
        if missing:
            p.error(f"not found: {', '.join(missing)} (make python; "
                    "bench/compare-horovod/build-horovod.sh)")
    return args


def frameworks(args):
    return ["kolo"] if args.kolo_only else ["hgloo", "hmpi", "kolo"]


def launch(fw, np, script, args):
    """The command that runs `script` on `np` local ranks under framework `fw`."""
    hvd_py, kolo_py = str(args.horovod_venv / "bin/python"), str(args.kolo_venv / "bin/python")
    horovodrun = str(args.horovod_venv / "bin/horovodrun")
    script = str(HERE / script)
    if fw == "hgloo":
        return [horovodrun, "-np", str(np), "-H", f"localhost:{np}", "--gloo", hvd_py, script]
    if fw == "hmpi":
        # horovodrun --gloo sets Horovod's controller and CPU operations to gloo itself; under
        # --mpi they default to MPI when it was built in, which these make explicit.
        return ["env", "HOROVOD_CONTROLLER=mpi", "HOROVOD_CPU_OPERATIONS=mpi", horovodrun, "-np",
                str(np), "-H", f"localhost:{np}", "--mpi", hvd_py, script]
    if fw == "kolo":
        return [str(args.kolo_venv / "bin/kolorun"), "-np", str(np), kolo_py, script]
    return [kolo_py, script, "--ddp", "--np", str(np)]


def jobs(args):
    """(framework, ranks, command) of one round, in the order they run."""
    coll = ["--iter-scale", "0.05"] if args.quick else []
    synth = (["--model", "resnet18", "--image-size", "32", "--batch-size", "2",
              "--num-warmup-batches", "1", "--num-batches-per-iter", "1", "--num-iters", "2"]
             if args.quick else [])
    out = [(fw, 2, launch(fw, 2, "collectives.py", args) + coll) for fw in frameworks(args)]
    if not args.no_synthetic:
        for np in (1, 2):
            out += [(fw, np, launch(fw, np, "synthetic_benchmark.py", args) + synth)
                    for fw in frameworks(args)]
        out.append(("ddp", 2, launch("ddp", 2, "synthetic_benchmark.py", args) + synth))
    return out


def run_job(cmd, timeout):
    """Runs one job in its own process group; returns its COMPARE_RESULT records."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env, cwd=REPO, start_new_session=True)
    try:
        output, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        raise RuntimeError(f"timed out after {timeout:.0f} s: {shlex.join(cmd)}\n{output[-3000:]}")
    if proc.returncode != 0:
        raise RuntimeError(f"exit status {proc.returncode}: {shlex.join(cmd)}\n{output[-3000:]}")
    # horovodrun prefixes each rank's lines ("[1,0]<stdout>:") and another rank's output can
    # follow on the same line, so the marker is searched for and one JSON object decoded.
    decoder = json.JSONDecoder()
    records = [decoder.raw_decode(line[line.index(MARKER) + len(MARKER):])[0]
               for line in output.splitlines() if MARKER in line]
    if not records:
        raise RuntimeError(f"no results printed: {shlex.join(cmd)}\n{output[-3000:]}")
    return records


def value_of(record):
    return record["median_ms"] if "median_ms" in record else record["img_per_sec"]


def run_rounds(args, log):
    """{(framework, case, ranks): [value per round]}, and the synthetic benchmark's settings."""
    values, synthetic = {}, ""
    for r in range(args.rounds):
        log(f"round {r + 1}/{args.rounds}: load average {load_average()}")
        for fw, np, cmd in jobs(args):
            for rec in run_job(cmd, args.job_timeout):
                values.setdefault((fw, rec["case"], np), []).append(value_of(rec))
                if rec["case"] == "synthetic":
                    synthetic = (f"torchvision {rec['model']}, {rec['image_size']}x"
                                 f"{rec['image_size']} images, batch {rec['batch_size']} per worker")
            log(f"  {FRAMEWORKS[fw]} on {np}: done")
    return values, synthetic


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def fmt(v):
    if v is None:
        return "-"
    return f"{v:.3f}" if v < 1 else f"{v:.2f}" if v < 10 else f"{v:.1f}" if v < 1000 else f"{v:.0f}"


def table(values, args):
    """The markdown table: medians per framework and Kolo's ratios (above 1: Kolo is better)."""
    fws = frameworks(args) + ([] if args.no_synthetic else ["ddp"])
    med = {k: statistics.median(v) for k, v in values.items()}
    head = ["median over rounds"] + [FRAMEWORKS[f] for f in fws]
    if not args.kolo_only:
        head.append("Kolo vs best Horovod")
    if not args.no_synthetic:
        head.append("Kolo vs DDP")
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    for case, np, label, unit in ROWS:
        row = [med.get((f, case, np)) for f in fws]
        if all(v is None for v in row):
            continue
        cells = [label] + [fmt(v) for v in row]
        kolo = med.get(("kolo", case, np))
        others = []
        if not args.kolo_only:
            others.append([med.get((f, case, np)) for f in HOROVOD])
        if not args.no_synthetic:
            others.append([med.get(("ddp", case, np))])
        for group in others:
            group = [v for v in group if v is not None]
            if not group or kolo is None:
                cells.append("")
            elif unit == "ms":
                cells.append(f"{min(group) / kolo:.2f}×")
            else:
                cells.append(f"{kolo / max(group):.2f}×")
        lines.append("| " + " | ".join(cells) + " |")
    return lines, med


def targets(med):
    lines = []
    for what, num, den, limit in TARGETS:
        a, b = med.get(("kolo",) + num), med.get(("kolo",) + den)
        if a is not None and b is not None:
            verdict = "met" if a / b <= limit else "not met"
            lines.append(f"- Kolo {what}: {a / b:.2f}× (target ≤ {limit}×: {verdict})")
    return lines


def report(values, synthetic, args, started, load_before, argv):
    lines, med = table(values, args)
    commit = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=REPO, text=True,
                            capture_output=True).stdout.strip() or "unknown"
    rounds = ", ".join(f"{FRAMEWORKS[fw]} {case}/{np}: " + " ".join(fmt(v) for v in vs)
                       for (fw, case, np), vs in sorted(values.items()))
    return "\n".join([
        f"Command: `{shlex.join(['bench/compare-horovod/run.py', *argv])}`",
        f"Started {started:%Y-%m-%d %H:%M} UTC on commit {commit}; {os.cpu_count()} cores; "
        f"load average {load_before} before, {load_average()} after; rounds: {args.rounds}.",
        *([f"Synthetic benchmark: {synthetic}."] if synthetic else []),
        "Ratios: the other's time over Kolo's, or Kolo's img/sec over the other's (above 1: "
        "Kolo is faster).",
        "",
        *lines,
        "",
        *targets(med),
        "",
        f"Every round's value: {rounds}",
        ""])


def main(argv):
    args = parse_args(argv)
    if args.dry_run:
        for fw, np, cmd in jobs(args):
            print(f"{FRAMEWORKS[fw]}, {np} rank(s): {shlex.join(cmd)}")
        return 0
    started = datetime.datetime.now(datetime.timezone.utc)
    load_before = load_average()

    def log(text):
        print(text, file=sys.stderr, flush=True)

    try:
        values, synthetic = run_rounds(args, log)
    except RuntimeError as e:
        print(f"compare-horovod: a job failed: {e}", file=sys.stderr)
        return 1
    text = report(values, synthetic, args, started, load_before, argv)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    log(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
