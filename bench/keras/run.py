"""Keras on Kolo against TensorFlow's MultiWorkerMirroredStrategy, 1 and 2
workers on this host, interleaved; and the gradient exchange's per-step cost.

    .venv/bin/python bench/keras/run.py [--rounds 5] [--markdown FILE]

Each round runs, in an order rotated every round so the host's drift hits
all of them alike: bench/keras/synthetic.py under `kolorun -np 1` and
`-np 2` (Horovod's Keras DistributedOptimizer), and as 1 and 2 MWMS workers
(processes on 127.0.0.1 with TF_CONFIG naming free ports; TF's collective
ops over gRPC); then bench/keras/exchange_cost.py under `kolorun -np 2` and
as 2 MWMS workers. Prints every run's value, then the medians over rounds:
total img/sec, scaling efficiency total(2) / (2 x total(1)), Kolo / MWMS,
and the exchange table (ms per step). Extra arguments after `--` go to
every synthetic.py run.
"""

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SYNTHETIC = os.path.join(HERE, "synthetic.py")
EXCHANGE = os.path.join(HERE, "exchange_cost.py")
JOB_TIMEOUT = 600  # seconds for one configuration's run (all its workers)
TOTAL = re.compile(r"Total img/sec on (\d+) worker\(s\): ([0-9.]+)")
# kolorun tags each line with the rank it came from; MWMS workers print plain lines.
CASE = re.compile(r"^(?:\[0\]<stdout>:)?([a-z ]+): ([0-9.]+) ms$", re.MULTILINE)
EXCHANGE_CASES = {"kolo": 6, "mwms": 1}  # the lines each backend of exchange_cost.py prints


def free_ports(count):
    """Ports the kernel just handed out and released; MWMS's gRPC servers bind
    them a moment later (another process could take one first: the run then
    fails loudly and is retried by hand, not hidden)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def kolorun_path():
    candidate = os.path.join(os.path.dirname(sys.executable), "kolorun")
    if not os.access(candidate, os.X_OK):
        sys.exit(f"error: no kolorun next to {sys.executable}: run `make python` first")
    return candidate


def keras_env(keras):
    """The environment that selects the Keras: tf-keras (Keras 2) or Keras 3."""
    return dict(os.environ, TF_USE_LEGACY_KERAS="1" if keras == "tf-keras" else "0")


def run_kolo(script, np_, extra, keras):
    job = subprocess.run([kolorun_path(), "-np", str(np_), sys.executable, script, "--backend",
                          "kolo", *extra], capture_output=True, text=True, timeout=JOB_TIMEOUT,
                         env=keras_env(keras))
    return job.returncode, job.stdout + job.stderr


def run_mwms(script, workers, extra, keras):
    """`workers` processes with TF_CONFIG; every worker's output (the chief,
    worker 0, prints the report)."""
    ports = free_ports(workers)
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    procs = []
    for index in range(workers):
        env = dict(keras_env(keras), TF_CONFIG=json.dumps(
            {"cluster": cluster, "task": {"type": "worker", "index": index}}))
        procs.append(subprocess.Popen([sys.executable, script, "--backend", "mwms", *extra],
                                      env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True))
    deadline = time.monotonic() + JOB_TIMEOUT
    outputs, status = [], 0
    try:
        for proc in procs:
            out, _ = proc.communicate(timeout=max(1, deadline - time.monotonic()))
            outputs.append(out)
            status = status or proc.returncode
    finally:
        for proc in procs:  # a worker left waiting for a dead peer must not outlive us
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return status, "\n".join(outputs)


def one_run(label, synthetic_extra, exchange_extra, keras):
    """Runs configuration `label` once; returns its value(s)."""
    backend, np_ = label.rsplit("_", 1)
    if backend == "exchange":
        outputs = {}
        for name, run in (("kolo", run_kolo), ("mwms", run_mwms)):
            status, out = run(EXCHANGE, int(np_), exchange_extra, keras)
            found = CASE.findall(out)
            if status != 0 or len(found) != EXCHANGE_CASES[name]:
                sys.exit(f"error: exchange_cost.py --backend {name} failed (exit status "
                         f"{status}) or printed {len(found)} cases:\n{out}")
            outputs.update({f"{name} {case}": float(ms) for case, ms in found})
        return outputs
    run = run_kolo if backend == "kolo" else run_mwms
    status, out = run(SYNTHETIC, int(np_), synthetic_extra, keras)
    found = TOTAL.findall(out)
    if status != 0 or len(found) != 1 or int(found[0][0]) != int(np_):
        sys.exit(f"error: {label} failed (exit status {status}) or printed no total:\n{out}")
    return {label: float(found[0][1])}


def busy_percent():
    """How busy the host's CPUs were over the last second."""
    def sample():
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
        return sum(fields), fields[3] + fields[4]
    total0, idle0 = sample()
    time.sleep(1)
    total1, idle1 = sample()
    return 100 * (1 - (idle1 - idle0) / max(1, total1 - total0))


