#!/usr/bin/env bash
# The sanitizer jobs of CI (docs/testing.md), one command each, both by default:
#   tools/sanitize.sh asan   the unit tests under AddressSanitizer + UndefinedBehaviorSanitizer,
#                            every allocation a backend call (LEANGRAD_ALLOC_CONF=caching:0)
#   tools/sanitize.sh tsan   the threaded tests under ThreadSanitizer
#   tools/sanitize.sh --build-only asan   build, do not run (tools/fuzz.sh builds this way)
# Each job builds only leangrad_tests (no CUDA, benchmarks, tools or examples) in a folder of its
# own and runs it; any report fails the job. The ASan build also holds the fuzz targets of
# tests/fuzz (tools/fuzz.sh runs them). tools/test.sh (README and CI) runs both jobs, then fuzz.sh.
# Environment: LEANGRAD_ASAN_BUILD, LEANGRAD_TSAN_BUILD (build folders; default build-asan/ and
# build-tsan/), LEANGRAD_ASAN_FILTER, LEANGRAD_TSAN_FILTER (GoogleTest filters replacing the
# ones below), LEANGRAD_JOBS (parallel compile jobs; default nproc).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jobs="${LEANGRAD_JOBS:-$(nproc)}"

# Clang for both jobs. ThreadSanitizer needs it: the one OpenMP runtime TSan can follow is LLVM's
# libomp with its Archer tool (libarcher.so), which tells TSan about every barrier, reduction and
# task; GCC's libgomp synchronizes through futexes TSan cannot see, so every parallel region is a
# false race (4 reports on each run of a 10-line `omp parallel for` under g++ -fsanitize=thread).
# For ASan + UBSan either compiler would do: Clang's -fsanitize=undefined also checks
# float-to-integer casts out of range (float-cast-overflow: a NaN step count read from a
# checkpoint), which GCC's leaves out, and the regular build already compiles everything with GCC,
# so these jobs add Clang's view of the code. -O1 keeps the tests fast enough and the reports
# exact; NDEBUG stays undefined so Eigen's bounds assertions run too.
packages=(cmake ninja-build ccache clang libclang-rt-14-dev libomp-dev llvm libeigen3-dev
          libgtest-dev libgmock-dev zlib1g-dev nlohmann-json3-dev)

# ASan + UBSan: the whole suite. LeakSanitizer runs at exit; UBSan stops at its first report
# (-fno-sanitize-recover=undefined, CMakeLists.txt) with a stack trace. A request larger than any
# memory fails as it would with malloc (allocator_may_return_null), so the tests of
# OutOfMemoryError run here too instead of ASan aborting the process.
asan_filter="${LEANGRAD_ASAN_FILTER:-*}"
asan_options="halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=1"
asan_options+=":allocator_may_return_null=1"
asan_options+=":check_initialization_order=1:strict_init_order=1:strict_string_checks=1"
ubsan_options="halt_on_error=1:print_stacktrace=1"

# TSan: every test that runs code on more than one thread. DataLoader workers (std::threads), the
# allocator shared by threads, the autograd engine and its hooks (thread-local grad mode and hook
# stacks, end-of-backward callbacks), per-thread CUDA settings, the OpenMP kernels: elementwise,
# reductions, matmul, conv, the layers, the normalizations (GroupNorm, LayerNorm's row blocks,
# BatchNorm's planes and column blocks, softmax's column blocks), the one-pass activations,
# interpolate's planes, pad's index_select, CTC's samples and the optimizers' multi-tensor steps; the TCP store (a server thread and its clients), the process groups' worker and watchdog
# threads, and DistributedDataParallel, whose buckets the worker thread reduces while backward runs
# (in one process, and in every rank of the multi-process tests: dist_worker is built with the same
# flags), and ZeroRedundancyOptimizer's broadcasts after a step; the profiler's per-thread span
# buffers, gathered while DataLoader workers record; parallel_for handing a task's exception to the
# caller (Parallel.*).
tsan_filter="${LEANGRAD_TSAN_FILTER:-DataLoader.*:Dataset.*:*Sampler*:Engine.*:Hooks.*:\
*SavedTensorHooks*:*Checkpoint*:CachingAllocatorStressTest.ThreadsShareOneAllocator:\
*Thread*:Elementwise*:Reduce*:Matmul*:Conv*:Layers*:GroupNorm*:LayerNorm*:BatchNorm*:\
SoftmaxVectorized.*:ScatterAdd.*:Cumsum.*:Sort.*:\
ActivationKernels.*:InterpolateModes*:PadModes.*:CtcLoss.*:\
Adam8bit*:OptimReference*:\
TCPStore.*:FileStore.*:DistributedCollectives.*:DistributedFaults.*:\
EndOfBackwardCallbacks.*:DDPOneProcess.*:DistributedDDP.*:ZeroOneProcess.*:DistributedZero.*:\
Profiler.*:Parallel.*-*/Misuse.*}"
tsan_options="halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1"

