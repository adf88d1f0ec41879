"""Every test module here runs inside every rank of a kolorun job (see
scripts/run-python-tests.sh): the engine is initialized once per process,
and each test first checks that all ranks are at the same test, so a rank
that skipped or reordered a test fails loudly instead of mismatching
collectives."""

import zlib

import pytest
import torch

import kolo.torch as hvd


def pytest_configure(config):
    hvd.init()


@pytest.fixture(autouse=True)
def same_test_on_every_rank(request):
    if not hvd.is_initialized():
        hvd.init()
    mine = zlib.crc32(request.node.nodeid.encode())
    ids = hvd.allgather(torch.tensor([mine], dtype=torch.int64), name="kolo.test.sync")
    assert (ids == mine).all(), (
        f"rank {hvd.rank()} is at {request.node.nodeid} but other ranks are elsewhere")
    yield
