#!/usr/bin/env bash
# Builds Horovod 0.28.1 from PyPI's source distribution (pinned by version and
# sha256) into its own venv, with Gloo and MPI and the PyTorch extension only,
# against Debian's python3-torch (the venv is made with
# --system-site-packages, like the project's .venv, so both see the same
# torch). Idempotent: once `horovodrun --check-build` has passed, a second run
# only checks the stamp and returns.
#
#   bench/compare-horovod/build-horovod.sh [DIR]   (default build/compare-horovod)
#
# Needs network access once (pip download); the sdist is kept in DIR/sdist.
set -euo pipefail
cd "$(dirname "$0")/../.."

dir=${1:-build/compare-horovod}
version=0.28.1
sha256=92a43f5a94c43907a56805bad15f19700c62ffc83b7ca483f9e104e229f67ef0
venv=$dir/venv
stamp=$venv/.horovod-$version

if [ -f "$stamp" ]; then
  echo "build-horovod: Horovod $version already built in $venv"
  exit 0
fi

# The compilers, CMake and OpenMPI's headers come from Debian, as for Kolo
# itself (scripts/install-deps.sh installs only what is missing).
./scripts/install-deps.sh
# Debian's python3-torch ships only links to torch's headers: torch/extension.h
# and the rest of them, which Horovod's extension includes, are in libtorch-dev.
if ! dpkg-query -W -f='${Status}' libtorch-dev 2>/dev/null | grep -q "install ok installed"; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo -n"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends libtorch-dev
fi

mkdir -p "$dir/sdist"
sdist=$dir/sdist/horovod-$version.tar.gz
if [ ! -f "$sdist" ]; then
  /usr/bin/python3 -m pip download --disable-pip-version-check --no-deps \
    --no-binary :all: "horovod==$version" -d "$dir/sdist"
fi
echo "$sha256  $sdist" | sha256sum --check --quiet
# Built in place from a fixed directory (pip builds a local tree in place), so a
# build that stopped half-way resumes where it was instead of starting again.
src=$dir/src/horovod-$version
if [ ! -f "$src/setup.py" ]; then
  mkdir -p "$dir/src"
  tar -xzf "$sdist" -C "$dir/src"
fi

if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv --system-site-packages "$venv"
fi

# HOROVOD_WITH_*: fail the build rather than silently leave a backend out.
# --no-build-isolation: Horovod's setup.py imports torch to find its headers
# and ABI flags, so it must see Debian's torch, not a fresh one from PyPI.
# --no-deps: its runtime dependencies (cloudpickle, psutil, pyyaml,
# packaging) are Debian packages already in the venv's view.
# --use-pep517: a failed wheel build ends there (the legacy path would run
# setup.py install and compile everything a second time).
# MAKEFLAGS: setup.py runs make -j8 unless MAKEFLAGS is set; the shared host
# has fewer cores (JOBS overrides).
echo "build-horovod: building Horovod $version in $venv (10-20 minutes)"
env HOROVOD_WITH_PYTORCH=1 HOROVOD_WITH_GLOO=1 HOROVOD_WITH_MPI=1 \
  HOROVOD_WITHOUT_TENSORFLOW=1 HOROVOD_WITHOUT_MXNET=1 \
  MAKEFLAGS="-j${JOBS:-$(nproc)}" \
  nice -n 10 "$venv/bin/python" -m pip install --disable-pip-version-check \
  --use-pep517 --no-build-isolation --no-deps --no-cache-dir -v "./$src" >"$dir/build.log" 2>&1 || {
  tail -n 40 "$dir/build.log" >&2
  echo "build-horovod: the Horovod build failed; the full log is $dir/build.log" >&2
  exit 1
}

# Horovod's own report of what it was built with; the run needs all three.
"$venv/bin/horovodrun" --check-build | tee "$dir/check-build.txt"
for want in "PyTorch" "MPI" "Gloo"; do
  grep -q "\[X\] $want" "$dir/check-build.txt" || {
    echo "build-horovod: Horovod was built without $want (see $dir/check-build.txt)" >&2
    exit 1
  }
done
touch "$stamp"
