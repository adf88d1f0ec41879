"""The Docker engine and the images the container tests run: the engine is
started if it is installed but not running (root only), and the CPU image is
built once per source state: its tag and label carry a hash of every file the
build copies, so a second run reuses it instead of rebuilding.

The image is deploy/docker/Dockerfile.cpu as users build it, on the Debian 12
base image made offline (no registry is reachable here), with one difference:
its builder stage takes the wheel this checkout already built
(KOLO_WHEEL=prebuilt, local_builds.ensure_wheel) instead of compiling Kolo
again for 15-35 minutes. KOLO_TEST_IMAGE_COMPILE=1 builds it the users' way,
compiling in the image.
"""

import os
import pathlib
import shutil
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tests" / "deploy"))
from local_builds import ensure_base_image, ensure_wheel, files_hash  # noqa: E402

DOCKERFILE = REPO / "deploy" / "docker" / "Dockerfile.cpu"
WHEEL_DIR = REPO / "deploy" / "docker" / "wheels"
CPU_REPOSITORY = "kolo-test/kolo"
HASH_LABEL = "org.kolo.source-hash"
LOCAL_CA_DIR = pathlib.Path("/usr/local/share/ca-certificates")
# What the image is built from: .dockerignore lets exactly these through.
BUILD_INPUTS = ["CMakeLists.txt", "pyproject.toml", "README.md", "cmake", "include", "src", "python",
                "examples", "deploy/docker", ".dockerignore"]


def docker(*args, timeout=120, check=True, **kwargs):
    result = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout, **kwargs)
    if check and result.returncode != 0:
        raise AssertionError(f"docker {' '.join(args)} failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    return result


def engine_answers():
    try:
        return docker("info", timeout=20, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def engine_unavailable_reason():
    """None when an engine answers (started here if need be), else why not."""
    if shutil.which("docker") is None:
        return "no docker client (scripts/install-deps.sh installs docker.io)"
    if engine_answers():
        return None
    if os.geteuid() != 0:
        return "the Docker engine is not running and only root can start it"
    started = subprocess.run([str(REPO / "scripts" / "start-dockerd.sh")], capture_output=True, text=True,
                             timeout=120)
    return None if started.returncode == 0 else started.stderr.strip()


def image_exists(name):
    return docker("image", "inspect", name, check=False).returncode == 0


def local_ca_certificates():
    """The certificates this machine trusts beyond Debian's (a proxy that
    re-signs TLS, as here): the build needs them to reach PyPI."""
    return "".join(p.read_text() for p in sorted(LOCAL_CA_DIR.glob("*.crt"))).rstrip("\n")


def ensure_cpu_image(timeout=3000):
    """The image of deploy/docker/Dockerfile.cpu for the current sources:
    reused when an image with the same source hash exists, else built."""
    compile_in_image = os.environ.get("KOLO_TEST_IMAGE_COMPILE") == "1"
    digest = files_hash(BUILD_INPUTS)
    tag = f"{CPU_REPOSITORY}:cpu-{digest[:16]}{'-compiled' if compile_in_image else ''}"
    if image_exists(tag):
        label = docker("image", "inspect", "-f", f'{{{{index .Config.Labels "{HASH_LABEL}"}}}}', tag).stdout.strip()
        if label == digest:
            return tag
    base = ensure_base_image()
    for stale in WHEEL_DIR.glob("kolo-*.whl"):
        stale.unlink()
    build_args = ["--build-arg", "KOLO_WHEEL=compile"]
    if not compile_in_image:
        shutil.copy2(ensure_wheel(), WHEEL_DIR)
        build_args = ["--build-arg", "KOLO_WHEEL=prebuilt"]
    try:
        result = subprocess.run(
            ["nice", "-n", "10", "docker", "build", "-q", "-f", str(DOCKERFILE), "--build-arg", f"BASE_IMAGE={base}",
             *build_args, "--build-arg", f"EXTRA_CA_CERTS={local_ca_certificates()}",
             "--label", f"{HASH_LABEL}={digest}", "-t", tag, str(REPO)],
            capture_output=True, text=True, timeout=timeout)
    finally:
        for copied in WHEEL_DIR.glob("kolo-*.whl"):
            copied.unlink()
    assert result.returncode == 0, f"building {tag} failed:\n{result.stdout[-3000:]}{result.stderr[-6000:]}"
    return tag
