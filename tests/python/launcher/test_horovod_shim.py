"""The Horovod drop-in: `import horovod.torch as hvd` (and horovod.numpy,
horovod.run, horovod.common) give Kolo's objects themselves, and the
horovodrun command is kolorun."""

import importlib.metadata
import os
import subprocess
import sys

import pytest

import horovod
import horovod.common
import horovod.common.exceptions
import horovod.numpy
import horovod.runner
import kolo
import kolo.numpy
import kolo.runner
from kolo.launch import launcher_path

# What Horovod scripts call most; every one must be there under both names.
TORCH_NAMES = [
    "init", "shutdown", "is_initialized", "rank", "size", "local_rank", "local_size",
    "cross_rank", "cross_size", "is_homogeneous", "start_timeline", "stop_timeline",
    "allreduce", "allreduce_", "allreduce_async", "allreduce_async_", "grouped_allreduce",
    "allgather", "allgather_async", "broadcast", "broadcast_", "broadcast_async", "alltoall",
    "reducescatter", "grouped_reducescatter", "barrier", "join", "poll", "synchronize",
    "Average", "Sum", "Min", "Max", "Product", "Compression", "ProcessSet", "add_process_set",
    "remove_process_set", "global_process_set", "HorovodInternalError",
]
NUMPY_NAMES = [name for name in TORCH_NAMES if name != "Compression"] + [
    "broadcast_object", "allgather_object", "grouped_allgather", "grouped_allreduce_"]


def test_horovod_internal_error_is_kolo_internal_error():
    assert horovod.common.exceptions.HorovodInternalError is kolo.KoloInternalError
    assert horovod.common.HorovodInternalError is kolo.KoloInternalError
    assert issubclass(kolo.KoloInternalError, RuntimeError)
    assert horovod.common.HostsUpdatedInterrupt is kolo.HostsUpdatedInterrupt


def test_horovod_numpy_is_kolo_numpy():
    for name in NUMPY_NAMES:
        assert hasattr(horovod.numpy, name), name
    for name in kolo.numpy.__all__:
        assert getattr(horovod.numpy, name) is getattr(kolo.numpy, name), name
    assert horovod.numpy.HorovodInternalError is kolo.KoloInternalError


def test_horovod_torch_is_kolo_torch():
    pytest.importorskip("torch")
    import horovod.torch as hvd
    import kolo.torch

    for name in TORCH_NAMES:
        assert hasattr(hvd, name), name
    for name in kolo.torch.__all__:  # whatever kolo.torch grows appears here too
        if name == "elastic":
            continue  # a module of its own under horovod's name; checked below
        assert getattr(hvd, name) is getattr(kolo.torch, name), name
    assert hvd.elastic.__name__ == "horovod.torch.elastic"
    for name in kolo.torch.elastic.__all__:
        assert getattr(hvd.elastic, name) is getattr(kolo.torch.elastic, name), name
    assert set(hvd.__all__) == set(kolo.torch.__all__) | {"HorovodInternalError"}


def test_horovod_run_is_kolo_run():
    assert horovod.run is kolo.runner.run
    assert horovod.runner.run is kolo.runner.run
    assert horovod.__version__ == kolo.__version__


def test_horovod_run_with_horovod_numpy():
    def job():
        import numpy as np

        import horovod.numpy as hvd

        hvd.init()
        try:
            hvd.allreduce(np.ones(hvd.rank() + 1), name="shim.mismatch")
        except hvd.HorovodInternalError as error:
            caught = "Mismatched shapes" in str(error)
        return hvd.rank(), float(hvd.allreduce(np.array([1.0]), op=hvd.Sum)[0]), caught

    assert horovod.run(job, np=2) == [(0, 2.0, True), (1, 2.0, True)]


def test_importing_horovod_or_its_numpy_loads_no_torch():
    code = ("import sys, horovod, horovod.numpy, horovod.common; "
            "assert 'torch' not in sys.modules, 'torch was imported'")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_the_launcher_behind_kolorun_and_horovodrun():
    path = launcher_path()
    assert os.access(path, os.X_OK), path
    # python -m kolo.launch is what both console scripts run.
    shown = subprocess.run([sys.executable, "-m", "kolo.launch", "--help"], capture_output=True,
                           text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "-np" in shown.stdout and "--hostfile" in shown.stdout


def test_installed_package_declares_horovodrun_as_kolorun():
    try:
        scripts = importlib.metadata.distribution("kolo").entry_points
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("kolo is not pip-installed here (console scripts come with the install)")
    targets = {ep.name: ep.value for ep in scripts if ep.group == "console_scripts"}
    assert targets.get("horovodrun") == "kolo.launch:main"
    assert targets.get("kolorun") == "kolo.launch:main"
    beside = os.path.join(os.path.dirname(sys.executable), "horovodrun")
    if os.path.exists(beside):
        shown = subprocess.run([beside, "--help"], capture_output=True, text=True, timeout=60)
        assert shown.returncode == 0 and "-np" in shown.stdout
