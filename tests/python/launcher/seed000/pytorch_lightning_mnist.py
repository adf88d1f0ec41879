"""MNIST on every rank with horovod.torch: a stand-in for Horovod's
examples/pytorch/pytorch_lightning_mnist.py (see README.md)."""

import argparse
import os

import torch
import torch.nn.functional as F
from torch import nn
from torchvision import datasets, transforms

import horovod.torch as hvd


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 5)
        self.fc = nn.Linear(8 * 12 * 12, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        return self.fc(torch.flatten(x, 1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--data-dir", default=os.path.join(os.path.dirname(__file__), "data"))
    args = parser.parse_args()

    hvd.init()
    torch.manual_seed(42)
    torch.set_num_threads(1)
    to_tensor = transforms.ToTensor()
    train = datasets.MNIST(args.data_dir, train=True, download=False, transform=to_tensor)
    test = datasets.MNIST(args.data_dir, train=False, download=False, transform=to_tensor)
    sampler = torch.utils.data.distributed.DistributedSampler(
        train, num_replicas=hvd.size(), rank=hvd.rank())
    loader = torch.utils.data.DataLoader(train, batch_size=args.batch_size, sampler=sampler)

    model = Net()
    optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.05),
                                         named_parameters=model.named_parameters())
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    hvd.broadcast_optimizer_state(optimizer, root_rank=0)

    for epoch in range(1, args.epochs + 1):
        model.train()
        sampler.set_epoch(epoch)
        for data, target in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(data), target)
            loss.backward()
            optimizer.step()
        print(f"rank {hvd.rank()} of {hvd.size()} (local rank {hvd.local_rank()}): "
              f"epoch {epoch} loss {loss.item():.4f}", flush=True)

    model.eval()
    test_sampler = torch.utils.data.distributed.DistributedSampler(
        test, num_replicas=hvd.size(), rank=hvd.rank(), shuffle=False)
    correct = torch.zeros(1)
    with torch.no_grad():
        for data, target in torch.utils.data.DataLoader(test, batch_size=256,
                                                        sampler=test_sampler):
            correct += (model(data).argmax(1) == target).sum()
    accuracy = hvd.allreduce(correct / len(test_sampler), name="accuracy")
    if hvd.rank() == 0:
        print(f"test accuracy over {hvd.size()} ranks: {accuracy.item():.3f}", flush=True)


if __name__ == "__main__":
    main()
