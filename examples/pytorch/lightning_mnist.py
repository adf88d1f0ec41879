"""Handwritten-digit classification with PyTorch Lightning 2 on Kolo.

    kolorun -np 2 python examples/pytorch/lightning_mnist.py
    kolorun -np 2 python examples/pytorch/lightning_mnist.py --data-dir DIR   # real MNIST

The same data and network as mnist.py (scikit-learn's 8x8 digits by default, no
download; MNIST's files with --data-dir), trained by a Lightning Trainer with
Kolo's strategy. kolorun starts the ranks; Lightning starts no processes. Each
rank reports Lightning's world size and rank and which training samples it saw,
so a run shows that the ranks split the data between them.
"""

import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
import torch.utils.data

import kolo.lightning  # noqa: F401  before Lightning: registers strategy="kolo" / "horovod"
from kolo.lightning import KoloStrategy
import pytorch_lightning as pl  # noqa: E402

# The data and the network are mnist.py's (this script's directory is on sys.path).
from mnist import Net, argument_parser, load_datasets  # noqa: E402


def parse_args():
    p = argument_parser(__doc__.splitlines()[0])
    p.add_argument("--strategy", default=None, choices=["kolo", "horovod"],
                   help="pass the Trainer this registered name instead of a KoloStrategy()")
    p.add_argument("--accumulate-grad-batches", type=int, default=1,
                   help="batches whose gradients are summed locally before each step")
    p.add_argument("--checkpoint-dir", default=None,
                   help="save the last model here (rank 0 writes it)")
    return p.parse_args()


class IndexedDataset(torch.utils.data.Dataset):
    """(image, label, index): the index lets each rank report which samples it saw."""

    def __init__(self, dataset):
        self.dataset = dataset

    def __len__(self):
        return len(self.dataset)

    def __getitem__(self, i):
        return (*self.dataset[i], i)


class DigitClassifier(pl.LightningModule):
    def __init__(self, image_size, lr, momentum):
        super().__init__()
        self.net = Net(image_size)
        self.lr, self.momentum = lr, momentum
        self.seen = set()  # training sample indices this rank trained on in epoch 0
        self.counts = torch.zeros(2, dtype=torch.float64)  # correct, total (validation)
        self.accuracy = math.nan

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr, momentum=self.momentum)

    def training_step(self, batch, batch_idx):
        images, labels, indices = batch
        if self.current_epoch == 0:  # later epochs reshuffle the shards
            self.seen.update(indices.tolist())
        loss = F.cross_entropy(self.net(images), labels)
        self.log("train_loss", loss, sync_dist=True)  # averaged over the ranks
        return loss

    def on_validation_epoch_start(self):
        self.counts.zero_()

    def validation_step(self, batch, batch_idx):
        images, labels, _ = batch
        correct = (self.net(images).argmax(dim=1) == labels).sum().item()
        self.counts += torch.tensor([correct, labels.numel()], dtype=torch.float64)

    def on_validation_epoch_end(self):
        # Counts summed over the ranks: the accuracy of the whole test set.
        totals = self.trainer.strategy.reduce(self.counts.clone(), reduce_op="sum")
        self.accuracy = (totals[0] / totals[1]).item()
        self.log("val_acc", self.accuracy)  # the same on every rank already


def main():
    args = parse_args()
    # Ranks on one host share its cores: one thread each keeps them from oversubscribing.
    torch.set_num_threads(1)
    pl.seed_everything(args.seed, workers=True)

    train_tensors, test_tensors, source, default_epochs = load_datasets(args.data_dir)
    epochs = args.epochs if args.epochs is not None else default_epochs
    train_set, test_set = IndexedDataset(train_tensors), IndexedDataset(test_tensors)
    # Plain loaders: Lightning gives each rank its shard (a DistributedSampler
    # with KoloStrategy's world size and rank).
    train_loader = torch.utils.data.DataLoader(train_set, batch_size=args.batch_size,
                                               shuffle=True)
    test_loader = torch.utils.data.DataLoader(test_set, batch_size=256)

    strategy = args.strategy or KoloStrategy()
    trainer = pl.Trainer(
        strategy=strategy, accelerator="cpu", devices=1, max_epochs=epochs,
        accumulate_grad_batches=args.accumulate_grad_batches, num_sanity_val_steps=0,
        check_val_every_n_epoch=epochs, logger=False, enable_progress_bar=False,
        enable_model_summary=False, enable_checkpointing=args.checkpoint_dir is not None,
        default_root_dir=args.checkpoint_dir)
    model = DigitClassifier(train_tensors.tensors[0].shape[-1], args.lr, args.momentum)
    if trainer.is_global_zero:
        print(f"training on {source}: {len(train_set)} train and {len(test_set)} test images, "
              f"{trainer.world_size} rank(s), {epochs} epoch(s), batch {args.batch_size} per rank",
              flush=True)
    trainer.fit(model, train_loader, test_loader)

    seen = np.array(sorted(model.seen), dtype=np.int64)
    print(f"rank {trainer.global_rank} of world size {trainer.world_size} "
          f"({type(trainer.strategy).__name__}): epoch 0 trained on {seen.size} distinct samples, "
          f"index sum {int(seen.sum())}", flush=True)
    accuracy = model.accuracy
    if trainer.is_global_zero:
        print(f"test accuracy: {100 * accuracy:.1f}% ({len(test_set)} held-out images)",
              flush=True)
    if args.checkpoint_dir and trainer.is_global_zero:
        print(f"checkpoint: {trainer.checkpoint_callback.best_model_path}", flush=True)
    # Every rank holds the same accuracy, so they all exit with the same status.
    if not math.isfinite(accuracy) or accuracy < args.min_accuracy:
        if trainer.is_global_zero:
            print(f"error: test accuracy {100 * accuracy:.1f}% is below "
                  f"--min-accuracy {100 * args.min_accuracy:.1f}%", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
