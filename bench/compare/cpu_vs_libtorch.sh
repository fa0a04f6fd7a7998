#!/usr/bin/env bash
# Issue 19's table in one command: every CPU comparison of leangrad against LibTorch 1.13, one
# after the other on one machine, as markdown on stdout (the runs' logs on stderr): TanhExp and
# GroupNorm, conv2d, the optimizers at 1 and 2 threads, and leangrad-train's mlp and cnn steps at
# 1 and 2 threads; headed by the machine, the commit and both builds' flags, for a file under
# bench/results/.
#   bench/compare/cpu_vs_libtorch.sh LEANGRAD_BUILD_DIR [REPETITIONS=5] [STEPS=300]
# The build needs its benchmarks and tools/leangrad-train; each part is its own script
# (tanhexp_group_norm_vs_libtorch.sh, conv_vs_libtorch.sh, optim_vs_libtorch.sh,
# train_vs_libtorch.sh), which says how it measures. Run it on a quiet machine: ratios are only
# compared within one run, and other work on the cores moves them.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh"

[[ $# -ge 1 && $# -le 3 ]] || usage_error "LEANGRAD_BUILD_DIR [REPETITIONS=5] [STEPS=300]"
build=$1
repetitions=${2:-5}
steps=${3:-300}
for program in bench/bench_tanhexp_group_norm bench/bench_conv bench/bench_optim tools/leangrad-train; do
  require_executable "$build/$program"
done
cache=$build/CMakeCache.txt
cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$cache" 2>/dev/null; }
libtorch=$(build_libtorch libtorch-optim)

echo "# leangrad against LibTorch on the CPU, $(date -u +%F), $(nproc) cores"
echo
echo "- date: $(date -u '+%F %H:%M') UTC"
echo "- commit: $(git -C "$compare_dir" rev-parse --short HEAD)$(git -C "$compare_dir" diff --quiet HEAD || echo ' (with uncommitted changes)')"
echo "- CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), family $(sed -n 's/^cpu family[[:space:]]*: //p' /proc/cpuinfo | head -1) model $(sed -n 's/^model[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) cores; AVX-512: $(grep -q avx512f /proc/cpuinfo && echo yes || echo no), VBMI: $(grep -q avx512vbmi /proc/cpuinfo && echo yes || echo no)"
echo "- leangrad: $("$(cache_value CMAKE_CXX_COMPILER)" --version | head -1) $(cache_value CMAKE_BUILD_TYPE), LEANGRAD_CPU_ARCH=$(cache_value LEANGRAD_CPU_ARCH), LEANGRAD_WITH_ONEDNN=$(cache_value LEANGRAD_WITH_ONEDNN), LEANGRAD_WITH_CUDA=$(cache_value LEANGRAD_WITH_CUDA)"
config=$("$libtorch" --show-config)
echo "- LibTorch: $(sed -n 's/.*TORCH_VERSION=\([^,]*\),.*/\1/p' <<<"$config") (Debian's libtorch-dev), BUILD_TYPE=$(sed -n 's/.*BUILD_TYPE=\([^,]*\),.*/\1/p' <<<"$config"), $(grep -o 'CPU capability usage: [A-Z0-9_]*' <<<"$config"), oneDNN $(sed -n 's/.*MKL-DNN v\([0-9.]*\).*/\1/p' <<<"$config")"
echo "- command: \`bench/compare/cpu_vs_libtorch.sh $*\`"
echo "- load average (1, 5, 15 min) at the start: $(load_average)"
echo

section() {
  echo "## $1"
  echo
  shift
  echo "\`$*\`" | sed "s|$compare_dir/|bench/compare/|"
  echo
  "$@"
  echo
}
section "TanhExp and GroupNorm" "$compare_dir/tanhexp_group_norm_vs_libtorch.sh" "$build" "$repetitions"
section "conv2d" "$compare_dir/conv_vs_libtorch.sh" "$build" "$repetitions"
for threads in 1 2; do
  section "Optimizers, $threads thread(s)" "$compare_dir/optim_vs_libtorch.sh" "$build" "$threads" "$repetitions"
done
for threads in 1 2; do
  section "Training steps, $threads thread(s)" "$compare_dir/train_vs_libtorch.sh" "$build/tools/leangrad-train" "$threads" "$steps"
done
echo "Load average (1, 5, 15 min) at the end: $(load_average)."
