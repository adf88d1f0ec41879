"""KoloStrategy: data-parallel Lightning training on a Kolo job, Horovod's way.

Horovod's model rather than DDP's: every rank keeps a plain copy of the
module (no wrapper), starts from rank 0's weights and optimizer state, and
its optimizers are DistributedOptimizers whose gradient hooks start the
reductions during backward; the optimizer step waits for them. Lightning
never starts or connects processes here: kolorun (or mpirun, Slurm, any
launcher Kolo supports) already did, and KoloEnvironment reports the ranks.
"""

from typing import Any, Callable, Dict, List, Optional

import torch

import kolo.torch as hvd
from kolo.common.process_sets import ProcessSet
from kolo.lightning._lightning import ParallelStrategy, pl, rank_zero_only
from kolo.lightning.environment import KoloEnvironment
from kolo.torch.compression import Compression
from kolo.torch.optimizer import _DistributedOptimizer

try:
    from torch.distributed import ReduceOp as _TorchReduceOp
except ImportError:  # a torch built without torch.distributed
    _TorchReduceOp = None

# Lightning names reductions by string ("mean" is its default) or by
# torch.distributed.ReduceOp; Kolo's ops are accepted as they are.
_OPS_BY_NAME = {"mean": hvd.Average, "avg": hvd.Average, "average": hvd.Average,
                "sum": hvd.Sum, "max": hvd.Max, "min": hvd.Min, "product": hvd.Product,
                "prod": hvd.Product}


def _kolo_op(reduce_op):
    if reduce_op is None:
        return hvd.Average
    if isinstance(reduce_op, str):
        if reduce_op.lower() in _OPS_BY_NAME:
            return _OPS_BY_NAME[reduce_op.lower()]
        raise ValueError(f"kolo: unknown reduce_op {reduce_op!r}; "
                         f"use one of {sorted(_OPS_BY_NAME)}")
    if isinstance(reduce_op, int) and not isinstance(reduce_op, bool):
        # Kolo's (Horovod's) op constants are ints; checked first, as a
        # torch ReduceOp may compare equal to a plain int.
        if reduce_op in (hvd.Average, hvd.Sum, hvd.Max, hvd.Min, hvd.Product):
            return reduce_op
    elif _TorchReduceOp is not None:
        for name in ("SUM", "MAX", "MIN", "PRODUCT"):
            if reduce_op == getattr(_TorchReduceOp, name):
                return _OPS_BY_NAME[name.lower()]
    raise ValueError(f"kolo: reduce_op {reduce_op!r} is not supported by KoloStrategy")


def _process_set(group):
    """Lightning's `group` argument: None (all ranks) or a Kolo ProcessSet."""
    if group is None:
        return hvd.global_process_set
    if isinstance(group, ProcessSet):
        return group
    raise TypeError(f"kolo: group must be None or a kolo ProcessSet, not {type(group).__name__}")


def _unwrap(optimizer):
    return getattr(optimizer, "_optimizer", optimizer)  # a LightningOptimizer's optimizer


