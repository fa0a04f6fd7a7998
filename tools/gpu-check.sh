#!/usr/bin/env bash
# The GPU pass in one script (docs/gpu-pass.md). On a lent GPU machine, which has no network and
# no -dev packages, it unpacks carried .deb files into a prefix of its own, takes cuDNN from the
# CUDA toolkit or PyTorch's pip wheel, builds build-gpu/, records the device, and runs the tests,
# compute-sanitizer and the benchmarks; logs and one results file go to $OUT.
#   tools/gpu-check.sh --fetch-debs    here, with network: the .deb files into .gpu-debs/
#   tools/gpu-check.sh --prebuild      here, with nvcc: build-gpu/ built and packed into .gpu-prebuilt/
#   tools/gpu-check.sh MODE...         there: build, test, sanitize, bench, all (in the order given)
# Each mode ends with a one-line summary; every step is cut off before the time budget runs out.
set -Eeuo pipefail

usage() {
  cat <<'EOF'
usage: tools/gpu-check.sh --fetch-debs | MODE...
  --fetch-debs  (a Debian 12 machine with network) apt-get download the dependencies into .gpu-debs/
  --prebuild    (the session's machine: nvcc and Debian's -dev packages) configure and build the GPU
                machine's build-gpu/ here and pack it into .gpu-prebuilt/: there, no mode builds
  build         unpack .gpu-debs/ into a private prefix, find cuDNN; unpack .gpu-prebuilt/ when it
                holds these sources, else configure and build build-gpu/
  test          the CUDA tests (ctest -R); builds first where needed
  test-rest     the other tests (ctest -E), which CI runs too, on the GPU machine's build
  sanitize      compute-sanitizer memcheck (CUDA tests), racecheck and synccheck (a subset)
  bench         gpu_*, offload_mlp, variants/variant_*, then bench/compare/*_torch.py, DDP, the
                planner, the memory table and timelines, a CUDA profile: one .md file
  srnet365      issue 17's experiment: the 365M srnet under a 12 GB memory cap, plain and with
                --memory-budget 12000, then uncapped plain, --offload-params and --offload-params
                --save-on-cpu: one .md file
  all           build test test-rest sanitize bench
Environment: OUT (logs; default build-gpu-out/), GPU_CHECK_COMMIT (the commit, where .git is not
copied), GPU_CHECK_BUDGET_S (seconds for the whole run; default 570, 3600 with all),
GPU_CHECK_FRESH=1 (delete build-gpu/ first), GPU_CHECK_PREBUILT=0 (build there even when
.gpu-prebuilt/ matches), GPU_CHECK_GTEST_FROM_SOURCE=1 (build GoogleTest from
the carried sources instead of linking Debian's libgtest.a), LEANGRAD_CUDNN_ROOT (a folder holding
include/cudnn.h and lib*/libcudnn.so*), LEANGRAD_CUDA_ARCHITECTURES (default 90),
GPU_CHECK_MEMCHECK_FILTER / GPU_CHECK_RACECHECK_FILTER (GoogleTest filters).
A second, shorter call in the same session re-runs what the first found wrong:
GPU_CHECK_TESTS (test: only the tests matching this ctest regular expression), GPU_CHECK_REPEAT
(test: ctest --repeat until-fail:N, for failures that come and go), GPU_CHECK_BENCH (bench: only
the items whose name, as bench.log's "=== NAME" line spells it, matches this extended regular
expression; srnet365: its runs by name).
EOF
}

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GPU_CHECK_BUILD:-$root/build-gpu}"
debs="${GPU_CHECK_DEBS:-$root/.gpu-debs}"
prefix="${GPU_CHECK_PREFIX:-/tmp/leangrad-deps}"
# build-gpu-out/ rather than gpu-check-out/: the /build*/ line of .gitignore already covers it, so
# a local run's logs never travel with the working tree to the GPU machine.
out="${OUT:-$root/build-gpu-out}"
jobs="${GPU_CHECK_JOBS:-$(nproc)}"
arch="${LEANGRAD_CUDA_ARCHITECTURES:-90}"
# --prebuild's output (Note [A prebuilt build-gpu/]): the packed tree, its manifest and the
# checksums of the sources it was built from.
prebuilt_dir="$root/.gpu-prebuilt"
prebuilt_archive="$prebuilt_dir/build-gpu.tar.xz"
# The source folder --prebuild configures in: every absolute path of the tree (CTest's files, the
# programs' RPATH, LEANGRAD_TEST_DATA_DIR) names it, and on the GPU machine it is a link to the
# checkout.
prebuilt_src=/tmp/leangrad-gpu-src
# What the device tool carries at most (.gpu-debs and .gpu-prebuilt together).
carry_limit_mib=64

# Every dependency cmake/dependencies.cmake looks for (tools/bootstrap.sh installs the same with
# apt), the runtime .so files of those that are neither header-only nor static (benchmark, zlib),
# and googletest's sources (libgtest-dev depends on them; GPU_CHECK_GTEST_FROM_SOURCE builds them).
# OpenMP and Threads come with the compiler. About 3.4 MiB in all.
# Gloo (distributed/'s CPU collectives, and CUDA tensors staged through pinned host memory)
# with the libraries libgloo.so.0 needs at run time.
# Fashion-MNIST (30 MiB) for leangrad-train's GPU runs in bench (the memory table on CUDA).
deb_packages=(libeigen3-dev libgtest-dev libgmock-dev googletest libbenchmark-dev
              libbenchmark1debian nlohmann-json3-dev libcli11-dev zlib1g-dev zlib1g
              libgloo-dev libgloo0 libhiredis0.14 libibverbs1 libnl-route-3-200 libnl-3-200
              dataset-fashion-mnist)
debs_limit_mib=48

# The CUDA tests: ctest's regular expression over the test names, and the same set as a
# GoogleTest filter for compute-sanitizer over the test binary (419 tests on an H100, 2026-11-24).
cuda_tests_regex='OpTable|Cuda|SaveOnCpu|DataLoader.Device|OptimCuda|Device|Nccl'
# The random layouts' thousands of small launches (Devices/RandomLayouts.*/cuda) run in `test`
# only: under memcheck they would take minutes of the device's time for kernels the op table covers.
memcheck_filter="${GPU_CHECK_MEMCHECK_FILTER:-*OpTable*:*Cuda*:*Device*:*SaveOnCpu*:-*RandomLayouts*}"
# racecheck and synccheck find hazards in shared memory, warp shuffles and barriers, so they run
# over the ops whose kernels use them (reduce.cu; layers.cu's softmax and cross-entropy;
# group_norm.cu; conv.cu, three shapes of each direction; optim.cu): 117 tests on an H100, 2026-11-24,
# and since then the two OpTable rows of GroupNorm's one-pass kernels, the 16-bit staged
# reduction (float32 partials written by the reduce kernels) and layer_norm.cu's OpTable rows
# (2026-12-01: warp and block teams' reductions, the weight-gradient tiles in shared memory), and
# batch_norm.cu's (2026-12-01: the column kernel's and the merge's shared-memory trees).
racecheck_filter="${GPU_CHECK_RACECHECK_FILTER:-OpTable/*softmax*:OpTable/*cross_entropy*:\
OpTable/*sum*:OpTable/*mean*:OpTable/*max*:OpTable/*group_norm*:OpTable/*layer_norm*:\
OpTable/*batch_norm*:\
OpTable/*conv2d_*_basic_3x3*:\
OpTable/*conv2d_*_tiles_partial*:OpTable/*conv2d_*_groups2*:*OptimCuda*:Reduce.CudaMatchesCpu:\
Reduce.CudaSixteenBitStagesStayInFloat32}"

started_s=$SECONDS
budget_s=570
overall=()  # "build OK", "test FAILED", ... per mode, for the last line

# ---- Reporting -----------------------------------------------------------------------------
# say: the console. record: the console and $out/summary.txt (the modes' lines and timings).
say() { echo "gpu-check: $*"; }
record() {
  echo "gpu-check: $*"
  [ -d "$out" ] && echo "$*" >>"$out/summary.txt"
  return 0
}
# An unexpected failure (set -e) says where, so that the reply's last lines tell what happened.
on_error() {
  ((BASH_SUBSHELL == 0)) || return 0
  echo "gpu-check: ERROR: unexpected exit status $1 at line $2: $3" >&2
  [ -d "$out" ] && echo "ERROR: unexpected exit status $1 at line $2: $3" >>"$out/summary.txt"
  return 0
}
trap 'on_error $? $LINENO "$BASH_COMMAND"' ERR
die() {
  echo "gpu-check: ERROR: $*" >&2
  [ -d "$out" ] && echo "ERROR: $*" >>"$out/summary.txt"
  exit 1
}

# limit SECONDS: SECONDS, or less where the budget has less left (30 s kept for the summaries).
limit() {
  local left=$((budget_s - (SECONDS - started_s) - 30))
  if ((left < $1)); then echo "$left"; else echo "$1"; fi
}

# run_limited SECONDS LOG COMMAND...: COMMAND's output appended to LOG; its exit status, 124 when
# cut off by the time limit (timeout signals the whole process group: ctest's children too).
run_limited() {
  local seconds=$1 log=$2
  shift 2
  if ((seconds <= 0)); then
    echo "not run: the time budget is spent ($*)" >>"$log"
    return 124
  fi
  local rc=0
  timeout --kill-after=10 "$seconds" "$@" >>"$log" 2>&1 || rc=$?
  ((rc == 137)) && rc=124
  return "$rc"
}

# finish_mode NAME RC T0 DETAIL: the mode's summary line (OK, or FAILED when RC is not 0, with
# its time since T0 and DETAIL) and its word in the script's last line.
finish_mode() {
  local word=OK
  (($2 == 0)) || word=FAILED
  record "gpu-check $1: $word in $((SECONDS - $3)) s$4"
  overall+=("$1 $word")
}

