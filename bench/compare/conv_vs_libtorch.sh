#!/usr/bin/env bash
# leangrad's CPU conv2d against LibTorch 1.13 in one run: 3 x 3, padding 1, no bias, on issue 19's
# (16, 64, 56, 56) 64 -> 64 and the Fashion-MNIST CNN's two convolutions at batch 64; forward, and
# forward + backward through autograd (the input and weight gradients); at 1 and then 2 threads,
# leangrad with each CPU GEMM library (LEANGRAD_CPU_GEMM=onednn, then eigen) and LibTorch
# alternating. Same benchmark names and shapes on both sides (bench/bench_conv.cpp's
# BM_Conv2dAutograd_*, bench/compare/libtorch/libtorch_conv.cpp). Builds bench/compare/libtorch
# (needs libtorch-dev and libbenchmark-dev from apt) and prints markdown on stdout; logs go to
# stderr.
#   bench/compare/conv_vs_libtorch.sh build [REPETITIONS=5]
# Each row is the median over REPETITIONS of Google Benchmark's mean time. The LibTorch program is
# built in $LIBTORCH_OPTIM_BUILD_DIR (default ${TMPDIR:-/tmp}/libtorch-optim-build), the build of
# bench/compare/libtorch that the other comparisons use too. A leangrad build without oneDNN
# gets the eigen rows only.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 LEANGRAD_BUILD_DIR [REPETITIONS=5]" >&2
  exit 2
fi
build=$1
repetitions=${2:-5}
bench=$build/bench/bench_conv
[[ -x $bench ]] || { echo "$0: '$bench' is not an executable" >&2; exit 2; }

source_dir=$(cd "$(dirname "$0")/libtorch" && pwd)
build_dir=${LIBTORCH_OPTIM_BUILD_DIR:-${TMPDIR:-/tmp}/libtorch-optim-build}
cmake -S "$source_dir" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >&2
cmake --build "$build_dir" -j2 --target libtorch-conv >&2
libtorch=$build_dir/libtorch-conv

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
common=(--benchmark_repetitions="$repetitions" --benchmark_report_aggregates_only=true
        --benchmark_out_format=json)

gemms=(eigen)
grep -q '^LEANGRAD_WITH_ONEDNN:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null && gemms=(onednn eigen)

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for threads in 1 2; do
  for gemm in "${gemms[@]}"; do
    echo "== leangrad ($gemm), $threads thread(s): $bench" >&2
    LEANGRAD_CPU_GEMM=$gemm OMP_NUM_THREADS=$threads "$bench" \
      --benchmark_filter='^BM_Conv2dAutograd_' "${common[@]}" \
      --benchmark_out="$logs/leangrad-$gemm-$threads.json" >&2
  done
  echo "== LibTorch, $threads thread(s): $libtorch" >&2
  OMP_NUM_THREADS=$threads "$libtorch" --threads "$threads" "${common[@]}" \
    --benchmark_out="$logs/libtorch-$threads.json" >&2
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$logs" "${gemms[@]}" <<'PYTHON'
import json
import sys

UNIT_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def medians(path):
    """run_name -> (ms, GFLOP/s) of the median aggregate, and the run's context."""
    with open(path) as f:
        doc = json.load(f)
    rows = {}
    for b in doc["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        name = b["run_name"].removesuffix("/real_time")
        rows[name] = (b["real_time"] * UNIT_MS[b["time_unit"]], b.get("GFLOP/s", 0.0))
    return rows, doc["context"]


logs, gemms = sys.argv[1], sys.argv[2:]
SHAPES = ["(16, 64, 56, 56) 64 -> 64", "(64, 1, 28, 28) 1 -> 32", "(64, 32, 14, 14) 32 -> 64"]
WORK = [("BM_Conv2dAutograd_Forward", "forward"),
        ("BM_Conv2dAutograd_ForwardBackward", "forward + backward")]
header = "| conv2d 3x3 | work | threads | LibTorch ms |"
rule = "| --- | --- | ---: | ---: |"
libraries = {}
for g in gemms:
    libraries[g] = medians(f"{logs}/leangrad-{g}-1.json")[1].get("cpu_gemm", g)
    header += f" leangrad ({libraries[g]}) ms | GFLOP/s | LibTorch / leangrad |"
    rule += " ---: | ---: | ---: |"
print(header)
print(rule)
torch_version = "?"
for index, shape in enumerate(SHAPES):
    for name, label in WORK:
        for t in (1, 2):
            libtorch, context = medians(f"{logs}/libtorch-{t}.json")
            torch_version = context.get("torch_version", torch_version)
            lt_ms = libtorch[f"{name}/{index}"][0]
            row = f"| {shape} | {label} | {t} | {lt_ms:.2f} |"
            for g in gemms:
                lg_ms, lg_gflops = medians(f"{logs}/leangrad-{g}-{t}.json")[0][f"{name}/{index}"]
                row += f" {lg_ms:.2f} | {lg_gflops:.0f} | {lt_ms / lg_ms:.2f} |"
            print(row)
print()
print(f"LibTorch / leangrad: ratio of the median times, > 1 means leangrad is faster (issue 19's "
      f"target for forward + backward: >= 0.9). LibTorch {torch_version}. GFLOP/s: 2 N C_out H W "
      f"C_in 9 per convolution, three convolutions for forward + backward.")
PYTHON
echo
echo "Load average (1, 5, 15 min): $load_before before, $load_after after."
