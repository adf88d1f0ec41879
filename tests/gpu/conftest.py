"""tests/gpu: the tests of issue 24 that need a CUDA device. Without one
(or without Kolo's CUDA support) every test here is skipped with the reason:
what torch says, or what kolo._core.gpu_status() says is missing.

They run on the GPU machine through tests/gpu/run-on-device.sh. Until the
engine's CUDA path exists (docs/architecture.md, "GPUs") they fail there
with the engine's refusal: that is the state they document."""

import pytest

from gpu_env import why_no_gpu


@pytest.fixture(scope="session")
def gpu():
    reason = why_no_gpu()
    if reason is not None:
        pytest.skip(reason)
    import torch

    return torch.device("cuda", 0)
