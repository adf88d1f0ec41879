"""Kolo: distributed deep-learning training with a C++ core.

Framework packages: ``kolo.torch`` (PyTorch, Horovod's API) and
``kolo.numpy`` (NumPy arrays). ``kolo.run`` starts a function on N ranks.
Importing ``kolo`` itself loads neither torch nor the engine.
"""

from kolo.common.exceptions import HostsUpdatedInterrupt, KoloInternalError
from kolo.runner import run

__version__ = "0.1.0"


__all__ = ["KoloInternalError", "HostsUpdatedInterrupt", "run", "__version__"]
