#!/usr/bin/env bash
# Python tests of `make test`, against the package pip installed into the venv.
#   tests/python/multirank: pytest inside every rank, under kolorun -np 2 and -np 3
#                           (every rank runs the same tests in the same order).
#   tests/python/launcher:  plain pytest; these tests start their own jobs.
#   tests/deploy:           plain pytest; the Helm chart and Kubeflow manifests
#                           (rendered, schema-checked, scripts run and shellchecked),
#                           hadolint; not containers/ (make container-test runs it).
# Every run has a wall-clock limit; -x ends a rank at its first failure, and
# kolorun then stops the others, so a failure never leaves ranks waiting.
set -euo pipefail
venv=${1:-.venv}
cd "$(dirname "$0")/.."
python="$(cd "$venv/bin" && pwd)/python"   # not realpath: the venv is the symlink
kolorun="$(cd "$venv/bin" && pwd)/kolorun"
# A collective some rank never submits (its test failed mid-sequence) fails
# on the others after this long instead of hanging them; test_rank_failure
# checks it. The warning comes first.
export KOLO_STALL_CHECK_TIME_SECONDS=${KOLO_STALL_CHECK_TIME_SECONDS:-10}
export KOLO_STALL_SHUTDOWN_TIME_SECONDS=${KOLO_STALL_SHUTDOWN_TIME_SECONDS:-20}
export PYTHONDONTWRITEBYTECODE=1
pytest_args=(-x -q -p no:cacheprovider --timeout=300)

for np in 2 3; do
  echo "== python tests under kolorun -np $np"
  timeout 900 "$kolorun" -np "$np" "$python" -m pytest "${pytest_args[@]}" tests/python/multirank
done
echo "== python launcher tests"
timeout 900 "$python" -m pytest "${pytest_args[@]}" tests/python/launcher
echo "== deployment tests"
timeout 900 "$python" -m pytest "${pytest_args[@]}" tests/deploy --ignore=tests/deploy/containers
