"""Fused gradient sets against one raw allreduce of their total, alternating call by call:

    kolorun -np 2 python bench/torch_fused_alignment.py [--rounds 12]

Each set goes through one grouped_allreduce_async_ (one fused response: no per-tensor Python),
so what its ratio to the raw allreduce shows is the engine's and the fused copy's cost: ResNet-50's
160 gradients (every size a multiple of 16 floats), its 42 tensors of 64 K floats or more, the same
total as 160 equal tensors of an odd size (each part ends 44 bytes into a cache line), and as two
halves. Rank 0 prints each set's median ms over the rounds and its ratio to the raw allreduce.
"""

import argparse
import os
import sys

import torch

import horovod.torch as hvd

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "compare-horovod"))
# The comparison's gradient set and its alternating timer.
from collectives import resnet50_gradient_sizes, time_interleaved  # noqa: E402


def gradient_sets():
    sizes = resnet50_gradient_sizes()
    total = sum(sizes)
    return {
        "resnet50": sizes,
        "resnet50_large_only": [s for s in sizes if s >= 65536],
        "160_equal_odd": [total // 160] * 160,
        "two_halves": [total // 2, total - total // 2],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=12)
    args = parser.parse_args()
    if args.rounds <= 0:
        parser.error("--rounds must be positive")
    hvd.init()
    torch.set_num_threads(1)
    calls = {}
    for name, sizes in gradient_sets().items():
        tensors = [torch.ones(n) for n in sizes]
        whole = torch.ones(sum(sizes))
        calls[name] = (lambda t=tensors, n=name:
                       hvd.synchronize(hvd.grouped_allreduce_async_(t, name=n)))
        calls[name + " raw"] = lambda w=whole, n=name: hvd.allreduce_(w, name=n + ".raw")
    medians = time_interleaved(calls, args.rounds, warmup=2)
    if hvd.rank() == 0:
        for name in gradient_sets():
            fused, raw = medians[name], medians[name + " raw"]
            print(f"{name}: {fused:.2f} ms, raw {raw:.2f} ms, {fused / raw:.3f}x", flush=True)
    hvd.shutdown()


if __name__ == "__main__":
    main()
