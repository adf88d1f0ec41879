"""What the deployment tests build once and share: the Debian 12 base image
and the Kolo wheel of this checkout.

  kolo-test/bookworm   Debian 12 minbase from mmdebstrap (no registry is
                       reachable here), made only if missing; the base of the
                       Ansible "VMs" and of the Kolo image alike
  the Kolo wheel       `pip wheel` of this checkout, once per hash of the
                       sources it is built from, into build/deploy-test/wheels/HASH/,
                       reusing the CMake tree of build/python; installed by
                       the Ansible playbook and copied into the Kolo image
                       (Dockerfile.cpu's KOLO_WHEEL=prebuilt)

Both are Debian 12 builds for Debian 12 containers, so the wheel the host
compiled runs in them unchanged.
"""

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / "build" / "deploy-test"
BASE_IMAGE = "kolo-test/bookworm"
NICE = ["nice", "-n", "10"]
# What goes into the wheel: the sources pip wheel compiles and packages.
WHEEL_SOURCES = ["CMakeLists.txt", "pyproject.toml", "cmake", "include", "src", "python"]


def checked_run(argv, timeout, **kwargs):
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kwargs)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, argv))} exited {result.returncode}:\n"
                           f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result


def image_exists(tag):
    return subprocess.run(["docker", "image", "inspect", tag], capture_output=True,
                          timeout=60).returncode == 0


def ensure_base_image():
    """kolo-test/bookworm, made by mmdebstrap if it is missing."""
    if not image_exists(BASE_IMAGE):
        if shutil.which("mmdebstrap") is None:
            raise RuntimeError(f"{BASE_IMAGE} is missing and mmdebstrap, which makes it, is not installed "
                               "(scripts/install-deps.sh installs it)")
        # A pipeline in bash: mmdebstrap writes the tarball to stdout.
        checked_run(["bash", "-o", "pipefail", "-c", f"{' '.join(NICE)} mmdebstrap --quiet --variant=minbase "
              f"bookworm - | docker import - {BASE_IMAGE}"], timeout=900)
    return BASE_IMAGE


def files_hash(paths):
    """sha256 over the path and bytes of every file under `paths`, tracked or
    not (git-ignored ones excepted)."""
    listed = checked_run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *paths],
                  timeout=60, cwd=REPO).stdout.split("\0")
    digest = hashlib.sha256()
    for name in sorted(set(filter(None, listed))):
        path = REPO / name
        if path.is_file():
            digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def ensure_wheel():
    """The Kolo wheel of this checkout, built once per source hash."""
    out = CACHE / "wheels" / files_hash(WHEEL_SOURCES)[:16]
    wheels = sorted(out.glob("kolo-*.whl"))
    if wheels:
        return wheels[0]
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    checked_run(NICE + [sys.executable, "-m", "pip", "wheel", "-q", "--disable-pip-version-check",
                 "--no-deps", "--no-build-isolation", str(REPO), "-w", str(tmp)],
         timeout=2400, cwd=REPO)
    tmp.rename(out)
    return sorted(out.glob("kolo-*.whl"))[0]
