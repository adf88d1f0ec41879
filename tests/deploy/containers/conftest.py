"""Fixtures of the container tests: an engine, the CPU image (built once per
source state) and a compose job that is always taken down. Without root or
without a Docker engine that can be started, every test here is skipped with
the reason."""

import os
import pathlib
import shutil
import sys
import uuid

import pytest

from compose_job import ComposeJob, compose_program
from docker_host import REPO, engine_unavailable_reason, ensure_cpu_image

# The users' seed script and its stand-in MNIST writer live with the launcher tests.
sys.path.insert(0, str(REPO / "tests" / "python" / "launcher"))


@pytest.fixture(scope="session")
def engine():
    if os.geteuid() != 0:
        pytest.skip("the container tests need root (to run the Docker engine)")
    reason = engine_unavailable_reason()
    if reason:
        pytest.skip(f"no Docker engine: {reason}")


@pytest.fixture(scope="session")
def cpu_image(engine):
    return ensure_cpu_image()


@pytest.fixture
def compose_job(cpu_image, tmp_path):
    """compose_job(code_dir, main_command, environment) -> a ComposeJob not yet up."""
    program = compose_program()
    if program is None:
        pytest.skip("neither `docker compose` nor docker-compose is installed (scripts/install-deps.sh)")
    jobs = []

    def make(code_dir, main_command, environment=None):
        artifacts = tmp_path / "artifacts"
        artifacts.mkdir()
        shutil.chown(artifacts, 1000, 1000)  # the image's user kolo writes there
        job = ComposeJob(program, cpu_image, f"kolotest{uuid.uuid4().hex[:10]}", code_dir, artifacts,
                         main_command, environment)
        jobs.append(job)
        return job

    yield make
    for job in jobs:
        job.down()


def readable_by_all(folder: pathlib.Path):
    """The containers' user is not this one: open the test's files to it."""
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
