#!/usr/bin/env bash
# A broad scan for CPU kernels slower than LibTorch's: bench/ops_scan (120 ops forward + backward
# through autograd, float32) beside LibTorch 1.13's side (bench/compare/libtorch/
# libtorch_ops_scan.cpp, the same ops, names, shapes and order), at 1 and then 2 threads, the
# programs alternating. Builds bench/compare/libtorch (installs LibTorch's packages when missing,
# common.sh) and prints a markdown table on stdout, the slowest ratios first; logs go to stderr.
#   bench/compare/ops_scan_vs_libtorch.sh LEANGRAD_BUILD_DIR [NAME_SUBSTRING[,NAME_SUBSTRING...]]
# Each time is one program's median of 5 runs: a scan to find a kernel worth a look, not a
# measurement to quote; a row that stands out gets a benchmark of its own.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh"

[[ $# -ge 1 && $# -le 2 ]] || usage_error "LEANGRAD_BUILD_DIR [NAME_SUBSTRING]"
build=$1
only=${2:-}
scan=$build/bench/ops_scan
require_executable "$scan"
libtorch=$(build_libtorch libtorch-ops-scan)

make_logs_dir
load_before=$(load_average)
for threads in 1 2; do
  echo "== leangrad, $threads thread(s): $scan" >&2
  OMP_NUM_THREADS=$threads "$scan" "$only" | tee "$logs/leangrad-$threads.txt" >&2
  echo "== LibTorch, $threads thread(s): $libtorch" >&2
  OMP_NUM_THREADS=$threads "$libtorch" --threads "$threads" "$only" |
    tee "$logs/libtorch-$threads.txt" >&2
done
load_after=$(load_average)

python3 - "$logs" <<'PYTHON'
import sys

logs = sys.argv[1]


def read(path):
    with open(path) as f:
        return dict((name, float(ms)) for name, ms in (line.split() for line in f if line.strip()))


rows = []
for t in (1, 2):
    leangrad, libtorch = read(f"{logs}/leangrad-{t}.txt"), read(f"{logs}/libtorch-{t}.txt")
    for name, ms in leangrad.items():
        rows.append((libtorch[name] / ms, name, t, libtorch[name], ms))
print("| op (forward + backward) | threads | LibTorch ms | leangrad ms | LibTorch / leangrad |")
print("| --- | ---: | ---: | ---: | ---: |")
for ratio, name, t, lt, lg in sorted(rows):
    print(f"| {name} | {t} | {lt:.2f} | {lg:.2f} | {ratio:.2f} |")
print()
print("LibTorch / leangrad: ratio of the medians, > 1 means leangrad is faster; the slowest first.")
PYTHON
echo
echo "Load average (1, 5, 15 min): $load_before before, $load_after after."
