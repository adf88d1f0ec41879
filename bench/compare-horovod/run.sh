#!/usr/bin/env bash
# Kolo against Horovod 0.28.1, the same PyTorch scripts under both: builds Horovod into
# build/compare-horovod/venv once (build-horovod.sh; 10-20 minutes on 2 cores), then runs
# run.py, which prints the table and writes it to build/compare-horovod/results.md.
#
#   bench/compare-horovod/run.sh [run.py options, e.g. --rounds 3]
#
# `make compare-horovod` installs Kolo into .venv first (make python). Never part of make test.
set -euo pipefail
cd "$(dirname "$0")/../.."
bench/compare-horovod/build-horovod.sh build/compare-horovod
exec "${VENV:-.venv}/bin/python" bench/compare-horovod/run.py "$@"
