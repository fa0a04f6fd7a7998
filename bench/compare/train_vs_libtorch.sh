#!/usr/bin/env bash
# leangrad-train against LibTorch on the CPU: the same Fashion-MNIST recipes (mlp: SGD lr 0.1;
# cnn and srnet at its default width 16 and 2 blocks: Adam lr 1e-3; batch 64), the same thread count, step times measured the same way (wall
# time between optimizer steps, data included). Builds bench/compare/libtorch (installs LibTorch's
# packages when missing, common.sh) and prints a markdown table on stdout; the runs' logs go to
# stderr.
#   bench/compare/train_vs_libtorch.sh build/tools/leangrad-train [THREADS=2] [STEPS=300] \
#     [MODELS=mlp,cnn,srnet]
# mlp runs STEPS optimizer steps, cnn and srnet STEPS/2 (their steps are ~8x longer). The LibTorch program is
# built in $LIBTORCH_BUILD_DIR (bench/compare/common.sh).
#
# LibTorch's matmuls go through the system's libblas.so.3, and Debian's default one is netlib's
# unoptimised reference BLAS: with it LibTorch's mlp step is ~14x slower than with OpenBLAS.
# build_libtorch installs libopenblas0-openmp (it shares LibTorch's OpenMP threads); point
# LIBTORCH_BLAS_DIR at a folder holding another libblas.so.3 for libtorch-train alone. The table's
# footer names the BLAS that was used.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh"

[[ $# -ge 1 && $# -le 4 ]] ||
  usage_error "LEANGRAD_TRAIN_BINARY [THREADS=2] [STEPS=300] [MODELS=mlp,cnn,srnet]"
leangrad_train=$1
threads=${2:-2}
steps=${3:-300}
IFS=, read -r -a models <<<"${4:-mlp,cnn,srnet}"
for model in "${models[@]}"; do
  [[ $model == mlp || $model == cnn || $model == srnet ]] ||
    usage_error "LEANGRAD_TRAIN_BINARY [THREADS=2] [STEPS=300] [MODELS=mlp,cnn,srnet]"
done
require_executable "$leangrad_train"
libtorch_train=$(build_libtorch libtorch-train)
blas_env=()  # what libtorch-train and ldd run under: LIBTORCH_BLAS_DIR first on the library path
if [[ -n ${LIBTORCH_BLAS_DIR:-} ]]; then
  blas_env=(env "LD_LIBRARY_PATH=$LIBTORCH_BLAS_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
fi
blas_note=$(libtorch_blas "$libtorch_train" "${blas_env[@]}")

export OMP_NUM_THREADS=$threads MKL_NUM_THREADS=$threads
make_logs_dir

# "M P" from a run's "step time: median M ms, p90 P ms over N steps" line; fails without one.
step_times() {
  local times
  times=$(sed -n 's/^step time: median \([0-9.]*\) ms, p90 \([0-9.]*\) ms over.*/\1 \2/p' "$logs/$1")
  [[ -n $times ]] || { echo "$0: $1 printed no 'step time:' line" >&2; return 1; }
  echo "$times"
}

# run NAME COMMAND...: runs it with its output in $logs/NAME (and on stderr).
run() {
  local name=$1
  shift
  echo "== $*" >&2
  "$@" 2>&1 | tee "$logs/$name" >&2
}

echo "| model | threads | steps | leangrad median / p90 (ms/step) | libtorch median / p90 (ms/step) | libtorch / leangrad |"
echo "| --- | --- | --- | --- | --- | --- |"
for model in "${models[@]}"; do
  if [[ $model == mlp ]]; then
    model_steps=$steps
    recipe=(--model mlp)
  else
    model_steps=$((steps / 2 > 0 ? steps / 2 : 1))
    recipe=(--model "$model" --optimizer adam --lr 1e-3)
  fi
  common=(--epochs 1 --threads "$threads" --max-steps "$model_steps" --seed 0)
  run "leangrad-$model" "$leangrad_train" "${recipe[@]}" --device cpu "${common[@]}"
  run "libtorch-$model" "${blas_env[@]}" "$libtorch_train" --model "$model" "${common[@]}"
  leangrad_times=$(step_times "leangrad-$model")
  libtorch_times=$(step_times "libtorch-$model")
  read -r leangrad_median leangrad_p90 <<<"$leangrad_times"
  read -r libtorch_median libtorch_p90 <<<"$libtorch_times"
  ratio=$(awk -v a="$libtorch_median" -v b="$leangrad_median" 'BEGIN { printf "%.2f", a / b }')
  echo "| $model | $threads | $model_steps | $leangrad_median / $leangrad_p90 |" \
    "$libtorch_median / $libtorch_p90 | $ratio |"
done
echo
echo "libtorch / leangrad: ratio of the medians, > 1 means leangrad is faster." \
  "LibTorch $(sed -n 's/.*LibTorch \([0-9.]*\)).*/\1/p' "$logs/libtorch-${models[0]}"), BLAS: $blas_note."