# exit_statuses TITLE STATUS...: a results file's closing section, one line per program or run.
exit_statuses() {
  echo
  echo "## $1"
  echo
  printf -- '- %s\n' "${@:2}"
}

# ---- Dependencies (here): the .deb files -----------------------------------------------------
fetch_debs() {
  command -v apt-get >/dev/null 2>&1 || die "--fetch-debs needs apt-get (a Debian 12 machine)"
  local as_root=() apt_options=() p
  if [ "$(id -u)" -ne 0 ]; then
    as_root=(sudo)
  else
    # apt downloads as the user _apt, who cannot write to a folder that only root may write to.
    apt_options=(-o APT::Sandbox::User=root)
  fi
  for p in "${deb_packages[@]}"; do
    if ! apt-cache show "$p" >/dev/null 2>&1; then
      say "apt does not know $p yet: apt-get update"
      "${as_root[@]}" apt-get update -qq
      break
    fi
  done
  mkdir -p "$debs"
  rm -f "$debs"/*.deb
  (cd "$debs" && apt-get "${apt_options[@]}" download "${deb_packages[@]}") ||
    die "apt-get download failed (network? package names?)"
  local total_bytes
  total_bytes=$(du -cb "$debs"/*.deb | tail -1 | cut -f1)
  (cd "$debs" && ls -l -- *.deb)
  say "$(find "$debs" -name '*.deb' | wc -l) .deb files in $debs, $((total_bytes / 1024)) KiB in all"
  ((total_bytes <= debs_limit_mib * 1024 * 1024)) ||
    die "the .deb files exceed ${debs_limit_mib} MiB: they travel with every device call"
  if git -C "$root" rev-parse --git-dir >/dev/null 2>&1 && ! git -C "$root" check-ignore -q "$debs"; then
    say "warning: $debs is not ignored by git: add it to .gitignore, or 'carry' cannot name it"
  fi
  say "next: name .gpu-debs in the device tool's carry (docs/gpu-pass.md)"
}

# ---- Dependencies (there): the prefix, cuDNN, the environment ----------------------------------
# extract_deb FILE DIR: dpkg -x, or ar and tar where dpkg is missing.
extract_deb() {
  if command -v dpkg-deb >/dev/null 2>&1; then
    dpkg-deb -x "$1" "$2"
    return
  fi
  local tmp member
  tmp="$(mktemp -d)"
  member="$(ar t "$1" | grep '^data\.tar')"
  (cd "$tmp" && ar x "$1" "$member")
  tar -xf "$tmp/$member" -C "$2"
  rm -rf "$tmp"
}

# Unpacks every .deb of $debs into $prefix (never into /), once per set of files, and fills
# dependency_args with the CMake cache entries that point at it.
unpack_debs() {
  [ -d "$debs" ] || die "no $debs: run 'tools/gpu-check.sh --fetch-debs' on a machine with network, \
then name .gpu-debs in the device tool's carry (docs/gpu-pass.md)"
  local missing=() p f link target stamp
  for p in "${deb_packages[@]}"; do
    compgen -G "$debs/${p}_*.deb" >/dev/null || missing+=("$p")
  done
  ((${#missing[@]} == 0)) || die "missing in $debs: ${missing[*]} (run tools/gpu-check.sh --fetch-debs \
again and carry .gpu-debs)"
  stamp="$(find "$debs" -maxdepth 1 -name '*.deb' -printf '%f %s\n' | sort)"
  if [ ! -f "$prefix/.unpacked" ] || [ "$(cat "$prefix/.unpacked")" != "$stamp" ]; then
    rm -rf "$prefix"
    mkdir -p "$prefix"
    for f in "$debs"/*.deb; do
      extract_deb "$f" "$prefix" || die "could not unpack $f"
    done
    # Absolute symbolic links (zlib1g-dev's libz.so -> /lib/x86_64-linux-gnu/libz.so.1.2.13) would
    # point at the system: point them into the prefix.
    while IFS= read -r link; do
      target="$(readlink "$link")"
      if [ -e "$prefix$target" ]; then ln -sfn "$prefix$target" "$link"; fi
    done < <(find "$prefix" -type l -lname '/*')
    # Gloo's CMake package names its library by absolute path (/usr/lib/libgloo.so.0.5.0):
    # point it into the prefix.
    sed -i "s|\"/usr/lib/libgloo|\"$prefix/usr/lib/libgloo|" \
      "$prefix"/usr/share/cmake/Gloo/GlooTargets-*.cmake
    # googletest's sources where LEANGRAD_DEPS_DIR's fallback looks for them.
    mkdir -p "$prefix/deps"
    ln -sfn "$prefix/usr/src/googletest" "$prefix/deps/googletest"
    echo "$stamp" >"$prefix/.unpacked"
  fi
  local lib="$prefix/usr/lib/x86_64-linux-gnu"
  dependency_args=(
    -DCMAKE_PREFIX_PATH:PATH="$prefix/usr"
    -DEigen3_DIR:PATH="$prefix/usr/share/eigen3/cmake"
    -DGTest_DIR:PATH="$lib/cmake/GTest"
    -Dbenchmark_DIR:PATH="$lib/cmake/benchmark"
    -Dnlohmann_json_DIR:PATH="$prefix/usr/share/cmake/nlohmann_json"
    -DCLI11_DIR:PATH="$prefix/usr/share/cmake/CLI11"
    -DZLIB_INCLUDE_DIR:PATH="$prefix/usr/include"
    -DZLIB_LIBRARY:FILEPATH="$lib/libz.so"
    -DLEANGRAD_DEPS_DIR:PATH="$prefix/deps"
    -DGloo_DIR:PATH="$prefix/usr/share/cmake/Gloo")
  for f in "$prefix/usr/share/eigen3/cmake" "$lib/cmake/GTest" "$lib/cmake/benchmark" \
           "$prefix/usr/share/cmake/nlohmann_json" "$prefix/usr/share/cmake/CLI11" \
           "$prefix/usr/include/zlib.h" "$lib/libz.so" "$prefix/usr/share/cmake/Gloo" \
           "$prefix/usr/lib/libgloo.so.0"; do
    [ -e "$f" ] || die "the unpacked .debs lack $f (a package's layout changed?)"
  done
  if [ "${GPU_CHECK_GTEST_FROM_SOURCE:-0}" = 1 ]; then
    dependency_args+=(-DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON)
  fi
}

# find_cuda: nvcc on the PATH or in /usr/local/cuda/bin; sets cuda_home.
find_cuda() {
  if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH="/usr/local/cuda/bin:$PATH"
  fi
  command -v nvcc >/dev/null 2>&1 || die "nvcc not found (PATH, /usr/local/cuda/bin): no CUDA toolkit"
  cuda_home="$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")"
  export PATH="$PATH:$cuda_home/bin"  # compute-sanitizer and ncu beside nvcc
}

# The folders under python3's import path named nvidia/ (the pip wheels of NVIDIA's libraries).
python_nvidia_dirs() {
  command -v python3 >/dev/null 2>&1 || return 0
  timeout 60 python3 -c 'import os, sys
for p in dict.fromkeys(sys.path):
    if p and os.path.isdir(os.path.join(p, "nvidia")):
        print(os.path.join(p, "nvidia"))' 2>/dev/null || true
}

# find_cudnn: cudnn.h and libcudnn.so* in LEANGRAD_CUDNN_ROOT, else the CUDA toolkit, else PyTorch's
# wheel (nvidia-cudnn-cu13: nvidia/cudnn/{include,lib}, only libcudnn.so.9 there). Every
# libcudnn*.so* is linked into $prefix/cudnn-lib beside an unversioned libcudnn.so, for the linker;
# sets cudnn_args (the cache entries of CMakeLists.txt), cudnn_lib_dir and cudnn_description.
find_cudnn() {
  local roots=() root header="" library="" version f
  if [ -n "${LEANGRAD_CUDNN_ROOT:-}" ]; then
    roots=("$LEANGRAD_CUDNN_ROOT")
  else
    roots=("$cuda_home")
    while IFS= read -r f; do roots+=("$f"); done < <(python_nvidia_dirs)
  fi
  for root in "${roots[@]}"; do
    header="$(find "$root/" -maxdepth 4 -name cudnn.h 2>/dev/null | head -1 || true)"
    library="$(find "$root/" -maxdepth 4 \( -name libcudnn.so -o -name 'libcudnn.so.[0-9]*' \) \
               2>/dev/null | sort | head -1 || true)"
    [ -n "$header" ] && [ -n "$library" ] && break
    header="" library=""
  done
  [ -n "$header" ] || die "cuDNN not found (cudnn.h and libcudnn.so*) in: ${roots[*]}. \
PyTorch's wheel (nvidia-cudnn-cu13) holds it under site-packages/nvidia/cudnn; \
or set LEANGRAD_CUDNN_ROOT to a folder with include/cudnn.h and lib/libcudnn.so*"
  cudnn_lib_dir="$(dirname "$library")"
  rm -rf "$prefix/cudnn-lib"
  mkdir -p "$prefix/cudnn-lib"
  for f in "$cudnn_lib_dir"/libcudnn*.so*; do ln -sfn "$f" "$prefix/cudnn-lib/"; done
  [ -e "$prefix/cudnn-lib/libcudnn.so" ] || ln -sfn "$library" "$prefix/cudnn-lib/libcudnn.so"
  cudnn_args=(-DLEANGRAD_CUDNN_INCLUDE_DIR:PATH="$(dirname "$header")"
              -DLEANGRAD_CUDNN_LIBRARY:FILEPATH="$prefix/cudnn-lib/libcudnn.so")
  version="$(awk '/#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) /{printf "%s%s", sep, $3; sep="."}' \
             "$(dirname "$header")/cudnn_version.h" 2>/dev/null || true)"
  cudnn_description="cuDNN ${version:-?} (headers $(dirname "$header"), libraries $cudnn_lib_dir)"
}

# find_nccl: nccl.h and libnccl.so* in the CUDA toolkit, else PyTorch's wheel (nvidia-nccl-cu13:
# nvidia/nccl/{include,lib}, only libnccl.so.2 there, linked as $prefix/nccl-lib/libnccl.so for the
# linker). Sets nccl_args and nccl_description; without NCCL the build has the NCCL process group's
# stubs (LEANGRAD_WITH_NCCL=OFF) and its tests are SKIPPED, which the description says.
find_nccl() {
  local roots=("$cuda_home") root header="" library=""
  mapfile -t -O 1 roots < <(python_nvidia_dirs | sed 's|$|/nccl|')
  for root in "${roots[@]}"; do
    header="$(find "$root/" -maxdepth 3 -name nccl.h 2>/dev/null | head -1 || true)"
    library="$(find "$root/" -maxdepth 4 \( -name libnccl.so -o -name 'libnccl.so.[0-9]*' \) \
      2>/dev/null | head -1 || true)"
    [ -n "$header" ] && [ -n "$library" ] && break
    header="" library=""
  done
  if [ -z "$header" ]; then
    nccl_args=(-DLEANGRAD_WITH_NCCL=OFF)
    nccl_description="NCCL: not found (toolkit or PyTorch's wheel): built without it"
    return 0
  fi
  rm -rf "$prefix/nccl-lib"
  mkdir -p "$prefix/nccl-lib"
  ln -sfn "$library" "$prefix/nccl-lib/libnccl.so"
  nccl_lib_dir="$(dirname "$library")"
  nccl_args=(-DLEANGRAD_WITH_NCCL=ON -DLEANGRAD_NCCL_INCLUDE_DIR:PATH="$(dirname "$header")"
             -DLEANGRAD_NCCL_LIBRARY:FILEPATH="$prefix/nccl-lib/libnccl.so")
  nccl_description="NCCL: headers $(dirname "$header"), library $library"
}

# ---- A prebuilt build-gpu/ (here: --prebuild; there: unpacked in place of a build) -------------
# Note [A prebuilt build-gpu/]
#   - Why: a lent GPU machine gives a session 15 minutes of device time, its start included, and
#     building build-gpu/ there took 217 to 227 s of it (2026-11-24). The session's own machine
#     has the same nvcc (13.0.88), so --prebuild builds the tree here, where ccache makes a
#     rebuild of a commit a matter of minutes, and packs it; the modes there unpack it in seconds.
#   - What differs from a build there: Debian 12's GCC 12 and -dev packages compile and link it
#     (the GPU machine is Ubuntu 24.04 with GCC 13: a newer glibc and libstdc++, which run it).
#     It runs there on the runtime libraries of the carried .deb files (Gloo, Google Benchmark)
#     through LD_LIBRARY_PATH, as a build there does. oneDNN is left out, as there (no .deb of it
#     travels): the CPU's float32 matrix products are Eigen's. cuBLAS, cuDNN and NCCL are opened
#     at first use by their sonames (kernels/cuda/*_lazy.cpp, distributed/nccl/nccl_lazy.cpp),
#     so the ones there (PyTorch's wheels) serve; the manifest names the headers compiled here.
#   - Paths: it is configured in $prebuilt_src, a copy of the files the device tool sends (their
#     modification times kept, so that ninja rebuilds only what changed since the last
#     --prebuild). There $prebuilt_src is made a link to the checkout and the tree is unpacked into
#     the checkout's build-gpu/, so that the paths CMake wrote into it resolve.
#   - Stale trees: the manifest holds each source file's SHA-256. There every one must match, and
#     no C++, CUDA or CMake file under the source folders may be missing from it; otherwise the
#     modes configure and build there as before, and summary.txt says why.
#   - A tree unpacked there holds .prebuilt; nothing runs ninja in it, on a warm machine's later
#     calls either (its sources' times are the copy's: ninja would rebuild all of it).
prebuilt=0

# source_files DIR: the files of the checkout at DIR that the device tool sends, NUL-separated:
# tracked and untracked ones git does not ignore, those deleted but still tracked left out.
source_files() {
  local f
  while IFS= read -r -d '' f; do
    [ -f "$1/$f" ] && printf '%s\0' "$f"
  done < <(git -C "$1" ls-files -z -co --exclude-standard)
}

# build_inputs: the files here that the build reads (sources, headers, CMake's files), sorted, one
# per line. Files the programs read when they run (scripts, reference data) come from the
# checkout there and need not match.
build_inputs() {
  find . \( -path ./.git -o -path './build*' -o -path './.gpu-*' -o -path ./shared -o -path ./deps \
    -o -name __pycache__ \) -prune -o -type f \( -name '*.cpp' -o -name '*.cu' -o -name '*.h' \
    -o -name '*.cuh' -o -name '*.inc' -o -name '*.in' -o -name 'CMakeLists.txt' -o -name '*.cmake' \) \
    -print | LC_ALL=C sort
}

mode_prebuild() {
  local t0=$SECONDS rc=0 log="$prebuilt_dir/prebuild.log" launcher=() tree_bytes archive_bytes
  git -C "$root" rev-parse --git-dir >/dev/null 2>&1 || die "--prebuild needs the git checkout"
  find_cuda
  command -v ninja >/dev/null 2>&1 || die "--prebuild needs ninja (tools/bootstrap.sh installs it)"
  if [ -L "$prebuilt_src" ]; then rm -f "$prebuilt_src"; fi
  mkdir -p "$prebuilt_src" "$prebuilt_dir"
  : >"$log"
  # The sources, replaced but for build-gpu/ (kept: ninja then rebuilds only what changed).
  find "$prebuilt_src" -mindepth 1 -maxdepth 1 ! -name build-gpu -exec rm -rf {} +
  source_files "$root" | tar -C "$root" --null -T - -cf - | tar -C "$prebuilt_src" -xf -
  if command -v ccache >/dev/null 2>&1; then
    # shellcheck source-path=SCRIPTDIR source=ccache_env.sh
    source "$root/tools/ccache_env.sh" "$prebuilt_src"
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  fi
  say "prebuild: configuring and building $prebuilt_src/build-gpu (log $log)"
  cmake -S "$prebuilt_src" -B "$prebuilt_src/build-gpu" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DLEANGRAD_WITH_CUDA=ON -DLEANGRAD_CUDA_ARCHITECTURES="$arch" \
    -DLEANGRAD_WARNINGS_AS_ERRORS=OFF -DLEANGRAD_WITH_ONEDNN=OFF \
    -DCMAKE_CUDA_COMPILER="$(command -v nvcc)" "${launcher[@]}" >>"$log" 2>&1 ||
    { tail -30 "$log"; die "prebuild: configure failed (log $log)"; }
  cmake --build "$prebuilt_src/build-gpu" -j "$jobs" >>"$log" 2>&1 ||
    { grep -E -m 20 'error:|FAILED:' "$log" || tail -30 "$log"; die "prebuild: build failed (log $log)"; }
  local cache="$prebuilt_src/build-gpu/CMakeCache.txt" cudnn_header nccl_header
  cudnn_header="$(sed -n 's/^LEANGRAD_CUDNN_INCLUDE_DIR:PATH=//p' "$cache")/cudnn_version.h"
  nccl_header="$(sed -n 's/^LEANGRAD_NCCL_INCLUDE_DIR:PATH=//p' "$cache")/nccl.h"
  {
    echo "commit: $(commit_id)"
    echo "date: $(date -u '+%F %T UTC')"
    echo "source folder: $prebuilt_src (a link to the checkout on the GPU machine)"
    echo "built on: $(# shellcheck disable=SC1091
. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"); $(g++ --version | head -1); \
nvcc $(nvcc --version | grep -o 'V[0-9][0-9.]*' | head -1); cmake $(cmake --version | head -1 | grep -o '[0-9][0-9.]*')"
    echo "options: Release, LEANGRAD_CUDA_ARCHITECTURES=$arch, LEANGRAD_WITH_ONEDNN=OFF, \
Gloo $(sed -n 's/^LEANGRAD_WITH_GLOO:BOOL=//p' "$cache"), NCCL $(sed -n 's/^LEANGRAD_WITH_NCCL:BOOL=//p' "$cache")"
    echo "headers: cuDNN $(awk '/#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) /{printf "%s%s", sep, $3; sep="."}' \
      "$cudnn_header" 2>/dev/null || true) ($cudnn_header), NCCL \
$(awk '/#define NCCL_(MAJOR|MINOR|PATCH) /{printf "%s%s", sep, $3; sep="."}' "$nccl_header" 2>/dev/null || true)"
  } >"$prebuilt_dir/manifest.txt"
  (cd "$prebuilt_src" && build_inputs | tr '\n' '\0' | xargs -0 sha256sum) >"$prebuilt_dir/sources.sha256"
  # The tree without its object files (what links and runs needs none of them), and the marker.
  cp "$prebuilt_dir/manifest.txt" "$prebuilt_src/build-gpu/.prebuilt"
  say "prebuild: packing (xz)"
  tar -C "$prebuilt_src" --exclude='*.o' --exclude='*.o.d' --exclude='.ninja_log' \
    --exclude='.ninja_deps' --exclude='*.gch' -cf - build-gpu | xz -T0 -6 >"$prebuilt_archive.part" ||
    die "prebuild: packing failed"
  mv "$prebuilt_archive.part" "$prebuilt_archive"
  tree_bytes=$(du -cb "$prebuilt_dir" "$debs" 2>/dev/null | tail -1 | cut -f1)
  archive_bytes=$(stat -c %s "$prebuilt_archive")
  say "prebuild: $prebuilt_archive, $((archive_bytes / 1048576)) MiB, in $((SECONDS - t0)) s; \
.gpu-prebuilt and .gpu-debs $((tree_bytes / 1048576)) MiB together"
  ((tree_bytes <= carry_limit_mib * 1024 * 1024)) ||
    die "prebuild: .gpu-prebuilt and .gpu-debs exceed the ${carry_limit_mib} MiB the device tool carries"
  say "next: run(command=\"GPU_CHECK_COMMIT=$(commit_id) bash tools/gpu-check.sh ...\", \
carry=[\".gpu-debs\", \".gpu-prebuilt\"]) (docs/gpu-pass.md)"
  return "$rc"
}

# prebuilt_mismatch: why .gpu-prebuilt/ is not the build of the sources here (Note [A prebuilt
# build-gpu/]); nothing when it is.
prebuilt_mismatch() {
  local differing added
  # sha256sum -c exits 1 when a file differs: the list is what counts.
  differing="$( (cd "$root" && sha256sum --quiet -c "$prebuilt_dir/sources.sha256" 2>/dev/null) |
    sed 's/: .*//' | head -5 | paste -sd ' ' || true)"
  if [ -n "$differing" ]; then
    echo "built from other sources (differing here: $differing)"
    return
  fi
  added="$(cd "$root" && comm -13 <(cut -c67- "$prebuilt_dir/sources.sha256") <(build_inputs) |
    head -5 | paste -sd ' ')"
  [ -z "$added" ] || echo "sources added since it was built: $added"
}

