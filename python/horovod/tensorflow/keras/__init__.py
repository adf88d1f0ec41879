"""horovod.tensorflow.keras: placeholder until the Keras API lands (branch keras23)."""

import importlib as _importlib

elastic = _importlib.import_module("horovod.tensorflow.keras.elastic")
