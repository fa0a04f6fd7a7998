#!/usr/bin/env bash
# leangrad's CPU optimizer steps against LibTorch 1.13's torch::optim::Adam and AdamW (default
# options: what a LibTorch user gets on the CPU) in one run: the same benchmark names, shapes and
# thread count on both sides (bench/bench_optim.cpp, bench/compare/libtorch/libtorch_optim.cpp),
# 10M and 100M parameters in one tensor and leangrad-train's mlp; then leangrad's Adam8bit against
# its Adam. Builds bench/compare/libtorch (needs libtorch-dev and libbenchmark-dev from apt) and
# prints markdown tables on stdout; the runs' logs go to stderr.
#   bench/compare/optim_vs_libtorch.sh build [THREADS=2] [REPETITIONS=5]
# Each row is the median over REPETITIONS of Google Benchmark's mean step time. GB/s is the state
# traffic a step must move (Adam 28 B/param, Adam8bit 16 + 8/256) over the median time: the same
# bytes on both sides, though LibTorch's unfused steps move several times more. The LibTorch
# program is built in $LIBTORCH_OPTIM_BUILD_DIR (default ${TMPDIR:-/tmp}/libtorch-optim-build).
set -euo pipefail

if [[ $# -lt 1 || $# -gt 3 ]]; then
  echo "usage: $0 LEANGRAD_BUILD_DIR [THREADS=2] [REPETITIONS=5]" >&2
  exit 2
fi
build=$1
threads=${2:-2}
repetitions=${3:-5}
bench_optim=$build/bench/bench_optim
[[ -x $bench_optim ]] || { echo "$0: '$bench_optim' is not an executable" >&2; exit 2; }

source_dir=$(cd "$(dirname "$0")/libtorch" && pwd)
build_dir=${LIBTORCH_OPTIM_BUILD_DIR:-${TMPDIR:-/tmp}/libtorch-optim-build}
cmake -S "$source_dir" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >&2
cmake --build "$build_dir" -j2 --target libtorch-optim >&2

export OMP_NUM_THREADS=$threads MKL_NUM_THREADS=$threads
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
common=(--benchmark_repetitions="$repetitions" --benchmark_report_aggregates_only=true
        --benchmark_out_format=json)

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "== leangrad: $bench_optim" >&2
"$bench_optim" --benchmark_filter='^BM_(Copy|Adam|AdamW|Adam8bit|Adam_Mlp|Adam8bit_Mlp)/' \
  "${common[@]}" --benchmark_out="$logs/leangrad.json" >&2
echo "== LibTorch: $build_dir/libtorch-optim" >&2
"$build_dir/libtorch-optim" --threads "$threads" "${common[@]}" \
  --benchmark_out="$logs/libtorch.json" >&2
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$logs/leangrad.json" "$logs/libtorch.json" "$threads" <<'EOF'
import json
import sys

UNIT_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def medians(path):
    """run_name -> (ms per step, GB/s) of the median aggregate (the one run without repetitions)."""
    with open(path) as f:
        doc = json.load(f)
    rows = {}
    for b in doc["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        name = b["run_name"].removesuffix("/real_time")
        rows[name] = (b["real_time"] * UNIT_MS[b["time_unit"]], b["bytes_per_second"] / 1e9)
    return rows, doc["context"]


leangrad, _ = medians(sys.argv[1])
libtorch, context = medians(sys.argv[2])
threads = sys.argv[3]


def size(name):
    return {"10000000": "10M", "100000000": "100M"}.get(name.partition("/")[2], "mlp (101,770)")


print(f"| optimizer | parameters | threads | leangrad ms/step | leangrad GB/s | "
      f"LibTorch ms/step | LibTorch GB/s | LibTorch / leangrad |")
print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |")
for name in ["BM_Adam/10000000", "BM_Adam/100000000", "BM_AdamW/10000000",
             "BM_AdamW/100000000", "BM_Adam_Mlp"]:
    lg_ms, lg_gbs = leangrad[name]
    lt_ms, lt_gbs = libtorch[name]
    optimizer = "AdamW" if "AdamW" in name else "Adam"
    print(f"| {optimizer} | {size(name)} | {threads} | {lg_ms:.3f} | {lg_gbs:.1f} | "
          f"{lt_ms:.3f} | {lt_gbs:.1f} | {lt_ms / lg_ms:.2f} |")
print()
print("| parameters | leangrad Adam ms/step | leangrad Adam8bit ms/step | Adam8bit GB/s | "
      "Adam8bit / Adam time |")
print("| --- | ---: | ---: | ---: | ---: |")
for adam, adam8bit in [("BM_Adam/10000000", "BM_Adam8bit/10000000"),
                       ("BM_Adam/100000000", "BM_Adam8bit/100000000"),
                       ("BM_Adam_Mlp", "BM_Adam8bit_Mlp")]:
    a_ms, _ = leangrad[adam]
    b_ms, b_gbs = leangrad[adam8bit]
    print(f"| {size(adam)} | {a_ms:.3f} | {b_ms:.3f} | {b_gbs:.1f} | {b_ms / a_ms:.2f} |")
print()
copy_ms, copy_gbs = leangrad["BM_Copy"]
print(f"LibTorch / leangrad: ratio of the median step times, > 1 means leangrad is faster. "
      f"LibTorch {context.get('torch_version', '?')} with "
      f"{context.get('torch_threads', '?')} threads; this machine copies at {copy_gbs:.1f} GB/s "
      f"(BM_Copy, 40 MB read + written).")
EOF
echo
echo "Load average (1, 5, 15 min): $load_before before, $load_after after."