def table(medians, rounds, keras):
    k1, k2, m1, m2 = (medians[x] for x in ("kolo_1", "kolo_2", "mwms_1", "mwms_2"))
    lines = [f"{keras}; median of {rounds} rounds; total img/sec over all workers; "
             "scaling efficiency = total(2) / (2 x total(1)).", "",
             "| | 1 worker (img/sec) | 2 workers (img/sec) | scaling efficiency |",
             "|---|---:|---:|---:|",
             f"| Kolo (horovod.tensorflow.keras) | {k1:.1f} | {k2:.1f} | {k2 / (2 * k1):.1%} |",
             f"| MultiWorkerMirroredStrategy (gRPC, RING) | {m1:.1f} | {m2:.1f} | "
             f"{m2 / (2 * m1):.1%} |",
             f"| Kolo / MWMS | {k1 / m1:.2f} | {k2 / m2:.2f} | |", "",
             "Gradient exchange of the model's 10 gradients (2.5 MB), 2 workers, ms per call:",
             "", "| case | eager | tf.function (graph) |", "|---|---:|---:|"]
    rows = [("Kolo grouped_allreduce (Average)", "kolo exchange"),
            ("Kolo training step, DistributedGradientTape", "kolo step"),
            ("the same step, plain GradientTape (no exchange)", "kolo local step"),
            ("MWMS all_reduce (mean, RING) in strategy.run", "mwms exchange")]
    for title, key in rows:
        cells = [f"{medians[f'{key} {mode}']:.2f}" if f"{key} {mode}" in medians else "-"
                 for mode in ("eager", "graph")]
        lines.append(f"| {title} | {cells[0]} | {cells[1]} |")
    added = [medians[f"kolo step {m}"] - medians[f"kolo local step {m}"]
             for m in ("eager", "graph")]
    lines.append(f"| what the exchange adds to a step (step - local step) | {added[0]:.2f} | "
                 f"{added[1]:.2f} |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--markdown", help="also write the tables to this file")
    p.add_argument("--keras", choices=["tf-keras", "keras3"], default="tf-keras",
                   help="the Keras of every run (TF_USE_LEGACY_KERAS=1 or 0); MWMS's fit() "
                        "fails with 2 workers under Keras 3.15 (in _maybe_symbolic_build)")
    p.add_argument("extra", nargs="*", help="arguments for synthetic.py (after --)")
    p.add_argument("--exchange-calls", type=int, default=20,
                   help="exchange_cost.py's --calls (calls per case per round)")
    p.add_argument("--exchange-rounds", type=int, default=5, help="exchange_cost.py's --rounds")
    args = p.parse_args()
    if min(args.rounds, args.exchange_calls, args.exchange_rounds) < 1:
        p.error("--rounds, --exchange-calls and --exchange-rounds must be at least 1")
    exchange_extra = ["--calls", str(args.exchange_calls), "--rounds", str(args.exchange_rounds)]
    labels = ["kolo_1", "mwms_1", "kolo_2", "mwms_2", "exchange_2"]
    print(f"# {os.cpu_count()} cores, {time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}, "
          f"load average {os.getloadavg()}", flush=True)
    samples = {}
    for r in range(args.rounds):
        print(f"round {r + 1}: host {busy_percent():.0f}% busy before it", flush=True)
        for i in range(len(labels)):
            label = labels[(i + r) % len(labels)]
            for key, value in one_run(label, args.extra, exchange_extra, args.keras).items():
                samples.setdefault(key, []).append(value)
                print(f"round {r + 1}: {key} {value}", flush=True)
    print(f"load average after: {os.getloadavg()}")
    medians = {key: statistics.median(values) for key, values in samples.items()}
    text = table(medians, args.rounds, args.keras)
    print("\n" + text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
