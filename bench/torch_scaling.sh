#!/usr/bin/env bash
# PyTorch data-parallel scaling, Kolo beside torch.distributed DDP (gloo).
#
# Runs the synthetic benchmark (examples/pytorch/synthetic_benchmark.py: small CNN,
# batch 32 per worker, one torch thread per process) on 1 and NP ranks under kolorun,
# and the same model and steps under DistributedDataParallel (bench/torch_ddp_benchmark.py)
# on 1 and NP processes. For reference it also runs NP independent 1-rank jobs at once:
# what NP workers get from this machine's cores and memory with no gradient exchange,
# the ceiling of the NP-rank runs. The configurations repeat ROUNDS times, interleaved,
# in a rotated order each round, so that the machine's drift hits all of them alike;
# the table holds each one's median total img/sec.
#
#   bench/torch_scaling.sh                 # ROUNDS=3 NP=2: about 75 s on 2 cores
#   ROUNDS=5 bench/torch_scaling.sh --num-iters 10 --fp16-allreduce
#
# Extra arguments go to every benchmark run. Environment: VENV (default .venv: its
# python and, when it has one, its kolorun), PYTHON, KOLORUN, NP, ROUNDS.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${VENV:-.venv}
python=${PYTHON:-$venv/bin/python}
if [ -z "${KOLORUN:-}" ]; then
  for k in "$venv/bin/kolorun" python/kolo/bin/kolorun build/bin/kolorun; do
    if [ -x "$k" ]; then KOLORUN=$k; break; fi
  done
fi
kolorun=${KOLORUN:?no kolorun found: set KOLORUN}
np=${NP:-2}
rounds=${ROUNDS:-3}
bench_args=(--num-warmup-batches 5 --num-batches-per-iter 10 --num-iters 5 "$@")

labels=(kolo_1 "kolo_$np" ddp_1 "ddp_$np" "solo_$np")
# command_of LABEL: sets cmd to the command of one job of that configuration.
command_of() {
  case $1 in
    kolo_*) cmd=("$kolorun" -np "${1#kolo_}" "$python" examples/pytorch/synthetic_benchmark.py) ;;
    ddp_*) cmd=("$python" bench/torch_ddp_benchmark.py --np "${1#ddp_}") ;;
    solo_*) cmd=("$kolorun" -np 1 "$python" examples/pytorch/synthetic_benchmark.py) ;;
  esac
  cmd+=("${bench_args[@]}")
}
jobs_of() { if [[ $1 == solo_* ]]; then echo "${1#solo_}"; else echo 1; fi; }

# run_config LABEL: prints the configuration's total img/sec: the sum of the
# "Total img/sec on N worker(s): X +-Y" lines of its jobs, which run at the same time.
workdir=$(mktemp -d)
trap 'rm -rf "$workdir"' EXIT
run_config() {
  local label=$1 n pids=() total=0 t
  n=$(jobs_of "$label")
  command_of "$label"
  for ((j = 0; j < n; j++)); do "${cmd[@]}" >"$workdir/$j" 2>&1 & pids+=($!); done
  local status=()  # wait for every job before judging any, so none outlives the script
  for ((j = 0; j < n; j++)); do wait "${pids[j]}" && status+=(0) || status+=($?); done
  for ((j = 0; j < n; j++)); do
    if [ "${status[j]}" != 0 ]; then
      echo "$label failed (exit status ${status[j]}):" >&2; cat "$workdir/$j" >&2; return 1
    fi
    t=$(sed -n 's/.*Total img\/sec on [0-9]* worker(s): \([0-9.]*\).*/\1/p' "$workdir/$j")
    [ -n "$t" ] || { echo "$label printed no total:" >&2; cat "$workdir/$j" >&2; return 1; }
    total=$(awk -v a="$total" -v b="$t" 'BEGIN{print a + b}')
  done
  echo "$total"
}

echo "## $(nproc) cores, $(uname -r), torch $("$python" -c 'import torch; print(torch.__version__)'), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for l in "${labels[@]}"; do
  command_of "$l"
  if [[ $l == solo_* ]]; then echo "\$ ${cmd[*]}    # $np of these at once"; else echo "\$ ${cmd[*]}"; fi
done

# busy_percent: how busy the host's CPUs were over the last second (other jobs
# running now would make this round's numbers unreliable).
busy_percent() {
  local -a a b
  read -ra a < <(head -1 /proc/stat); sleep 1; read -ra b < <(head -1 /proc/stat)
  awk -v t0="$(IFS=+; echo "$((${a[*]:1}))")" -v t1="$(IFS=+; echo "$((${b[*]:1}))")" \
      -v i0="$((a[4] + a[5]))" -v i1="$((b[4] + b[5]))" \
      'BEGIN{printf "%.0f", 100 * (1 - (i1 - i0) / (t1 - t0))}'
}

declare -A totals
for ((r = 0; r < rounds; r++)); do
  echo "round $((r + 1)): host $(busy_percent)% busy before it"
  for ((i = 0; i < ${#labels[@]}; i++)); do
    l=${labels[(i + r) % ${#labels[@]}]}
    total=$(run_config "$l")
    echo "round $((r + 1)): $l $total img/sec"
    totals[$l]+="$total "
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

median() {
  tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g |
    awk '{a[NR]=$1} END{printf "%.1f", (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'
}
kolo1=$(median "${totals[kolo_1]}"); kolon=$(median "${totals[kolo_$np]}")
ddp1=$(median "${totals[ddp_1]}"); ddpn=$(median "${totals[ddp_$np]}")
solon=$(median "${totals[solo_$np]}")
eff() { awk -v one="$1" -v n="$2" -v np="$np" 'BEGIN{printf "%.1f%%", 100 * n / (np * one)}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a / b}'; }

echo
echo "Median of $rounds rounds; total img/sec over all workers; scaling efficiency = total($np) / ($np x total(1))."
echo
echo "| | 1 rank (img/sec) | $np ranks (img/sec) | scaling efficiency |"
echo "|---|---:|---:|---:|"
echo "| Kolo | $kolo1 | $kolon | $(eff "$kolo1" "$kolon") |"
echo "| DDP (gloo) | $ddp1 | $ddpn | $(eff "$ddp1" "$ddpn") |"
echo "| Kolo / DDP | $(ratio "$kolo1" "$ddp1") | $(ratio "$kolon" "$ddpn") | |"
echo "| $np independent 1-rank jobs (no exchange: the ceiling) | $kolo1 | $solon | $(eff "$kolo1" "$solon") |"
