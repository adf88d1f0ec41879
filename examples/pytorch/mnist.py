"""Handwritten-digit classification with Kolo: a Horovod-style PyTorch script.

    kolorun -np 2 python examples/pytorch/mnist.py                 # what `make demo` runs
    kolorun -np 2 python examples/pytorch/mnist.py --data-dir DIR  # real MNIST, if you have it

It needs no download. By default it trains on the 1,797 8x8 digits that ship with
scikit-learn (Debian's python3-sklearn). When --data-dir holds MNIST, either Keras's
mnist.npz or the four idx files (optionally gzipped, also under MNIST/raw/ as torchvision
lays them out), it trains on those 70,000 28x28 digits instead.

The Kolo lines are exactly Horovod's: `import horovod.torch as hvd` runs this script
unchanged through Kolo's drop-in package. Each one is marked "Horovod:" below.
"""

import argparse
import gzip
import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.data
from tqdm import tqdm

import kolo.torch as hvd  # or: import horovod.torch as hvd


def argument_parser(description):
    """The options this script shares with lightning_mnist.py."""
    p = argparse.ArgumentParser(description=description,
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--epochs", type=int, default=None,
                   help="passes over the training set (default: 20 on the 8x8 digits, 3 on MNIST)")
    p.add_argument("--batch-size", type=int, default=32, help="samples per step on each rank")
    p.add_argument("--lr", type=float, default=0.02,
                   help="learning rate of one rank; it is multiplied by the number of ranks")
    p.add_argument("--momentum", type=float, default=0.9, help="SGD momentum")
    p.add_argument("--seed", type=int, default=42, help="random seed (the same on every rank)")
    p.add_argument("--data-dir", default=None,
                   help="directory with mnist.npz or the MNIST idx files "
                        "(default: scikit-learn's digits)")
    p.add_argument("--min-accuracy", type=float, default=0.9,
                   help="exit with status 1 when the test accuracy ends below this fraction")
    return p


def parse_args():
    p = argument_parser(__doc__.splitlines()[0])
    p.add_argument("--fp16-allreduce", action="store_true",
                   help="compress gradients to float16 for the allreduce")
    p.add_argument("--cuda", action="store_true",
                   help="train on this rank's GPU (local rank modulo the devices: ranks share "
                        "a GPU when a host has fewer GPUs than ranks)")
    return p.parse_args()


# ---------------------------------------------------------------------------- data

MNIST_IDX = {  # split -> (images, labels) file names of the original distribution
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}


def read_idx(path):
    """Reads one idx file (the MNIST format): a big-endian header, then raw uint8 data."""
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        data = f.read()
    zero, dtype_code, ndim = data[0] << 8 | data[1], data[2], data[3]
    if zero != 0 or dtype_code != 0x08:  # 0x08: unsigned byte, the only type MNIST uses
        raise ValueError(f"{path}: not an idx file of unsigned bytes")
    shape = tuple(int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim))
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def find_mnist_idx(data_dir):
    """Returns {split: (images path, labels path)} if all four idx files are found."""
    for d in (data_dir, os.path.join(data_dir, "MNIST", "raw")):
        found = {}
        for split, names in MNIST_IDX.items():
            paths = []
            for name in names:
                for candidate in (name, name + ".gz"):
                    if os.path.exists(os.path.join(d, candidate)):
                        paths.append(os.path.join(d, candidate))
                        break
            if len(paths) == 2:
                found[split] = tuple(paths)
        if len(found) == 2:
            return found
    return None


def load_mnist(data_dir):
    """MNIST from --data-dir as (x_train, y_train, x_test, y_test), pixels scaled to [0, 1]."""
    npz = data_dir if data_dir.endswith(".npz") else os.path.join(data_dir, "mnist.npz")
    if os.path.isfile(npz):
        with np.load(npz) as f:  # Keras's layout
            arrays = f["x_train"], f["y_train"], f["x_test"], f["y_test"]
    else:
        idx = find_mnist_idx(data_dir)
        if idx is None:
            sys.exit(f"error: no MNIST in {data_dir}: expected mnist.npz or the idx files "
                     f"{', '.join(n for names in MNIST_IDX.values() for n in names)} (or .gz)")
        arrays = (read_idx(idx["train"][0]), read_idx(idx["train"][1]),
                  read_idx(idx["test"][0]), read_idx(idx["test"][1]))
    x_train, y_train, x_test, y_test = arrays
    return x_train / np.float32(255), y_train, x_test / np.float32(255), y_test


def load_sklearn_digits():
    """scikit-learn's 8x8 digits (files inside the package), split 80/20 into train and test.

    The split has its own fixed seed, so every rank holds the same split and the test
    accuracy of runs with different --seed values is measured on the same images.
    """
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    x = digits.images / np.float32(16)  # pixel values are 0..16
    x_train, x_test, y_train, y_test = train_test_split(
        x, digits.target, test_size=0.2, random_state=0, stratify=digits.target)
    return x_train, y_train, x_test, y_test


def to_dataset(x, y, mean, std):
    images = torch.from_numpy(((x - mean) / std).astype(np.float32)).unsqueeze(1)  # N,1,H,W
    return torch.utils.data.TensorDataset(images, torch.from_numpy(y.astype(np.int64)))


def load_datasets(data_dir):
    """(train set, test set, where they came from, default epochs) for --data-dir."""
    if data_dir:
        x_train, y_train, x_test, y_test = load_mnist(data_dir)
        source, default_epochs = f"MNIST from {data_dir}", 3
    else:
        x_train, y_train, x_test, y_test = load_sklearn_digits()
        source, default_epochs = "scikit-learn's 8x8 digits", 20
    # Normalize with the training set's statistics: identical on every rank.
    mean, std = x_train.mean(), x_train.std()
    return (to_dataset(x_train, y_train, mean, std), to_dataset(x_test, y_test, mean, std),
            source, default_epochs)


