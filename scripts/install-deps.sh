#!/usr/bin/env bash
# Installs the Debian packages Kolo needs to build, test and benchmark, and
# only those that are missing, so running it again is cheap. Never prompts.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libssl-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libyaml-cpp-dev
  # The autotuner's Gaussian process (src/core/autotune): header-only.
  libeigen3-dev
  libopenmpi-dev openmpi-bin
  clang libclang-rt-14-dev clang-format
  procps iproute2
  openssh-client openssh-server
  # A one-node Slurm that tests/python/launcher/test_slurm.py starts with its
  # own config, key, ports and munge socket. Installing starts nothing that
  # matters: Debian's slurmd and slurmctld services need /etc/slurm/slurm.conf,
  # which no package ships, and the munge service (where systemd starts it)
  # listens only on its own socket in /run/munge, which the tests never use.
  slurmctld slurmd slurm-client munge
  # Python: the venv is made from Debian's python3 with --system-site-packages,
  # so these (torch included) are what kolo.torch and the examples run on.
  python3-dev python3-venv python3-pip pybind11-dev python3-pybind11 libdlpack-dev
  python3-numpy python3-torch python3-sklearn python3-tqdm python3-cloudpickle
  python3-pytest python3-pytest-timeout
  # mpi4py communicators for hvd.init(comm=...) (tests/python/launcher/test_mpi_backend.py).
  python3-mpi4py
  # The elastic seed script (tests/python/launcher/seeds) imports these.
  python3-torchvision python3-filelock
  # tests/deploy: the chart renderer (Go's text/template with sprig, as helm
  # renders) is built offline from these, and shellcheck checks the scripts.
  golang-go golang-github-masterminds-sprig-dev golang-gopkg-yaml.v3-dev shellcheck
  # The chart of `kolo timeline summary` (python/kolo/timeline/chart.py).
  python3-matplotlib
  # deploy/ansible: the playbook's runner and its linters (tests/deploy/test_ansible*.py).
  ansible-core ansible-lint yamllint
  # tests/deploy/containers: a Docker engine, compose (Debian 12's is the
  # standalone docker-compose 1.29) and mmdebstrap, which makes the Debian
  # base image offline (no registry is reachable from CI).
  docker.io docker-compose mmdebstrap
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo -n"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# The engine the container tests use; where none can run (no root, no
# privileges) those tests are skipped with the reason, so this is no failure.
"$(dirname "$0")/start-dockerd.sh" || echo "install-deps: no Docker engine now; the container tests will be skipped" >&2