# decompress_xz FILE: to standard output, with python3's lzma where xz is missing.
decompress_xz() {
  if command -v xz >/dev/null 2>&1; then
    xz -dc "$1"
  else
    python_env python3 -c 'import lzma, shutil, sys
shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer)' "$1"
  fi
}

# use_prebuilt: unpacks .gpu-prebuilt/ into build-gpu/; 1 when none was carried (or
# GPU_CHECK_PREBUILT=0): the modes then build there. One built from other sources stops the run:
# building there instead would spend minutes of the device time the prebuilt tree is to save.
use_prebuilt() {
  local t0=$SECONDS why
  [ -f "$prebuilt_archive" ] || return 1
  if [ "${GPU_CHECK_PREBUILT:-1}" = 0 ]; then
    record "  prebuilt: not used (GPU_CHECK_PREBUILT=0): building here"
    return 1
  fi
  [ "$build" = "$root/build-gpu" ] ||
    die "the prebuilt tree's paths need build-gpu/ in the checkout, not $build (GPU_CHECK_BUILD)"
  why="$(prebuilt_mismatch)"
  [ -z "$why" ] || die "the carried .gpu-prebuilt/ is not these sources' build: $why. Run \
'tools/gpu-check.sh --prebuild' on the session's machine and carry .gpu-prebuilt again, or set \
GPU_CHECK_PREBUILT=0 to build here (about 220 s of device time)"
  if [ -e "$prebuilt_src" ] && [ ! -L "$prebuilt_src" ]; then
    die "$prebuilt_src is a folder here (the machine --prebuild ran on?): the prebuilt tree needs \
that path for a link to the checkout"
  fi
  ln -sfn "$root" "$prebuilt_src"
  rm -rf "$build"
  decompress_xz "$prebuilt_archive" | tar -C "$root" -xf - ||
    { rm -rf "$build"; die "unpacking $prebuilt_archive failed"; }
  prebuilt=1
  record "  prebuilt: build-gpu/ unpacked in $((SECONDS - t0)) s ($(sed -n 's/^commit: //p' \
"$build/.prebuilt"), $(sed -n 's/^built on: //p' "$build/.prebuilt"))"
}

