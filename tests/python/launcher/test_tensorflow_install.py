"""kolo.tensorflow and the rest of Kolo with and without TensorFlow in the
venv: without it, `import horovod.tensorflow` says what to install and
everything else works; with it, Debian's torch 1.13 and scipy keep working
beside TF (numpy 1.26 with ml-dtypes < 0.6, see the Makefile) in one
process, and one job runs a Kolo op from each framework."""

import os
import subprocess
import sys
import textwrap

import pytest

KOLORUN = os.path.join(os.path.dirname(sys.executable), "kolorun")


def _python(code, *, launcher=()):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KOLO_", "HOROVOD_"))}
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    return subprocess.run([*launcher, sys.executable, "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, env=env, timeout=240)


def test_without_tensorflow_import_says_what_to_install_and_the_rest_works():
    result = _python("""
        import sys
        sys.modules["tensorflow"] = None  # as if TensorFlow were not installed
        import importlib
        for name in ("horovod.tensorflow", "horovod.tensorflow.keras", "horovod.keras"):
            try:
                importlib.import_module(name)
            except ImportError as error:
                print("ERROR:", error)
            else:
                raise AssertionError(f"{name} imported without TensorFlow")
        import numpy as np
        import horovod.torch, kolo.numpy as hvd
        hvd.init()
        assert hvd.allreduce(np.arange(3.0)).tolist() == [0.0, 1.0, 2.0]
        hvd.shutdown()
        print("rest ok")
    """)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    for error_line in lines[:3]:
        assert "needs TensorFlow 2" in error_line and "pip install tensorflow-cpu" in error_line
    assert lines[3] == "rest ok"


def test_torch_scipy_and_tensorflow_share_a_process_and_a_job():
    pytest.importorskip("tensorflow", reason="TensorFlow is not installed")
    result = _python("""
        import numpy as np
        import scipy.linalg
        import sklearn.linear_model
        import torch
        import tensorflow as tf
        import kolo.torch as hvd_torch
        import kolo.tensorflow as hvd_tf
        assert np.__version__.startswith("1."), np.__version__
        assert scipy.linalg.inv(np.eye(2)).tolist() == [[1.0, 0.0], [0.0, 1.0]]
        hvd_torch.init()
        n = hvd_torch.size()
        t = hvd_torch.allreduce(torch.ones(3) * (hvd_torch.rank() + 1), op=hvd_torch.Sum)
        f = hvd_tf.allreduce(tf.ones([3]) * (hvd_tf.rank() + 1), op=hvd_tf.Sum)
        want = [n * (n + 1) / 2] * 3
        assert t.tolist() == want and f.numpy().tolist() == want, (t, f)
        print("ok", hvd_tf.rank(), torch.__version__, tf.__version__)
    """, launcher=(KOLORUN, "-np", "2"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("ok") == 2, result.stdout


def test_legacy_keras_is_tf_keras():
    """TF_USE_LEGACY_KERAS=1 (seed scripts that need Keras 2 behaviour) gets
    tf-keras as tf.keras, with no `tensorflow` package beside tensorflow-cpu."""
    pytest.importorskip("tensorflow", reason="TensorFlow is not installed")
    pytest.importorskip("tf_keras", reason="tf-keras is not installed")
    result = subprocess.run(
        [sys.executable, "-c", "import tensorflow as tf, tf_keras; "
         "assert tf.keras.Sequential is tf_keras.Sequential, tf.keras; print('ok')"],
        capture_output=True, text=True, timeout=240,
        env=dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="2"))
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def test_core_is_built_without_tensorflow():
    """One build for every TF 2.x: kolo._core neither links libtensorflow nor
    leaves a TF_* symbol for the loader to bind; the TF C API is looked up
    at run time (python/src/tensorflow/tf_c_api.cc)."""
    from kolo import _core

    needed = subprocess.run(["readelf", "-d", _core.__file__], capture_output=True, text=True,
                            timeout=60, check=True).stdout
    assert "NEEDED" in needed and "tensorflow" not in needed
    undefined = subprocess.run(["nm", "-D", "--undefined-only", _core.__file__],
                               capture_output=True, text=True, timeout=60, check=True).stdout
    assert not [line for line in undefined.splitlines() if " TF_" in line]


def test_ops_follow_the_engine_across_shutdown_and_init():
    """The TF kernels submit to whichever engine the runtime holds: before
    init and after shutdown they fail saying so, after a new init they work
    (eagerly and in a tf.function traced before the shutdown)."""
    pytest.importorskip("tensorflow", reason="TensorFlow is not installed")
    result = _python("""
        import tensorflow as tf
        import kolo.tensorflow as hvd
        f = tf.function(lambda x: hvd.allreduce(x, op=hvd.Sum, name="f"))
        for phase in ("before init", "after shutdown"):
            try:
                hvd.allreduce(tf.ones([2]), name="x")
            except ValueError as error:
                assert "not been initialized" in str(error), error
            else:
                raise AssertionError("no error " + phase)
            hvd.init()
            assert hvd.allreduce(tf.ones([2]), op=hvd.Sum).numpy().tolist() == [1.0, 1.0]
            assert f(tf.ones([2])).numpy().tolist() == [1.0, 1.0]
            hvd.shutdown()
        try:
            f(tf.ones([2]))
        except tf.errors.InvalidArgumentError as error:
            assert "not been initialized" in str(error), error
        else:
            raise AssertionError("a traced function ran without an engine")
        print("ok")
    """)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stdout + result.stderr
