"""The synthetic benchmark under torch.distributed (gloo) DistributedDataParallel.

    python bench/torch_ddp_benchmark.py --np 2 [synthetic benchmark options]

The comparison point for examples/pytorch/synthetic_benchmark.py: the same model, batch,
optimizer, timing loop and report (imported from that script), with DDP averaging the
gradients during backward instead of Kolo's DistributedOptimizer. Starts --np local
processes itself, meeting over env:// on 127.0.0.1.
"""

import os
import socket
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples",
                                "pytorch"))
import synthetic_benchmark as sb  # noqa: E402  (the path above makes it importable)


def worker(rank, size, port, args):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=size)
    torch.set_num_threads(args.num_threads)
    torch.manual_seed(0)

    # DDP broadcasts rank 0's parameters when it wraps the model.
    model = DistributedDataParallel(sb.build_model(args.model, args.image_size))
    if args.fp16_allreduce:
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
        model.register_comm_hook(None, default_hooks.fp16_compress_hook)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01 * size)
    data, target = sb.synthetic_batch(args)

    def log(text):
        if rank == 0:
            print(text, flush=True)

    sb.run_timed(sb.make_step(model, optimizer, data, target), args, size, log)
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    parser = sb.make_parser(__doc__.splitlines()[0])
    parser.add_argument("--np", type=int, default=1, help="number of local processes")
    args = parser.parse_args()
    mp.spawn(worker, args=(args.np, free_port(), args), nprocs=args.np, join=True)


if __name__ == "__main__":
    main()
