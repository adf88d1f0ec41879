#!/usr/bin/env bash
# Launcher start-up: time from starting the launcher to the first completed
# collective of a trivial job (one allreduce of one float), and the whole
# job's wall time: Kolo started by kolorun, by OpenMPI's mpirun (over Kolo's
# own transports and over its MPI backend), by torchrun (when PYTHON can import
# torch and kolo) and by Slurm's srun (when SLURM_CONF names a cluster that
# answers), beside raw MPI under mpirun and torch.distributed under torchrun;
# each run REPS times back to back; prints a markdown table of medians and
# minimums for docs/benchmarks.md.
#
#   PYTHON: the interpreter for the torch rows (default python3; the project
#   venv's .venv/bin/python has kolo installed)
#
#   bench/launcher_startup.sh [NP] [REPS]
#   tests/python/launcher/slurm_cluster.py --cpus NP bench/launcher_startup.sh [NP] [REPS]
#     (as root: the same inside a one-node Slurm started for it, with the srun row)
set -euo pipefail
cd "$(dirname "$0")/.."
np=${1:-8}
reps=${2:-10}
bin=${BUILD_DIR:-build}/bin

now_ns() { date +%s%N; }

# run LABEL COMMAND...: REPS runs; collects first-collective and wall times in ms.
declare -A first_ms wall_ms
run() {
  local label=$1; shift
  local firsts=() walls=()
  for ((i = 0; i < reps; i++)); do
    local start end out
    start=$(now_ns)
    out=$(LAUNCH_START_NS=$start "$@" 2>&1) || { echo "$label failed:" >&2; echo "$out" >&2; return 1; }
    end=$(now_ns)
    # Only rank 0 prints: two lines would be ranks that each formed a world of their own.
    if [ "$(grep -c 'first_collective_ms' <<<"$out")" -ne 1 ]; then
      echo "$label: expected one rank 0, got:" >&2; echo "$out" >&2; return 1
    fi
    firsts+=("$(grep -o 'first_collective_ms [0-9.]*' <<<"$out" | awk '{print $2}')")
    walls+=("$(awk -v s="$start" -v e="$end" 'BEGIN{printf "%.1f", (e-s)/1e6}')")
  done
  first_ms[$label]=$(printf '%s\n' "${firsts[@]}" | sort -n | awk '{a[NR]=$1} END{printf "%.1f | %.1f", a[int((NR+1)/2)], a[1]}')
  wall_ms[$label]=$(printf '%s\n' "${walls[@]}" | sort -n | awk '{a[NR]=$1} END{printf "%.1f | %.1f", a[int((NR+1)/2)], a[1]}')
}

echo "## host: $(nproc) cores, $(uname -r); $(date -u +%Y-%m-%dT%H:%MZ); $np ranks, $reps runs each"
labels=()
echo "\$ kolorun -np $np $bin/kolo-first-collective"
run "kolorun, Kolo" "$bin/kolorun" -np "$np" "$bin/kolo-first-collective" && labels+=("kolorun, Kolo")
if command -v mpirun >/dev/null && [ -x "$bin/mpi-first-collective" ]; then
  mpirun_cmd=(mpirun --oversubscribe --bind-to none -np "$np")
  [ "$(id -u)" = 0 ] && mpirun_cmd+=(--allow-run-as-root)
  echo "\$ mpirun -np $np --oversubscribe $bin/mpi-first-collective"
  run "mpirun, raw MPI" "${mpirun_cmd[@]}" "$bin/mpi-first-collective" && labels+=("mpirun, raw MPI")
  echo "\$ mpirun -np $np --oversubscribe $bin/kolo-first-collective"
  run "mpirun, Kolo" "${mpirun_cmd[@]}" "$bin/kolo-first-collective" && labels+=("mpirun, Kolo")
  echo "\$ mpirun -np $np --oversubscribe -x KOLO_BACKEND=mpi $bin/kolo-first-collective"
  run "mpirun, Kolo over MPI" "${mpirun_cmd[@]}" -x KOLO_BACKEND=mpi "$bin/kolo-first-collective" &&
    labels+=("mpirun, Kolo over MPI")
else
  echo "mpirun or mpi-first-collective not available: skipped"
fi
python=${PYTHON:-python3}
if "$python" -c 'import torch.distributed.run' 2>/dev/null; then
  # python -m torch.distributed.run is torchrun run by this interpreter (the
  # torchrun script on PATH may be another Python's); -r 1 -t 1 because
  # Debian 12's torchrun fails with its default redirects under Python 3.11.
  torchrun=("$python" -m torch.distributed.run -r 1 -t 1 --nproc_per_node "$np")
  echo "\$ torchrun --nproc_per_node $np bench/startup/torch_first_collective.py"
  run "torchrun, torch.distributed" "${torchrun[@]}" bench/startup/torch_first_collective.py &&
    labels+=("torchrun, torch.distributed")
  if "$python" -c 'import kolo.torch' 2>/dev/null; then
    echo "\$ torchrun --nproc_per_node $np bench/startup/kolo_torch_first_collective.py"
    run "torchrun, Kolo" "${torchrun[@]}" bench/startup/kolo_torch_first_collective.py &&
      labels+=("torchrun, Kolo")
    # The same Python script under kolorun: the torchrun rows' counterpart
    # (both pay for starting Python and importing torch).
    echo "\$ kolorun -np $np $python bench/startup/kolo_torch_first_collective.py"
    run "kolorun, Kolo from Python" "$bin/kolorun" -np "$np" "$python" bench/startup/kolo_torch_first_collective.py &&
      labels+=("kolorun, Kolo from Python")
  else
    echo "$python cannot import kolo.torch: the torchrun Kolo row skipped"
  fi
else
  echo "$python cannot import torch: torchrun skipped"
fi
if [ -n "${SLURM_CONF:-}" ] && command -v srun >/dev/null && timeout 10 sinfo -h >/dev/null 2>&1; then
  echo "\$ srun -n $np $bin/kolo-first-collective"
  run "srun, Kolo" srun -n "$np" "$bin/kolo-first-collective" && labels+=("srun, Kolo")
else
  echo "no Slurm cluster (SLURM_CONF unset, or its controller does not answer): srun skipped"
fi

echo
echo "| launcher | first collective, median (ms) | min (ms) | whole job, median (ms) | min (ms) |"
echo "|---|---:|---:|---:|---:|"
for l in "${labels[@]}"; do echo "| $l | ${first_ms[$l]} | ${wall_ms[$l]} |"; done
