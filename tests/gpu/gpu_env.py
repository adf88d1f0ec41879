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
                f"support is {status['state']}: {status['why_not']}")
    if status["state"] != "ready":
        return f"Kolo's CUDA support is {status['state']}: {status['why_not']}"
    return None


def kolorun():
    beside = os.path.join(os.path.dirname(sys.executable), "kolorun")
    return beside if os.path.exists(beside) else os.path.join(REPO, "python", "kolo", "bin",
                                                              "kolorun")
