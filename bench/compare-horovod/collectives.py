"""Per-call collective timings through Horovod's PyTorch API, for bench/compare-horovod.

    horovodrun -np 2 --gloo python collectives.py      (real Horovod)
    kolorun -np 2 python collectives.py                 (Kolo's horovod drop-in)

The same file runs under every framework: it imports horovod.torch, which is Horovod itself in
the Horovod venv and Kolo's drop-in package in the project's venv. Each case is timed call by
call (or step by step) after a warm-up; rank 0 prints one line per case,
`COMPARE_RESULT {"case": ..., "median_ms": ...}`, which run.py collects.

The cases whose times run.py divides (a step and the raw allreduce of its total, out of place and
in place) are timed alternately, call by call, in one loop: the shared host's drift within a job
then hits both sides of a ratio alike instead of whichever case ran during a slow spell.
"""

import argparse
import json
import statistics
import time

import torch

import horovod.torch as hvd

MB = 1 << 20
FLOAT_BYTES = 4


def resnet50_gradient_sizes():
    """Element counts of ResNet-50's gradients in backward order (last layer first).

    torchvision's resnet50 has 161 parameter tensors (25.56 M floats); the final fully
    connected layer's bias (1000 floats) is left out to give the 160-tensor set of the issue.
    """
    from torchvision.models import resnet50
    sizes = [p.numel() for p in resnet50().parameters()]
    sizes.pop()  # fc.bias
    return list(reversed(sizes))


def time_interleaved(calls, iters, warmup):
    """Median wall time in ms of each of `calls` ({case: callable}) over `iters` timed rounds
    after `warmup` untimed ones; a round calls each once, the order reversed every other round
    so that no case always follows the same one."""
    order = list(calls)
    for _ in range(warmup):
        for name in order:
            calls[name]()
    times = {name: [] for name in order}
    for i in range(iters):
        for name in (order if i % 2 == 0 else reversed(order)):
            start = time.perf_counter()
            calls[name]()
            times[name].append((time.perf_counter() - start) * 1e3)
    return {name: statistics.median(t) for name, t in times.items()}


def in_place(tensor, name):
    return lambda: hvd.allreduce_(tensor, name=name)


def out_of_place(tensor, name):
    # The result is dropped at once, as a training loop drops last step's output.
    return lambda: hvd.allreduce(tensor, name=name)


def async_step(tensors, prefix):
    """All tensors allreduced in place asynchronously, then waited for: one backward pass."""
    names = [f"{prefix}.{i}" for i in range(len(tensors))]

    def step():
        handles = [hvd.allreduce_async_(t, name=n) for t, n in zip(tensors, names)]
        for h in handles:
            hvd.synchronize(h)
    return step


def grouped_step(tensors, prefix):
    """The same tensors as one grouped_allreduce_async_ call: the step without the per-call
    cost of the Python API, so what is left is the engine's."""
    def step():
        hvd.synchronize(hvd.grouped_allreduce_async_(tensors, name=prefix))
    return step


def floats(count):
    return torch.ones(count, dtype=torch.float32)


def case_groups(args):
    """[(cases, timed iterations)] in table order, `cases` being {case name: callable}; the cases
    of one group are timed alternately (time_interleaved)."""
    scale = args.iter_scale
    small = [floats(args.small_bytes // FLOAT_BYTES) for _ in range(args.small_count)]
    small_total = args.small_count * args.small_bytes
    grads = [floats(n) for n in resnet50_gradient_sizes()]
    grads_total = sum(g.numel() for g in grads)
    big = floats(64 * MB // FLOAT_BYTES)
    return [
        ({"inplace_1mb": in_place(floats(MB // FLOAT_BYTES), "inplace_1mb")}, 200 * scale),
        ({"inplace_64mb": in_place(big, "inplace_64mb"),
          "outplace_64mb": out_of_place(big, "outplace_64mb")}, 20 * scale),
        ({"small_step": async_step(small, "small"),
          "small_grouped": grouped_step(small, "small_grouped"),
          "small_raw": in_place(floats(small_total // FLOAT_BYTES), "small_raw")}, 50 * scale),
        ({"resnet50_step": async_step(grads, "resnet50"),
          "resnet50_raw": in_place(floats(grads_total), "resnet50_raw")}, 10 * scale),
    ]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--iter-scale", type=float, default=1.0,
                   help="multiplies every case's timed iterations (0.1 for a quick check)")
    p.add_argument("--small-count", type=int, default=200, help="tensors in the small step")
    p.add_argument("--small-bytes", type=int, default=16 * 1024, help="bytes per small tensor")
    p.add_argument("--cases", default="", help="comma-separated subset of the cases (default all)")
    args = p.parse_args()
    if args.iter_scale <= 0 or args.small_count <= 0 or args.small_bytes < FLOAT_BYTES:
        p.error("--iter-scale, --small-count and --small-bytes must be positive")

    hvd.init()
    torch.set_num_threads(1)
    wanted = set(filter(None, args.cases.split(",")))
    for calls, iters in case_groups(args):
        calls = {name: call for name, call in calls.items() if not wanted or name in wanted}
        if not calls:
            continue
        iters = max(3, int(iters))
        medians = time_interleaved(calls, iters, warmup=max(2, iters // 10))
        if hvd.rank() == 0:
            for name, median in medians.items():
                print("COMPARE_RESULT " + json.dumps({"case": name, "median_ms": median,
                                                       "iters": iters, "size": hvd.size()}),
                      flush=True)
    hvd.shutdown()


if __name__ == "__main__":
    main()
