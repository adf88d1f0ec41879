"""shellcheck (Debian's) on every shell script of the deployment files and
their tests: the scripts run inside pods where a quoting slip is hard to see."""

import pathlib
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPTS = sorted(
    p for folder in ("deploy", "tests/deploy") for p in (REPO / folder).rglob("*.sh") if ".venv" not in p.parts
)


def test_there_are_scripts_to_check():
    names = {p.name for p in SCRIPTS}
    assert {"discover-hosts.sh", "build.sh"} <= names


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(REPO)))
def test_shellcheck_is_clean(script):
    assert shutil.which("shellcheck"), "shellcheck is missing (scripts/install-deps.sh installs it)"
    result = subprocess.run(["shellcheck", "--norc", str(script)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
