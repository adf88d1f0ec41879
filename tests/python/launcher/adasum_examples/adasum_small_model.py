"""Horovod's small-model Adasum experiment, in its shape (see README.md): one
weight fitted to y = 2x over x in [0, --x-max) with plain SGD, the ranks'
updates combined with Adasum (--use-adasum) or averaged."""

import argparse

import torch

import horovod.torch as hvd

parser = argparse.ArgumentParser(description="Adasum on a small model")
parser.add_argument("--use-adasum", action="store_true", default=False)
parser.add_argument("--lr", type=float, default=0.02)
parser.add_argument("--x-max", type=float, default=2.0)
parser.add_argument("--batch-size", type=int, default=16)
parser.add_argument("--steps", type=int, default=200)
parser.add_argument("--seed", type=int, default=1)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1))

    def forward(self, x):
        return self.weight * x


if __name__ == "__main__":
    args = parser.parse_args()
    hvd.init()
    torch.manual_seed(args.seed + hvd.rank())  # each rank draws its own batches
    model = Model()
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters(),
                                         op=hvd.Adasum if args.use_adasum else hvd.Average)
    for step in range(args.steps):
        x = torch.rand(args.batch_size) * args.x_max
        y = 2.0 * x
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    weight = model.weight.item()
    print(f"rank {hvd.rank()} of {hvd.size()}: weight {weight:.6f} loss {loss.item():.6f}",
          flush=True)
