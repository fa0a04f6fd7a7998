#!/usr/bin/env bash
# scaled_dot_product_attention on the CPU against LibTorch 1.13 in one run: leangrad's fused kernel
# and its composed path (bench/bench_attention.cpp) beside LibTorch's composition of matmul and
# softmax (bench/compare/libtorch/libtorch_attention.cpp), forward and forward + backward, float32,
# (N, H, L, E) = (8, 8, 512, 64) and (1, 8, 2048, 64), at 1 and then 2 threads, the programs
# alternating. Time, GFLOP/s of the products and leangrad's peak memory over one call beyond the
# inputs. Builds bench/compare/libtorch (installs LibTorch's packages when missing, common.sh) and
# prints markdown on stdout; logs go to stderr.
#   bench/compare/attention_vs_libtorch.sh LEANGRAD_BUILD_DIR [REPETITIONS=5]
# Each row is the median over REPETITIONS of Google Benchmark's mean time.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh"

[[ $# -ge 1 && $# -le 2 ]] || usage_error "LEANGRAD_BUILD_DIR [REPETITIONS=5]"
build=$1
repetitions=${2:-5}
bench=$build/bench/bench_attention
require_executable "$bench"
libtorch=$(build_libtorch libtorch-attention)

make_logs_dir

echo "# scaled_dot_product_attention on the CPU against LibTorch, $(date -u +%F), $(nproc) cores"
echo
echo "- commit: $(git -C "$compare_dir" rev-parse --short HEAD)$(git -C "$compare_dir" diff --quiet HEAD || echo ' (with uncommitted changes)')"
echo "- CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), family $(sed -n 's/^cpu family[[:space:]]*: //p' /proc/cpuinfo | head -1) model $(sed -n 's/^model[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) cores"
echo "- command: \`bench/compare/attention_vs_libtorch.sh $*\`"
echo "- load average (1, 5, 15 min) at the start: $(load_average)"
echo

run_both "$bench" . "$libtorch" "$repetitions"

PYTHONPATH=$compare_dir python3 - "$logs" <<'PY'
import sys

from gbench import medians

logs = sys.argv[1]
print("| work | N, H, L, E | threads | LibTorch ms | leangrad composed ms | leangrad fused ms "
      "| fused GFLOP/s | LibTorch / fused | composed peak MiB | fused peak MiB |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for work, label in [("BM_Attention_Forward", "forward"),
                    ("BM_Attention_ForwardBackward", "forward + backward")]:
    for shape in ("N:8/H:8/L:512/E:64", "N:1/H:8/L:2048/E:64"):
        for t in (1, 2):
            leangrad, _ = medians(f"{logs}/leangrad-{t}.json")
            libtorch, _ = medians(f"{logs}/libtorch-{t}.json")
            composed = leangrad[f"{work}/fused:0/{shape}"]
            fused = leangrad[f"{work}/fused:1/{shape}"]
            peer = libtorch[f"{work}/fused:0/{shape}"]
            print(f"| {label} | {shape.replace('/', ', ')} | {t} | {peer['ms']:.1f} "
                  f"| {composed['ms']:.1f} | {fused['ms']:.1f} | {fused['GFLOP/s']:.0f} "
                  f"| {peer['ms'] / fused['ms']:.2f} | {composed['peak_MiB']:.0f} "
                  f"| {fused['peak_MiB']:.0f} |")
print()
print("| work | threads | LibTorch ms | leangrad ms | leangrad GFLOP/s | LibTorch / leangrad |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
for t in (1, 2):
    leangrad, _ = medians(f"{logs}/leangrad-{t}.json")
    libtorch, _ = medians(f"{logs}/libtorch-{t}.json")
    ours = leangrad["BM_TransformerEncoderLayer_Step"]
    peer = libtorch["BM_TransformerEncoderLayer_Step"]
    print(f"| TransformerEncoderLayer(512, 8) step, (128, 16, 512) | {t} | {peer['ms']:.1f} "
          f"| {ours['ms']:.1f} | {ours['GFLOP/s']:.0f} | {peer['ms'] / ours['ms']:.2f} |")
print()
print("LibTorch / fused: ratio of the median times, > 1 means leangrad's fused kernel is faster. "
      "Peak MiB: the CPU allocator's high-water mark over one call beyond what was allocated "
      "before it (LibTorch keeps no such statistic). GFLOP/s counts the products of the "
      "forward (4 N H L^2 E) and of the backward (8 N H L^2 E); the fused backward also "
      "recomputes the scores (2 N H L^2 E more, not counted).")
PY
echo
echo "Load average (1, 5, 15 min) at the end: $(load_average)."
echo
echo "LibTorch's BLAS: $(libtorch_blas "$libtorch")."
