"""Horovod's package names on Kolo, so existing scripts run unchanged:
`import horovod.torch as hvd`, `horovod.run(fn, np=2)`, `horovodrun`.
Everything here is an alias of the kolo package; the shim holds no logic."""

from kolo import __version__
from kolo.runner import run

__all__ = ["run", "__version__"]
