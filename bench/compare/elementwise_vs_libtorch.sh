#!/usr/bin/env bash
# leangrad's CPU elementwise ops against LibTorch 1.13 in one run, in float32, float16 and
# bfloat16 on (4096, 4096) tensors: a + b, a + a broadcast row, a * 0.5, exp, sigmoid, relu, a > b,
# where(m, a, b) and where(m, s, a) with a 0-d s, and the copies between layouts of
# BM_Transpose_16M (a transpose, NCHW <-> NHWC), and the random fills of BM_Random_16M (uniform_
# and normal_ of float32, float64 and bfloat16); at 1 and then 2 threads, leangrad and LibTorch
# alternating. Same benchmark names, shapes and byte counts on both sides (BM_Elementwise_16M in
# bench/bench_ops.cpp, bench/compare/libtorch/libtorch_elementwise.cpp). Builds
# bench/compare/libtorch (installs LibTorch's packages when missing, common.sh) and prints markdown
# on stdout; logs go to stderr.
#   bench/compare/elementwise_vs_libtorch.sh LEANGRAD_BUILD_DIR [REPETITIONS=5] [all|Elementwise|Transpose|Random]
# (the third argument runs one of the three families alone).
# Each row is the median over REPETITIONS of Google Benchmark's mean time; "-" where LibTorch 1.13
# does not implement the op for the dtype on the CPU (its error is printed below the table).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh"

usage="LEANGRAD_BUILD_DIR [REPETITIONS=5] [all|Elementwise|Transpose|Random]"
[[ $# -ge 1 && $# -le 3 ]] || usage_error "$usage"
build=$1
repetitions=${2:-5}
case ${3:-all} in
  all) filter='^BM_(Elementwise|Transpose|Random)_16M/' ;;
  Elementwise | Transpose | Random) filter="^BM_$3_16M/" ;;
  *) usage_error "$usage" ;;
esac
bench=$build/bench/bench_ops
require_executable "$bench"
libtorch=$(build_libtorch libtorch-elementwise)

make_logs_dir
load_before=$(load_average)
run_both "$bench" "$filter" "$libtorch" "$repetitions" "$filter"
load_after=$(load_average)

PYTHONPATH=$compare_dir python3 - "$logs" <<'PYTHON'
import sys

from gbench import both_sides, print_dtype_table

runs, errors = both_sides(sys.argv[1])
context = runs[1][1][1]

WORK = [("Add", "a + b"), ("AddRow", "a + row"), ("MulScalar", "a * 0.5"), ("Exp", "exp(a)"),
        ("Sigmoid", "sigmoid(a)"), ("Relu", "relu(a)"), ("Gt", "a > b"),
        ("Where", "where(m, a, b)"), ("WhereScalar", "where(m, s, a), s 0-d")]
LAYOUTS = [("Transpose", "(4096, 4096).t()"), ("ChannelsLast", "NCHW -> NHWC, (16, 256, 64, 64)"),
           ("ChannelsFirst", "NHWC -> NCHW, (16, 64, 64, 256)")]
ran = runs[1][0]
if any(name.startswith("BM_Elementwise_16M/") for name in ran):
    print_dtype_table(runs, errors, "BM_Elementwise_16M", WORK)
    print()
if any(name.startswith("BM_Transpose_16M/") for name in ran):
    print("Copies between layouts (contiguous() of a view whose contiguous dim is another):")
    print()
    print_dtype_table(runs, errors, "BM_Transpose_16M", LAYOUTS)
    print()
if any(name.startswith("BM_Random_16M/") for name in ran):
    print("Random fills in place (GB/s: the result written):")
    print()
    print_dtype_table(runs, errors, "BM_Random_16M", [("Uniform", "uniform_()"),
                                                      ("Normal", "normal_()")],
                      [("F32", "float32"), ("F64", "float64"), ("BF16", "bfloat16")])
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