# prepare: everything a mode needs before it builds or runs (cheap when the machine is warm).
prepared=0
prepare() {
  ((prepared)) && return 0
  find_cuda
  unpack_debs
  find_cudnn
  nccl_lib_dir=""
  find_nccl
  # cuDNN loads its sub-libraries (libcudnn_graph.so.9, ...) by name: their folder on the search
  # path of leangrad's programs. Debian's libbenchmark.so.1debian is found through the build RPATH.
  # libgloo.so.0 (in usr/lib) needs libhiredis, libibverbs and libnl (libnl-3 in lib/): at link
  # time (ld resolves a library's dependencies through this path) and at run time.
  # python3 (PyTorch) keeps the original search path: python_env.
  original_ld_library_path="${LD_LIBRARY_PATH:-}"
  export LD_LIBRARY_PATH="$prefix/cudnn-lib:$cudnn_lib_dir${nccl_lib_dir:+:$nccl_lib_dir}:$prefix/usr/lib/x86_64-linux-gnu:$prefix/usr/lib:$prefix/lib/x86_64-linux-gnu${original_ld_library_path:+:$original_ld_library_path}"
  prepared=1
}
python_env() { LD_LIBRARY_PATH="$original_ld_library_path" "$@"; }
# tools/trace_summary.py over a Chrome trace leangrad wrote: spans and busy time per CPU thread
# and CUDA stream.
trace_summary() { python_env python3 "$root/tools/trace_summary.py" "$@"; }

require_gpu() {
  if ! { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; }; then
    die "no GPU visible (nvidia-smi -L failed): mode '$1' needs the GPU machine (build runs anywhere with nvcc)"
  fi
}

commit_id() {
  if [ -n "${GPU_CHECK_COMMIT:-}" ]; then
    echo "$GPU_CHECK_COMMIT"
  elif git -C "$root" rev-parse --short HEAD >/dev/null 2>&1; then
    echo "$(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD || echo '+dirty')"
  else
    echo "unknown (no .git here: pass GPU_CHECK_COMMIT=<sha>)"
  fi
}

# ---- The device record -----------------------------------------------------------------------
device_recorded=0
record_device() {
  ((device_recorded)) && return 0
  device_recorded=1
  local file="$out/device.txt"
  {
    echo "date: $(date -u '+%F %T UTC')"
    echo "commit: $(commit_id)"
    echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, \
$(awk '/MemTotal/{printf "%.0f GiB", $2 / 1048576}' /proc/meminfo); $(uname -r); \
$(# shellcheck disable=SC1091
. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"); $(ldd --version 2>/dev/null | head -1)"
    echo
    echo "\$ nvidia-smi --query-gpu=name,memory.total,clocks.max.memory,clocks.max.sm,driver_version --format=csv"
    timeout 30 nvidia-smi --query-gpu=name,memory.total,clocks.max.memory,clocks.max.sm,driver_version \
      --format=csv 2>&1 || echo "(nvidia-smi failed: no GPU?)"
    echo
    echo "\$ nvcc --version"
    nvcc --version 2>&1 | tail -2
    echo "g++: $(g++ --version 2>&1 | head -1)"
    echo "cmake: $(cmake --version 2>&1 | head -1); ninja $(ninja --version 2>&1)"
    echo "compute-sanitizer: $(compute-sanitizer --version 2>&1 | grep -m1 -i version || echo 'not found')"
    echo "ncu: $(ncu --version 2>&1 | grep -m1 -i version || echo 'not found')"
    echo "CUDA toolkit: $cuda_home ($(find "$cuda_home/lib64/" "$cuda_home/lib/" -maxdepth 1 \
      -name 'libcublas.so*' 2>/dev/null | head -1 || true))"
    echo "$cudnn_description"
    echo "NCCL wheel: $(python_nvidia_dirs | while IFS= read -r d; do find "$d/" -maxdepth 3 \
      -name 'libnccl.so*' 2>/dev/null; done | head -1)"
    echo
    echo "\$ python3 (torch.cuda.get_device_properties)"
    python_env timeout 120 python3 - <<'EOF' 2>&1 || echo "(python3 with torch failed)"
import torch
print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}")
if torch.cuda.is_available():
    p = torch.cuda.get_device_properties(0)
    l2 = getattr(p, "L2_cache_size", 0) / 2**20
    print(f"{p.name}: sm_{p.major}{p.minor}, {p.multi_processor_count} SMs, L2 {l2:.0f} MiB, "
          f"{p.total_memory / 2**30:.1f} GiB")
else:
    print("torch sees no CUDA device")
EOF
  } >"$file" 2>&1
  say "device: $(grep -m1 -E 'SMs' "$file" || echo 'no GPU seen (see device.txt)')"
}

# ---- build -----------------------------------------------------------------------------------
configure() {
  local log="$out/build.log" t0=$SECONDS rc=0
  {
    echo "=== configure $(date -u '+%T UTC'): $build"
    echo "cmake: $(cmake --version | head -1); g++: $(g++ --version | head -1)"
    echo "$cudnn_description"
    echo "$nccl_description"
    echo "dependencies: $prefix (from $(find "$debs" -name '*.deb' | wc -l) .deb files)"
  } >>"$log"
  run_limited "$(limit 300)" "$log" cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DLEANGRAD_WITH_CUDA=ON \
    -DLEANGRAD_CUDA_ARCHITECTURES="$arch" -DLEANGRAD_WARNINGS_AS_ERRORS=OFF \
    -DCMAKE_CUDA_COMPILER="$(command -v nvcc)" \
    "${dependency_args[@]}" "${cudnn_args[@]}" "${nccl_args[@]}" || rc=$?
  record "  configure: $((SECONDS - t0)) s (exit $rc)"
  if ((rc != 0)); then
    tail -40 "$log"
    return "$rc"
  fi
  # Where each dependency was found (all under $prefix, except CUDA's).
  grep -E '^(Eigen3_DIR|GTest_DIR|benchmark_DIR|nlohmann_json_DIR|CLI11_DIR|ZLIB_INCLUDE_DIR|ZLIB_LIBRARY|ZLIB_LIBRARY_RELEASE|LEANGRAD_CUDNN_[A-Z_]+|CUDAToolkit_[A-Z_]*DIR):' \
    "$build/CMakeCache.txt" >>"$log" || true
  # The configs in $prefix refused (a compiler or CMake too different)? dependencies.cmake then
  # builds GoogleTest from the carried sources, or leaves Google Benchmark out: say so.
  if grep -q 'Google Benchmark not found' "$log"; then
    record "  warning: Google Benchmark not found in $prefix: the bench_* programs are not built"
  fi
  if [ -d "$build/_deps/googletest" ] && [ "${GPU_CHECK_GTEST_FROM_SOURCE:-0}" != 1 ]; then
    record "  warning: Debian's GoogleTest config was refused: GoogleTest is built from its sources"
  fi
}

