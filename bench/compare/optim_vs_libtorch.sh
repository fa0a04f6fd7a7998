#!/usr/bin/env bash
# leangrad's CPU optimizer steps against LibTorch 1.13's torch::optim::Adam and AdamW (default
# options: what a LibTorch user gets on the CPU) in one run: the same benchmark names, shapes and
# thread count on both sides (bench/bench_optim.cpp, bench/compare/libtorch/libtorch_optim.cpp),
# 10M and 100M parameters in one tensor and leangrad-train's mlp; then leangrad's Adam8bit against
# its Adam. Builds bench/compare/libtorch (installs LibTorch's packages when missing, common.sh) and
# prints markdown tables on stdout; the runs' logs go to stderr.
#   bench/compare/optim_vs_libtorch.sh build [THREADS=2] [REPETITIONS=5]
# Each row is the median over REPETITIONS of Google Benchmark's mean step time. GB/s is the state
# traffic a step must move (Adam 28 B/param, Adam8bit 16 + 8/256) over the median time: the same
# bytes on both sides, though LibTorch's unfused steps move several times more. The LibTorch
# program is built in $LIBTORCH_BUILD_DIR (bench/compare/common.sh).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh"

[[ $# -ge 1 && $# -le 3 ]] || usage_error "LEANGRAD_BUILD_DIR [THREADS=2] [REPETITIONS=5]"
build=$1
threads=${2:-2}
repetitions=${3:-5}
bench_optim=$build/bench/bench_optim
require_executable "$bench_optim"
libtorch=$(build_libtorch libtorch-optim)

export OMP_NUM_THREADS=$threads MKL_NUM_THREADS=$threads
make_logs_dir
read -ra common <<<"$(gbench_flags "$repetitions")"

load_before=$(load_average)
echo "== leangrad: $bench_optim" >&2
"$bench_optim" --benchmark_filter='^BM_(Copy|Adam|AdamW|Adam8bit|Adam8bit_CodeTable|Adam_Mlp|Adam8bit_Mlp)/' \
  "${common[@]}" --benchmark_out="$logs/leangrad.json" >&2
echo "== LibTorch: $libtorch" >&2
"$libtorch" --threads "$threads" "${common[@]}" --benchmark_out="$logs/libtorch.json" >&2
load_after=$(load_average)

PYTHONPATH=$compare_dir python3 - "$logs/leangrad.json" "$logs/libtorch.json" "$threads" <<'EOF'
import sys

from gbench import gb_per_s, medians

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
    lg_ms, lg_gbs = leangrad[name]["ms"], gb_per_s(leangrad[name])
    lt_ms, lt_gbs = libtorch[name]["ms"], gb_per_s(libtorch[name])
    optimizer = "AdamW" if "AdamW" in name else "Adam"
    print(f"| {optimizer} | {size(name)} | {threads} | {lg_ms:.3f} | {lg_gbs:.1f} | "
          f"{lt_ms:.3f} | {lt_gbs:.1f} | {lt_ms / lg_ms:.2f} |")
print()
print("| parameters | Adam8bit kernel | leangrad Adam ms/step | leangrad Adam8bit ms/step | "
      "Adam8bit GB/s | Adam8bit / Adam time |")
print("| --- | --- | ---: | ---: | ---: | ---: |")
for adam, adam8bit, kernel in [
        ("BM_Adam/10000000", "BM_Adam8bit/10000000", "as built"),
        ("BM_Adam/100000000", "BM_Adam8bit/100000000", "as built"),
        ("BM_Adam_Mlp", "BM_Adam8bit_Mlp", "as built"),
        ("BM_Adam/10000000", "BM_Adam8bit_CodeTable/10000000", "code table"),
        ("BM_Adam/100000000", "BM_Adam8bit_CodeTable/100000000", "code table")]:
    a_ms = leangrad[adam]["ms"]
    b_ms, b_gbs = leangrad[adam8bit]["ms"], gb_per_s(leangrad[adam8bit])
    print(f"| {size(adam)} | {kernel} | {a_ms:.3f} | {b_ms:.3f} | {b_gbs:.1f} | {b_ms / a_ms:.2f} |")
print()
copy_gbs = gb_per_s(leangrad["BM_Copy"])
print(f"LibTorch / leangrad: ratio of the median step times, > 1 means leangrad is faster. "
      f"LibTorch {context.get('torch_version', '?')} with "
      f"{context.get('torch_threads', '?')} threads; this machine copies at {copy_gbs:.1f} GB/s "
      f"(BM_Copy, 40 MB read + written). Adam8bit kernel: \"as built\" is what this CPU runs "
      f"(the byte permutes where it has AVX-512 VBMI), \"code table\" the loops of CPUs without "
      f"it (BM_Adam8bit_CodeTable).")
EOF
echo
echo "Load average (1, 5, 15 min): $load_before before, $load_after after."
