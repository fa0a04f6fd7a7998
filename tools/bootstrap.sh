#!/usr/bin/env bash
# Installs what leangrad needs to build and test on Debian 12 (idempotent: apt runs only when a
# package is missing), then configures the build folder. Sourced by tools/main.sh and
# tools/test.sh; the CUDA toolkit is used when nvcc is found (PATH or /usr/local/cuda/bin).
set -euo pipefail

LEANGRAD_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LEANGRAD_BUILD="${LEANGRAD_BUILD:-$LEANGRAD_ROOT/build}"
packages=(build-essential cmake ninja-build ccache libeigen3-dev libgtest-dev libgmock-dev
          libbenchmark-dev zlib1g-dev nlohmann-json3-dev libcli11-dev libgloo-dev libdnnl-dev
          dataset-fashion-mnist python3-matplotlib)

"$LEANGRAD_ROOT/tools/install_packages.sh" "${packages[@]}"

source "$LEANGRAD_ROOT/tools/ccache_env.sh" "$LEANGRAD_ROOT"

if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
cuda_flag=-DLEANGRAD_WITH_CUDA=OFF
command -v nvcc >/dev/null 2>&1 && cuda_flag=-DLEANGRAD_WITH_CUDA=ON
arch_flag=()
# One architecture is enough to catch compile errors (CI sets this to save time).
[ -n "${LEANGRAD_CUDA_ARCHITECTURES:-}" ] && arch_flag=(-DLEANGRAD_CUDA_ARCHITECTURES="$LEANGRAD_CUDA_ARCHITECTURES")

cmake -S "$LEANGRAD_ROOT" -B "$LEANGRAD_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache \
  "$cuda_flag" "${arch_flag[@]}" >/dev/null