# A warm machine keeps build-gpu/ between calls; a fresh one (the machine goes back 30 s after a
# call) configures and builds it again, only the targets the mode needs.
# A prebuilt tree (Note [A prebuilt build-gpu/]) is unpacked rather than configured, and never built.
ensure_configured() {
  prepare
  ((prebuilt)) && return 0
  if [ -f "$build/.prebuilt" ]; then
    # A tree unpacked by an earlier call on this machine: still these sources' tree?
    if cmp -s "$build/.prebuilt" "$prebuilt_dir/manifest.txt" && [ -z "$(prebuilt_mismatch)" ]; then
      prebuilt=1
      return 0
    fi
    record "  prebuilt: $build was unpacked from another prebuilt tree or for other sources"
    rm -rf "$build"
  fi
  if [ ! -f "$build/build.ninja" ] && use_prebuilt; then return 0; fi
  [ -f "$build/build.ninja" ] && return 0
  say "no $build/build.ninja (a fresh machine): configuring"
  configure
}

# ensure_built TARGET...: builds TARGETs (all when none), configuring first where needed.
ensure_built() {
  local log="$out/build.log" rc=0 t0
  ensure_configured || return $?
  ((prebuilt)) && return 0
  t0=$SECONDS
  echo "=== build $(date -u '+%T UTC'): ${*:-all}" >>"$log"
  local targets=()
  (($#)) && targets=(--target "$@")
  run_limited "$(limit 600)" "$log" cmake --build "$build" -j "$jobs" "${targets[@]}" || rc=$?
  local cut=""
  ((rc == 124)) && cut=", cut off by the time budget"
  record "  build ${*:-all}: $((SECONDS - t0)) s (exit $rc$cut)"
  if ((rc != 0)); then
    grep -E -m 20 'error:|FAILED:' "$log" || true
    tail -20 "$log"
  fi
  return "$rc"
}

mode_build() {
  local t0=$SECONDS rc=0
  prepare
  record_device
  if [ "${GPU_CHECK_FRESH:-0}" = 1 ]; then rm -rf "$build"; fi
  if ! use_prebuilt; then
    configure || rc=$?
    ((rc == 0)) && { ensure_built || rc=$?; }
  fi
  if ((rc == 0)); then
    local how="built here"
    ((prebuilt)) && how="prebuilt, unpacked"
    record "gpu-check build: OK in $((SECONDS - t0)) s ($build, $how; log build.log)"
    overall+=("build OK")
  else
    record "gpu-check build: FAILED (exit $rc) after $((SECONDS - t0)) s: see build.log"
    overall+=("build FAILED")
  fi
}

# ---- test ------------------------------------------------------------------------------------
# ctest_counts LOG: "P passed, F failed, S skipped of T" from ctest's last summary in LOG.
ctest_counts() {
  local line failed total skipped
  # "100% tests passed out of N" when none failed, else "P% tests passed, F tests failed out of N".
  line="$(grep -E '[0-9]+% tests passed(, [0-9]+ tests? failed)? out of [0-9]+' "$1" | tail -1 || true)"
  [ -n "$line" ] || { echo "no ctest summary"; return; }
  failed=0
  if grep -q 'failed' <<<"$line"; then failed="$(sed -E 's/.* ([0-9]+) tests? failed.*/\1/' <<<"$line")"; fi
  total="$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line")"
  # Skips of the run that summary ends: after the rerun marker when there is one.
  skipped="$(awk '/^=== the failed tests again/ { n = 0 } /\(Skipped\)/ { n++ } END { print n + 0 }' "$1")"
  echo "$((total - failed - skipped)) passed, $failed failed, $skipped skipped of $total"
}

# run_ctest NAME LOG ARGS...: ctest with ARGS, then the failed tests again one at a time (a test
# that fails only beside others on the one GPU is a different finding).
run_ctest() {
  local name=$1 log=$2 t0=$SECONDS rc=0
  shift 2
  : >"$log"
  run_limited "$(limit 420)" "$log" ctest --test-dir "$build" --output-on-failure \
    --no-tests=error -j "$jobs" "$@" || rc=$?
  local counts
  counts="$(ctest_counts "$log")"
  if ((rc != 0 && rc != 124)) && grep -q 'tests failed out of' "$log"; then
    echo "=== the failed tests again, one at a time" >>"$log"
    # By name: --rerun-failed goes by test number, which a later filtered run may not share.
    local names
    names="$(sed -n 's/^[[:space:]]*[0-9]* - \(.*\) (.*)$/\1/p' <<<"$(sed -n '/The following tests FAILED/,$p' "$log")" |
      sed 's/[][\.^$*+?(){}|]/\\&/g' | paste -sd '|')"
    run_limited "$(limit 300)" "$log" ctest --test-dir "$build" --output-on-failure \
      -R "^($names)\$" -j 1 || true
    counts="$counts; alone: $(ctest_counts "$log" | sed 's/ of .*//')"
    sed -n '/The following tests FAILED/,$p' "$log" | head -30
  fi
  ((rc == 124)) && counts="$counts; CUT OFF by the time budget"
  record "  $name: $counts ($((SECONDS - t0)) s, $(basename "$log"))"
  return "$rc"
}

mode_test() {
  local t0=$SECONDS rc=0
  require_gpu test
  ensure_built || { overall+=("test NOT RUN (build failed)"); record "gpu-check test: NOT RUN (build failed)"; return; }
  record_device
  if [[ -n ${GPU_CHECK_TESTS:-} ]]; then
    run_ctest "selected tests ($GPU_CHECK_TESTS, until-fail ${GPU_CHECK_REPEAT:-1})" \
      "$out/test-selected.log" -R "$GPU_CHECK_TESTS" --repeat "until-fail:${GPU_CHECK_REPEAT:-1}" ||
      rc=$?
    finish_mode test "$rc" "$t0" " (test-selected.log)"
    return
  fi
  run_ctest "CUDA tests" "$out/test-cuda.log" -R "$cuda_tests_regex" || rc=$?
  # A handful skip where a GPU exists (the no-device error paths); most skipping means the CUDA
  # runtime sees no device although nvidia-smi does.
  local skipped
  skipped="$(grep -c '(Skipped)' "$out/test-cuda.log" || true)"
  if ((skipped > 10)); then
    record "  FAILED: $skipped CUDA tests SKIPPED although nvidia-smi sees a GPU (the CUDA runtime sees none?)"
    rc=1
  fi
  finish_mode test "$rc" "$t0" " (test-cuda.log)"
}

# The tests without CUDA in their names, which CI runs on every commit: on the GPU machine only
# when asked (107 to 113 s of device time on 2026-11-24, and nothing found there that CI had not).
mode_test_rest() {
  local t0=$SECONDS rc=0
  require_gpu test-rest
  ensure_built || { overall+=("test-rest NOT RUN (build failed)"); record "gpu-check test-rest: NOT RUN (build failed)"; return; }
  record_device
  # A prebuilt tree came without its object files, which lane_calls reads (it ran where the tree
  # was built: CI's build of the same sources runs it too).
  local skip="$cuda_tests_regex"
  ((prebuilt)) && skip="$skip|^lane_calls\$"
  run_ctest "other tests" "$out/test-rest.log" -E "$skip" || rc=$?
  finish_mode test-rest "$rc" "$t0" " (test-rest.log)"
}

# ---- sanitize --------------------------------------------------------------------------------
# sanitize_with TOOL FILTER SECONDS: compute-sanitizer over leangrad_tests, the caching allocator
# off so that every tensor is its own cudaMalloc (LEANGRAD_ALLOC_CONF, docs/memory.md).
sanitize_with() {
  local tool=$1 filter=$2 seconds=$3 t0=$SECONDS rc=0
  local part="$build/sanitize-$tool.log" log="$out/sanitize.log"
  : >"$part"
  LEANGRAD_ALLOC_CONF=caching:0 run_limited "$seconds" "$part" compute-sanitizer --tool "$tool" \
    --error-exitcode 99 --print-limit 20 "$build/tests/leangrad_tests" --gtest_filter="$filter" ||
    rc=$?
  local errors tests_ok tests_failed tests_skipped verdict
  errors="$(grep -E 'ERROR SUMMARY' "$part" | tail -1 | sed -E 's/.*ERROR SUMMARY: //' || true)"
  tests_ok="$(grep -c '^\[       OK \]' "$part" || true)"
  tests_failed="$(grep -cE '^\[  FAILED  \] .* \([0-9]+ ms\)$' "$part" || true)"
  tests_skipped="$(grep -cE '^\[  SKIPPED \] .* \([0-9]+ ms\)$' "$part" || true)"
  # Skipped tests ran nothing under the tool: as many as the test mode allows (see mode_test).
  if ((rc == 0 && tests_skipped > 10)); then rc=1; fi
  case $rc in
    0) verdict="clean" ;;
    1) verdict="test failures or $tests_skipped tests SKIPPED" ;;
    99) verdict="HAZARDS FOUND" ;;
    124) verdict="CUT OFF after ${seconds} s (partial)" ;;
    *) verdict="exit $rc" ;;
  esac
  {
    echo "=== compute-sanitizer --tool $tool, LEANGRAD_ALLOC_CONF=caching:0, limit ${seconds} s"
    echo "=== --gtest_filter=$filter"
    head -c 5000000 "$part"
    echo
  } >>"$log"
  record "  $tool: $verdict; ${errors:-no error summary}; tests $tests_ok ok, $tests_failed failed, $tests_skipped skipped ($((SECONDS - t0)) s)"
  [ "$rc" = 0 ]
}

