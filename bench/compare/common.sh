# shellcheck shell=bash
# What the bench/compare/*.sh scripts share (sourced after `set -euo pipefail`): the one build of
# the LibTorch programs (bench/compare/libtorch), a logs folder removed at exit, the load average,
# and the run of both sides at 1 and 2 threads.
#   source "$(dirname "$0")/common.sh"

compare_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Every comparison builds its LibTorch program here, so each is compiled once.
libtorch_build_dir=${LIBTORCH_BUILD_DIR:-${TMPDIR:-/tmp}/libtorch-compare-build}

# usage_error USAGE: the script's usage line on stderr, exit 2.
usage_error() {
  echo "usage: $0 $1" >&2
  exit 2
}

# require_executable PATH: exit 2 unless PATH is an executable.
require_executable() {
  [[ -x $1 ]] || { echo "$0: '$1' is not an executable" >&2; exit 2; }
}

# The peer's packages: LibTorch 1.13, Google Benchmark for its programs, and OpenBLAS for its
# matrix products (libtorch_blas below says why).
libtorch_packages=(libtorch-dev libbenchmark-dev libopenblas0-openmp)

# build_libtorch TARGET: installs libtorch_packages where missing (tools/install_packages.sh),
# configures and builds bench/compare/libtorch's TARGET (output on stderr) and prints the
# program's path.
build_libtorch() {
  "$compare_dir/../../tools/install_packages.sh" "${libtorch_packages[@]}" >&2
  cmake -S "$compare_dir/libtorch" -B "$libtorch_build_dir" -DCMAKE_BUILD_TYPE=Release >&2
  cmake --build "$libtorch_build_dir" -j2 --target "$1" >&2
  echo "$libtorch_build_dir/$1"
}

# libtorch_blas PROGRAM [PREFIX...]: the libblas.so.3 PROGRAM loads when run under the command
# PREFIX (e.g. env LD_LIBRARY_PATH=...), in words. LibTorch's matrix products (and the
# convolutions it runs as im2col + GEMM) go through it, and Debian's default one is netlib's
# unoptimised reference BLAS, with which they are about ten times slower than with OpenBLAS:
# build_libtorch installs libopenblas0-openmp, which becomes libblas.so.3.
libtorch_blas() {
  local program=$1 blas
  shift
  blas=$("$@" ldd "$program" | awk '$1 == "libblas.so.3" { print $3 }')
  blas=$(readlink -f "$blas")
  case $blas in
    */openblas*) echo "OpenBLAS ($blas)" ;;
    */blas/libblas.so*)
      echo "netlib's reference BLAS ($blas), unoptimised: install libopenblas0-openmp" ;;
    *) echo "$blas" ;;
  esac
}

# make_logs_dir: sets `logs` to a new temporary folder, removed when the script exits.
make_logs_dir() {
  logs=$(mktemp -d)
  trap 'rm -rf "$logs"' EXIT
}

# load_average: the 1, 5 and 15 minute load averages.
load_average() {
  cut -d' ' -f1-3 /proc/loadavg
}

# The Google Benchmark flags every comparison passes to both sides: REPETITIONS runs, their
# aggregates only, JSON for bench/compare/gbench.py.
gbench_flags() {
  echo "--benchmark_repetitions=$1 --benchmark_report_aggregates_only=true --benchmark_out_format=json"
}

# run_both LEANGRAD_BENCH FILTER LIBTORCH_PROGRAM REPETITIONS [LIBTORCH_FILTER]: leangrad's
# benchmarks matching FILTER (Google Benchmark's regex; '.' for all) and the LibTorch program's
# (those matching LIBTORCH_FILTER when given, else all), at 1 and then 2
# threads, alternating; their JSON in $logs/leangrad-THREADS.json and $logs/libtorch-THREADS.json
# (make_logs_dir first), their output on stderr.
run_both() {
  local bench=$1 filter=$2 libtorch=$3 flags threads libtorch_flags=()
  read -ra flags <<<"$(gbench_flags "$4")"
  if [[ -n ${5:-} ]]; then libtorch_flags=(--benchmark_filter="$5"); fi
  for threads in 1 2; do
    echo "== leangrad, $threads thread(s): $bench" >&2
    OMP_NUM_THREADS=$threads "$bench" --benchmark_filter="$filter" "${flags[@]}" \
      --benchmark_out="$logs/leangrad-$threads.json" >&2
    echo "== LibTorch, $threads thread(s): $libtorch" >&2
    OMP_NUM_THREADS=$threads "$libtorch" --threads "$threads" "${flags[@]}" "${libtorch_flags[@]}" \
      --benchmark_out="$logs/libtorch-$threads.json" >&2
  done
}
