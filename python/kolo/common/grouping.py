"""Splitting a list of gradients into Horovod's `groups=n`: shared by the
torch and TensorFlow optimizers."""


def split_evenly(items, n):
    """n contiguous runs of `items`, the first len % n one item longer."""
    size, extra = divmod(len(items), n)
    runs, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        runs.append(items[start:end])
        start = end
    return runs
