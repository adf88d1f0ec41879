#!/usr/bin/env bash
# One Kolo build against many TensorFlow releases: builds the Kolo wheel once
# (from the project venv's build tree), then for each TF version makes a
# scratch venv, installs tensorflow-cpu of that version from PyPI (pip picks
# the numpy and ml-dtypes that release requires: the venv has no system
# packages to clash with), tf-keras of the same version, and the SAME wheel,
# and runs bench/tf-versions/smoke.py under `kolorun -np 2` with Keras 3 and
# with tf-keras (TF_USE_LEGACY_KERAS=1), then bench/tf_op_overhead.py for the
# per-op cost eagerly and in tf.function. Each venv is deleted after its run
# (about 1.5 GB each); pip's cache keeps the downloads (about 250 MB per
# version) for the next run. Not part of `make test`: it downloads.
#
#   bench/tf-versions/run.sh                 # 2.16 2.17 2.18 2.19 2.20 2.21
#   bench/tf-versions/run.sh 2.16 2.20       # chosen versions
#
# Environment: VENV (default .venv: builds the wheel; `make python` first),
# WORK (default build/tf-versions), OVERHEAD_ITERS (default 500; 0 skips it).
# Prints a line per step and the table at the end; exits 1 if any version failed.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
venv=${VENV:-.venv}
work=${WORK:-build/tf-versions}
iters=${OVERHEAD_ITERS:-500}
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(2.16 2.17 2.18 2.19 2.20 2.21)
for v in "${versions[@]}"; do
  [[ $v =~ ^2\.[0-9]+$ ]] || { echo "error: '$v' is not a TF version like 2.16" >&2; exit 2; }
done
[ -x "$venv/bin/python" ] || { echo "error: no $venv/bin/python: run make python" >&2; exit 2; }

mkdir -p "$work"
rm -rf "$work/wheel"
echo "building the Kolo wheel once..."
if ! "$venv/bin/python" -m pip wheel -q --disable-pip-version-check --no-build-isolation \
    --no-deps -w "$work/wheel" . >"$work/wheel.log" 2>&1; then
  echo "error: the wheel did not build:" >&2; cat "$work/wheel.log" >&2; exit 1
fi
wheel=$(ls "$work"/wheel/kolo-*.whl)
echo "wheel: $wheel sha256 $(sha256sum "$wheel" | cut -c1-16)"

# overhead_of OUTPUT NAME: the us/op number of tf_op_overhead.py's line NAME
# (kolorun tags rank 0's lines with "[0]<stdout>:").
overhead_of() { sed -n "s/^\(\[0\]<stdout>:\)\{0,1\}$2 *\([0-9.]*\) us\/op$/\2/p" <<<"$1"; }

rows=()
failed=0
for v in "${versions[@]}"; do
  scratch="$work/venv-$v"
  rm -rf "$scratch"
  log="$work/tf-$v.log"
  : >"$log"
  echo "== TF $v: installing (log: $log)"
  /usr/bin/python3 -m venv "$scratch"
  py=$scratch/bin/python
  if ! "$py" -m pip install -q --disable-pip-version-check "tensorflow-cpu==$v.*" "$wheel" \
      >>"$log" 2>&1; then
    rows+=("| $v | install failed | | | | |"); failed=1; rm -rf "$scratch"; continue
  fi
  # --no-deps: tf-keras requires the package named `tensorflow`, which tensorflow-cpu provides.
  "$py" -m pip install -q --disable-pip-version-check --no-deps "tf-keras==$v.*" >>"$log" 2>&1 ||
    echo "no tf-keras $v.* on PyPI" >>"$log"
  tf_full=$("$py" -c 'import tensorflow as tf; print(tf.__version__)' 2>>"$log")
  deps=$("$py" -c 'import numpy, ml_dtypes; print(f"numpy {numpy.__version__}, ml-dtypes {ml_dtypes.__version__}")' 2>>"$log")
  results=()
  for legacy in 0 1; do
    if [ "$legacy" = 1 ] && ! "$py" -c 'import tf_keras' >/dev/null 2>&1; then
      results+=("no tf-keras"); continue
    fi
    echo "-- TF $tf_full, TF_USE_LEGACY_KERAS=$legacy: smoke" | tee -a "$log"
    if TF_USE_LEGACY_KERAS=$legacy timeout 300 "$scratch/bin/kolorun" -np 2 "$py" \
        bench/tf-versions/smoke.py >>"$log" 2>&1; then
      results+=(pass)
    else
      results+=("FAIL"); failed=1
    fi
    tail -n 3 "$log"
  done
  eager=- graph=-
  if [ "$iters" -gt 0 ]; then
    echo "-- TF $tf_full: op overhead" | tee -a "$log"
    out=$(timeout 300 "$scratch/bin/kolorun" -np 2 "$py" bench/tf_op_overhead.py \
      --iters "$iters" 2>>"$log")
    echo "$out" >>"$log"
    eager=$(overhead_of "$out" "kolo.tensorflow eager")
    graph=$(overhead_of "$out" "kolo.tensorflow in tf.function (C API kernel)")
  fi
  rows+=("| $tf_full | $deps | ${results[0]} | ${results[1]} | ${eager:--} | ${graph:--} |")
  echo "${rows[-1]}"
  rm -rf "$scratch"
done

echo
echo "Kolo wheel $(basename "$wheel") (sha256 $(sha256sum "$wheel" | cut -c1-16)), the same" \
  "file in every venv; $(date -u +%Y-%m-%d), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| TF (tensorflow-cpu) | installed with | Keras 3 smoke | tf-keras smoke | eager us/op | tf.function us/op |"
echo "|---|---|---|---|---:|---:|"
printf '%s\n' "${rows[@]}"
exit $failed
