#!/usr/bin/env bash
# leangrad's CPU TanhExp and GroupNorm against LibTorch 1.13 in one run, on issue 19's shapes:
# TanhExp on activations (64, 64, 56, 56) (LibTorch: the composition where(x > 20, x,
# x * tanh(exp(x))), as a LibTorch user writes it) and GroupNorm, 32 groups, on (16, 64, 56, 56)
# with weight and bias (torch::group_norm); forward, and forward + backward through autograd; at 1
# and then 2 threads, leangrad and LibTorch alternating. Same benchmark names, shapes and byte
# counts on both sides (bench/bench_tanhexp_group_norm.cpp,
# bench/compare/libtorch/libtorch_tanhexp_group_norm.cpp). Then leangrad's vectorised launchers
# against its reference loops from the same runs. Builds bench/compare/libtorch (installs
# LibTorch's packages when missing, common.sh) and prints markdown on stdout; logs go to stderr.
#   bench/compare/tanhexp_group_norm_vs_libtorch.sh build [REPETITIONS=5]
# Each row is the median over REPETITIONS of Google Benchmark's mean time. The LibTorch program is
# built in $LIBTORCH_BUILD_DIR (bench/compare/common.sh).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh"

[[ $# -ge 1 && $# -le 2 ]] || usage_error "LEANGRAD_BUILD_DIR [REPETITIONS=5]"
build=$1
repetitions=${2:-5}
bench=$build/bench/bench_tanhexp_group_norm
require_executable "$bench"
libtorch=$(build_libtorch libtorch-tanhexp-group-norm)

make_logs_dir
load_before=$(load_average)
run_both "$bench" \
  '^BM_(TanhExp|GroupNorm)_(Forward|ForwardBackward)/|^BM_Launcher_|^BM_Copy_Activations' \
  "$libtorch" "$repetitions"
load_after=$(load_average)

PYTHONPATH=$compare_dir python3 - "$logs" <<'EOF'
import sys

from gbench import gb_per_s, medians

logs = sys.argv[1]
runs = {t: (medians(f"{logs}/leangrad-{t}.json")[0], medians(f"{logs}/libtorch-{t}.json"))
        for t in (1, 2)}
context = runs[1][1][1]
WORK = [("BM_TanhExp_Forward", "TanhExp forward", 2.0),
        ("BM_TanhExp_ForwardBackward", "TanhExp forward + backward", 2.0),
        ("BM_GroupNorm_Forward", "GroupNorm forward", 1.0),
        ("BM_GroupNorm_ForwardBackward", "GroupNorm forward + backward", 1.0)]

print("| work | threads | LibTorch ms | leangrad ms | leangrad GB/s | LibTorch / leangrad "
      "| target | met |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
for name, label, target in WORK:
    for t in (1, 2):
        leangrad, (libtorch, _) = runs[t]
        lg_ms, lg_gbs = leangrad[name]["ms"], gb_per_s(leangrad[name])
        lt_ms = libtorch[name]["ms"]
        ratio = lt_ms / lg_ms
        print(f"| {label} | {t} | {lt_ms:.2f} | {lg_ms:.2f} | {lg_gbs:.1f} | {ratio:.2f} "
              f"| >= {target:.1f} | {'yes' if ratio >= target else 'no'} |")
print()
print("| launcher (raw pointers, output preallocated) | threads | reference loop ms "
      "| vectorised ms | GB/s | reference / vectorised | vectorised, x86-64-v3 loop ms |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for name, label in [("BM_Launcher_TanhExp_Forward", "TanhExp forward"),
                    ("BM_Launcher_TanhExp_Backward", "TanhExp backward"),
                    ("BM_Launcher_GroupNorm_Forward", "GroupNorm forward"),
                    ("BM_Launcher_GroupNorm_Backward", "GroupNorm backward")]:
    for t in (1, 2):
        leangrad = runs[t][0]
        ref_ms = leangrad[name + "/0"]["ms"]
        vec_ms, vec_gbs = leangrad[name + "/1"]["ms"], gb_per_s(leangrad[name + "/1"])
        narrow = leangrad.get(name + "/2")
        narrow_ms = f"{narrow['ms']:.2f}" if narrow else "-"
        print(f"| {label} | {t} | {ref_ms:.2f} | {vec_ms:.2f} | {vec_gbs:.1f} "
              f"| {ref_ms / vec_ms:.2f} | {narrow_ms} |")
print()
for t in (1, 2):
    leangrad = runs[t][0]
    copy = gb_per_s(leangrad["BM_Copy_Activations"])
    tanhexp = gb_per_s(leangrad["BM_Launcher_TanhExp_Forward/1"])
    print(f"Memory bandwidth, {t} thread(s): copying the activations moves {copy:.1f} GB/s; "
          f"TanhExp's forward launcher moves the same bytes at {tanhexp:.1f} GB/s, "
          f"{100 * tanhexp / copy:.0f}% of it (issue 19's target: 60%).")
print()
print(f"LibTorch / leangrad: ratio of the median times, > 1 means leangrad is faster. LibTorch "
      f"{context.get('torch_version', '?')}. GB/s: the bytes each benchmark must move (TanhExp "
      f"8 forward, 20 forward + backward per element; GroupNorm 12 and 32) over the median time. "
      f"The x86-64-v3 loop: TanhExp's vectorised kernel without its AVX-512 copy (what a CPU "
      f"without AVX-512 runs; the same as the vectorised column there).")
EOF
echo
echo "Load average (1, 5, 15 min): $load_before before, $load_after after."
echo
echo "LibTorch's build: $("$libtorch" --show-config | grep -E 'CPU capability' | sed 's/^ *- //')."