class KoloStrategy(ParallelStrategy):
    """`Trainer(strategy=KoloStrategy())`, or `strategy="kolo"` (also
    registered as "horovod") once kolo.lightning is imported.

    Arguments:
        compression, op, gradient_predivide_factor, sparse_as_dense: passed
            to every hvd.DistributedOptimizer the strategy wraps.
        scale_lr: multiply every optimizer's learning rate (and the base
            rates of its LR schedulers) by the number of ranks, as
            Lightning 1.x's Horovod strategy did: the global batch is
            that many times larger. False keeps the configured rates.
    """

    strategy_name = "kolo"

    def __init__(self, accelerator=None, parallel_devices=None, checkpoint_io=None,
                 precision_plugin=None, compression=Compression.none, op=hvd.Average,
                 gradient_predivide_factor: float = 1.0, sparse_as_dense: bool = False,
                 scale_lr: bool = True):
        hvd.init()  # joins the job the launcher set up (nothing if joined already)
        super().__init__(accelerator=accelerator, parallel_devices=parallel_devices,
                         cluster_environment=KoloEnvironment(), checkpoint_io=checkpoint_io,
                         precision_plugin=precision_plugin)
        self._optimizer_options = dict(compression=compression, op=op,
                                       gradient_predivide_factor=gradient_predivide_factor,
                                       sparse_as_dense=sparse_as_dense)
        self._scale_lr = scale_lr
        # Lightning's rank-zero-only logging decides by this, from the start.
        rank_zero_only.rank = self.global_rank

    # --- who and where -------------------------------------------------------

    @property
    def root_device(self) -> torch.device:
        kind = self.parallel_devices[0].type if self.parallel_devices else "cpu"
        # One device per rank: the local rank picks this rank's GPU.
        return torch.device(kind, self.local_rank) if kind == "cuda" else torch.device(kind)

    @property
    def is_distributed(self) -> bool:
        return True  # Lightning then gives each rank its own shard of the data

    @property
    def distributed_sampler_kwargs(self) -> Dict[str, Any]:
        return {"num_replicas": self.world_size, "rank": self.global_rank}

    def _configure_launcher(self) -> None:
        """Lightning calls this while building the Trainer. No launcher: the
        ranks exist already. One device per rank, as in every Kolo job."""
        if self.parallel_devices is not None and len(self.parallel_devices) > 1:
            raise ValueError(f"kolo: KoloStrategy drives one device per rank, but the Trainer "
                             f"asked for {len(self.parallel_devices)} (devices=); use devices=1 "
                             f"and start one rank per device with kolorun -np")
        self._launcher = None

    def setup_environment(self) -> None:
        hvd.init()
        rank_zero_only.rank = self.global_rank
        super().setup_environment()

    def model_to_device(self) -> None:
        assert self.model is not None
        self.model.to(self.root_device)

    # --- model and optimizers ------------------------------------------------

    def setup(self, trainer: "pl.Trainer") -> None:
        self.model_to_device()
        super().setup(trainer)  # accelerator, optimizers, precision plugin
        # Every rank starts from rank 0's weights (in validate/test too, so
        # all ranks evaluate the same model).
        hvd.broadcast_parameters(self.lightning_module.state_dict(), root_rank=0)
        if trainer.state.fn != pl.trainer.states.TrainerFn.FITTING:
            return
        optimizers = [_unwrap(opt) for opt in self.optimizers]
        if self._scale_lr:
            self._scale_learning_rates(optimizers)
        for optimizer in optimizers:
            hvd.broadcast_optimizer_state(optimizer, root_rank=0)
        # Lightning calls backward accumulate_grad_batches times per step:
        # the gradients are reduced once, after the last of those passes.
        passes = trainer.accumulate_grad_batches
        self.optimizers = [self._distributed(opt, passes) for opt in optimizers]

    def _scale_learning_rates(self, optimizers: List[torch.optim.Optimizer]) -> None:
        for optimizer in optimizers:
            for group in optimizer.param_groups:
                group["lr"] *= self.world_size
        for config in self.lr_scheduler_configs:
            config.scheduler.base_lrs = [lr * self.world_size
                                         for lr in config.scheduler.base_lrs]

    def _distributed(self, optimizer, passes):
        # Named after the module's parameters, restricted to this optimizer's
        # (the names pair up each gradient's reduction across ranks).
        mine = {id(p) for group in optimizer.param_groups for p in group["params"]}
        named = [(name, p) for name, p in self.lightning_module.named_parameters()
                 if id(p) in mine]
        return hvd.DistributedOptimizer(optimizer, named_parameters=named,
                                        backward_passes_per_step=passes,
                                        **self._optimizer_options)

    def optimizer_step(self, optimizer, closure: Callable[[], Any], model=None,
                       **kwargs: Any) -> Any:
        """Lightning runs training_step and backward inside the closure that
        optimizer.step() calls, so the DistributedOptimizer must not wait for
        the reductions before step() starts (they have not begun): the
        closure waits for them right after backward, before gradient
        clipping and the update see the gradients."""
        distributed = _unwrap(optimizer)
        if not isinstance(distributed, _DistributedOptimizer):
            return super().optimizer_step(optimizer, closure, model, **kwargs)

        def closure_then_synchronize():
            result = closure()
            distributed.synchronize()
            return result

        with distributed.skip_synchronize():
            return super().optimizer_step(optimizer, closure_then_synchronize, model, **kwargs)

    # --- collectives Lightning calls -----------------------------------------

    def reduce(self, tensor, group: Optional[Any] = None, reduce_op="mean"):
        """Combines `tensor` over the ranks (mean by default); anything that
        is not a tensor is returned as it is, as Lightning's strategies do."""
        if not isinstance(tensor, torch.Tensor):
            return tensor
        op = _kolo_op(reduce_op)
        process_set = _process_set(group)
        if op == hvd.Average and not tensor.is_floating_point():
            # The mean of integers is fractional: sum exactly, then divide.
            total = hvd.allreduce(tensor, op=hvd.Sum, process_set=process_set)
            return total.to(torch.get_default_dtype()) / process_set.size()
        return hvd.allreduce(tensor, op=op, process_set=process_set)

    def all_gather(self, tensor: torch.Tensor, group: Optional[Any] = None,
                   sync_grads: bool = False) -> torch.Tensor:
        """Every rank's `tensor` stacked along a new first dimension (shape
        world_size x tensor.shape); differentiable only with sync_grads, and
        then as under DDP: a rank's tensor gets the sum over the ranks of
        the gradients of its slot (hvd.allgather's backward, Horovod's,
        averages them, so the gradient is scaled up by the set's size)."""
        process_set = _process_set(group)
        stacked = tensor.contiguous().unsqueeze(0)
        if sync_grads:
            gathered = hvd.allgather(stacked, process_set=process_set)
            if gathered.requires_grad:
                ranks = process_set.size()
                gathered.register_hook(lambda grad: grad * ranks)
            return gathered
        with torch.no_grad():
            return hvd.allgather(stacked, process_set=process_set)

    def broadcast(self, obj: Any, src: int = 0) -> Any:
        return hvd.broadcast_object(obj, root_rank=src)

    def barrier(self, name: Optional[str] = None) -> None:
        hvd.barrier()

    def teardown(self) -> None:
        super().teardown()  # the model and optimizer state back to the CPU
        if self.root_device.type == "cuda":
            torch.cuda.empty_cache()

    @classmethod
    def register_strategies(cls, strategy_registry) -> None:
        # "horovod" too: Lightning 2 dropped its own Horovod strategy, and
        # Horovod users' Trainer(strategy="horovod") means this model.
        for name in (cls.strategy_name, "horovod"):
            if name not in strategy_registry:
                strategy_registry.register(name, cls,
                                           description="Horovod-style data parallelism on Kolo")
