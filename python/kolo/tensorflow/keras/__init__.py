"""kolo.tensorflow.keras: Horovod's Keras API on Kolo."""

from kolo.tensorflow.keras import elastic  # noqa: F401
