"""The Lightning package the strategy builds on: the standalone
`pytorch_lightning` when installed (Lightning's own examples and Horovod's
import it), else the `lightning` package's `lightning.pytorch` copy. A
strategy only works with the Trainer of the package whose classes it
extends, so both names resolve to one package here."""

from kolo.lightning import _torch_compat

_torch_compat.install()  # before Lightning imports torch.distributed.fsdp

try:
    import pytorch_lightning as pl
    from lightning_fabric.plugins.environments import ClusterEnvironment
except ImportError:  # only the `lightning` package
    import lightning.pytorch as pl
    from lightning.fabric.plugins.environments import ClusterEnvironment

ParallelStrategy = pl.strategies.ParallelStrategy
StrategyRegistry = pl.strategies.StrategyRegistry
rank_zero_only = pl.utilities.rank_zero.rank_zero_only
