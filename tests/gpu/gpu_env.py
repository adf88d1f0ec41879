"""What the tests of tests/gpu share: whether CUDA tensors can go through
Kolo here (and why not), the repository, and the kolorun to start jobs with."""

import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def why_no_gpu():
    """None when CUDA tensors can go through Kolo here, else the reason."""
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    from kolo import _core

    status = _core.gpu_status()
    if not torch.cuda.is_available():
        return ("torch sees no CUDA device (torch.cuda.is_available() is False); Kolo's CUDA "
                f"support: {_describe(status)}")
    if status["state"] != "ready":
        return f"Kolo's CUDA support: {_describe(status)}"
    return None


def _describe(status):
    # "no device (no CUDA device: cudaGetDeviceCount failed: ...)"
    return f"{status['state']} ({status['why_not']})"


def kolorun():
    beside = os.path.join(os.path.dirname(sys.executable), "kolorun")
    return beside if os.path.exists(beside) else os.path.join(REPO, "python", "kolo", "bin",
                                                              "kolorun")
