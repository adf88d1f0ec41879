#!/usr/bin/env bash
# Python tests of `make test`, against the package pip installed into the venv.
#   tests/python/multirank: pytest inside every rank, under kolorun -np 2 and -np 3
#                           (every rank runs the same tests in the same order);
#                           the Keras, TF elastic and SyncBatchNormalization
#                           tests under both Kerases (tf-keras at -np 2);
#                           the Adasum tests under -np 4 too.
#   tests/python/launcher:  plain pytest; these tests start their own jobs.
#   tests/faults:           plain pytest; one randomized trial of every case of
#                           the fault matrix (make faults runs it in full).
#   tests/deploy:           plain pytest; the Helm chart and Kubeflow manifests
#                           (rendered, schema-checked, scripts run and shellchecked),
#                           the Ansible playbook run against containers;
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
# Each stage's header says how long the run has taken so far, so a CI log
# shows where its time goes (.ci/run must stay within its budget).
stage() { echo "== $* (at $((SECONDS / 60)) min $((SECONDS % 60)) s)"; }

for np in 2 3; do
  stage "python tests under kolorun -np $np"
  timeout 900 "$kolorun" -np "$np" "$python" -m pytest "${pytest_args[@]}" tests/python/multirank
done
# The Keras tests (with the elastic states and callbacks, and
# SyncBatchNormalization) again under tf-keras (TF_USE_LEGACY_KERAS=1 makes
# tf.keras the Keras 2 of the tf-keras package; the runs above use Keras 3).
# At 2 ranks only: which Keras runs and how many ranks there are are
# independent, and the runs above cover 3 ranks (2 minutes of CI saved).
stage "Keras tests under tf-keras (TF_USE_LEGACY_KERAS=1), kolorun -np 2"
TF_USE_LEGACY_KERAS=1 timeout 900 "$kolorun" -np 2 "$python" -m pytest "${pytest_args[@]}" \
  tests/python/multirank/tf/test_keras_*.py tests/python/multirank/tf/test_elastic_*.py \
  tests/python/multirank/tf/test_sync_bn_tf.py
# Adasum runs on a power-of-two number of ranks only (at 3 its tests check
# Horovod's refusal), so its tests run at 4 ranks as well.
stage "Adasum tests under kolorun -np 4"
timeout 600 "$kolorun" -np 4 "$python" -m pytest "${pytest_args[@]}" \
  tests/python/multirank/test_adasum.py tests/python/multirank/test_adasum_optimizer.py
stage "python launcher tests"
# 1500 s: seed 002's TF-Keras script alone trains its CNN for 2 to 10 minutes
# (test_elastic_seed_tf.py; it sets its own per-test limit).
# --durations: the slowest tests in the log, to see where CI's time goes.
timeout 1500 "$python" -m pytest "${pytest_args[@]}" --durations=15 tests/python/launcher
stage "GPU tests (skipped with the reason where no GPU is usable: tests/gpu/run-on-device.sh)"
timeout 900 "$python" -m pytest "${pytest_args[@]}" -rs tests/gpu
stage "fault matrix, one randomized trial per case"
timeout 900 "$python" -m pytest "${pytest_args[@]}" tests/faults
stage "deployment tests"
# The Ansible tests build images and a wheel on a fresh machine: a longer limit.
timeout 2400 "$python" -m pytest "${pytest_args[@]}" tests/deploy --ignore=tests/deploy/containers
stage "python tests done"
