#!/usr/bin/env bash
# Runs every benchmark program of a build and writes one results file:
#   bench/results/<date>-<machine>.md   (date, machine, commit, then each program's table)
# The bench_* programs (CPU) always; the gpu_* programs and offload_mlp when a GPU is visible.
# Usage: bench/run.sh [build-dir] [machine-name]   (defaults: build, cpu-<nproc>core)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
machine="${2:-cpu-$(nproc)core}"
mkdir -p "$root/bench/results"
out="$root/bench/results/$(date +%F)-$machine.md"
commit="$(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet || echo '+dirty')"
{
  echo "# Benchmarks $(date +%F) on $machine"
  echo
  echo "- commit: $commit"
  echo "- CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores"
  if command -v nvidia-smi >/dev/null 2>&1; then
    echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
  fi
  echo "- command: bench/run.sh $*"
  for program in "$build"/bench/bench_*; do
    [ -x "$program" ] || continue
    echo
    echo "## $(basename "$program")"
    echo
    echo '```'
    "$program" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1
    echo '```'
  done
} > "$out"
# With a GPU: every GPU program appends its table to the same file as markdown (bench/README.md,
# "The GPU harness"); the console shows the same rows.
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  for program in "$build"/bench/gpu_* "$build"/bench/offload_mlp; do
    [ -x "$program" ] || continue
    "$program" --markdown "$out" || echo "$(basename "$program") failed (exit $?)"
  done
fi
echo "wrote $out"
