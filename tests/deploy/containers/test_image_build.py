"""Dockerfile.cpu's KOLO_WHEEL argument: a wrong value or a missing wheel
stops the build at its first step with one clear line, before any package is
downloaded; the image the other tests use (built from the prebuilt wheel)
holds the Kolo of this checkout."""

import hashlib
import subprocess

import pytest

from docker_host import DOCKERFILE, REPO, WHEEL_DIR, docker
from local_builds import ensure_base_image

pytestmark = pytest.mark.timeout(900)


def _build(*build_args):
    return subprocess.run(
        ["docker", "build", "-q", "-f", str(DOCKERFILE), "--build-arg", f"BASE_IMAGE={ensure_base_image()}",
         *build_args, "--target", "builder", str(REPO)],
        capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("value, words", [
    ("prebuilt", "KOLO_WHEEL=prebuilt needs exactly one kolo-*.whl in deploy/docker/wheels/, found 0"),
    ("wheel", "KOLO_WHEEL must be compile or prebuilt, not 'wheel'"),
])
def test_a_wrong_kolo_wheel_stops_the_build_with_the_reason(engine, value, words):
    assert not list(WHEEL_DIR.glob("kolo-*.whl")), "a wheel was left in deploy/docker/wheels/"
    result = _build("--build-arg", f"KOLO_WHEEL={value}")
    assert result.returncode != 0
    assert words in result.stdout + result.stderr, result.stdout + result.stderr


def _sources_digest(root):
    """sha256 over the relative path and bytes of every .py file under root."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def test_the_image_holds_this_checkouts_kolo(cpu_image):
    """Not a stale wheel: kolo's Python files in the image are this checkout's."""
    script = ("import hashlib, pathlib, kolo\n"
              "root = pathlib.Path(kolo.__file__).parent\n"
              "digest = hashlib.sha256()\n"
              "for path in sorted(root.rglob('*.py')):\n"
              "    digest.update(str(path.relative_to(root)).encode() + b'\\0' + path.read_bytes() + b'\\0')\n"
              "print(digest.hexdigest())\n")
    in_image = docker("run", "--rm", "-e", "MODE=RUN", cpu_image, "python3", "-c", script).stdout.strip()
    assert in_image == _sources_digest(REPO / "python" / "kolo")
