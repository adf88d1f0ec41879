"""The 200 x 16 KB kolo.torch step through allreduce_async_'s hot path against
its general path, in one job, alternating step by step (a drifting host slows
both alike), with the grouped call, the same step calling the binding
directly (Engine.allreduce_raw and Handle.wait_succeeded, no kolo.torch
Python), and one raw allreduce of the same bytes:

    kolorun -np 2 python bench/torch_async_paths.py [--steps 400]

The general path is reached by passing the global process set as an object
instead of its id. Rank 0 prints the median ms per step of each variant and,
for the per-tensor ones, the median ms of the enqueue loop alone: the hot
path's enqueue minus the direct one is what kolo.torch's Python costs per
burst, the direct one the binding call plus the C++ enqueue.
"""

import argparse
import statistics
import time

import torch

import horovod.torch as hvd
from kolo import _core
from kolo.common.runtime import runtime


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400)
    args = parser.parse_args()
    hvd.init()
    torch.set_num_threads(1)
    tensors = [torch.ones(4096) for _ in range(200)]
    names = [f"small.{i}" for i in range(len(tensors))]
    fused = torch.ones(4096 * len(tensors))

    engine = runtime().engine()
    FLOAT32 = _core.dtype_code("float32")
    ptrs = [t.data_ptr() for t in tensors]
    shapes = [list(t.shape) for t in tensors]

    def step(process_set):
        def run():
            handles = [hvd.allreduce_async_(t, name=n, process_set=process_set)
                       for t, n in zip(tensors, names)]
            enqueued = time.perf_counter()
            for handle in handles:
                hvd.synchronize(handle)
            return enqueued
        return run

    def direct():
        handles = [engine.allreduce_raw(p, p, s, FLOAT32, "average", 1.0, 1.0, n, 0)
                   for p, s, n in zip(ptrs, shapes, names)]
        enqueued = time.perf_counter()
        for handle in handles:
            handle.wait_succeeded()
        return enqueued

    def grouped():
        hvd.synchronize(hvd.grouped_allreduce_async_(tensors, name="g"))

    def raw():
        hvd.allreduce_(fused, name="raw")

    variants = {
        "hot path": step(0),
        "general path": step(hvd.global_process_set),
        "direct binding": direct,
        "grouped": grouped,  # one call each: no enqueue loop to time apart
        "raw 3.2 MB": raw,
    }
    times = {name: [] for name in variants}
    enqueues = {name: [] for name in variants}
    for run in variants.values():
        for _ in range(20):
            run()
    for _ in range(args.steps):
        for name, run in variants.items():
            start = time.perf_counter()
            enqueued = run()
            times[name].append(time.perf_counter() - start)
            if enqueued is not None:
                enqueues[name].append(enqueued - start)
    if hvd.rank() == 0:
        for name, t in times.items():
            enqueue = (f" (enqueue loop {statistics.median(enqueues[name]) * 1e3:.3f} ms)"
                       if enqueues[name] else "")
            print(f"{name}: {statistics.median(t) * 1e3:.3f} ms{enqueue}")
    hvd.shutdown()


if __name__ == "__main__":
    main()
