"""MNIST with Horovod's PyTorch API, standing in for Horovod's
examples/pytorch/pytorch_mnist.py (see README.md): the same command line and
the same horovod calls with the same arguments, on every path the real
script has (CPU, CUDA, mixed precision, started by horovod.run with
--num-proc). Run with --use-adasum to combine the ranks' updates with
Adasum."""

import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import torch.utils.data.distributed
from filelock import FileLock
from torchvision import datasets, transforms

import horovod
import horovod.torch as hvd

parser = argparse.ArgumentParser(description="PyTorch MNIST Example")
parser.add_argument("--batch-size", type=int, default=64, metavar="N")
parser.add_argument("--test-batch-size", type=int, default=1000, metavar="N")
parser.add_argument("--epochs", type=int, default=10, metavar="N")
parser.add_argument("--lr", type=float, default=0.01, metavar="LR")
parser.add_argument("--momentum", type=float, default=0.5, metavar="M")
parser.add_argument("--no-cuda", action="store_true", default=False)
parser.add_argument("--seed", type=int, default=42, metavar="S")
parser.add_argument("--log-interval", type=int, default=10, metavar="N")
parser.add_argument("--fp16-allreduce", action="store_true", default=False)
parser.add_argument("--use-mixed-precision", action="store_true", default=False)
parser.add_argument("--use-adasum", action="store_true", default=False)
parser.add_argument("--gradient-predivide-factor", type=float, default=1.0)
parser.add_argument("--data-dir")
# Without horovodrun: the script starts its own ranks through horovod.run.
parser.add_argument("--num-proc", type=int)
parser.add_argument("--hosts")
parser.add_argument("--communication")

NORMALIZE = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = F.relu(self.fc1(x.view(-1, 320)))
        x = F.dropout(x, training=self.training)
        return F.log_softmax(self.fc2(x), dim=1)


def metric_average(val, name):
    # As the real script: a float or a 0-dim tensor, averaged by name.
    return hvd.allreduce(torch.tensor(val), name=name).item()


def run_epoch(args, model, optimizer, loader, sampler, epoch, scaler):
    model.train()
    sampler.set_epoch(epoch)
    for batch_idx, (data, target) in enumerate(loader):
        if args.cuda:
            data, target = data.cuda(), target.cuda()
        optimizer.zero_grad()
        if scaler is None:
            loss = F.nll_loss(model(data), target)
            loss.backward()
            optimizer.step()
        else:
            with torch.cuda.amp.autocast():
                loss = F.nll_loss(model(data), target)
            scaler.scale(loss).backward()
            optimizer.synchronize()
            scaler.unscale_(optimizer)
            with optimizer.skip_synchronize():
                scaler.step(optimizer)
            scaler.update()
        if batch_idx % args.log_interval == 0:
            print("Train Epoch: {} [{}/{}]\tLoss: {:.6f}".format(
                epoch, batch_idx * len(data), len(sampler), loss.item()))


def evaluate(args, model, loader, sampler):
    model.eval()
    loss_sum, correct = 0., 0.
    with torch.no_grad():
        for data, target in loader:
            if args.cuda:
                data, target = data.cuda(), target.cuda()
            output = model(data)
            loss_sum += F.nll_loss(output, target, reduction="sum").item()
            correct += (output.argmax(dim=1) == target).cpu().float().sum()
    test_loss = metric_average(loss_sum / len(sampler), "avg_loss")
    test_accuracy = metric_average(correct / len(sampler), "avg_accuracy")
    if hvd.rank() == 0:
        print("\nTest set: Average loss: {:.4f}, Accuracy: {:.2f}%\n".format(
            test_loss, 100. * test_accuracy))


def train(args):
    hvd.init()
    torch.manual_seed(args.seed)
    if args.cuda:
        torch.cuda.set_device(hvd.local_rank())
        torch.cuda.manual_seed(args.seed)
    elif args.use_mixed_precision:
        raise ValueError("Mixed precision is only supported with cuda enabled.")
    torch.set_num_threads(1)
    kwargs = {"num_workers": 1, "pin_memory": True} if args.cuda else {}

    data_dir = args.data_dir or "./data"
    with FileLock(os.path.expanduser("~/.horovod_lock")):
        train_dataset = datasets.MNIST(data_dir, train=True, download=True, transform=NORMALIZE)
    test_dataset = datasets.MNIST(data_dir, train=False, transform=NORMALIZE)
    samplers, loaders = [], []
    for dataset, batch in ((train_dataset, args.batch_size), (test_dataset, args.test_batch_size)):
        sampler = torch.utils.data.distributed.DistributedSampler(
            dataset, num_replicas=hvd.size(), rank=hvd.rank())
        samplers.append(sampler)
        loaders.append(torch.utils.data.DataLoader(dataset, batch_size=batch, sampler=sampler,
                                                   **kwargs))

    model = Net()
    # Adasum needs no learning rate scaled up with the ranks; on GPUs with
    # NCCL, Horovod's Adasum scales it by the ranks of a host.
    lr_scaler = hvd.size() if not args.use_adasum else 1
    if args.cuda:
        model.cuda()
        if args.use_adasum and hvd.nccl_built():
            lr_scaler = hvd.local_size()
    optimizer = optim.SGD(model.parameters(), lr=args.lr * lr_scaler, momentum=args.momentum)

    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    hvd.broadcast_optimizer_state(optimizer, root_rank=0)

    compression = hvd.Compression.fp16 if args.fp16_allreduce else hvd.Compression.none
    optimizer = hvd.DistributedOptimizer(optimizer,
                                         named_parameters=model.named_parameters(),
                                         compression=compression,
                                         op=hvd.Adasum if args.use_adasum else hvd.Average,
                                         gradient_predivide_factor=args.gradient_predivide_factor)
    scaler = torch.cuda.amp.GradScaler() if args.use_mixed_precision else None

    for epoch in range(1, args.epochs + 1):
        run_epoch(args, model, optimizer, loaders[0], samplers[0], epoch, scaler)
        evaluate(args, model, loaders[1], samplers[1])
    print(f"rank {hvd.rank()} of {hvd.size()} done", flush=True)


if __name__ == "__main__":
    args = parser.parse_args()
    args.cuda = not args.no_cuda and torch.cuda.is_available()
    if args.num_proc:
        print("Running training through horovod.run")
        horovod.run(train, args=(args,), np=args.num_proc, hosts=args.hosts,
                    use_gloo=args.communication == "gloo",
                    use_mpi=args.communication == "mpi", verbose=2)
    else:
        train(args)
