#!/usr/bin/env python3
"""In-place allreduce through the engine on a process set against the same call on the job.

    kolorun -np 2 python bench/process_set_bench.py
    KOLO_SHM=0 kolorun -np 2 python bench/process_set_bench.py   # both over TCP

The set holds every rank, so the two columns move the same bytes between the same processes:
what differs is only the backend each set got (a set whose members share one host maps a
shared-memory segment of its own; before that, sets always went over TCP, which is what the
KOLO_SHM=0 run shows). Per size: 3 warm-up calls, then the median of --iters timed calls of
hvd.allreduce_ (sum, float32); the tensor is refilled with ones before each call, outside the
timer, and every result is checked. Rank 0 prints one line per size.
"""

import argparse
import statistics
import sys
import time

import horovod.torch as hvd
import torch


def median_ms(tensor, process_set, iters):
    for _ in range(3):
        hvd.allreduce_(tensor, process_set=process_set, op=hvd.Sum)
    times = []
    for _ in range(iters):
        tensor.fill_(1.0)
        start = time.perf_counter()
        hvd.allreduce_(tensor, process_set=process_set, op=hvd.Sum)
        times.append((time.perf_counter() - start) * 1e3)
        if tensor[0].item() != hvd.size() or tensor[-1].item() != hvd.size():
            sys.exit(f"rank {hvd.rank()}: wrong result {tensor[0].item()}, expected {hvd.size()}")
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="16K,1M,16M,64M", help="bytes per tensor, K/M suffixes")
    parser.add_argument("--iters", type=int, default=30)
    args = parser.parse_args()
    scale = {"K": 1 << 10, "M": 1 << 20}
    sizes = [int(s[:-1]) * scale[s[-1]] if s[-1] in scale else int(s) for s in args.sizes.split(",")]

    hvd.init()
    everyone = hvd.add_process_set(list(range(hvd.size())))
    if hvd.rank() == 0:
        print(f"# {hvd.size()} ranks; median ms of {args.iters} in-place allreduces", flush=True)
        print(f"{'bytes':>10} {'job':>9} {'set':>9}", flush=True)
    for nbytes in sizes:
        tensor = torch.ones(nbytes // 4)
        job = median_ms(tensor, hvd.global_process_set, args.iters)
        subset = median_ms(tensor, everyone, args.iters)
        if hvd.rank() == 0:
            print(f"{nbytes:>10} {job:9.3f} {subset:9.3f}", flush=True)
    hvd.remove_process_set(everyone)
    hvd.shutdown()


if __name__ == "__main__":
    main()
