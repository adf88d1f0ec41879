"""Standing in for Horovod's examples/adasum/adasum_small_model.py (see
README.md): the same command line (--mode square|cubic, --op
Average|Adasum, --learning_rate, --x_max) and the same horovod calls:
hvd.init(), hvd.rank(), hvd.size() and hvd.allreduce(grad, op=hvd.Average
or hvd.Adasum) on the gradient after each backward, before a plain SGD
step. A polynomial's coefficients are fitted to one random point per rank
and step; the run ends after 50 steps or once the combined gradient has
been zero twice in a row, and rank 0 prints the real script's summary line
"x_max op learning_rate size steps" (steps 100: did not settle), then each
rank its coefficients."""

import argparse

import numpy as np
import torch

import horovod.torch as hvd

STEPS = 50


def target(x, mode):
    if mode == "square":
        return x * x - 20. * x + 50.
    return 10. * x ** 3 + 5. * x * x - 20. * x - 5.


class Polynomial(torch.nn.Module):
    """The leading coefficient is fixed; the others are learned."""

    def __init__(self, mode):
        super().__init__()
        self.mode = mode
        start = [1., -1.] if mode == "square" else [1., -1., 1.]
        self.param = torch.nn.Parameter(torch.tensor(start))

    def forward(self, x):
        if self.mode == "square":
            return x * x + self.param[0] * x + self.param[1]
        return 10. * x ** 3 + self.param[0] * x * x + self.param[1] * x + self.param[2]


def main(args):
    hvd.init()
    model = Polynomial(args.mode)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.learning_rate)
    draws = np.random.default_rng(1 + hvd.rank())  # each rank its own points
    op = hvd.Adasum if args.op == "Adasum" else hvd.Average
    zero_before, steps = False, STEPS
    for step in range(1, STEPS + 1):
        x = torch.tensor([draws.uniform(-args.x_max, args.x_max)], dtype=torch.float32)
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), target(x, args.mode))
        loss.backward()
        model.param.grad.data = hvd.allreduce(model.param.grad.data, op=op)
        optimizer.step()
        zero = bool((model.param.grad.data[:2] == 0).all())
        if zero and zero_before:
            steps = step
            break
        zero_before = zero
    if steps == STEPS:
        steps = 100
    if hvd.rank() == 0:
        print(args.x_max, args.op, args.learning_rate, hvd.size(), steps)
    coefficients = " ".join(f"{c:.6f}" for c in model.param.data.tolist())
    print(f"rank {hvd.rank()} of {hvd.size()}: coefficients {coefficients} loss {loss.item():.6f}",
          flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Adasum on a small model")
    parser.add_argument("--mode", default="square", choices=["square", "cubic"])
    parser.add_argument("--op", default="Average", choices=["Average", "Adasum"])
    parser.add_argument("--learning_rate", type=float, default=0.1)
    parser.add_argument("--x_max", type=float, default=1.)
    main(parser.parse_args())