usage() {
  sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  exit 2
}

# test_files_for FILTER: the files of leangrad_tests (relative to tests/, ';'-separated, for
# LEANGRAD_TEST_SOURCES) that may hold a test FILTER selects; the TSan job compiles only these,
# about half of the suite. gtest's patterns are shell globs ('*' also matches '/'), so [[ == ]]
# matches them as gtest does. A file is kept when
#   - a plain TEST(Suite, Name), run as Suite.Name, matches a positive pattern and no negative;
#   - an INSTANTIATE_TEST_SUITE_P(Prefix, Suite, ...) (LG_MISUSE_SUITE(Area, ...) is one, with
#     Suite = Misuse) may select a test: its tests run as Prefix/Suite.Name/param, names known only
#     at run time, so the file stays when some beginning of a positive pattern matches
#     "Prefix/Suite." (any pattern led by '*' does), unless a negative pattern N* (N a glob
#     matching "Prefix/Suite.") rules out every name that begins so;
#   - it has typed tests, or TEST_P suites instantiated in another file (names this cannot tell);
#   - it has no tests (helpers).
test_files_for() {
  local positive="${1%%-*}" negative="" file name prefix pattern keep j files=()
  [[ "$1" == *-* ]] && negative="${1#*-}"
  local -a positives negatives names prefixes
  IFS=: read -ra positives <<<"${positive:-*}"
  IFS=: read -ra negatives <<<"$negative"
  while IFS= read -r file; do
    keep=0
    mapfile -t names < <(grep -oE '^\s*TEST(_F)?\(\s*\w+\s*,\s*\w+' "$file" |
                           sed -E 's/.*\(\s*(\w+)\s*,\s*(\w+)$/\1.\2/')
    # Prefix/Suite. of each instantiation ("Suite." for an empty prefix).
    mapfile -t prefixes < <(
      tr '\n' ' ' <"$file" |
        grep -oE '(INSTANTIATE_TEST_SUITE_P\(\s*\w*\s*,\s*\w+|LG_MISUSE_SUITE\(\s*\w+)' |
        sed -E 's/^INSTANTIATE_TEST_SUITE_P\(\s*(\w*)\s*,\s*(\w+)$/\1\/\2./;
                s/^LG_MISUSE_SUITE\(\s*(\w+)$/\1\/Misuse./; s/^\///')
    if grep -qE '(TYPED_TEST\w*)\(' "$file" ||
       { grep -qE 'TEST_P\(' "$file" && ((${#prefixes[@]} == 0)); } ||
       { ((${#names[@]} == 0)) && ((${#prefixes[@]} == 0)); }; then
      keep=1
    fi
    for name in "${names[@]}"; do
      ((keep)) && break
      for pattern in "${positives[@]}"; do
        # shellcheck disable=SC2053  # the pattern is a glob on purpose
        [[ "$name" == $pattern ]] && keep=1 && break
      done
      for pattern in "${negatives[@]}"; do
        # shellcheck disable=SC2053
        [[ "$name" == $pattern ]] && keep=0 && break
      done
    done
    for prefix in "${prefixes[@]}"; do
      ((keep)) && break
      for pattern in "${negatives[@]}"; do
        # shellcheck disable=SC2053
        [[ "$pattern" == *'*' && "$prefix" == ${pattern%'*'} ]] && continue 2
      done
      # A positive pattern can match a name that begins with the prefix only if one of the
      # pattern's own beginnings matches the prefix (for a pattern led by '*', always).
      for pattern in "${positives[@]}"; do
        for ((j = 1; j <= ${#pattern}; ++j)); do
          # shellcheck disable=SC2053
          [[ "$prefix" == ${pattern:0:j} ]] && keep=1 && continue 3
        done
      done
    done
    ((keep)) && files+=("${file#"$root/tests/"}")
  done < <(find "$root/tests" -name '*.cpp' -not -path '*/fuzz/*' | sort)
  (IFS=';' && echo "${files[*]}")
}

# configure_and_build FOLDER SANITIZERS FUZZERS TARGET...: a static Clang build of TARGETs with
# -fsanitize=SANITIZERS; FUZZERS (ON/OFF) adds the fuzz targets and coverage instrumentation.
# LEANGRAD_TEST_SOURCES (set by the caller, empty for all) limits leangrad_tests' files.
# Without oneDNN: its prebuilt library runs its threads on GCC's libgomp, which neither sanitizer
# sees into, beside the Clang build's own libomp; Eigen then does the products (kernels/cpu/gemm.h).
configure_and_build() {
  local build="$1" sanitizers="$2" fuzzers="$3"
  shift 3
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DLEANGRAD_WITH_CUDA=OFF -DBUILD_SHARED_LIBS=OFF \
    -DLEANGRAD_WITH_ONEDNN=OFF \
    -DLEANGRAD_SANITIZE="$sanitizers" -DLEANGRAD_BUILD_FUZZERS="$fuzzers" \
    -DLEANGRAD_TEST_SOURCES="${test_sources:-}" -DLEANGRAD_TEST_OPTIMIZATION= \
    -DLEANGRAD_BUILD_BENCHMARKS=OFF -DLEANGRAD_BUILD_TOOLS=OFF -DLEANGRAD_BUILD_EXAMPLES=OFF \
    >/dev/null
  cmake --build "$build" --target "$@" -j "$jobs"
}

# run_shards NAME COMMAND...: runs the GoogleTest program COMMAND as one shard per compile job
# (GTEST_TOTAL_SHARDS), all at once: most tests run on one thread, so a single process would
# leave the other cores idle for most of the job. Each shard's output (failures and skips, with
# --gtest_brief) is printed once it ends; any shard failing fails the job.
run_shards() {
  local name="$1" shards="$jobs" i failed=0 pids=() logs=()
  shift
  for ((i = 0; i < shards; ++i)); do
    logs+=("$(mktemp)")
    env GTEST_TOTAL_SHARDS="$shards" GTEST_SHARD_INDEX="$i" "$@" >"${logs[i]}" 2>&1 &
    pids+=("$!")
  done
  for ((i = 0; i < shards; ++i)); do
    wait "${pids[i]}" || failed=1
    echo "-- $name: shard $((i + 1)) of $shards"
    cat "${logs[i]}"
    rm -f "${logs[i]}"
  done
  return "$failed"
}

run_asan() {
  local build="${LEANGRAD_ASAN_BUILD:-$root/build-asan}" start=$SECONDS
  echo "== sanitize asan: building $build"
  configure_and_build "$build" "address,undefined" ON leangrad_tests fuzz_safetensors fuzz_idx \
    fuzz_checkpoint fuzz_checkpoint_fields fuzz_store fuzz_make_seeds
  local built=$SECONDS
  ((build_only)) && return
  echo "== sanitize asan: running leangrad_tests --gtest_filter='$asan_filter'"
  run_shards "sanitize asan" LEANGRAD_ALLOC_CONF=caching:0 \
    ASAN_OPTIONS="$asan_options${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
    UBSAN_OPTIONS="$ubsan_options${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}" \
    "$build/tests/leangrad_tests" --gtest_brief=1 --gtest_filter="$asan_filter"
  echo "== sanitize asan: passed (build $((built - start)) s, run $((SECONDS - built)) s)"
}

run_tsan() {
  local build="${LEANGRAD_TSAN_BUILD:-$root/build-tsan}" start=$SECONDS
  echo "== sanitize tsan: building $build"
  test_sources="$(test_files_for "$tsan_filter")" configure_and_build "$build" "thread" OFF \
    leangrad_tests
  local built=$SECONDS
  ((build_only)) && return
  # Archer sits next to the libomp the tests link (/usr/lib/llvm-14/lib on Debian 12). Without it
  # every OpenMP region would be reported, so its absence is an error, not a warning.
  local libomp archer
  libomp="$(ldd "$build/tests/leangrad_tests" | awk '/libomp/ { print $3 }')"
  archer="$(dirname "$libomp")/libarcher.so"
  if [[ ! -f "$archer" ]]; then
    echo "tools/sanitize.sh: no libarcher.so beside '$libomp' (package libomp-14-dev)" >&2
    exit 1
  fi
  echo "== sanitize tsan: running leangrad_tests --gtest_filter='$tsan_filter'"
  run_shards "sanitize tsan" OMP_TOOL_LIBRARIES="$archer" \
    TSAN_OPTIONS="$tsan_options${TSAN_OPTIONS:+:$TSAN_OPTIONS}" \
    "$build/tests/leangrad_tests" --gtest_brief=1 --gtest_filter="$tsan_filter"
  echo "== sanitize tsan: passed (build $((built - start)) s, run $((SECONDS - built)) s)"
}

build_only=0
if [[ "${1:-}" == --build-only ]]; then
  build_only=1
  shift
fi
modes=("$@")
((${#modes[@]})) || modes=(asan tsan)
for mode in "${modes[@]}"; do
  case "$mode" in
    asan | tsan) ;;
    *) usage ;;
  esac
done
"$root/tools/install_packages.sh" "${packages[@]}"
source "$root/tools/ccache_env.sh" "$root"
for mode in "${modes[@]}"; do
  "run_$mode"
done