mode_sanitize() {
  local t0=$SECONDS rc=0 share
  require_gpu sanitize
  prepare
  command -v compute-sanitizer >/dev/null 2>&1 || export PATH="$PATH:$cuda_home/compute-sanitizer"
  command -v compute-sanitizer >/dev/null 2>&1 ||
    die "compute-sanitizer not found (PATH, $cuda_home/bin, $cuda_home/compute-sanitizer)"
  ensure_built leangrad_tests || { overall+=("sanitize NOT RUN (build failed)"); record "gpu-check sanitize: NOT RUN (build failed)"; return; }
  record_device
  : >"$out/sanitize.log"
  # The budget left: half to memcheck over every CUDA test, a quarter to each of the others.
  share=$(limit 100000)
  sanitize_with memcheck "$memcheck_filter" $((share / 2)) || rc=1
  share=$(limit 100000)
  sanitize_with racecheck "$racecheck_filter" $((share / 2)) || rc=1
  sanitize_with synccheck "$racecheck_filter" "$(limit 100000)" || rc=1
  if ((rc == 0)); then
    record "gpu-check sanitize: OK in $((SECONDS - t0)) s (sanitize.log)"
    overall+=("sanitize OK")
  else
    record "gpu-check sanitize: NOT CLEAN in $((SECONDS - t0)) s (sanitize.log: hazards, failures or cut off)"
    overall+=("sanitize NOT CLEAN")
  fi
}

# ---- bench -----------------------------------------------------------------------------------
# How build-gpu/ was made, for the results files: here, or prebuilt (its manifest's words).
build_description() {
  if ((prebuilt)); then
    echo "prebuilt ($(sed -n 's/^options: //p' "$build/.prebuilt"); $(sed -n 's/^built on: //p' \
"$build/.prebuilt"); commit $(sed -n 's/^commit: //p' "$build/.prebuilt")); run with $cudnn_description"
  else
    echo "Release, LEANGRAD_CUDA_ARCHITECTURES=$arch, nvcc $(nvcc --version | grep -o 'V[0-9][0-9.]*' |
      head -1), $(g++ --version | head -1); $cudnn_description"
  fi
}

cut_off_note() {
  if (($1 == 124)); then echo " (cut off)"; fi
}

# The results file of today's run on this GPU: $out/<date>-<gpu><suffix>.md.
results_path() {
  local gpu slug
  gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
  slug="$(cut -d, -f1 <<<"$gpu" | tr '[:upper:]' '[:lower:]' | sed -E 's/nvidia//; s/[^a-z0-9]+/-/g; s/^-+|-+$//g')"
  echo "$out/$(date -u +%F)-${slug:-gpu}$1.md"
}

# wanted NAME: whether bench runs the item NAME (GPU_CHECK_BENCH; every item when unset).
wanted() { [[ -z ${GPU_CHECK_BENCH:-} ]] || grep -qE -- "$GPU_CHECK_BENCH" <<<"$1"; }

# count_run NAME RC: one bench item's exit status, into mode_bench's statuses, all and ok.
count_run() {
  statuses+=("$1: exit $2$(cut_off_note "$2")")
  all=$((all + 1))
  if (($2 == 0)); then ok=$((ok + 1)); fi
  say "  $1: exit $2"
}

# append_timeline TITLE FILE: a --memory-timeline JSON into bench.log, on the line after
# "=== memory timeline TITLE: JSON on the next line" ($OUT brings back 8 files at most), whence
#   sed -n '/^=== memory timeline save-on-cpu/{n;p}' bench.log > save-on-cpu.json
append_timeline() {
  {
    echo "=== memory timeline $1: JSON on the next line"
    if [[ -f $2 ]]; then tr -d '\n' <"$2"; fi
    echo
  } >>"$log"
}

