"""kolo.lightning: PyTorch Lightning 2 on Kolo.

    import kolo.lightning                  # before Lightning on torch 1.13 + Python 3.11
    from kolo.lightning import KoloStrategy
    trainer = Trainer(strategy=KoloStrategy())   # or strategy="kolo" / "horovod"

Run the script under kolorun (or mpirun, Slurm, ...): every rank runs it, and
Lightning itself starts no processes.
"""

from kolo.lightning._lightning import StrategyRegistry
from kolo.lightning.environment import KoloEnvironment
from kolo.lightning.strategy import KoloStrategy

KoloStrategy.register_strategies(StrategyRegistry)

__all__ = ["KoloEnvironment", "KoloStrategy"]