# ---------------------------------------------------------------------------- model

class Net(nn.Module):
    """Two 3x3 convolutions, each followed by 2x2 max pooling, then two dense layers.

    Small enough for one CPU thread per rank; works for 8x8 and 28x28 inputs.
    """

    def __init__(self, image_size):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.dropout = nn.Dropout(0.25)
        self.fc1 = nn.Linear(32 * (image_size // 4) ** 2, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = self.dropout(torch.flatten(x, 1))
        return self.fc2(F.relu(self.fc1(x)))


# ---------------------------------------------------------------------------- progress

class LineStream:
    """Turns tqdm's carriage-return redraws into whole lines.

    kolorun (like horovodrun) forwards a rank's output one complete line at a time, so
    a bar redrawn with '\\r' would show up only when it ends. Used when stderr is not a
    terminal; tqdm's mininterval then bounds how many lines the bar prints.
    """

    def __init__(self, stream):
        self.stream = stream
        self.last = None

    def write(self, text):
        for part in text.replace("\n", "\r").split("\r"):
            part = part.rstrip()
            if part and part != self.last:  # closing the bar redraws its last state
                self.stream.write(part + "\n")
                self.last = part

    def flush(self):
        self.stream.flush()


def progress_bar(total):
    on_terminal = sys.stderr.isatty()
    return tqdm(total=total, unit="step", disable=hvd.rank() != 0,
                file=sys.stderr if on_terminal else LineStream(sys.stderr),
                mininterval=0.1 if on_terminal else 2.0, ascii=not on_terminal)


# ---------------------------------------------------------------------------- training

def metric_average(value, name):
    # Horovod: allreduce averages over ranks by default.
    return hvd.allreduce(torch.tensor(float(value)), name=name).item()


def evaluate(model, dataset, device):
    """Accuracy on the whole test set: each rank scores every size-th sample, and the
    correct counts and sample counts are summed over ranks, so the result is exact
    (a DistributedSampler would pad the last shard with repeated samples)."""
    model.eval()
    images, labels = (t.to(device) for t in dataset.tensors)
    mine = slice(hvd.rank(), None, hvd.size())
    with torch.no_grad():
        correct = (model(images[mine]).argmax(dim=1) == labels[mine]).sum().item()
    # Horovod: op=hvd.Sum adds the counts instead of averaging them.
    totals = hvd.allreduce(torch.tensor([correct, labels[mine].numel()], dtype=torch.float64),
                           name="test_counts", op=hvd.Sum)
    return (totals[0] / totals[1]).item()


def main():
    args = parse_args()

    # Horovod: initialize the library (rank, size, and the connections between ranks).
    hvd.init()
    # Ranks on one host share its cores: one thread each keeps them from oversubscribing.
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    device = torch.device("cpu")
    if args.cuda:
        # Horovod: pin each rank to one GPU before any CUDA work.
        torch.cuda.set_device(hvd.local_rank() % torch.cuda.device_count())
        device = torch.device("cuda", torch.cuda.current_device())

    train_set, test_set, source, default_epochs = load_datasets(args.data_dir)
    epochs = args.epochs if args.epochs is not None else default_epochs

    # Horovod: each rank trains on its own 1/size of the data, reshuffled every epoch.
    sampler = torch.utils.data.distributed.DistributedSampler(
        train_set, num_replicas=hvd.size(), rank=hvd.rank(), shuffle=True, seed=args.seed)
    loader = torch.utils.data.DataLoader(train_set, batch_size=args.batch_size, sampler=sampler)

    model = Net(image_size=train_set.tensors[0].shape[-1]).to(device)
    # Horovod: the effective batch is size times larger, so scale the learning rate with it.
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr * hvd.size(),
                                momentum=args.momentum)

    # Horovod: start every rank from rank 0's weights and optimizer state.
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    hvd.broadcast_optimizer_state(optimizer, root_rank=0)

    # Horovod: average gradients across ranks in step(), optionally sent as float16.
    compression = hvd.Compression.fp16 if args.fp16_allreduce else hvd.Compression.none
    optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters(),
                                         compression=compression)

    if hvd.rank() == 0:
        print(f"training on {source}: {len(train_set)} train and {len(test_set)} test images, "
              f"{hvd.size()} rank(s), {epochs} epoch(s), batch {args.batch_size} per rank",
              flush=True)

    bar = progress_bar(total=epochs * len(loader))
    for epoch in range(1, epochs + 1):
        model.train()
        sampler.set_epoch(epoch)
        loss_sum = 0.0
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(images), labels)
            loss.backward()
            optimizer.step()
            loss_sum += loss.item()
            bar.update()
        # Every rank has the same number of batches (the sampler pads), so the
        # average of the ranks' averages is the average over all batches.
        train_loss = metric_average(loss_sum / len(loader), "train_loss")
        bar.set_postfix_str(f"epoch {epoch}/{epochs} loss {train_loss:.4f}", refresh=False)
    bar.close()

    accuracy = evaluate(model, test_set, device)
    if hvd.rank() == 0:
        print(f"test accuracy: {100 * accuracy:.1f}% ({len(test_set)} held-out images)",
              flush=True)
    # Every rank holds the same accuracy, so they all exit with the same status.
    if not math.isfinite(accuracy) or accuracy < args.min_accuracy:
        if hvd.rank() == 0:
            print(f"error: test accuracy {100 * accuracy:.1f}% is below "
                  f"--min-accuracy {100 * args.min_accuracy:.1f}%", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
