#!/usr/bin/env bash
# leangrad's CPU layer ops that no other comparison covers, against LibTorch 1.13 in one run,
# float32: cross_entropy's forward and backward without reduction at (64, 10) (leangrad-train's
# batch) and (256, 1000) (ImageNet's classes), max_pool2d 2 x 2 with its indices over (64, 32, 28,
# 28) and (64, 64, 14, 14) (the cnn's two pools), avg_pool2d forward and backward (2 x 2 over
# (64, 64, 56, 56); 3 x 3 stride 1 padding 1 over (32, 256, 14, 14)), pixel_shuffle of
# (16, 256, 96, 96) by 2 (srnet's upsampling), and linear (64, 3136) -> 128 (the cnn's first
# linear layer); at 1 and then 2 threads,
# leangrad and LibTorch alternating. Same benchmark names, shapes and byte counts on both sides
# (bench/bench_layers.cpp, bench/compare/libtorch/libtorch_layers.cpp, whose head names the
# LibTorch functions). Builds bench/compare/libtorch (installs LibTorch's packages when missing,
# common.sh) and prints markdown on stdout; logs go to stderr.
#   bench/compare/layers_vs_libtorch.sh LEANGRAD_BUILD_DIR [REPETITIONS=5]
# Each row is the median over REPETITIONS of Google Benchmark's mean time.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh"

[[ $# -ge 1 && $# -le 2 ]] || usage_error "LEANGRAD_BUILD_DIR [REPETITIONS=5]"
build=$1
repetitions=${2:-5}
bench=$build/bench/bench_layers
require_executable "$bench"
libtorch=$(build_libtorch libtorch-layers)

make_logs_dir
load_before=$(load_average)
run_both "$bench" '^BM_(CrossEntropy|MaxPool2d|AvgPool2d|PixelShuffle|Linear_3136x128_B64)' \
  "$libtorch" "$repetitions"
load_after=$(load_average)

PYTHONPATH=$compare_dir python3 - "$logs" <<'PYTHON'
import sys

from gbench import both_sides, gb_per_s

runs, errors = both_sides(sys.argv[1])
context = runs[1][1][1]

WORK = [("BM_CrossEntropy/64/10", "cross_entropy forward + backward (64, 10)"),
        ("BM_CrossEntropy/256/1000", "cross_entropy forward + backward (256, 1000)"),
        ("BM_MaxPool2d/32/28", "max_pool2d 2 x 2 with indices (64, 32, 28, 28)"),
        ("BM_MaxPool2d/64/14", "max_pool2d 2 x 2 with indices (64, 64, 14, 14)"),
        ("BM_AvgPool2d/0", "avg_pool2d forward + backward 2 x 2 (64, 64, 56, 56)"),
        ("BM_AvgPool2d/1",
         "avg_pool2d forward + backward 3 x 3, stride 1, padding 1 (32, 256, 14, 14)"),
        ("BM_PixelShuffle", "pixel_shuffle (16, 256, 96, 96) by 2"),
        ("BM_Linear_3136x128_B64", "linear (64, 3136) -> 128")]
print("| op | threads | LibTorch ms | leangrad ms | leangrad GB/s or GFLOP/s "
      "| LibTorch / leangrad |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
for name, label in WORK:
    for t in (1, 2):
        leangrad, (libtorch, _) = runs[t]
        lg = leangrad[name]
        lt = libtorch.get(name)
        lt_ok = lt is not None and name not in errors
        rate = f"{lg['GFLOP/s']:.1f} GFLOP/s" if "GFLOP/s" in lg else f"{gb_per_s(lg):.1f}"
        lt_ms = f"{lt['ms']:.3f}" if lt_ok else "-"
        ratio = f"{lt['ms'] / lg['ms']:.2f}" if lt_ok else "-"
        print(f"| {label} | {t} | {lt_ms} | {lg['ms']:.3f} | {rate} | {ratio} |")
print()
print(f"LibTorch / leangrad: ratio of the median times, > 1 means leangrad is faster. LibTorch "
      f"{context.get('torch_version', '?')}. GB/s: the bytes each op must move (cross_entropy: "
      f"the logits read by both passes and their gradient written; max_pool2d: the input read, "
      f"the output and its int64 indices written; avg_pool2d: the input and the output's gradient "
      f"read, the output and the input's gradient written; pixel_shuffle: the input read and the "
      f"output written) over the median time.")
for name, message in sorted(errors.items()):
    print(f"\n- LibTorch, {name}: {message}")
PYTHON
echo
echo "Load average (1, 5, 15 min): $load_before before, $load_after after."
echo
echo "LibTorch's BLAS: $(libtorch_blas "$libtorch")."
echo "LibTorch's build: $("$libtorch" --show-config | grep -E 'CPU capability' | sed 's/^ *- //')."
