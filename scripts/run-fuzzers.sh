#!/usr/bin/env bash
# Usage: scripts/run-fuzzers.sh <bindir> <seconds>
# Runs every fuzz_* binary in <bindir> for <seconds> on a scratch copy of its
# seed corpus (tests/fuzz/corpus/<name>/; the committed corpus is never
# written). Crash inputs are kept in <bindir>/../fuzz-artifacts/<name>/.
# Exits non-zero if any fuzzer crashes, leaks, times out or fails to run.
set -euo pipefail

if [ $# -ne 2 ] || ! [[ "$2" =~ ^[0-9]+$ ]]; then
  echo "usage: $0 <bindir> <seconds>" >&2
  exit 2
fi
bindir=$1
seconds=$2
if [ ! -d "$bindir" ]; then
  echo "run-fuzzers: no directory $bindir (build the fuzzers first: make fuzz-build)" >&2
  exit 1
fi
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
artifacts_root=$(cd "$bindir/.." && pwd)/fuzz-artifacts

shopt -s nullglob
fuzzers=()
for bin in "$bindir"/fuzz_*; do
  [ -f "$bin" ] && [ -x "$bin" ] && fuzzers+=("$bin")
done
if [ ${#fuzzers[@]} -eq 0 ]; then
  echo "run-fuzzers: no fuzz_* binaries in $bindir" >&2
  exit 1
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

failed=()
for bin in "${fuzzers[@]}"; do
  name=$(basename "$bin")
  corpus="$scratch/$name"
  artifacts="$artifacts_root/$name"
  mkdir -p "$corpus" "$artifacts"
  seeds="$repo/tests/fuzz/corpus/$name"
  if [ -d "$seeds" ]; then
    cp -R "$seeds/." "$corpus/"
  else
    echo "run-fuzzers: warning: no seed corpus at $seeds" >&2
  fi
  log="$scratch/$name.log"
  echo "run-fuzzers: $name for ${seconds}s ($(ls "$corpus" | wc -l) seeds)"
  # -max_total_time bounds the run; the outer timeout guards against a
  # fuzzer that ignores it (a hang in start-up, say).
  if timeout --kill-after=10 $((seconds + 60)) "$bin" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" \
      >"$log" 2>&1; then
    grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb)|^Done" "$log" | sed 's/^/  /' || true
  else
    echo "run-fuzzers: $name FAILED; last lines of its log:" >&2
    tail -n 60 "$log" >&2
    echo "run-fuzzers: crash inputs (if any) are in $artifacts" >&2
    failed+=("$name")
  fi
done

if [ ${#failed[@]} -ne 0 ]; then
  echo "run-fuzzers: failed: ${failed[*]}" >&2
  exit 1
fi
echo "run-fuzzers: all ${#fuzzers[@]} fuzzer(s) ran ${seconds}s without a crash"
