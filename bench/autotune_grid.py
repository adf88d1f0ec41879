"""Autotune against the defaults and against a grid search of the fusion
threshold and cycle time, on `kolo-bench engine` or on the synthetic
PyTorch benchmark (examples/pytorch/synthetic_benchmark.py), both on NP
local ranks.

    python bench/autotune_grid.py engine [--rounds 3]
    python bench/autotune_grid.py engine --tensors 16 --tensor-bytes 4M --backend tcp
    python bench/autotune_grid.py torch [--rounds 3]

Each configuration runs --rounds times, interleaved with the others (so a
drifting machine hits all alike); the table has each one's median. The
autotuned runs tune during the warm-up (long enough for the whole search:
the run fails if tuning had not finished) and are timed with the settings
it kept, which the table shows. Engine: step time of many small allreduces
(lower is better); torch: total img/sec (higher is better).
"""

import argparse
import csv
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
FUSION_MB = [0, 1, 4, 16, 64]
CYCLE_MS = [1, 2.5, 5, 10, 25, 50]


def find(name, candidates):
    for c in candidates:
        if os.path.exists(c):
            return c
    sys.exit(f"autotune_grid: no {name} found (looked at {', '.join(candidates)})")


def run(cmd, env):
    job = subprocess.run(cmd, capture_output=True, text=True, timeout=900,
                         env={**os.environ, **env})
    if job.returncode != 0:
        sys.exit(f"autotune_grid: {' '.join(cmd)} failed:\n{job.stdout[-2000:]}{job.stderr[-2000:]}")
    return job.stdout


def engine_case(args, env, warmup):
    bench = find("kolo-bench", [os.path.join(ROOT, "build", "bin", "kolo-bench")])
    shape = ["--tensors", str(args.tensors)] if args.tensors else []
    shape += ["--tensor-bytes", args.tensor_bytes] if args.tensor_bytes else []
    out = run([bench, "-np", str(args.np), "engine", "-n", str(args.iters), "-w", str(warmup),
               *shape], env)
    step_us = float(re.search(r"engine \(many tensors\)\s+([\d.]+)", out).group(1))
    return step_us, out


def torch_case(args, env, warmup):
    kolorun = find("kolorun", [os.path.join(ROOT, ".venv", "bin", "kolorun")])
    python = find("python", [os.path.join(ROOT, ".venv", "bin", "python")])
    out = run([kolorun, "-np", str(args.np), python,
               os.path.join(ROOT, "examples", "pytorch", "synthetic_benchmark.py"),
               "--num-warmup-batches", str(warmup), "--num-batches-per-iter", "10",
               "--num-iters", str(args.iters)], env)
    img_sec = float(re.search(r"Total img/sec on \d+ worker\(s\): ([\d.]+)", out).group(1))
    return img_sec, out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("bench", choices=["engine", "torch"])
    p.add_argument("--np", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--iters", type=int, default=None, help="timed steps (engine) or iterations")
    p.add_argument("--warmup", type=int, default=None, help="warm-up steps without autotune")
    p.add_argument("--tune-warmup", type=int, default=None, help="warm-up steps with autotune")
    p.add_argument("--fusion-mb", default=",".join(map(str, FUSION_MB)),
                   help="grid of fusion thresholds (MiB), comma-separated")
    p.add_argument("--cycle-ms", default=",".join(map(str, CYCLE_MS)),
                   help="grid of cycle times (ms), comma-separated")
    p.add_argument("--tensors", type=int, default=None,
                   help="engine: tensors per step (kolo-bench's default otherwise)")
    p.add_argument("--tensor-bytes", default=None, help="engine: bytes per tensor, e.g. 4M")
    p.add_argument("--backend", default=None,
                   help="KOLO_BACKEND for every run, e.g. tcp (as between hosts)")
    p.add_argument("--autotune-args", default=None,
                   help="KOLO_AUTOTUNE_* overrides, as NAME=VALUE,NAME=VALUE")
    args = p.parse_args()
    fusion_grid = [float(v) if "." in v else int(v) for v in args.fusion_mb.split(",")]
    cycle_grid = [float(v) if "." in v else int(v) for v in args.cycle_ms.split(",")]
    engine = args.bench == "engine"
    case = engine_case if engine else torch_case
    args.iters = args.iters or (200 if engine else 5)
    warmup = args.warmup or (20 if engine else 10)
    tune_warmup = args.tune_warmup or (1500 if engine else 200)
    tune_env = {"KOLO_AUTOTUNE": "1"}
    if not engine and args.autotune_args is None:
        args.autotune_args = ("KOLO_AUTOTUNE_WARMUP_SAMPLES=1,KOLO_AUTOTUNE_STEPS_PER_SAMPLE=2,"
                              "KOLO_AUTOTUNE_BAYES_OPT_MAX_SAMPLES=12")
    for item in filter(None, (args.autotune_args or "").split(",")):
        name, value = item.split("=", 1)
        tune_env[name] = value

    base_env = {"KOLO_BACKEND": args.backend} if args.backend else {}
    tune_env.update(base_env)
    configs = {"defaults": dict(base_env)}
    for f in fusion_grid:
        for c in cycle_grid:
            configs[f"grid {f} MiB / {c} ms"] = {**base_env, "KOLO_FUSION_THRESHOLD": f"{f}M",
                                                 "KOLO_CYCLE_TIME": str(c)}
    results = {name: [] for name in configs}
    results["autotune"] = []
    chosen = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            names = list(configs) + ["autotune"]
            names = names[r % len(names):] + names[:r % len(names)]
            for name in names:
                if name == "autotune":
                    log = os.path.join(tmp, f"autotune{r}.csv")
                    value, _ = case(args, {**tune_env, "KOLO_AUTOTUNE_LOG": log}, tune_warmup)
                    with open(log, newline="") as f:
                        rows = list(csv.reader(f))
                    best = rows[-1]
                    chosen.append((float(best[4]), float(best[5]), best[3], len(rows) - 2))
                else:
                    value, _ = case(args, configs[name], warmup)
                results[name].append(value)
                print(f"round {r} {name}: {value}", file=sys.stderr, flush=True)

    better = min if engine else max
    unit = "step (us)" if engine else "img/sec"
    med = {name: statistics.median(v) for name, v in results.items()}
    grid = {n: v for n, v in med.items() if n.startswith("grid")}
    best_grid = better(grid, key=grid.get)
    ratio = (lambda v: med[best_grid] / v) if engine else (lambda v: v / med[best_grid])
    print(f"| configuration | {unit}, median of {args.rounds} | vs grid best |")
    print("|---|---:|---:|")
    for name in ["defaults", best_grid, "autotune"]:
        print(f"| {name} | {med[name]:.1f} | {ratio(med[name]):.3f} |")
    print()
    for cycle, fusion, cache, samples in chosen:
        print(f"autotune kept: cycle {cycle} ms, fusion {fusion} MiB, cache {cache}, "
              f"after {samples} scored samples")
    print()
    print("| grid | " + " | ".join(f"{c} ms" for c in cycle_grid) + " |")
    print("|---|" + "---:|" * len(cycle_grid))
    for f in fusion_grid:
        row = [f"{med[f'grid {f} MiB / {c} ms']:.1f}" for c in cycle_grid]
        print(f"| {f} MiB | " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
