#!/usr/bin/env bash
# Issue 19's threads check: leangrad-train's mlp and cnn steps at 1 and 2 threads, first on the
# machine as it is, then with every core busy with other work (one busy-looping shell per core,
# started here and stopped at the end). leangrad-train as shipped (it shortens libgomp's spin to
# GOMP_SPINCOUNT=1000: Note [OpenMP threads on a shared machine] in leangrad/core/parallel.cpp),
# with libgomp's default spin (GOMP_SPINCOUNT=300000, what it does when nothing is set) and with
# OMP_WAIT_POLICY=passive; then LibTorch's libtorch-train as installed (docs/training.md, "Step
# times").
# Prints markdown on stdout; the runs' logs go to stderr.
#   bench/compare/threads_under_load.sh build/tools/leangrad-train [STEPS=300]
# mlp runs STEPS steps, cnn STEPS/3. libtorch-train is built in $LIBTORCH_BUILD_DIR
# (bench/compare/common.sh).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh"

[[ $# -ge 1 && $# -le 2 ]] || usage_error "LEANGRAD_TRAIN_BINARY [STEPS=300]"
leangrad_train=$1
steps=${2:-300}
require_executable "$leangrad_train"
[[ $steps =~ ^[1-9][0-9]*$ ]] || { echo "$0: STEPS must be a positive integer, not '$steps'" >&2; exit 2; }
libtorch_train=$(build_libtorch libtorch-train)

busy=()
stop_load() { ((${#busy[@]})) && kill "${busy[@]}" 2>/dev/null; wait 2>/dev/null || true; }
trap stop_load EXIT

# row LOAD LABEL THREADS MODEL COMMAND...: one table row from the run's "step time:" line and its
# wall time. The command runs without OMP_WAIT_POLICY and GOMP_SPINCOUNT unless it sets them.
row() {
  local load=$1 label=$2 threads=$3 model=$4
  shift 4
  local start end out times
  start=$(date +%s.%N)
  out=$(env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT OMP_NUM_THREADS="$threads" "$@" 2>&1)
  end=$(date +%s.%N)
  echo "$out" >&2
  times=$(sed -n 's/^step time: median \([0-9.]*\) ms, p90 \([0-9.]*\) ms over.*/\1 \/ \2/p' <<<"$out")
  printf '| %s | %s | %s | %s | %s | %.1f |\n' "$model" "$load" "$label" "$threads" "${times:-?}" \
    "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')"
}

# rows LOAD: every setting, both models, 1 and 2 threads.
rows() {
  local load=$1 model n recipe common threads
  for model in mlp cnn; do
    if [[ $model == mlp ]]; then n=$steps; recipe=(--model mlp); else n=$((steps / 3)); recipe=(--model cnn --optimizer adam --lr 1e-3); fi
    common=(--epochs 1 --max-steps "$n" --seed 0)
    for threads in 1 2; do
      row "$load" "leangrad-train as shipped" "$threads" "$model" \
        "$leangrad_train" "${recipe[@]}" --device cpu --threads "$threads" "${common[@]}"
      row "$load" "leangrad, libgomp's default spin" "$threads" "$model" GOMP_SPINCOUNT=300000 \
        "$leangrad_train" "${recipe[@]}" --device cpu --threads "$threads" "${common[@]}"
      row "$load" "leangrad, OMP_WAIT_POLICY=passive" "$threads" "$model" OMP_WAIT_POLICY=passive \
        "$leangrad_train" "${recipe[@]}" --device cpu --threads "$threads" "${common[@]}"
      row "$load" "LibTorch (as installed)" "$threads" "$model" \
        "$libtorch_train" --model "$model" --threads "$threads" "${common[@]}"
    done
  done
}

load_at_start=$(load_average)
echo "| model | cores | program, OpenMP setting | threads | step median / p90 (ms) | wall (s) |"
echo "| --- | --- | --- | ---: | ---: | ---: |"
rows "as found"
for ((i = 0; i < $(nproc); ++i)); do
  sh -c 'while :; do :; done' &
  busy+=($!)
done
sleep 1
rows "all busy"
echo
echo "Cores: \"as found\" runs on the machine as it was (load average at the start: $load_at_start);"
echo "\"all busy\" with one busy-looping shell per core ($(nproc)) throughout. Wall: the whole run (start-up, data, steps, evaluation)."
