"""The 200 x 16 KB kolo.torch step through allreduce_async_'s hot path against
its general path, in one job, alternating step by step (a drifting host slows
both alike), with the grouped call and one raw allreduce of the same bytes:

    kolorun -np 2 python bench/torch_async_paths.py [--steps 400]

The general path is reached by passing the global process set as an object
instead of its id. Rank 0 prints the median ms per step of each variant.
"""

import argparse
import statistics
import time

import torch

import horovod.torch as hvd


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400)
    args = parser.parse_args()
    hvd.init()
    torch.set_num_threads(1)
    tensors = [torch.ones(4096) for _ in range(200)]
    names = [f"small.{i}" for i in range(len(tensors))]
    fused = torch.ones(4096 * len(tensors))

    def step(process_set):
        def run():
            handles = [hvd.allreduce_async_(t, name=n, process_set=process_set)
                       for t, n in zip(tensors, names)]
            for handle in handles:
                hvd.synchronize(handle)
        return run

    variants = {
        "hot path": step(0),
        "general path": step(hvd.global_process_set),
        "grouped": lambda: hvd.synchronize(hvd.grouped_allreduce_async_(tensors, name="g")),
        "raw 3.2 MB": lambda: hvd.allreduce_(fused, name="raw"),
    }
    times = {name: [] for name in variants}
    for run in variants.values():
        for _ in range(20):
            run()
    for _ in range(args.steps):
        for name, run in variants.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    if hvd.rank() == 0:
        print(" ".join(f"{name}: {statistics.median(t) * 1e3:.3f} ms;" for name, t in times.items()))
    hvd.shutdown()


if __name__ == "__main__":
    main()