mode_bench() {
  local t0=$SECONDS rc=0
  require_gpu bench
  ensure_configured ||
    { overall+=("bench NOT RUN (configure failed)"); record "gpu-check bench: NOT RUN (configure failed)"; return; }
  # The GPU programs' targets, as CMake named them (bench/CMakeLists.txt, bench/variants/).
  local targets=()
  mapfile -t targets < <(ninja -C "$build" -t targets all |
    sed -n -E 's/^(gpu_[a-z0-9_]+|offload_mlp|variant_[a-z0-9_]+): phony$/\1/p')
  ((${#targets[@]})) || die "no gpu_*, offload_mlp or variant_* target in $build (a build without CUDA?)"
  # With GPU_CHECK_BENCH, only the programs it selects (a short second call on a fresh machine).
  local target selected=()
  for target in "${targets[@]}"; do
    if wanted "$target"; then selected+=("$target"); fi
  done
  targets=("${selected[@]}" ddp_step memory_planner leangrad-run leangrad-train)
  # bench_profiler needs Google Benchmark, which the build leaves out if the carried one is refused.
  if ninja -C "$build" -t targets all | grep -q '^bench_profiler: phony$'; then
    targets+=(bench_profiler)
  fi
  ensure_built "${targets[@]}" ||
    { overall+=("bench NOT RUN (build failed)"); record "gpu-check bench: NOT RUN (build failed)"; return; }
  record_device
  local gpu results log="$out/bench.log"
  # Per-run logs and work files go to scratch and are appended to bench.log: what comes back from
  # $OUT is at most 8 files.
  local scratch=/tmp/leangrad-gpu-bench
  rm -rf "$scratch" && mkdir -p "$scratch"
  gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
  results="$(results_path "")"
  : >"$log"
  {
    echo "# GPU benchmarks $(date -u +%F) on $gpu"
    echo
    echo "- commit: $(commit_id)"
    echo "- GPU: $(nvidia-smi --query-gpu=name,memory.total,clocks.max.memory,driver_version \
      --format=csv,noheader | head -1); $(grep -m1 'SMs' "$out/device.txt" || echo 'SMs: see device.txt')"
    echo "- CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores"
    echo "- build: $(build_description)"
    echo "- PyTorch: $(grep -m1 '^torch ' "$out/device.txt" || echo 'see device.txt')"
    echo "- command: tools/gpu-check.sh bench (docs/gpu-pass.md): each program below run as"
    echo "  \`build-gpu/bench/<program> --markdown FILE\`, each torch script as"
    echo "  \`python3 bench/compare/<script> --markdown FILE\`, defaults --warmup 3 --runs 20"
  } >"$results"
  local statuses=() program name prc ok=0 all=0
  for program in "$build"/bench/gpu_* "$build"/bench/offload_mlp "$build"/bench/variants/variant_*; do
    if [ ! -f "$program" ] || [ ! -x "$program" ]; then continue; fi
    name="$(basename "$program")"
    wanted "$name" || continue
    echo "=== $name" >>"$log"
    prc=0
    run_limited "$(limit 180)" "$log" "$program" --markdown "$results" || prc=$?
    count_run "$name" "$prc"
  done
  local tok=0 tall=0 script
  for script in "$root"/bench/compare/*_torch.py; do
    # The GPU scripts (bench/compare/gpu_table.py's GpuTable) write --markdown tables; the others
    # (ddp_step_torch.py: Gloo on the CPU, started by bench/run_distributed.sh) are not this pass's.
    grep -q 'GpuTable' "$script" || continue
    name="$(basename "$script")"
    wanted "$name" || continue
    echo "=== $name" >>"$log"
    prc=0
    PYTHONUNBUFFERED=1 python_env run_limited "$(limit 180)" "$log" python3 "$script" \
      --markdown "$results" || prc=$?
    statuses+=("$name: exit $prc$(cut_off_note "$prc")")
    tall=$((tall + 1)); ((prc == 0)) && tok=$((tok + 1))
    say "  $name: exit $prc"
  done
  # DistributedDataParallel on the GPU (docs/distributed.md): NCCL at world size 1, and two
  # processes sharing the one GPU over Gloo (CUDA tensors staged through pinned host memory).
  local spec nproc backend
  for spec in "1 nccl" "2 gloo"; do
    read -r nproc backend <<<"$spec"
    name="ddp_step cuda $nproc x $backend"
    wanted "$name" || continue
    echo "=== $name" >>"$log"
    prc=0
    run_limited "$(limit 180)" "$scratch/ddp_step_${nproc}_${backend}.log" \
      "$build/tools/leangrad-run" --nproc-per-node "$nproc" "$build/bench/ddp_step" 30 64 cuda \
      "$backend" || prc=$?
    cat "$scratch/ddp_step_${nproc}_${backend}.log" >>"$log"
    {
      echo
      echo "## ddp_step: cnn on cuda, $nproc process(es), $backend (batch 64 per rank)"
      echo
      echo '```'
      sed -n 's/^\[rank 0\] //p' "$scratch/ddp_step_${nproc}_${backend}.log"
      echo '```'
    } >>"$results"
    count_run "$name" "$prc"
  done
  # DistributedDataParallel over parameters offloaded to the host (Note [Offloaded parameters] in
  # distributed/reducer.cpp): two processes on the one GPU, the gradients averaged in host memory
  # by Gloo, the optimizer stepping on the host; and beside it the same two processes with the
  # parameters on the device, the baseline the offloaded step is compared with. 1920 images: 15
  # steps of two ranks' batches, of which 14 run (the step time is their median).
  local setting flags
  for setting in "plain" "--offload-params"; do
    name="leangrad-train cuda 2 x gloo $setting"
    wanted "$name" || continue
    flags=()
    [[ $setting == plain ]] || flags=("$setting")
    local run_log="$scratch/ddp_${setting#--}.log"
    echo "=== $name" >>"$log"
    prc=0
    run_limited "$(limit 120)" "$run_log" "$build/tools/leangrad-run" \
      --nproc-per-node 2 "$build/tools/leangrad-train" --model srnet --device cuda --width 64 \
      --blocks 4 --epochs 1 --limit-train 1920 --limit-test 100 --max-steps 14 "${flags[@]}" \
      --data "$prefix/usr/share/datasets/fashion-mnist" || prc=$?
    cat "$run_log" >>"$log"
    {
      echo
      echo "## $name (srnet width 64 blocks 4, batch 64 per rank, 14 steps)"
      echo
      echo '```'
      grep 'distributed:\|parameters:\|step time:' "$run_log" || echo "(see bench.log)"
      echo '```'
    } >>"$results"
    count_run "$name" "$prc"
  done
  # The memory planner in two processes on the one GPU over Gloo (distributed::plan_memory): a
  # budget 1 MiB above the smallest peak a plan reaches (what --memory-budget 1 says it is), so
  # the plan saves on the CPU and may offload the parameters, weighing the host all-reduce.
  name="leangrad-train cuda 2 x gloo --memory-budget"
  if wanted "$name"; then
    echo "=== $name" >>"$log"
    # 1920 images: 15 steps of two ranks' batches, so that 14 steps fit in the epoch (the step
    # time is their median; the two-process run's trace records steps 4 and 5 of them, slower).
    local srnet_args=(--model srnet --device cuda --width 64 --blocks 4 --epochs 1
      --limit-train 1920 --limit-test 100 --max-steps 14
      --data "$prefix/usr/share/datasets/fashion-mnist")
    local planner=("$build/tools/leangrad-run" --nproc-per-node 2 "$build/tools/leangrad-train"
      --backend gloo "${srnet_args[@]}")
    local smallest budget_mib
    run_limited "$(limit 60)" "$scratch/ddp_planner_probe.log" "${planner[@]}" --memory-budget 1 || true
    cat "$scratch/ddp_planner_probe.log" >>"$log"
    smallest="$(sed -n 's/.*the smallest peak a plan reaches is \([0-9]*\)\.[0-9]* MiB.*/\1/p' \
      "$scratch/ddp_planner_probe.log" | head -1)"
    prc=0
    if [[ -n $smallest ]]; then
      budget_mib=$((smallest + 1))
      # Rank 0's trace shows which stream sets the step's pace: the compute stream, or the copy
      # stream with the saved activations (the step was predicted 22.67 ms and took 36.31 on
      # 2026-11-25).
      run_limited "$(limit 120)" "$scratch/ddp_planner.log" "${planner[@]}" \
        --memory-budget "$budget_mib" --memory-timeline "$scratch/timeline_planner_2.json" \
        --profile "$scratch/trace_planner_2.json" --profile-steps 2 || prc=$?
      cat "$scratch/ddp_planner.log" >>"$log"
      trace_summary "$scratch/trace_planner_2.json" >"$scratch/trace_planner_2.txt" 2>&1 ||
        echo "(tools/trace_summary.py failed: its words above)" >>"$scratch/trace_planner_2.txt"
      cat "$scratch/trace_planner_2.txt" >>"$log"
      # The same budget in one process: whether a gap between the predicted and the measured
      # peak comes from the second process (DistributedDataParallel) or from the plan itself.
      run_limited "$(limit 60)" "$scratch/planner_1.log" "$build/tools/leangrad-train" \
        "${srnet_args[@]}" --memory-budget "$budget_mib" \
        --memory-timeline "$scratch/timeline_planner_1.json" || prc=$?
      cat "$scratch/planner_1.log" >>"$log"
      append_timeline "planner 1 process(es) (--memory-budget $budget_mib)" \
        "$scratch/timeline_planner_1.json"
      append_timeline "planner 2 process(es) (--memory-budget $budget_mib)" \
        "$scratch/timeline_planner_2.json"
    else
      prc=1
      { echo "--memory-budget 1 named no smallest peak:"; tail -5 "$scratch/ddp_planner_probe.log"; } \
        >"$scratch/ddp_planner.log"
    fi
    {
      echo
      echo "## $name ${budget_mib:-?} (srnet width 64 blocks 4, batch 64 per rank, 14 steps)"
      echo
      echo '```'
      sed -n 's/^\[rank 0\] //p' "$scratch/ddp_planner.log" |
        grep -E 'memory plan|block|parameters and|copies:|all-reduce|predicted|step time:' ||
        cat "$scratch/ddp_planner.log"
      echo '```'
      echo
      echo "Rank 0's trace of 2 steps (tools/trace_summary.py):"
      echo
      echo '```'
      cat "$scratch/trace_planner_2.txt" 2>/dev/null || echo "(no trace: see bench.log)"
      echo '```'
      echo
      echo "The same budget in one process:"
      echo
      echo '```'
      grep -E 'memory plan|parameters and|copies:|predicted|step time:' \
        "$scratch/planner_1.log" 2>/dev/null || echo "(see bench.log)"
      echo '```'
    } >>"$results"
    count_run "$name" "$prc"
  fi
  # Issue 17's planner targets on CUDA (bench/memory_planner.cpp): all 3^5 keep / recompute /
  # save-on-cpu plans of srnet run and timed, each predicted peak and step against the measured
  # one, and the plan the planner picks for budgets from the smallest peak to the plain one
  # against the fastest plan that fits.
  name="memory_planner cuda width 64 blocks 5"
  if wanted "$name"; then
    echo "=== $name" >>"$log"
    prc=0
    {
      echo
      echo "## $name (srnet, batch 64, Adam, random images; 7 steps per plan)"
      echo
    } >>"$results"
    run_limited "$(limit 180)" "$scratch/memory_planner.log" "$build/bench/memory_planner" \
      --device cuda --width 64 --blocks 5 --batch 64 --steps 7 --markdown "$results" || prc=$?
    cat "$scratch/memory_planner.log" >>"$log"
    # Exit 0 without its summary line: it printed "no CUDA device: skipped" (reported below).
    if ((prc == 0)) && ! grep -q '^predicted peaks within' "$scratch/memory_planner.log"; then
      prc=1
    fi
    count_run "$name" "$prc"
  fi
  # The memory-technique table on the GPU (issues 16 and 17): srnet wide enough for the GPU's
  # step time to count, each technique one leangrad-train process on the carried Fashion-MNIST.
  name="memory_table cuda width 256 blocks 8"
  if wanted "$name"; then
    echo "=== $name" >>"$log"
    prc=0
    run_limited "$(limit 300)" "$scratch/memory_table.log" bash "$root/bench/memory_table.sh" \
      --train "$build/tools/leangrad-train" --device cuda --width 256 --blocks 8 \
      --data "$prefix/usr/share/datasets/fashion-mnist" --work "$scratch/memory_table" || prc=$?
    cat "$scratch/memory_table.log" >>"$log"
    {
      echo
      echo "## memory_table.sh --device cuda --width 256 --blocks 8 (srnet, batch 32, 16 steps)"
      echo
      grep '^|' "$scratch/memory_table.log" || echo "(no table: see bench.log)"
    } >>"$results"
    count_run "$name" "$prc"
  fi
  # One training step's memory timeline per memory setting on the GPU (docs/profiling.md draws
  # plain, --recompute and --save-on-cpu side by side): each JSON goes into bench.log
  # (append_timeline), and tools/plot_memory_timeline.py draws them.
  for setting in plain recompute save-on-cpu; do
    local flag=()
    [[ $setting == plain ]] || flag=("--$setting")
    name="memory timeline cuda srnet $setting"
    wanted "$name" || continue
    prc=0
    run_limited "$(limit 90)" "$scratch/timeline_$setting.log" "$build/tools/leangrad-train" \
      --model srnet --device cuda --width 64 --blocks 4 --epochs 1 --limit-train 640 \
      --limit-test 100 --max-steps 4 "${flag[@]}" --data "$prefix/usr/share/datasets/fashion-mnist" \
      --memory-timeline "$scratch/timeline_$setting.json" || prc=$?
    cat "$scratch/timeline_$setting.log" >>"$log"
    append_timeline "$setting (srnet width 64 blocks 4, batch 64, cuda)" \
      "$scratch/timeline_$setting.json"
    {
      echo
      echo "## $name"
      echo
      grep '^memory timeline:\|^step time:' "$scratch/timeline_$setting.log" || echo "(no timeline: see bench.log)"
    } >>"$results"
    count_run "$name" "$prc"
  done
  # What the profiler costs on CUDA (issue 20: "when on: measured and stated"): the mlp's step
  # with and without a Profile recording, where each recorded span also records a pair of CUDA
  # events; the medians of 5 repetitions (bench/bench_profiler.cpp).
  name="profiler cost cuda mlp (bench_profiler)"
  if wanted "$name" && [ ! -x "$build/bench/bench_profiler" ]; then
    say "  $name: skipped (no bench_profiler: Google Benchmark left out of the build)"
    printf '\n## %s\n\nskipped: no bench_profiler in the build\n' "$name" >>"$results"
  elif wanted "$name"; then
    echo "=== $name" >>"$log"
    prc=0
    run_limited "$(limit 90)" "$scratch/bench_profiler.log" "$build/bench/bench_profiler" \
      --benchmark_filter='MlpStep/.*/cuda:1' --benchmark_min_time=0.5 \
      --benchmark_repetitions=5 --benchmark_report_aggregates_only=true || prc=$?
    cat "$scratch/bench_profiler.log" >>"$log"
    if grep -q 'ERROR OCCURRED' "$scratch/bench_profiler.log"; then prc=1; fi
    {
      echo
      echo "## $name"
      echo
      echo '```'
      grep -E '_median|ERROR' "$scratch/bench_profiler.log" || echo "(no medians: see bench.log)"
      echo '```'
    } >>"$results"
    count_run "$name" "$prc"
  fi
  # The profiler on CUDA (docs/profiling.md): two srnet steps under --profile, whose trace must
  # hold a device span on a CUDA stream's track for the ops' kernels; the top-ops table (with its
  # device time column) goes into the results.
  name="profile cuda srnet"
  if wanted "$name"; then
    echo "=== $name" >>"$log"
    prc=0
    run_limited "$(limit 90)" "$scratch/profile.log" "$build/tools/leangrad-train" --model srnet \
      --device cuda --width 64 --blocks 4 --epochs 1 --limit-train 640 --limit-test 100 \
      --max-steps 6 --profile "$scratch/trace.json" --profile-steps 2 \
      --data "$prefix/usr/share/datasets/fashion-mnist" || prc=$?
    cat "$scratch/profile.log" >>"$log"
    local spans=""
    if ((prc == 0)); then
      spans="$(trace_summary "$scratch/trace.json" --top 8 --require-cuda 2>&1)" || prc=$?
    fi
    echo "$spans" >>"$log"
    {
      echo
      echo "## $name (width 64 blocks 4, batch 64, --profile-steps 2)"
      echo
      echo '```'
      echo "$spans"
      sed -n '/^profile:/,/^step time:/p' "$scratch/profile.log" | head -40
      echo '```'
    } >>"$results"
    count_run "$name" "$prc"
  fi
  # The profiler's NVTX ranges (core/cuda/nvtx.cpp), seen by a tool: Nsight Systems cannot make
  # a report on these machines (.library/device/KINDS.md), but Nsight Compute filters kernels by
  # NVTX range. Kernels are profiled only inside the push/pop range train_step (the profiler's
  # span of a whole step) or conv2d (an op's), so a kernel profiled at all shows that the ranges
  # reached the tool; without ncu the item is skipped.
  name="nvtx ranges cuda srnet (ncu)"
  if wanted "$name" && ! command -v ncu >/dev/null; then
    say "  $name: skipped (no ncu on PATH)"
    printf '\n## %s\n\nskipped: no ncu on PATH\n' "$name" >>"$results"
  elif wanted "$name"; then
    echo "=== $name" >>"$log"
    prc=0
    run_limited "$(limit 120)" "$scratch/ncu_nvtx.log" ncu --nvtx --nvtx-include "train_step/" \
      --nvtx-include "conv2d/" --clock-control none --launch-count 3 \
      --metrics gpu__time_duration.sum \
      "$build/tools/leangrad-train" --model srnet --device cuda --width 64 --blocks 4 --epochs 1 \
      --limit-train 640 --limit-test 100 --max-steps 5 --profile "$scratch/trace_ncu.json" \
      --profile-steps 1 --data "$prefix/usr/share/datasets/fashion-mnist" || prc=$?
    cat "$scratch/ncu_nvtx.log" >>"$log"
    local profiled
    profiled="$(grep -c '^==PROF== Profiling' "$scratch/ncu_nvtx.log" || true)"
    if ((prc == 0 && profiled == 0)); then
      prc=1
      echo "no kernel was profiled inside an NVTX range train_step or conv2d" >>"$log"
    fi
    {
      echo
      echo "## $name"
      echo
      echo "Kernels profiled inside the ranges train_step/ or conv2d/: ${profiled:-0} (at most 3)"
      echo
      echo '```'
      grep -E '^==PROF== Profiling|NVTX|train_step|conv2d' "$scratch/ncu_nvtx.log" | head -20 ||
        echo "(nothing matched: see bench.log)"
      echo '```'
    } >>"$results"
    count_run "$name" "$prc"
  fi
  exit_statuses "Exit status of each program" "${statuses[@]}" >>"$results"
  ((ok == all && tok == tall && all > 0)) || rc=1
  if grep -q 'no CUDA device: skipped' "$log"; then
    record "  FAILED: a program printed 'no CUDA device: skipped' although nvidia-smi sees a GPU"
    rc=1
  fi
  local line
  line="leangrad $ok/$all programs OK, torch $tok/$tall scripts OK; $(basename "$results") \
(commit it under bench/results/), bench.log"
  finish_mode bench "$rc" "$t0" ": $line"
}

# Issue 17's experiment (docs/memory.md, "On a GPU"): srnet --width 1024 --blocks 19 (358.7M
# parameters), batch 32, Adam. Under LEANGRAD_ALLOC_CONF=memory_cap_mb:12288 (a 12 GB card) the
# plain run must stop with the out-of-memory report and --memory-budget 12000 must train; then,
# uncapped, the plain step beside --offload-params (target: step <= 1.5x, peak <= 25%), alone and
# with --save-on-cpu (the activations, 9.4 GiB of the plain peak, are not the parameters' to
# save). Each run takes a few steps; the printed plans, step times and memory reports go into one
# results file. GPU_CHECK_BENCH selects runs by name here too.
mode_srnet365() {
  local t0=$SECONDS rc=0
  require_gpu srnet365
  ensure_built leangrad-train ||
    { overall+=("srnet365 NOT RUN (build failed)"); record "gpu-check srnet365: NOT RUN (build failed)"; return; }
  record_device
  local results log="$out/srnet365.log" scratch=/tmp/leangrad-gpu-srnet365
  rm -rf "$scratch" && mkdir -p "$scratch"
  results="$(results_path -srnet365)"
  : >"$log"
  local data="$prefix/usr/share/datasets/fashion-mnist"
  local common=(--device cuda --model srnet --width 1024 --blocks 19 --batch-size 32
    --optimizer adam --epochs 1 --limit-train 320 --limit-test 64 --max-steps 6)
  {
    echo "# srnet 365M on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(date -u +%F)"
    echo
    echo "- commit: $(commit_id)"
    echo "- command: tools/gpu-check.sh srnet365 (docs/gpu-pass.md), each run"
    echo "  \`build-gpu/tools/leangrad-train ${common[*]} --data FASHION_MNIST [FLAGS]\`"
  } >"$results"
  local spec name cap prc want good statuses=() ok=0 all=0
  local flags=()
  for spec in "capped plain|" "capped --memory-budget|--memory-budget 12000" \
    "uncapped plain|" "uncapped --offload-params|--offload-params" \
    "uncapped --offload-params --save-on-cpu|--offload-params --save-on-cpu"; do
    name="${spec%%|*}"
    wanted "$name" || continue
    read -r -a flags <<<"${spec#*|}"
    cap=""
    [[ $name == capped* ]] && cap="memory_cap_mb:12288"
    echo "=== $name (LEANGRAD_ALLOC_CONF=$cap ${flags[*]})" >>"$log"
    prc=0
    LEANGRAD_ALLOC_CONF="$cap" run_limited "$(limit 130)" "$scratch/run.log" \
      "$build/tools/leangrad-train" "${common[@]}" --data "$data" "${flags[@]}" || prc=$?
    cat "$scratch/run.log" >>"$log"
    {
      echo
      echo "## $name: exit $prc$(cut_off_note "$prc")"
      echo
      echo "LEANGRAD_ALLOC_CONF=${cap:-(unset)}, flags: ${flags[*]:-(none)}"
      echo
      echo '```'
      grep -E 'plan|predicted|measured|block|step time:|peak|parameters|gradients|optimizer state|saved activations|out of memory|error' \
        "$scratch/run.log" | head -60 || echo "(see srnet365.log)"
      echo '```'
    } >>"$results"
    # The plain run under the cap is expected to stop with the out-of-memory report.
    want=0
    [[ $name == "capped plain" ]] && want=1
    good=0
    if ((want == 0)); then
      ((prc == 0)) && good=1
    elif ((prc != 0 && prc != 124)) && grep -q 'out of memory' "$scratch/run.log"; then
      good=1
    fi
    rm -f "$scratch/run.log"
    local note=""
    ((good)) || note=" (not as expected)"
    statuses+=("$name: exit $prc$(cut_off_note "$prc")$note")
    all=$((all + 1)); ((good)) && ok=$((ok + 1))
    say "  $name: exit $prc$note"
  done
  exit_statuses "Exit status of each run" "${statuses[@]}" >>"$results"
  ((ok == all)) || rc=1
  local line
  line="$ok/$all runs as expected; $(basename "$results") (commit it under bench/results/), srnet365.log"
  finish_mode srnet365 "$rc" "$t0" ": $line"
}

# ---- Main ------------------------------------------------------------------------------------
(($#)) || { usage; exit 2; }
case $1 in
  -h | --help) usage; exit 0 ;;
  --fetch-debs) fetch_debs; exit 0 ;;
  --prebuild) mode_prebuild; exit 0 ;;
esac
modes=()
for m in "$@"; do
  case $m in
    build | test | test-rest | sanitize | bench | srnet365) modes+=("$m") ;;
    all) modes+=(build test test-rest sanitize bench); budget_s=3600 ;;
    *) usage >&2; die "unknown mode '$m'" ;;
  esac
done
budget_s="${GPU_CHECK_BUDGET_S:-$budget_s}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
record "=== tools/gpu-check.sh $* ($(date -u '+%F %T UTC'), commit $(commit_id), budget ${budget_s} s)"
for m in "${modes[@]}"; do
  "mode_${m//-/_}"
done
# $OUT's files come back only up to 16 MiB each: cut any longer log.
for f in "$out"/*; do
  if [ "$(stat -c %s "$f")" -gt $((15 * 1024 * 1024)) ]; then truncate -s 15M "$f"; fi
done
joined="$(IFS=,; echo "${overall[*]}")"
line="gpu-check: ${joined//,/, } in $((SECONDS - started_s)) s; logs in $out"
echo "$line" >>"$out/summary.txt"
echo "$line"
case "${overall[*]}" in
  *FAILED* | *NOT*) exit 1 ;;
esac
