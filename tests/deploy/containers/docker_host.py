"""The Docker engine and the images the container tests run: the engine is
started if it is installed but not running (root only), the Debian 12 base
image is made offline with mmdebstrap (no registry is reachable here), and
the CPU image is built once per source state: its tag and label carry a hash
of every file the build copies, so a second run reuses it instead of
rebuilding."""

import hashlib
import os
import pathlib
import shutil
import subprocess

REPO = pathlib.Path(__file__).resolve().parents[3]
DOCKERFILE = REPO / "deploy" / "docker" / "Dockerfile.cpu"
BASE_IMAGE = "kolo-test/bookworm"
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


def ensure_base_image():
    """kolo-test/bookworm: a minimal Debian 12 made by mmdebstrap, imported."""
    if image_exists(BASE_IMAGE):
        return BASE_IMAGE
    assert shutil.which("mmdebstrap"), "mmdebstrap is missing (scripts/install-deps.sh installs it)"
    command = f"nice -n 10 mmdebstrap --quiet --variant=minbase bookworm - | docker import - {BASE_IMAGE}"
    result = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True,
                            timeout=900)
    assert result.returncode == 0, f"making {BASE_IMAGE} failed:\n{result.stderr[-4000:]}"
    return BASE_IMAGE


def source_hash():
    """sha256 over the path and bytes of every file the image is built from."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--",
                             *BUILD_INPUTS], cwd=REPO, capture_output=True, check=True, timeout=60).stdout
    digest = hashlib.sha256()
    for name in sorted(set(filter(None, listed.decode().split("\0")))):
        path = REPO / name
        if path.is_file():
            digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def local_ca_certificates():
    """The certificates this machine trusts beyond Debian's (a proxy that
    re-signs TLS, as here): the build needs them to reach PyPI."""
    return "".join(p.read_text() for p in sorted(LOCAL_CA_DIR.glob("*.crt"))).rstrip("\n")


def ensure_cpu_image(timeout=3000):
    """The image of deploy/docker/Dockerfile.cpu for the current sources:
    reused when an image with the same source hash exists, else built."""
    digest = source_hash()
    tag = f"{CPU_REPOSITORY}:cpu-{digest[:16]}"
    if image_exists(tag):
        label = docker("image", "inspect", "-f", f'{{{{index .Config.Labels "{HASH_LABEL}"}}}}', tag).stdout.strip()
        if label == digest:
            return tag
    base = ensure_base_image()
    result = subprocess.run(
        ["nice", "-n", "10", "docker", "build", "-q", "-f", str(DOCKERFILE), "--build-arg", f"BASE_IMAGE={base}",
         "--build-arg", f"EXTRA_CA_CERTS={local_ca_certificates()}", "--label", f"{HASH_LABEL}={digest}",
         "-t", tag, str(REPO)],
        capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"building {tag} failed:\n{result.stdout[-3000:]}{result.stderr[-6000:]}"
    return tag
