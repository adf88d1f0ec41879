"""ResNet-50 on an ImageFolder with Horovod's elastic API: a stand-in for
Horovod's examples/elastic/pytorch/pytorch_imagenet_resnet50_elastic.py with
its command line (see README.md)."""

import argparse

import torch
import torch.nn.functional as F
from torchvision import datasets, models, transforms

import horovod.torch as hvd


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train-dir", required=True)
    parser.add_argument("--val-dir", required=True)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--val-batch-size", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--base-lr", type=float, default=0.0125)
    parser.add_argument("--checkpoint-format", default="./checkpoint-{epoch}.pth.tar")
    return parser.parse_args()


def main():
    args = parse_args()
    hvd.init()
    torch.manual_seed(42)
    torch.set_num_threads(1)
    to_tensor = transforms.ToTensor()
    train_set = datasets.ImageFolder(args.train_dir, transform=to_tensor)
    val_set = datasets.ImageFolder(args.val_dir, transform=to_tensor)
    train_sampler = hvd.elastic.ElasticSampler(train_set)
    train_loader = torch.utils.data.DataLoader(train_set, batch_size=args.batch_size,
                                               sampler=train_sampler)
    val_sampler = torch.utils.data.distributed.DistributedSampler(
        val_set, num_replicas=hvd.size(), rank=hvd.rank(), shuffle=False)
    val_loader = torch.utils.data.DataLoader(val_set, batch_size=args.val_batch_size,
                                             sampler=val_sampler)

    model = models.resnet50(num_classes=len(train_set.classes))
    optimizer = hvd.DistributedOptimizer(
        torch.optim.SGD(model.parameters(), lr=args.base_lr * hvd.size(), momentum=0.9),
        named_parameters=model.named_parameters())
    state = hvd.elastic.TorchState(model=model, optimizer=optimizer,
                                   train_sampler=train_sampler, epoch=0, batch=0)

    @hvd.elastic.run
    def train(state):
        for state.epoch in range(state.epoch, args.epochs):
            model.train()
            train_sampler.set_epoch(state.epoch)
            for state.batch, (data, target) in enumerate(train_loader, start=state.batch):
                optimizer.zero_grad()
                loss = F.cross_entropy(model(data), target)
                loss.backward()
                optimizer.step()
                train_sampler.record_batch(state.batch, args.batch_size)
                state.commit()
            state.batch = 0
            val_loss = validate(model, val_loader)
            print(f"rank {hvd.rank()} of {hvd.size()}: epoch {state.epoch + 1} train loss "
                  f"{loss.item():.4f} val loss {val_loss:.4f}", flush=True)
            if hvd.rank() == 0:
                torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()},
                           args.checkpoint_format.format(epoch=state.epoch + 1))
            state.commit()

    train(state)


def validate(model, loader):
    model.eval()
    total, count = torch.zeros(1), torch.zeros(1)
    with torch.no_grad():
        for data, target in loader:
            total += F.cross_entropy(model(data), target, reduction="sum")
            count += len(target)
    return (hvd.allreduce(total, op=hvd.Sum, name="val_loss")
            / hvd.allreduce(count, op=hvd.Sum, name="val_count")).item()


if __name__ == "__main__":
    main()
