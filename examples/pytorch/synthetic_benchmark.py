"""Training throughput with Kolo on synthetic data, in the shape of Horovod's benchmark.

    kolorun -np 2 python examples/pytorch/synthetic_benchmark.py
    kolorun -np 2 python examples/pytorch/synthetic_benchmark.py --model resnet50 --image-size 224

Each rank runs forward, backward and an averaged-gradient step on the same random batch
again and again; rank 0 times groups of steps and prints images per second per worker
and in total. The default model is a small CNN on 32x32 images, sized for a few CPU
cores; any torchvision model name works when torchvision is installed.

bench/torch_ddp_benchmark.py times the same model and steps under PyTorch's
DistributedDataParallel, and bench/torch_scaling.sh compares the two.
"""

import argparse
import timeit

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import kolo.torch as hvd  # or: import horovod.torch as hvd

NUM_CLASSES = 10


def make_parser(description):
    p = argparse.ArgumentParser(description=description,
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--model", default="smallcnn",
                   help="smallcnn, or a torchvision.models name such as resnet50")
    p.add_argument("--image-size", type=int, default=32, help="height and width of the images")
    p.add_argument("--batch-size", type=int, default=32, help="images per step on each worker")
    p.add_argument("--num-warmup-batches", type=int, default=10,
                   help="steps before timing starts")
    p.add_argument("--num-batches-per-iter", type=int, default=10, help="steps per timed iteration")
    p.add_argument("--num-iters", type=int, default=10, help="timed iterations")
    p.add_argument("--num-threads", type=int, default=1,
                   help="torch threads per worker (one per worker keeps ranks on a host from "
                        "oversubscribing its cores)")
    p.add_argument("--fp16-allreduce", action="store_true",
                   help="compress gradients to float16 for the allreduce")
    return p


def build_model(name, image_size):
    """The benchmarked model. Shared with bench/torch_ddp_benchmark.py so that both
    frameworks train exactly the same network."""
    if name == "smallcnn":
        # Three conv/pool stages and two dense layers: 0.62M parameters (2.5 MB of
        # float32 gradients per step) and ~50 ms per step of 32 images on one core.
        width = 32
        return nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(2 * width, 4 * width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(4 * width * (image_size // 8) ** 2, 256), nn.ReLU(),
            nn.Linear(256, NUM_CLASSES))
    try:
        from torchvision import models
    except ImportError:
        raise SystemExit(f"error: model {name!r} needs torchvision, which is not installed; "
                         "use --model smallcnn") from None
    if not hasattr(models, name):
        raise SystemExit(f"error: torchvision has no model {name!r}")
    return getattr(models, name)(num_classes=NUM_CLASSES)


def synthetic_batch(args):
    data = torch.randn(args.batch_size, 3, args.image_size, args.image_size)
    target = torch.randint(0, NUM_CLASSES, (args.batch_size,))
    return data, target


def make_step(model, optimizer, data, target):
    def step():
        optimizer.zero_grad()
        loss = F.cross_entropy(model(data), target)
        loss.backward()
        optimizer.step()
    return step


def run_timed(step, args, size, log):
    """Warms up, then times --num-iters groups of steps and prints Horovod's report.

    Throughput is rank 0's; the total assumes every worker keeps pace with it, which
    holds because each step ends with an allreduce that waits for all of them.
    """
    log(f"Model: {args.model}")
    log(f"Batch size: {args.batch_size}")
    log(f"Number of workers: {size}")
    log("Running warmup...")
    timeit.timeit(step, number=args.num_warmup_batches)
    log("Running benchmark...")
    img_secs = []
    for i in range(args.num_iters):
        seconds = timeit.timeit(step, number=args.num_batches_per_iter)
        img_sec = args.batch_size * args.num_batches_per_iter / seconds
        log(f"Iter #{i}: {img_sec:.1f} img/sec per worker")
        img_secs.append(img_sec)
    mean, conf = np.mean(img_secs), 1.96 * np.std(img_secs)  # Horovod's 95% interval
    log(f"Img/sec per worker: {mean:.1f} +-{conf:.1f}")
    log(f"Total img/sec on {size} worker(s): {size * mean:.1f} +-{size * conf:.1f}")


def main():
    args = make_parser(__doc__.splitlines()[0]).parse_args()

    # Horovod: initialize the library.
    hvd.init()
    torch.set_num_threads(args.num_threads)
    torch.manual_seed(0)

    model = build_model(args.model, args.image_size)
    # Horovod: scale the learning rate by the number of workers (as a real job would).
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01 * hvd.size())
    compression = hvd.Compression.fp16 if args.fp16_allreduce else hvd.Compression.none
    # Horovod: average gradients across workers in step().
    optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters(),
                                         compression=compression)
    # Horovod: start every worker from rank 0's weights and optimizer state.
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    hvd.broadcast_optimizer_state(optimizer, root_rank=0)

    data, target = synthetic_batch(args)

    def log(text):
        if hvd.rank() == 0:
            print(text, flush=True)

    run_timed(make_step(model, optimizer, data, target), args, hvd.size(), log)


if __name__ == "__main__":
    main()
