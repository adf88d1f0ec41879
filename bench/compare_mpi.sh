#!/usr/bin/env bash
# Runs Kolo's and OpenMPI's allreduce sweeps back to back on this host, in
# the same nccl-tests table shape, so docs/benchmarks.md can quote both from
# one run. Both are restricted to TCP (Kolo: KOLO_SHM=0; OpenMPI: --mca btl
# tcp,self); bench/compare compares the shared-memory paths.
#
#   bench/compare_mpi.sh [NP] [MAX_BYTES] [COLLECTIVE]
#   (BUILD_DIR: where bin/ is, default build; FACTOR: size step, default 4)
set -euo pipefail
cd "$(dirname "$0")/.."
np=${1:-2}
max=${2:-256M}
collective=${3:-allreduce}
bin=${BUILD_DIR:-build}/bin
args=(-b 8 -e "$max" -f "${FACTOR:-4}" -n 20 -w 5 -c 1)

echo "## host: $(nproc) cores, $(uname -r); $(date -u +%Y-%m-%dT%H:%MZ)"
echo "## Kolo (TCP over loopback)"
echo "\$ KOLO_SHM=0 $bin/kolo-bench -np $np $collective ${args[*]}"
KOLO_SHM=0 "$bin/kolo-bench" -np "$np" "$collective" "${args[@]}"

mpirun_flags=(--allow-run-as-root --oversubscribe --bind-to none -np "$np")
echo
echo "## OpenMPI $(mpirun --version | head -n1 | awk '{print $NF}'), TCP only"
echo "\$ mpirun -np $np --mca btl tcp,self $bin/mpi-bench $collective ${args[*]}"
mpirun "${mpirun_flags[@]}" --mca btl tcp,self --mca btl_tcp_if_include lo "$bin/mpi-bench" "$collective" "${args[@]}"

echo
echo "## OpenMPI, default transports (shared memory)"
echo "\$ mpirun -np $np $bin/mpi-bench $collective ${args[*]}"
mpirun "${mpirun_flags[@]}" "$bin/mpi-bench" "$collective" "${args[@]}"
