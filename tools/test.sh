#!/usr/bin/env bash
# README command (2): install, build everything (the CUDA code too when nvcc is present) and run
# the whole test suite with CTest. CUDA tests report SKIPPED on a machine without a GPU.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
cmake --build "$LEANGRAD_BUILD"
ctest --test-dir "$LEANGRAD_BUILD" --output-on-failure -j "$(nproc)" "$@"
