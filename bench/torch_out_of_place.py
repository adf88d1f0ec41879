#!/usr/bin/env python3
"""kolo.torch allreduce out of place (`out = hvd.allreduce(t)`) against in place
(`hvd.allreduce_(t)`), per size, interleaved in one run.

    kolorun -np 2 .venv/bin/python bench/torch_out_of_place.py --sizes 1M,64M --iters 30

Per size: 3 warm-up calls of each kind, then --iters rounds, each one in-place call and one
out-of-place call (the order alternates between rounds, so neither kind always runs second);
the tensor is refilled outside the timer and every result is checked. The out-of-place result
is dropped before the next call, as a training loop drops last step's output, so an allocator
that caches can hand its memory out again. Also counted per call: the minor page faults of this
process (getrusage), which show whether an output's pages are fresh each call.

Rank 0 prints one line per size: median ms of each kind, out / in, and the faults per call.
`--torch-alloc` adds a column: torch.empty_like of the same size and a first write to it,
without any collective, i.e. what a fresh torch-allocated output costs by itself.
"""

import argparse
import resource
import statistics
import sys
import time

import horovod.torch as hvd
import torch


def parse_sizes(text):
    scale = {"K": 1 << 10, "M": 1 << 20}
    return [int(s[:-1]) * scale[s[-1]] if s[-1] in scale else int(s) for s in text.split(",")]


def minor_faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def check(result, expected, what):
    if result[0].item() != expected or result[-1].item() != expected:
        sys.exit(f"rank {hvd.rank()}: {what} gave {result[0].item()}, expected {expected}")


def timed(call):
    """(ms, minor faults) of one call."""
    faults = minor_faults()
    start = time.perf_counter()
    value = call()
    elapsed = (time.perf_counter() - start) * 1e3
    return elapsed, minor_faults() - faults, value


def in_place(tensor):
    tensor.fill_(1.0)
    ms, faults, _ = timed(lambda: hvd.allreduce_(tensor, op=hvd.Sum))
    check(tensor, hvd.size(), "allreduce_")
    return ms, faults


def out_of_place(tensor):
    tensor.fill_(1.0)
    ms, faults, out = timed(lambda: hvd.allreduce(tensor, op=hvd.Sum))
    check(out, hvd.size(), "allreduce")
    check(tensor, 1.0, "allreduce (its input)")
    del out  # what a training step does with last step's output
    return ms, faults


def torch_alloc(tensor):
    """A fresh output from torch's allocator, written once (what the copy of a result does)."""
    ms, faults, out = timed(lambda: torch.empty_like(tensor).fill_(2.0))
    del out
    return ms, faults


def measure(nbytes, iters, with_torch_alloc):
    tensor = torch.ones(nbytes // 4)
    kinds = {"in": in_place, "out": out_of_place}
    if with_torch_alloc:
        kinds["alloc"] = torch_alloc
    for _ in range(3):
        for run in kinds.values():
            run(tensor)
    samples = {kind: ([], []) for kind in kinds}
    order = list(kinds)
    for i in range(iters):
        for kind in (order if i % 2 == 0 else order[::-1]):
            ms, faults = kinds[kind](tensor)
            samples[kind][0].append(ms)
            samples[kind][1].append(faults)
    return {kind: (statistics.median(ms), statistics.median(faults))
            for kind, (ms, faults) in samples.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1M,64M", help="bytes per tensor, K/M suffixes")
    parser.add_argument("--iters", type=int, default=30, help="timed rounds per size")
    parser.add_argument("--torch-alloc", action="store_true",
                        help="also time torch.empty_like plus one write, without a collective")
    args = parser.parse_args()
    if args.iters < 1:
        parser.error("--iters must be at least 1")
    try:
        sizes = parse_sizes(args.sizes)
    except ValueError:
        parser.error(f"--sizes: '{args.sizes}' is not a list of sizes such as 1M,64M")

    torch.set_num_threads(1)
    hvd.init()
    if hvd.rank() == 0:
        print(f"# {hvd.size()} ranks; medians of {args.iters} interleaved calls; "
              "faults = minor page faults per call", flush=True)
        extra = f" {'alloc ms':>9} {'faults':>7}" if args.torch_alloc else ""
        print(f"{'bytes':>10} {'in ms':>8} {'out ms':>8} {'out/in':>7} "
              f"{'in flt':>7} {'out flt':>7}{extra}", flush=True)
    for nbytes in sizes:
        result = measure(nbytes, args.iters, args.torch_alloc)
        if hvd.rank() == 0:
            (in_ms, in_faults), (out_ms, out_faults) = result["in"], result["out"]
            extra = ""
            if args.torch_alloc:
                extra = f" {result['alloc'][0]:9.3f} {result['alloc'][1]:7.0f}"
            print(f"{nbytes:>10} {in_ms:8.3f} {out_ms:8.3f} {out_ms / in_ms:7.2f} "
                  f"{in_faults:7.0f} {out_faults:7.0f}{extra}", flush=True)
    hvd.shutdown()


if __name__ == "__main__":
    main()
