"""horovod.keras.elastic: Kolo's elastic API for the standalone keras
package (kolo.keras.elastic) under Horovod's package name."""

from kolo.keras.elastic import *  # noqa: F401,F403
from kolo.keras.elastic import __all__ as _kolo_all

__all__ = list(_kolo_all)
