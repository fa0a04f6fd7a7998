#!/usr/bin/env bash
# leangrad's two CPU convolutions side by side (Note [Which CPU convolution] in
# kernels/cpu/conv.cpp): oneDNN's direct convolution against im2col + oneDNN's sgemm, the
# forward, input gradient and weight gradient entries (bench/bench_conv.cpp's
# BM_Conv2dAlgorithm) on the shapes of the CNN, issue 19, a super-resolution block and channel
# counts below 16 (an RGB stem, 8 -> 16, 16 -> 8), at 1 and
# then 2 threads. Both algorithms run in one process, their repetitions interleaved in random
# order (--benchmark_enable_random_interleaving), so that a change of load hits both alike.
# Prints markdown on stdout; logs go to stderr.
#   bench/compare/conv_direct_vs_gemm.sh build [REPETITIONS=9]
# Each cell is the median over REPETITIONS of Google Benchmark's mean wall time, and of its CPU
# time (the calling thread's alone; on a loaded machine it is the steadier of the two). OpenMP's
# wait policy is the caller's: on a shared machine set GOMP_SPINCOUNT=1000 as leangrad-train does
# (Note [OpenMP threads on a shared machine]). Needs a build with LEANGRAD_WITH_ONEDNN.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh"

[[ $# -ge 1 && $# -le 2 ]] || usage_error "LEANGRAD_BUILD_DIR [REPETITIONS=9]"
build=$1
repetitions=${2:-9}
bench=$build/bench/bench_conv
require_executable "$bench"
grep -q '^LEANGRAD_WITH_ONEDNN:BOOL=ON' "$build/CMakeCache.txt" ||
  { echo "$0: $build has no oneDNN (LEANGRAD_WITH_ONEDNN=OFF)" >&2; exit 2; }

make_logs_dir
read -ra common <<<"$(gbench_flags "$repetitions")"

load_before=$(load_average)
for threads in 1 2; do
  echo "== leangrad direct vs GEMM, $threads thread(s): $bench" >&2
  LEANGRAD_CPU_GEMM=onednn OMP_NUM_THREADS=$threads "$bench" \
    --benchmark_filter='^BM_Conv2dAlgorithm/' --benchmark_enable_random_interleaving=true \
    "${common[@]}" --benchmark_out="$logs/ab-$threads.json" >&2
done
load_after=$(load_average)

PYTHONPATH=$compare_dir python3 - "$logs" <<'PYTHON'
import sys

from gbench import UNIT_MS, medians

logs = sys.argv[1]
SHAPES = ["(64, 1, 28, 28) 1 -> 32", "(64, 32, 14, 14) 32 -> 64", "(4, 64, 48, 48) 64 -> 64",
          "(16, 64, 56, 56) 64 -> 64", "(64, 16, 28, 28) 16 -> 32", "(64, 3, 28, 28) 3 -> 32",
          "(64, 8, 28, 28) 8 -> 16", "(64, 16, 28, 28) 16 -> 8"]
OPS = [("Forward", "forward"), ("InputGrad", "input grad"), ("WeightGrad", "weight grad")]
print("| conv2d 3x3 pad 1 | entry | threads | GEMM ms | direct ms | GEMM / direct "
      "| GEMM CPU ms | direct CPU ms | GEMM / direct (CPU) |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for index, shape in enumerate(SHAPES):
    for op, label in OPS:
        for t in (1, 2):
            rows = medians(f"{logs}/ab-{t}.json")[0]
            gemm = rows[f"BM_Conv2dAlgorithm/{op}/{index}/0"]
            direct = rows[f"BM_Conv2dAlgorithm/{op}/{index}/1"]
            cpu = lambda r: r["cpu_time"] * UNIT_MS[r["time_unit"]]
            print(f"| {shape} | {label} | {t} | {gemm['ms']:.2f} | {direct['ms']:.2f} "
                  f"| {gemm['ms'] / direct['ms']:.2f} | {cpu(gemm):.2f} | {cpu(direct):.2f} "
                  f"| {cpu(gemm) / cpu(direct):.2f} |")
print()
print("GEMM / direct > 1: the direct convolution is faster. CPU time: the calling thread's.")
PYTHON
echo
echo "Load average (1, 5, 15 min): $load_before before, $load_after after."
