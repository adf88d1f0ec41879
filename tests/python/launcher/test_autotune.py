"""kolorun --autotune on real processes: a workload whose best settings are
known (tests/python/launcher/autotune_job.py: many small tensors per step,
where long cycles are several times slower) must end tuned into the known
best region, write Horovod's CSV, and have every rank switch settings after
the same negotiation cycles.

The assertions are on where the search ended, with a gap between regions
far larger than timing noise (a 5 ms cycle against 25-100 ms), never on a
measured speed."""

import csv
import os
import re
import subprocess
import sys

from test_mpi_launch import launcher

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "autotune_job.py")
HEADER = ["hierarchical_allreduce", "hierarchical_allgather", "torus_allreduce", "cache_enabled",
          "cycle_time_ms", "tensor_fusion_threshold", "score"]
APPLIED = re.compile(r"rank (\d+): autotune settings after cycle (\d+): (.*)$")

MAX_SAMPLES = 8


def autotune(tmp_path, *extra, steps=700, shape=("128", "256"), env=None, timeout=120):
    """kolorun --autotune over autotune_job.py: `steps` steps of shape[0]
    tensors of shape[1] float32 each."""
    log = tmp_path / "autotune.csv"
    job = subprocess.run(
        [launcher("kolorun"), "-np", "2", "--autotune", "--autotune-log-file", str(log),
         "--autotune-warmup-samples", "1", "--autotune-steps-per-sample", "3",
         "--autotune-bayes-opt-max-samples", str(MAX_SAMPLES), "--log-level", "debug",
         *extra, sys.executable, JOB, str(steps), *shape],
        capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})})
    assert job.returncode == 0, job.stdout[-3000:] + job.stderr[-3000:]
    assert job.stdout.count("done") == 2, job.stdout[-2000:]
    with open(log, newline="") as f:
        rows = list(csv.reader(f))
    return job, rows


def applied_by_rank(stderr):
    by_rank = {}
    for line in stderr.splitlines():
        m = APPLIED.search(line)
        if m:
            by_rank.setdefault(int(m.group(1)), []).append((int(m.group(2)), m.group(3)))
    return by_rank


def test_autotune_converges_to_the_known_best_region(tmp_path):
    job, rows = autotune(tmp_path)
    assert rows[0] == HEADER
    samples, best = rows[1:-1], rows[-1]
    # The Bayesian samples, the response cache flipped once, then the best.
    assert len(samples) == MAX_SAMPLES + 1, rows
    assert samples[0][4:6] == ["5", "4"], samples[0]  # Horovod's first point: 5 ms, 4 MiB
    assert all(r[2] == "0" for r in rows[1:])  # no torus allreduce in Kolo
    # The cache stays on while the Bayesian samples run; the last sample
    # is the best of them with the cache off.
    assert [r[3] for r in samples] == ["1"] * MAX_SAMPLES + ["0"], samples
    scores = [float(r[6]) for r in samples]
    assert all(s > 0 for s in scores), scores
    # The last row repeats the best sample.
    assert best == samples[scores.index(max(scores))], rows
    cycle_ms = float(best[4])
    # Known best region: short cycles (25, 50 and 100 ms are several times
    # slower here). The fusion threshold is not asserted: since a fused
    # response's handles complete together, 128 unfused collectives of 1 KiB
    # over shared memory score within noise of one fused one, so no threshold
    # is known best for this workload.
    assert cycle_ms <= 12, rows

    # Both ranks applied the same settings after the same cycles.
    by_rank = applied_by_rank(job.stderr)
    assert sorted(by_rank) == [0, 1], job.stderr[-3000:]
    assert by_rank[0] == by_rank[1]
    assert len(by_rank[0]) == MAX_SAMPLES + 2  # start, each sample's successor, the final
    assert by_rank[0][-1][1].endswith("(final)")


def test_a_setting_given_on_the_command_line_is_not_tuned(tmp_path):
    _, rows = autotune(tmp_path, "--cycle-time-ms", "2", "--cache-capacity", "0", steps=500)
    assert all(r[4] == "2" for r in rows[1:]), rows
    # The cache is off (capacity 0), so there is nothing to flip: only the
    # Bayesian samples over the fusion threshold, then the best.
    assert all(r[3] == "0" for r in rows[1:]), rows
    assert len(rows) == 1 + MAX_SAMPLES + 1, rows


def test_autotune_leaves_the_default_fusion_threshold_where_it_is_far_off(tmp_path):
    """Large gradients between ranks that talk over TCP (as across hosts):
    16 tensors of 4 MiB per step. Fused into one 64 MiB allreduce (the
    default threshold, 128 MiB, fuses them all) a step took 2.5-5x as long as
    with one tensor per allreduce (docs/benchmarks.md, "Autotune"), so the
    known best region is a threshold of at most 4 MiB."""
    job, rows = autotune(tmp_path, steps=260, shape=("16", str(1 << 20)),
                         env={"KOLO_BACKEND": "tcp"}, timeout=400)
    samples, best = rows[1:-1], rows[-1]
    assert len(samples) == MAX_SAMPLES + 1, rows
    assert best == samples[[float(r[6]) for r in samples].index(max(float(r[6]) for r in samples))]
    fusion_mib = float(best[5])
    # The best region is at most 4 MiB; 8 MiB (pairs fused) scored within
    # noise of it on a loaded host, so the assertion leaves that margin. The
    # default's region (the whole step fused) is several times slower.
    assert fusion_mib <= 8, rows
    by_rank = applied_by_rank(job.stderr)
    assert by_rank[0] == by_rank[1]
    assert by_rank[0][-1][1].endswith("(final)")
