"""KoloEnvironment: Lightning's view of a Kolo job (who is who).

Lightning asks a ClusterEnvironment for the world size and this process's
global, local and node rank. In a Kolo job those come from Kolo's engine
(kolorun, mpirun, Slurm, or any launcher Kolo supports sets the job up), so
they are read from kolo.torch and never set by Lightning.
"""

import kolo.torch as hvd
from kolo.lightning._lightning import ClusterEnvironment

_NO_LAUNCHER = ("kolo: KoloEnvironment has no main address or port: Kolo's rendezvous connects "
                "the ranks, and no Lightning launcher may start processes in a Kolo job")


def _refuse_change(what, asked, actual):
    """Lightning may set only what the Kolo job already is."""
    if asked != actual:
        raise ValueError(f"kolo: Lightning asked for {what} {asked}, but the Kolo job has "
                         f"{actual} (kolorun -np and the launcher decide it)")


class KoloEnvironment(ClusterEnvironment):
    """Ranks and sizes of the Kolo job this process belongs to."""

    @property
    def creates_processes_externally(self) -> bool:
        return True  # the launcher started every rank: Lightning spawns none

    # Only Lightning's process launchers read these (torch.distributed's
    # MASTER_ADDR/PORT); Kolo's own rendezvous connects the ranks instead.
    @property
    def main_address(self) -> str:
        raise RuntimeError(_NO_LAUNCHER)

    @property
    def main_port(self) -> int:
        raise RuntimeError(_NO_LAUNCHER)

    @staticmethod
    def detect() -> bool:
        return hvd.is_initialized()

    def world_size(self) -> int:
        return hvd.size()

    def set_world_size(self, size: int) -> None:
        _refuse_change("world size", size, hvd.size())

    def global_rank(self) -> int:
        return hvd.rank()

    def set_global_rank(self, rank: int) -> None:
        _refuse_change("global rank", rank, hvd.rank())

    def local_rank(self) -> int:
        return hvd.local_rank()

    def node_rank(self) -> int:
        return hvd.cross_rank()
