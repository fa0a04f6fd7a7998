#!/usr/bin/env bash
# Runs every benchmark program of a build and writes one results file:
#   bench/results/<date>-<machine>.md   (date, machine, commit, then each program's table)
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
echo "wrote $out"
