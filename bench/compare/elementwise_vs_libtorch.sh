#!/usr/bin/env bash
# leangrad's CPU elementwise ops against LibTorch 1.13 in one run, in float32, float16 and
# bfloat16 on (4096, 4096) tensors: a + b, a + a broadcast row, a * 0.5, exp, sigmoid, relu, a > b,
# where(m, a, b) and where(m, s, a) with a 0-d s; at 1 and then 2 threads, leangrad and LibTorch
# alternating. Same benchmark names, shapes and byte counts on both sides (BM_Elementwise_16M in
# bench/bench_ops.cpp, bench/compare/libtorch/libtorch_elementwise.cpp). Builds bench/compare/libtorch (needs
# libtorch-dev and libbenchmark-dev from apt) and prints markdown on stdout; logs go to stderr.
#   bench/compare/elementwise_vs_libtorch.sh LEANGRAD_BUILD_DIR [REPETITIONS=5]
# Each row is the median over REPETITIONS of Google Benchmark's mean time; "-" where LibTorch 1.13
# does not implement the op for the dtype on the CPU (its error is printed below the table).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh"

[[ $# -ge 1 && $# -le 2 ]] || usage_error "LEANGRAD_BUILD_DIR [REPETITIONS=5]"
build=$1
repetitions=${2:-5}
bench=$build/bench/bench_ops
require_executable "$bench"
libtorch=$(build_libtorch libtorch-elementwise)

make_logs_dir
load_before=$(load_average)
run_both "$bench" '^BM_Elementwise_16M/' "$libtorch" "$repetitions"
load_after=$(load_average)

PYTHONPATH=$compare_dir python3 - "$logs" <<'PYTHON'
import json
import sys

from gbench import gb_per_s, medians

logs = sys.argv[1]
runs = {t: (medians(f"{logs}/leangrad-{t}.json")[0], medians(f"{logs}/libtorch-{t}.json"))
        for t in (1, 2)}
context = runs[1][1][1]

# The errors LibTorch reported instead of a time (Google Benchmark keeps them in the JSON).
errors = {}
for t in (1, 2):
    with open(f"{logs}/libtorch-{t}.json") as f:
        for b in json.load(f)["benchmarks"]:
            if b.get("error_occurred"):
                errors[b["run_name"].removesuffix("/real_time")] = b.get("error_message", "?")

WORK = [("Add", "a + b"), ("AddRow", "a + row"), ("MulScalar", "a * 0.5"), ("Exp", "exp(a)"),
        ("Sigmoid", "sigmoid(a)"), ("Relu", "relu(a)"), ("Gt", "a > b"),
        ("Where", "where(m, a, b)"), ("WhereScalar", "where(m, s, a), s 0-d")]
DTYPES = [("F32", "float32"), ("F16", "float16"), ("BF16", "bfloat16")]

print("| op | dtype | threads | LibTorch ms | leangrad ms | leangrad GB/s | LibTorch / leangrad |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
for work, label in WORK:
    for suffix, dtype in DTYPES:
        name = f"BM_Elementwise_16M/{work}_{suffix}"
        for t in (1, 2):
            leangrad, (libtorch, _) = runs[t]
            lg = leangrad[name]
            lt = libtorch.get(name)
            lt_ok = lt is not None and name not in errors
            lt_ms = f"{lt['ms']:.1f}" if lt_ok else "-"
            ratio = f"{lt['ms'] / lg['ms']:.2f}" if lt_ok else "-"
            print(f"| {label} | {dtype} | {t} | {lt_ms} | {lg['ms']:.1f} | {gb_per_s(lg):.1f} "
                  f"| {ratio} |")
print()
print(f"LibTorch / leangrad: ratio of the median times, > 1 means leangrad is faster. LibTorch "
      f"{context.get('torch_version', '?')}. GB/s: the bytes each op must move (its operands read, "
      f"its result written; the broadcast row and s counted once, the mask 1 byte per element) "
      f"over the median time.")
for name, message in sorted(errors.items()):
    print(f"\n- LibTorch, {name}: {message}")
PYTHON
echo
echo "Load average (1, 5, 15 min): $load_before before, $load_after after."
echo
echo "LibTorch's build: $("$libtorch" --show-config | grep -E 'CPU capability' | sed 's/^ *- //')."
