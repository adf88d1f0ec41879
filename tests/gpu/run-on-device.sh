#!/usr/bin/env bash
# Issue 24's GPU tests on the GPU machine (the `device` tool's `run`), and
# the step that prepares what the build there needs.
#
#   tests/gpu/run-on-device.sh prepare      here, once: downloads (apt-get
#       download, no install) the Debian packages Kolo builds against that
#       the GPU image lacks into .gpu-deps/ (git-ignored, a few MB)
#   run(command="tests/gpu/run-on-device.sh", carry=[".gpu-deps"])
#       there: unpacks them into a private prefix (never into /), builds Kolo
#       with -DKOLO_WITH_CUDA=ON against the image's CUDA toolkit and NCCL
#       (nvcc, cmake, ninja, pybind11 and scikit-build-core are in the image),
#       pip-installs it into the image's python3 (torch 2.11 + CUDA 13), then
#       runs gpu_test (C++) and tests/gpu + the refusal test (pytest). Logs
#       and JUnit files land in $OUT (at most 8 files come back: the report,
#       configure/build/gpu_test/pip_install/pytest logs, two XML files).
#
# Why build there rather than carry a build from here: kolo._core must be
# built for the image's Python 3.12 (this machine has 3.11), and the
# plugins against the image's NCCL. The C++ dependencies are Debian 12's,
# carried as .deb files and unpacked with dpkg -x.
set -uo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
DEPS_DIR="$REPO/.gpu-deps"
# Build-time packages (headers, CMake configs) and the runtime libraries
# their .so links point at.
PACKAGES=(libfmt-dev libfmt9 libyaml-cpp-dev libyaml-cpp0.7 libcli11-dev nlohmann-json3-dev
          libeigen3-dev libgtest-dev libgmock-dev libdlpack-dev libssl-dev libssl3)

if [[ "${1:-}" == "prepare" ]]; then
  mkdir -p "$DEPS_DIR"
  cd "$DEPS_DIR" && apt-get download "${PACKAGES[@]}" || exit 1
  ls -l "$DEPS_DIR"
  exit 0
fi

OUT=${OUT:-/tmp/kolo-gpu-out}
mkdir -p "$OUT"
REPORT="$OUT/report.txt"
say() { echo "$*" | tee -a "$REPORT"; }
run_logged() {  # name, command...: its output to $OUT/<name>.log, its status to the report
  local name=$1
  shift
  "$@" >"$OUT/$name.log" 2>&1
  local status=$?
  say "$name: exit $status"
  return $status
}

say "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
say "commit: $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)"
say "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1)"
PYTHON=${PYTHON:-python3}
say "python: $($PYTHON -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())' 2>&1)"
say "nvcc: $(nvcc --version 2>&1 | tail -1)"
say "compiler: $(c++ --version 2>&1 | head -1)"

if ! compgen -G "$DEPS_DIR/*.deb" >/dev/null; then
  say "no .gpu-deps/*.deb: run 'tests/gpu/run-on-device.sh prepare' first and carry .gpu-deps"
  exit 1
fi
PREFIX=/tmp/kolo-deps
mkdir -p "$PREFIX"
for deb in "$DEPS_DIR"/*.deb; do dpkg -x "$deb" "$PREFIX"; done
export LD_LIBRARY_PATH="$PREFIX/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# Debian puts OpenSSL's configuration.h under the multiarch folder, which the
# compiler searches only under /usr.
export CPATH="$PREFIX/usr/include/x86_64-linux-gnu${CPATH:+:$CPATH}"
# NCCL: the image's (the nvidia-nccl-cu13 wheel torch uses), found next to the toolkit or there.
# (nvidia/nccl/ or, in CUDA 13's wheel layout, nvidia/cu13/: wherever libnccl.so.2 and nccl.h are)
SITE=$($PYTHON -c 'import site; print(site.getsitepackages()[0])')
NCCL_LIB=$(find "$SITE/nvidia" -name 'libnccl.so.2' 2>/dev/null | head -1)
NCCL_HOME=${NCCL_LIB:+$(dirname "$(dirname "$NCCL_LIB")")}
[[ -n "$NCCL_HOME" && -e "$NCCL_HOME/include/nccl.h" ]] || NCCL_HOME=""
PREFIXES="$PREFIX/usr"
if [[ -n "$NCCL_HOME" ]]; then
  PREFIXES="$PREFIXES;$NCCL_HOME"
  export LD_LIBRARY_PATH="$NCCL_HOME/lib:$LD_LIBRARY_PATH"
  [[ -e "$NCCL_HOME/lib/libnccl.so" ]] || ln -sf libnccl.so.2 "$NCCL_HOME/lib/libnccl.so"
fi
say "nccl: ${NCCL_HOME:-the one next to the CUDA toolkit}"

CMAKE_ARGS=(-G Ninja -DKOLO_WITH_CUDA=ON -DKOLO_BUILD_BENCH=OFF -DKOLO_MPI=OFF
            -DCMAKE_PREFIX_PATH="$PREFIXES" -DCMAKE_BUILD_TYPE=RelWithDebInfo)
run_logged configure cmake -S "$REPO" -B "$REPO/build-device" "${CMAKE_ARGS[@]}" || exit 1
run_logged build cmake --build "$REPO/build-device" -j 16 --target gpu_test kolo_cuda kolo_nccl \
  || exit 1
(cd "$REPO/build-device" && run_logged gpu_test ./bin/gpu_test --gtest_output="xml:$OUT/gpu_test.xml")

# Into the image's own Python environment (the one that holds torch; a venv
# made from it would not see its packages), so kolorun lands next to
# sys.executable where the tests look. The machine starts bare every time.
PYBIND11_DIR=$($PYTHON -m pybind11 --cmakedir)
export SKBUILD_CMAKE_ARGS="-DKOLO_WITH_CUDA=ON;-DKOLO_MPI=OFF;-DCMAKE_PREFIX_PATH=$PREFIXES;-Dpybind11_DIR=$PYBIND11_DIR"
export CMAKE_BUILD_PARALLEL_LEVEL=16
run_logged pip_install "$PYTHON" -m pip install --no-build-isolation --no-deps --no-index "$REPO" \
  || exit 1
cd "$REPO" || exit 1
# Within the tool's 10 minutes: until the engine's CUDA path exists the tests
# fail fast on its refusal; each has its own limit besides.
run_logged pytest timeout 420 "$PYTHON" -m pytest -v -rs -p no:cacheprovider \
  --junitxml="$OUT/pytest.xml" tests/gpu tests/python/launcher/test_gpu_refusal.py
say "done"
