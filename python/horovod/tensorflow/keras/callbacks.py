"""horovod.tensorflow.keras.callbacks: kolo.tensorflow.keras.callbacks."""

from kolo.tensorflow.keras.callbacks import *  # noqa: F401,F403
from kolo.tensorflow.keras.callbacks import __all__  # noqa: F401
