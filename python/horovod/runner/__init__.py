"""horovod.runner: where Horovod 0.21+ keeps run(); the same kolo.run."""

from kolo.runner import run

__all__ = ["run"]
