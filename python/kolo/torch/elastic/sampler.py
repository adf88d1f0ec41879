"""ElasticSampler: a DistributedSampler that survives resets.

It remembers which samples of the current epoch were processed (on any
rank) and, after a reset, spreads only the rest over the ranks of the new
round, so an epoch loses no sample and repeats none that was processed
before the reset.

    sampler = ElasticSampler(dataset)
    loader = torch.utils.data.DataLoader(dataset, batch_size=bs, sampler=sampler)
    state = hvd.elastic.TorchState(model, optimizer, sampler=sampler, epoch=0)

    @hvd.elastic.run
    def train(state):
        for state.epoch in range(state.epoch, epochs):
            for i, batch in enumerate(loader):
                ...
                state.sampler.record_batch(i, bs)
                state.commit()
            state.sampler.set_epoch(state.epoch + 1)

TorchState unions every rank's processed samples when it syncs.
"""

import math

import torch

from kolo.common.runtime import runtime


class ElasticSampler(torch.utils.data.Sampler):
    """Samples this rank's share of the not yet processed indices of
    `dataset` (0 .. len(dataset)-1).

    The unprocessed indices are shuffled by seed + epoch (the same order on
    every rank), repeated at the end so their count divides by size(), and
    rank r takes every size()-th one starting at r. All ranks therefore get
    the same number of samples; only unprocessed indices are repeated.
    """

    def __init__(self, dataset, shuffle=True, seed=0):
        self.dataset = dataset
        self.shuffle = shuffle
        self.seed = seed
        self.epoch = 0
        self.processed_indices = set()
        self.num_replicas = 1
        self.rank = 0
        self.remaining_indices = []
        self.indices = []
        self.num_samples = 0
        self.total_size = 0
        self.reset()

    def set_epoch(self, epoch):
        """Starts epoch `epoch`: nothing processed yet, a new order (call it
        when an epoch begins, not when training restarts after a reset)."""
        self.epoch = epoch
        self.processed_indices = set()
        self.reset()

    def record_batch(self, batch_idx, batch_size):
        """Marks this rank's batch `batch_idx` (of `batch_size` samples,
        counted from the last reset) as processed."""
        self.record_indices(self.get_indices(batch_idx, batch_size))

    def record_indices(self, indices):
        """Marks dataset indices as processed in this epoch."""
        self.processed_indices.update(int(i) for i in indices)

    def get_indices(self, batch_idx, batch_size):
        """The dataset indices of this rank's batch `batch_idx`."""
        start = batch_idx * batch_size
        return self.indices[start:min(start + batch_size, len(self.indices))]

    def state_dict(self):
        return {"epoch": self.epoch, "processed_indices": set(self.processed_indices)}

    def load_state_dict(self, state_dict):
        self.epoch = state_dict["epoch"]
        self.processed_indices = set(state_dict["processed_indices"])
        self.reset()

    def reset(self):
        """Spreads the unprocessed indices of this epoch over the current
        ranks (size() and rank() of the round this process is in)."""
        engine = runtime().engine()
        self.num_replicas, self.rank = engine.size, engine.rank
        self.remaining_indices = [i for i in range(len(self.dataset))
                                  if i not in self.processed_indices]
        self.num_samples = math.ceil(len(self.remaining_indices) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas

        order = self.remaining_indices
        if self.shuffle:
            generator = torch.Generator()
            generator.manual_seed(self.seed + self.epoch)
            order = [order[i] for i in torch.randperm(len(order), generator=generator).tolist()]
        if order:
            # Pad by cycling through the unprocessed indices (the padding
            # may need more than one pass when few remain).
            order = [order[i % len(order)] for i in range(self.total_size)]
        self.indices = order[self.rank:self.total_size:self.num_replicas]

    def __iter__(self):
        return iter(list(self.indices))

    def __len__(self):
        return self.num_samples


__all__ = ["ElasticSampler"]
