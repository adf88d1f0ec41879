"""Imports TensorFlow (with a clear error when it is missing) and registers
Kolo's TF ops with it, once per process.

The ops and their kernels live in kolo._core and reach TensorFlow only
through its stable C API, resolved at run time from the libtensorflow_framework
the imported TF loaded: no compile against TF at build or install time, so
one Kolo build serves whichever TF 2.x is installed (docs/architecture.md).
"""

import glob
import os

try:
    import tensorflow as tf
except ImportError as error:  # ModuleNotFoundError included
    raise ImportError(
        "kolo.tensorflow (horovod.tensorflow) needs TensorFlow 2, which is not installed "
        f"here ({error}); install it with: pip install tensorflow-cpu  (Kolo's tests use "
        "tensorflow-cpu==2.21.0; add tf-keras for TF_USE_LEGACY_KERAS=1)") from None

from kolo import _core


def _framework_library():
    """The path of the libtensorflow_framework the imported TF loaded."""
    lib_dir = tf.sysconfig.get_lib()
    exact = os.path.join(lib_dir, "libtensorflow_framework.so.2")
    if os.path.exists(exact):
        return exact
    found = sorted(glob.glob(os.path.join(lib_dir, "libtensorflow_framework.so*")))
    if not found:
        raise ImportError(f"kolo.tensorflow: no libtensorflow_framework.so in {lib_dir}; "
                          "is this a TensorFlow 2 installation?")
    return found[0]


_core.tensorflow_register_ops(_framework_library())
