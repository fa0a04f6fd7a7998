#!/usr/bin/env bash
# leangrad's CPU activations against LibTorch 1.13 in one run: tanh, erf, log, expm1, log1p, gelu
# (both forms), silu, mish, elu, softplus, selu, leaky_relu, hardtanh, clamp and relu of a
# (4096, 4096) float32 tensor, forward alone and forward plus backward; at 1 and then 2 threads,
# leangrad and LibTorch alternating. Same benchmark names, shapes and byte counts on both sides
# (BM_Activation_16M and BM_ActivationBackward_16M in bench/bench_activations.cpp,
# bench/compare/libtorch/libtorch_activations.cpp). Builds bench/compare/libtorch (installs
# LibTorch's packages when missing, common.sh) and prints markdown on stdout; logs go to stderr.
#   bench/compare/activations_vs_libtorch.sh LEANGRAD_BUILD_DIR [REPETITIONS=5]
# Each row is the median over REPETITIONS of Google Benchmark's mean time.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh"

[[ $# -ge 1 && $# -le 2 ]] || usage_error "LEANGRAD_BUILD_DIR [REPETITIONS=5]"
build=$1
repetitions=${2:-5}
bench=$build/bench/bench_activations
require_executable "$bench"
libtorch=$(build_libtorch libtorch-activations)

make_logs_dir
load_before=$(load_average)
run_both "$bench" '^BM_Activation' "$libtorch" "$repetitions"
load_after=$(load_average)

PYTHONPATH=$compare_dir python3 - "$logs" <<'PYTHON'
import sys

from gbench import both_sides

runs, errors = both_sides(sys.argv[1])
context = runs[1][1][1]

WORK = [("Tanh", "tanh"), ("Erf", "erf"), ("Log", "log (of abs(x))"), ("Expm1", "expm1"),
        ("Log1p", "log1p (of abs(x))"), ("Gelu", "gelu"), ("GeluTanh", "gelu, approximate tanh"),
        ("Silu", "silu"), ("Mish", "mish"), ("Elu", "elu"), ("Softplus", "softplus"),
        ("Selu", "selu"), ("LeakyRelu", "leaky_relu"), ("Hardtanh", "hardtanh"),
        ("Clamp", "clamp"), ("Relu", "relu")]
print("| op | pass | threads | LibTorch ms | leangrad ms | LibTorch / leangrad |")
print("| --- | --- | ---: | ---: | ---: | ---: |")


def timed(row):
    return row is not None and not row.get("error_occurred")


for key, label in WORK:
    for bench, pass_name in (("BM_Activation_16M", "forward"),
                             ("BM_ActivationBackward_16M", "forward + backward")):
        for t in (1, 2):
            name = f"{bench}/{key}"
            ours, theirs = runs[t][0].get(name), runs[t][1][0].get(name)
            ours_ms = f"{ours['ms']:.1f}" if timed(ours) else "-"
            theirs_ms = f"{theirs['ms']:.1f}" if timed(theirs) else "-"
            ratio = f"{theirs['ms'] / ours['ms']:.2f}" if timed(ours) and timed(theirs) else "-"
            print(f"| {label} | {pass_name} | {t} | {theirs_ms} | {ours_ms} | {ratio} |")
print()
print(f"LibTorch / leangrad: ratio of the median times, > 1 means leangrad is faster. LibTorch "
      f"{context.get('torch_version', '?')}. Forward: x ~ N(0, 1) read, y written; forward + "
      f"backward: y = f(x), y.backward(g) into x.grad, which frees it each iteration.")
for name, message in sorted(errors.items()):
    print(f"\n- {name}: {message}")
PYTHON
echo
echo "Load average (1, 5, 15 min): $load_before before, $load_after after."
echo
echo "LibTorch's build: $("$libtorch" --show-config | grep -E 'CPU capability' | sed 's/^ *- //')."
