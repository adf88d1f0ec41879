"""The parts of Horovod's optimizer and state API that code written for
Horovod relies on: sparse allreduce and sparse gradients (embeddings
trained to the same weights as dense ones), broadcast_optimizer_state with
parameters that have no gradient, DistributedOptimizer._parameter_names,
and optimizers on a process set seen from members and non-members."""

import copy

import pytest
import torch

import kolo.torch as hvd

ATOL = 1e-6


def random_sparse(rows, cols, seed):
    gen = torch.Generator().manual_seed(seed)
    t = torch.rand(rows, cols, generator=gen)
    t[t < 0.7] = 0
    return t.to_sparse()


@pytest.mark.parametrize("op", [hvd.Average, hvd.Sum], ids=["average", "sum"])
def test_sparse_allreduce_async_equals_dense_allreduce(op):
    """Horovod's case: the allgather of indices and values, used as a
    sparse tensor, equals the dense allreduce."""
    me = hvd.rank()
    sizes = [17, 32, 1, 12]
    tensors = [random_sparse(rows, 5, 100 * me + i) for i, rows in enumerate(sizes)]
    dense = [hvd.allreduce(t.to_dense(), op=op, name=f"sp.dense.{op}.{i}")
             for i, t in enumerate(tensors)]
    handles = [hvd.sparse_allreduce_async(t, name=f"sp.{op}.{i}", op=op)
               for i, t in enumerate(tensors)]
    results = [handle() for handle in handles]
    for reduced, gathered, t in zip(dense, results, tensors):
        assert gathered.is_sparse and gathered.shape == t.shape
        assert torch.allclose(reduced, gathered.to_dense(), atol=ATOL)
    again = hvd.sparse_allreduce(tensors[0], name=f"sp.sync.{op}", op=op)
    assert torch.allclose(again.to_dense(), dense[0], atol=ATOL)


def test_sparse_allreduce_refuses_dense_tensors():
    with pytest.raises(ValueError, match="sparse COO tensor"):
        hvd.sparse_allreduce_async(torch.ones(3), name="sp.bad", op=hvd.Sum)


class Bag(torch.nn.Module):
    def __init__(self, sparse):
        super().__init__()
        torch.manual_seed(11)
        self.emb = torch.nn.Embedding(20, 4, sparse=sparse)
        self.out = torch.nn.Linear(4, 1)

    def forward(self, idx):
        return self.out(self.emb(idx)).sum()


def batch(rank, step):
    gen = torch.Generator().manual_seed(31 * step + rank)
    return torch.randint(0, 20, (6,), generator=gen)


def train(sparse, sparse_as_dense=False, steps=4):
    model = Bag(sparse)
    # SGD handles sparse gradients; the Linear layer's stay dense.
    opt = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.05),
                                   named_parameters=model.named_parameters(),
                                   sparse_as_dense=sparse_as_dense)
    for step in range(steps):
        opt.zero_grad()
        model(batch(hvd.rank(), step)).backward()
        opt.step()
    return [p.detach().clone() for p in model.parameters()]


def test_sparse_embedding_trains_to_the_same_weights_as_dense():
    dense = train(sparse=False)
    for sparse_as_dense in (False, True):
        sparse = train(sparse=True, sparse_as_dense=sparse_as_dense)
        for a, b in zip(sparse, dense):
            assert torch.allclose(a, b, atol=1e-5), (sparse_as_dense, (a - b).abs().max())
    # And the same as one process on every rank's batches (gradients averaged).
    ref = Bag(sparse=False)
    opt = torch.optim.SGD(ref.parameters(), lr=0.05)
    for step in range(4):
        opt.zero_grad()
        (sum(ref(batch(r, step)) for r in range(hvd.size())) / hvd.size()).backward()
        opt.step()
    for a, b in zip(dense, ref.parameters()):
        assert torch.allclose(a, b.detach(), atol=1e-5)


class NoGrad(torch.nn.Module):
    """Horovod's model for this case: one parameter without a gradient."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.tensor([1, 3], dtype=torch.int32), requires_grad=False)
        torch.manual_seed(hvd.rank())  # different b per rank until the broadcast
        self.b = torch.nn.Parameter(torch.rand(4))

    def forward(self, x):
        return torch.index_select(self.b, 0, self.a.long()) * x


def test_broadcast_optimizer_state_with_a_parameter_without_gradient():
    model = NoGrad()
    opt = torch.optim.SGD(model.parameters(), lr=0.001, weight_decay=1e-6, momentum=0.9,
                          nesterov=True)
    opt = hvd.DistributedOptimizer(opt, named_parameters=model.named_parameters())
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    hvd.broadcast_optimizer_state(opt, root_rank=0)
    assert opt.param_groups[0]["params"][0].grad is None
    grad = opt.param_groups[0]["params"][1].grad
    assert isinstance(grad, torch.Tensor)
    assert torch.equal(grad, hvd.broadcast(grad, root_rank=0, name="nograd.grad"))
    root_b = hvd.broadcast(model.b.detach(), root_rank=0, name="nograd.b")
    assert torch.equal(model.b.detach(), root_b)
    # Training goes on from there on every rank alike.
    model(torch.ones(2)).sum().backward()
    opt.step()
    assert torch.equal(model.b.detach(), hvd.broadcast(model.b.detach(), 0, name="nograd.b2"))


def test_parameter_names_is_horovods_attribute():
    model = torch.nn.Linear(3, 2)
    opt = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1),
                                   named_parameters=model.named_parameters())
    assert opt._parameter_names == {model.weight: "weight", model.bias: "bias"}
    unnamed = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1))
    assert sorted(unnamed._parameter_names.values()) == ["allreduce.noname.0.0",
                                                         "allreduce.noname.0.1"]


def test_optimizer_on_a_process_set_members_and_non_members():
    """Members (rank 0 and, from -np 3, rank 1) average over the set; the
    others construct and step the optimizer as a plain one and nobody waits
    for them (the members' next global collective is not hung)."""
    members = [0] if hvd.size() == 2 else [0, 1]
    subset = hvd.add_process_set(members)
    try:
        torch.manual_seed(3)
        model = torch.nn.Linear(3, 1)
        start = copy.deepcopy(model)
        opt = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.5),
                                       named_parameters=model.named_parameters(),
                                       process_set=subset)

        def data(r):
            return torch.full((2, 3), float(r + 1)), torch.full((2, 1), float(-r))

        def loss(m, r):
            x, y = data(r)
            return torch.nn.functional.mse_loss(m(x), y)

        for _ in range(2):
            opt.zero_grad()
            loss(model, hvd.rank()).backward()
            opt.step()
        ref = copy.deepcopy(start)
        ref_opt = torch.optim.SGD(ref.parameters(), lr=0.5)
        group = members if hvd.rank() in members else [hvd.rank()]
        for _ in range(2):
            ref_opt.zero_grad()
            (sum(loss(ref, r) for r in group) / len(group)).backward()
            ref_opt.step()
        for a, b in zip(model.parameters(), ref.parameters()):
            assert torch.allclose(a, b, atol=1e-6), (hvd.rank(), a, b)
    finally:
        hvd.remove_process_set(subset)
    assert hvd.allreduce(torch.ones(1), op=hvd.Sum, name="ps.opt.after").item() == hvd.size()
