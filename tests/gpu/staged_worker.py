"""One rank of test_host_staged.py: every rank on the one GPU (cuda:0), so
NCCL cannot serve and Kolo must stage through the host. Checks each result
against the value computed from the ranks' known inputs; exits non-zero with
the first mismatch."""

import sys

import torch

import kolo.torch as hvd

DTYPES = [torch.uint8, torch.int32, torch.int64, torch.float16, torch.bfloat16, torch.float32,
          torch.float64]


def main():
    hvd.init()
    torch.cuda.set_device(0)
    rank, size = hvd.rank(), hvd.size()
    device = torch.device("cuda", 0)
    for dtype in DTYPES:
        for elements in (1, 1000, 3 << 20):  # below, near and above a staging chunk
            t = torch.full((elements,), rank + 1, dtype=dtype, device=device)
            out = hvd.allreduce(t, op=hvd.Sum, name=f"ar.{dtype}.{elements}")
            expected = torch.full((elements,), size * (size + 1) // 2, dtype=dtype)
            check(out, expected, f"allreduce {dtype} x {elements}")
        g = hvd.allgather(torch.full((2, 3), rank, dtype=dtype, device=device),
                          name=f"ag.{dtype}")
        check(g, torch.arange(size).repeat_interleave(2).view(-1, 1).expand(-1, 3).to(dtype),
              f"allgather {dtype}")
        b = hvd.broadcast(torch.full((7,), rank, dtype=dtype, device=device), root_rank=size - 1,
                          name=f"bc.{dtype}")
        check(b, torch.full((7,), size - 1, dtype=dtype), f"broadcast {dtype}")
    hvd.shutdown()


def check(actual, expected, what):
    if actual.device.type != "cuda" or not torch.equal(actual.cpu(), expected):
        print(f"rank {hvd.rank()}: {what}: got {actual} on {actual.device}, expected {expected}",
              file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
