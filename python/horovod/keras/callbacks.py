"""horovod.keras.callbacks: kolo.keras.callbacks."""

from kolo.keras.callbacks import *  # noqa: F401,F403
from kolo.keras.callbacks import __all__  # noqa: F401
