"""Kolo: distributed deep-learning training with a C++ core.

Framework packages: ``kolo.torch`` (PyTorch, Horovod's API) and
``kolo.numpy`` (NumPy arrays). ``kolo.run`` starts a function on N ranks.
Importing ``kolo`` itself loads neither torch nor the engine.
"""

from kolo.common.exceptions import HostsUpdatedInterrupt, KoloInternalError

__version__ = "0.1.0"


def run(*args, **kwargs):
    """Runs a function on N ranks and returns their results; see kolo.runner.run."""
    from kolo.runner import run as _run

    return _run(*args, **kwargs)


__all__ = ["KoloInternalError", "HostsUpdatedInterrupt", "run", "__version__"]
