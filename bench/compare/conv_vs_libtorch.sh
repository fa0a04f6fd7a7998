#!/usr/bin/env bash
# leangrad's CPU conv2d against LibTorch 1.13 in one run: 3 x 3, padding 1, no bias, on issue 19's
# (16, 64, 56, 56) 64 -> 64 and the Fashion-MNIST CNN's two convolutions at batch 64; forward, and
# forward + backward through autograd (the input and weight gradients); at 1 and then 2 threads,
# leangrad in three configurations and LibTorch alternating: oneDNN (LEANGRAD_CPU_GEMM=onednn, the
# default choice between its direct convolution and im2col + its sgemm, Note [Which CPU
# convolution]), oneDNN's sgemm alone (LEANGRAD_CPU_CONV=gemm as well) and Eigen
# (LEANGRAD_CPU_GEMM=eigen). Same benchmark names and shapes on both sides (bench/bench_conv.cpp's
# BM_Conv2dAutograd_*, bench/compare/libtorch/libtorch_conv.cpp). Builds bench/compare/libtorch
# (installs LibTorch's packages when missing, common.sh) and prints markdown on stdout; logs go to
# stderr. The oneDNN columns need a build with LEANGRAD_WITH_ONEDNN.
#   bench/compare/conv_vs_libtorch.sh build [REPETITIONS=5]
# Each row is the median over REPETITIONS of Google Benchmark's mean time. The LibTorch program is
# built in $LIBTORCH_BUILD_DIR (bench/compare/common.sh). A leangrad build without oneDNN gets the
# eigen rows only.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh"

[[ $# -ge 1 && $# -le 2 ]] || usage_error "LEANGRAD_BUILD_DIR [REPETITIONS=5]"
build=$1
repetitions=${2:-5}
bench=$build/bench/bench_conv
require_executable "$bench"
libtorch=$(build_libtorch libtorch-conv)

make_logs_dir
read -ra common <<<"$(gbench_flags "$repetitions")"

# configuration name -> LEANGRAD_CPU_GEMM and LEANGRAD_CPU_CONV
declare -A gemm_of=([onednn]=onednn [onednn-gemm]=onednn [eigen]=eigen)
declare -A conv_of=([onednn]=auto [onednn-gemm]=gemm [eigen]=auto)
configs=(eigen)
grep -q '^LEANGRAD_WITH_ONEDNN:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null &&
  configs=(onednn onednn-gemm eigen)

load_before=$(load_average)
for threads in 1 2; do
  for config in "${configs[@]}"; do
    echo "== leangrad ($config), $threads thread(s): $bench" >&2
    LEANGRAD_CPU_GEMM=${gemm_of[$config]} LEANGRAD_CPU_CONV=${conv_of[$config]} \
      OMP_NUM_THREADS=$threads "$bench" \
      --benchmark_filter='^BM_Conv2dAutograd_' "${common[@]}" \
      --benchmark_out="$logs/leangrad-$config-$threads.json" >&2
  done
  echo "== LibTorch, $threads thread(s): $libtorch" >&2
  OMP_NUM_THREADS=$threads "$libtorch" --threads "$threads" "${common[@]}" \
    --benchmark_out="$logs/libtorch-$threads.json" >&2
done
load_after=$(load_average)

PYTHONPATH=$compare_dir python3 - "$logs" "${configs[@]}" <<'PYTHON'
import sys

from gbench import medians

logs, gemms = sys.argv[1], sys.argv[2:]
SUFFIX = {"onednn-gemm": ", im2col + sgemm only"}
SHAPES = ["(16, 64, 56, 56) 64 -> 64", "(64, 1, 28, 28) 1 -> 32", "(64, 32, 14, 14) 32 -> 64"]
WORK = [("BM_Conv2dAutograd_Forward", "forward"),
        ("BM_Conv2dAutograd_ForwardBackward", "forward + backward")]
header = "| conv2d 3x3 | work | threads | LibTorch ms |"
rule = "| --- | --- | ---: | ---: |"
libraries = {}
for g in gemms:
    libraries[g] = medians(f"{logs}/leangrad-{g}-1.json")[1].get("cpu_gemm", g)
    header += f" leangrad ({libraries[g]}{SUFFIX.get(g, '')}) ms | GFLOP/s | LibTorch / leangrad |"
    rule += " ---: | ---: | ---: |"
print(header)
print(rule)
torch_version = "?"
for index, shape in enumerate(SHAPES):
    for name, label in WORK:
        for t in (1, 2):
            libtorch, context = medians(f"{logs}/libtorch-{t}.json")
            torch_version = context.get("torch_version", torch_version)
            lt_ms = libtorch[f"{name}/{index}"]["ms"]
            row = f"| {shape} | {label} | {t} | {lt_ms:.2f} |"
            for g in gemms:
                leangrad = medians(f"{logs}/leangrad-{g}-{t}.json")[0][f"{name}/{index}"]
                lg_ms, lg_gflops = leangrad["ms"], leangrad["GFLOP/s"]
                row += f" {lg_ms:.2f} | {lg_gflops:.0f} | {lt_ms / lg_ms:.2f} |"
            print(row)
print()
print(f"LibTorch / leangrad: ratio of the median times, > 1 means leangrad is faster (issue 19's "
      f"target for forward + backward: >= 0.9). LibTorch {torch_version}. GFLOP/s: 2 N C_out H W "
      f"C_in 9 per convolution, three convolutions for forward + backward.")
PYTHON
echo
echo "Load average (1, 5, 15 min): $load_before before, $load_after after."
echo
echo "LibTorch's BLAS: $(libtorch_blas "$libtorch")."
