"""Synthetic-data training throughput of torchvision's ResNet-50, for bench/compare-horovod.

    horovodrun -np 2 --gloo python synthetic_benchmark.py     (real Horovod)
    kolorun -np 2 python synthetic_benchmark.py                (Kolo's horovod drop-in)
    python synthetic_benchmark.py --ddp --np 2                 (torch DDP over gloo)

What Horovod's pytorch_synthetic_benchmark.py measures (its 0.28.1 source distribution does not
ship the examples, so this is our own script of the same shape): every worker trains the model
on one fixed random batch with SGD, gradients averaged by hvd.DistributedOptimizer (or, with
--ddp, by DistributedDataParallel over gloo: the same model, batch, optimizer and timing);
rank 0 times groups of steps. The defaults are scaled down from Horovod's (224x224 images,
batch 32, 10 x 10 steps) to 32x32 images, batch 8, 3 x 3 steps, so that a run takes seconds on
a 2-core host with one torch thread per rank; the model and its 25.6 M gradients per step are
the same, so the gradient exchange weighs more against the compute than at 224x224. Rank 0 prints
`COMPARE_RESULT {"case": "synthetic", "img_per_sec": TOTAL, ...}`, TOTAL over all workers.
"""

import argparse
import json
import os
import socket
import statistics
import timeit

import torch
import torch.nn.functional as F

NUM_CLASSES = 1000


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="resnet50", help="a torchvision.models name")
    p.add_argument("--image-size", type=int, default=32, help="height and width of the images")
    p.add_argument("--batch-size", type=int, default=8, help="images per step on each worker")
    p.add_argument("--num-warmup-batches", type=int, default=2, help="steps before timing")
    p.add_argument("--num-batches-per-iter", type=int, default=3, help="steps per timed group")
    p.add_argument("--num-iters", type=int, default=3, help="timed groups")
    p.add_argument("--ddp", action="store_true",
                   help="DistributedDataParallel over gloo instead of horovod.torch")
    p.add_argument("--np", type=int, default=1, help="with --ddp: local processes to start")
    args = p.parse_args()
    for name in ("image_size", "batch_size", "num_batches_per_iter", "num_iters", "np"):
        if getattr(args, name) <= 0:
            p.error(f"--{name.replace('_', '-')} must be positive")
    return args


def build_model(name):
    from torchvision import models
    if not hasattr(models, name):
        raise SystemExit(f"error: torchvision has no model {name!r}")
    return getattr(models, name)(num_classes=NUM_CLASSES)


def train_and_time(model, optimizer, args, rank, size):
    data = torch.randn(args.batch_size, 3, args.image_size, args.image_size)
    target = torch.randint(0, NUM_CLASSES, (args.batch_size,))

    def step():
        optimizer.zero_grad()
        F.cross_entropy(model(data), target).backward()
        optimizer.step()

    timeit.timeit(step, number=args.num_warmup_batches)
    per_worker = []
    for _ in range(args.num_iters):
        seconds = timeit.timeit(step, number=args.num_batches_per_iter)
        per_worker.append(args.batch_size * args.num_batches_per_iter / seconds)
    if rank == 0:
        # Every step ends in an allreduce that waits for all workers, so rank 0's pace is
        # everyone's; the total is size x rank 0's median, as Horovod's report multiplies.
        print("COMPARE_RESULT " + json.dumps({
            "case": "synthetic", "img_per_sec": size * statistics.median(per_worker),
            "size": size, "model": args.model, "image_size": args.image_size,
            "batch_size": args.batch_size}), flush=True)


def run_horovod(args):
    import horovod.torch as hvd
    hvd.init()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = build_model(args.model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01 * hvd.size())
    optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters())
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    hvd.broadcast_optimizer_state(optimizer, root_rank=0)
    train_and_time(model, optimizer, args, hvd.rank(), hvd.size())


def ddp_worker(rank, port, args):
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=args.np)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = DistributedDataParallel(build_model(args.model))  # broadcasts rank 0's weights
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01 * args.np)
    train_and_time(model, optimizer, args, rank, args.np)
    dist.destroy_process_group()


def run_ddp(args):
    import torch.multiprocessing as mp
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(ddp_worker, args=(port, args), nprocs=args.np, join=True)


def main():
    args = parse_args()
    if args.ddp:
        run_ddp(args)
    else:
        run_horovod(args)


if __name__ == "__main__":
    main()
