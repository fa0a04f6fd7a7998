#!/usr/bin/env bash
# leangrad's CPU normalisations against LibTorch 1.13 in one run, in float32, float16 and bfloat16
# on 16M elements: softmax and log_softmax of (4096, 4096) over the last dim, softmax of
# (64, 256, 32, 32) over dim 1, softmax's backward over the last dim, layer_norm over the last
# 4096 (forward, and forward + backward by autograd), group_norm of (16, 64, 128, 128) with 32
# groups, and batch_norm of (16, 64, 128, 128) (training forward, forward + backward, evaluation)
# and of (4096, 4096) (training forward + backward), all with weight and bias; at 1 and
# then 2 threads, leangrad and LibTorch alternating. Same benchmark names, shapes and byte counts
# on both sides (BM_Normalize_16M in bench/bench_layers.cpp,
# bench/compare/libtorch/libtorch_normalize.cpp); also softmax's two leangrad kernels, the
# reference loop and the vectorised one (BM_Launcher_Softmax). Builds bench/compare/libtorch
# (installs LibTorch's packages when missing, common.sh) and prints markdown on stdout; logs go to
# stderr.
#   bench/compare/normalize_vs_libtorch.sh LEANGRAD_BUILD_DIR [REPETITIONS=5]
# Each row is the median over REPETITIONS of Google Benchmark's mean time; "-" where LibTorch 1.13
# does not implement the op for the dtype on the CPU (its error is printed below the table).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh"

[[ $# -ge 1 && $# -le 2 ]] || usage_error "LEANGRAD_BUILD_DIR [REPETITIONS=5]"
build=$1
repetitions=${2:-5}
bench=$build/bench/bench_layers
require_executable "$bench"
libtorch=$(build_libtorch libtorch-normalize)

make_logs_dir
load_before=$(load_average)
run_both "$bench" '^BM_Normalize_16M/|^BM_Launcher_Softmax/' "$libtorch" "$repetitions"
load_after=$(load_average)

PYTHONPATH=$compare_dir python3 - "$logs" <<'PYTHON'
import sys

from gbench import both_sides, print_dtype_table

runs, errors = both_sides(sys.argv[1])
context = runs[1][1][1]

WORK = [("Softmax", "softmax (4096, 4096), dim -1"),
        ("LogSoftmax", "log_softmax (4096, 4096), dim -1"),
        ("SoftmaxDim1", "softmax (64, 256, 32, 32), dim 1"),
        ("SoftmaxBackward", "softmax backward (4096, 4096), dim -1"),
        ("LayerNorm", "layer_norm (4096, 4096) over 4096"),
        ("LayerNormTrain", "layer_norm forward + backward (4096, 4096)"),
        ("GroupNorm", "group_norm (16, 64, 128, 128), 32 groups"),
        ("BatchNorm", "batch_norm (16, 64, 128, 128), training"),
        ("BatchNormTrain", "batch_norm forward + backward (16, 64, 128, 128)"),
        ("BatchNormEval", "batch_norm (16, 64, 128, 128), evaluation"),
        ("BatchNorm1dTrain", "batch_norm forward + backward (4096, 4096)")]
print_dtype_table(runs, errors, "BM_Normalize_16M", WORK)
print()
print(f"LibTorch / leangrad: ratio of the median times, > 1 means leangrad is faster. LibTorch "
      f"{context.get('torch_version', '?')}. GB/s: the bytes each op must move (its input read "
      f"and its output written once; softmax's backward reads two inputs; layer_norm forward + "
      f"backward and the batch_norm ones move x and y, then dy, x and dx) over the median time. "
      f"batch_norm's running statistics are float32 in every row.")
for name, message in sorted(errors.items()):
    print(f"\n- LibTorch, {name}: {message}")

print()
print("leangrad's softmax kernels, float32 into a preallocated output (reference loop / "
      "vectorised):")
print()
print("| runs | threads | reference ms | vectorised ms | speed-up |")
print("| --- | ---: | ---: | ---: | ---: |")
for inner, label in (("1", "rows (4096, 4096), dim -1"), ("1024", "columns (64, 256, 1024), dim 1")):
    for t in (1, 2):
        leangrad = runs[t][0]
        ref = leangrad[f"BM_Launcher_Softmax/0/{inner}"]
        vec = leangrad[f"BM_Launcher_Softmax/1/{inner}"]
        print(f"| {label} | {t} | {ref['ms']:.1f} | {vec['ms']:.1f} | {ref['ms'] / vec['ms']:.2f} |")
PYTHON
echo
echo "Load average (1, 5, 15 min): $load_before before, $load_after after."
echo
echo "LibTorch's build: $("$libtorch" --show-config | grep -E 'CPU capability' | sed 's/^ *- //')."
