"""What a CUDA tensor gets from this installation (one process, no kolorun).

On a machine without a GPU: kolo._core.gpu_status() reports the CUDA plugin's
state, and a tensor on a CUDA device is refused with that exact reason,
whichever DLPack producer made it. On a GPU machine (state "ready") the
tensor reaches the engine, which refuses it until its CUDA path exists
(docs/architecture.md, "GPUs"). Runs the real _core and, for the plugin that
does not load, a real copy of the installed package with a broken plugin."""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
import torch

import kolo
import kolo.torch as hvd
from kolo import _core
from kolo.common.runtime import runtime
from test_dlpack import K_DL_CUDA, HandMadeTensor

PACKAGE = pathlib.Path(kolo.__file__).parent
CUDA_PLUGIN = PACKAGE / "libkolo_cuda.so"


@pytest.fixture(scope="module")
def engine():
    hvd.init()
    yield hvd
    hvd.shutdown()


def status_in(package_parent, env=None):
    """gpu_status() of the kolo package under `package_parent`, in a fresh process."""
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); from kolo import _core; "
            "print(json.dumps(_core.gpu_status()))")
    result = subprocess.run([sys.executable, "-c", code, str(package_parent)],
                            capture_output=True, text=True, timeout=60, env=env,
                            cwd=str(package_parent))
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout)


def test_status_matches_the_installed_plugin():
    status = _core.gpu_status()
    assert set(status) == {"state", "why_not", "devices", "runtime"}
    if not CUDA_PLUGIN.exists():
        assert status["state"] == "not built"
        assert "built without GPU support" in status["why_not"]
        return
    assert status["state"] in ("no device", "ready"), status
    assert status["runtime"].startswith("CUDA runtime "), status
    if status["state"] == "no device":
        assert status["devices"] == 0
        assert status["why_not"].startswith("no CUDA device: cudaGetDeviceCount"), status
    else:
        assert status["devices"] > 0 and status["why_not"] == ""


def test_a_cuda_tensor_gets_the_exact_reason(engine):
    status = _core.gpu_status()
    cuda = HandMadeTensor(np.zeros(4, dtype=np.float32), device_type=K_DL_CUDA)
    if status["state"] == "ready":
        expected = "does not run collectives on CUDA tensors yet"
    else:
        expected = re.escape(f"kolo: cannot take a tensor on cuda:0: {status['why_not']}; "
                             "move the tensor to the CPU first")
    with pytest.raises(ValueError, match=expected):
        runtime().engine().allreduce(cuda, cuda, name="gpu.refused")
    # The refusal costs nothing else: the engine still works on the CPU.
    out = hvd.allreduce(torch.ones(4), op=hvd.Sum, name="gpu.after")
    assert out.tolist() == [1.0] * 4


def test_no_visible_device_is_named(tmp_path):
    if not CUDA_PLUGIN.exists():
        pytest.skip("this installation has no CUDA plugin (built without the CUDA toolkit)")
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    status = status_in(PACKAGE.parent, env=env)
    assert status["state"] == "no device", status
    assert status["why_not"].startswith("no CUDA device: cudaGetDeviceCount"), status


def test_a_plugin_that_does_not_load_says_why(tmp_path):
    # A copy of the installed package whose CUDA plugin is not a shared object.
    copy = tmp_path / "kolo"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "bin"))
    (copy / "libkolo_cuda.so").write_bytes(b"not an ELF file")
    status = status_in(tmp_path)
    if not CUDA_PLUGIN.exists():
        assert status["state"] == "not built"  # the build, not the file, decides
        return
    assert status["state"] == "does not load", status
    assert status["why_not"].startswith("Kolo's CUDA plugin (libkolo_cuda.so) does not load: "
                                        f"{copy / 'libkolo_cuda.so'}: "), status
    assert status["runtime"] == ""


def dynamic_section(path):
    """(needed libraries, undefined dynamic symbols) of an ELF file, by readelf."""
    needed = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True,
                            timeout=30, check=True).stdout
    symbols = subprocess.run(["readelf", "--dyn-syms", "-W", str(path)], capture_output=True,
                             text=True, timeout=30, check=True).stdout
    libraries = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", needed)
    undefined = [line.split()[-1] for line in symbols.splitlines() if " UND " in line]
    return libraries, undefined


def test_kolo_itself_links_no_cuda_or_nccl():
    # One build for machines with and without a GPU: only the plugins may
    # need CUDA or NCCL; _core and kolorun load them when a CUDA tensor comes.
    binaries = list(PACKAGE.glob("_core*.so")) + [PACKAGE / "bin" / "kolorun"]
    assert len(binaries) == 2 and all(b.exists() for b in binaries), binaries
    for binary in binaries:
        libraries, undefined = dynamic_section(binary)
        assert libraries, binary  # readelf read it
        assert not [lib for lib in libraries if "cuda" in lib or "nccl" in lib], (binary,
                                                                                 libraries)
        assert not [sym for sym in undefined if sym.startswith(("cuda", "nccl"))], binary
    if (PACKAGE / "libkolo_nccl.so").exists():
        libraries, _ = dynamic_section(PACKAGE / "libkolo_nccl.so")
        assert "libnccl.so.2" in libraries, libraries  # the plugin, and only it
