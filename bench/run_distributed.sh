#!/usr/bin/env bash
# Starts N ranks of a program on this machine with torchrun's variables (RANK, WORLD_SIZE,
# LOCAL_RANK, MASTER_ADDR=127.0.0.1, MASTER_PORT), waits for all and exits with the first
# non-zero status. A stand-in for the launcher leangrad-run until it exists.
#   bench/run_distributed.sh 4 build/bench/dist_all_reduce
set -euo pipefail
n="$1"
shift
port="${MASTER_PORT:-$((20000 + RANDOM % 20000))}"
pids=()
for ((rank = 0; rank < n; rank++)); do
  RANK=$rank WORLD_SIZE=$n LOCAL_RANK=$rank MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" "$@" &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do
  wait "$pid" || { s=$?; [ "$status" -eq 0 ] && status=$s; }
done
exit "$status"
