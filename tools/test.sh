#!/usr/bin/env bash
# README command (2): install, build everything (the CUDA code too when nvcc is present) and run
# the whole test suite with CTest; then the sanitizer jobs (tools/sanitize.sh: the unit tests under
# ASan + UBSan and the threaded tests under TSan) and the fuzzers (tools/fuzz.sh: the saved inputs
# replayed, then 30 s per target). CUDA tests report SKIPPED on a machine without a GPU.
# .ci/run runs exactly this. docs/testing.md describes each stage.
#   tools/test.sh                 everything
#   tools/test.sh --quick         CTest only (the sanitizer builds take the most time)
#   tools/test.sh [--quick] -- ARGS   ARGS passed to ctest, e.g. -- -R Misuse
set -euo pipefail

quick=0
ctest_args=()
while (($#)); do
  case "$1" in
    --quick) quick=1; shift ;;
    --) shift; ctest_args=("$@"); break ;;
    *) ctest_args+=("$1"); shift ;;
  esac
done

# Each stage prints its wall time, so a slow stage shows in the tail of a CI log.
stage_start=$SECONDS
stage_done() {
  echo "== tools/test.sh: $1 took $((SECONDS - stage_start)) s (total $SECONDS s)"
  stage_start=$SECONDS
}

source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
stage_done "install and configure"
cmake --build "$LEANGRAD_BUILD"
stage_done "build"
ctest --test-dir "$LEANGRAD_BUILD" --output-on-failure -j "$(nproc)" "${ctest_args[@]}"
stage_done "ctest"
((quick)) && exit 0

"$LEANGRAD_ROOT/tools/sanitize.sh" asan
stage_done "sanitize asan"
"$LEANGRAD_ROOT/tools/sanitize.sh" tsan
stage_done "sanitize tsan"
"$LEANGRAD_ROOT/tools/fuzz.sh" --time 30
stage_done "fuzz"
