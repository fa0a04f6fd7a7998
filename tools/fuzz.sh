#!/usr/bin/env bash
# The fuzz targets of tests/fuzz (libFuzzer, clang, ASan + UBSan; docs/testing.md, "Fuzzing"):
# builds them in the ASan build of tools/sanitize.sh (build-asan), replays every
# target's seed corpus and every saved crash, then fuzzes each target for SECONDS (as many at once
# as there are cores). Fails on any crash, leak, sanitizer report or per-input timeout; a crashing
# input is left in build-asan/crashes/<target>/ (copy it into tests/fuzz/crashes/<target>/ with
# the fix, so that it is replayed from then on).
#   tools/fuzz.sh                          CI: replay, then 60 s per target
#   tools/fuzz.sh --time 600               the long run: 10 minutes per target
#   tools/fuzz.sh --replay                 replay only
#   tools/fuzz.sh --time 60 fuzz_idx       some targets only
#   tools/fuzz.sh --make-seeds             rewrite tests/fuzz/corpus with fuzz_make_seeds
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${LEANGRAD_ASAN_BUILD:-$root/build-asan}"
seconds=60
replay_only=0
make_seeds=0
targets=()
while (($#)); do
  case "$1" in
    --time) seconds="$2"; shift 2 ;;
    --replay) replay_only=1; shift ;;
    --make-seeds) make_seeds=1; shift ;;
    -h|--help) sed -n '2,13p' "${BASH_SOURCE[0]}"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
((${#targets[@]})) || targets=(fuzz_safetensors fuzz_idx fuzz_checkpoint fuzz_checkpoint_fields fuzz_store)

# The targets live in the ASan + UBSan build of tools/sanitize.sh, whose library is compiled with
# coverage instrumentation for them: one instrumented build serves the unit tests and the fuzzers.
LEANGRAD_ASAN_BUILD="$build" "$root/tools/sanitize.sh" --build-only asan

if ((make_seeds)); then
  "$build/tests/fuzz/fuzz_make_seeds" "$root/tests/fuzz/corpus"
  exit 0
fi

# Exact-size allocations, so ASan sees an overrun of any tensor (docs/memory.md).
export LEANGRAD_ALLOC_CONF=caching:0
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
common=(-timeout=30 -rss_limit_mb=4096 -print_final_stats=1)
mkdir -p "$build/logs"

# Runs the target's seed corpus and saved crashes once each.
replay() {
  local target="$1" bin="$build/tests/fuzz/$1" inputs=()
  if [ ! -x "$bin" ]; then
    echo "fuzz: $bin was not built: a new target goes into tools/sanitize.sh's asan targets too" \
      >"$build/logs/$target.replay.log"
    return 1
  fi
  inputs+=("$root/tests/fuzz/corpus/$target")
  mapfile -t crashes < <(find "$root/tests/fuzz/crashes/$target" -type f 2>/dev/null || true)
  "$bin" "${common[@]}" -runs=0 "${inputs[@]}" >"$build/logs/$target.replay.log" 2>&1 &&
    { ((${#crashes[@]} == 0)) || "$bin" "${common[@]}" "${crashes[@]}" \
        >>"$build/logs/$target.replay.log" 2>&1; }
}

# Fuzzes the target for $seconds, growing build-asan/corpus/<target> from the seeds.
fuzz() {
  local target="$1" bin="$build/tests/fuzz/$1" dict=()
  [ -f "$root/tests/fuzz/dict/$target.dict" ] && dict=(-dict="$root/tests/fuzz/dict/$target.dict")
  mkdir -p "$build/corpus/$target" "$build/crashes/$target"
  "$bin" "${common[@]}" "${dict[@]}" -max_total_time="$seconds" \
    -artifact_prefix="$build/crashes/$target/" "$build/corpus/$target" \
    "$root/tests/fuzz/corpus/$target" >"$build/logs/$target.log" 2>&1
}

summary() {
  local log="$1" execs secs
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  secs="$(sed -n 's/.*Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)"
  echo "${execs:-?} execs in ${secs:-?} s"
}

failed=0
for target in "${targets[@]}"; do
  mkdir -p "$root/tests/fuzz/corpus/$target"
  if replay "$target"; then
    echo "fuzz: $target: seed corpus and saved crashes replayed, no failure"
  else
    echo "fuzz: $target: FAILED replaying (build-asan/logs/$target.replay.log):" >&2
    tail -40 "$build/logs/$target.replay.log" >&2
    failed=1
  fi
done
((failed == 0)) || exit 1
((replay_only)) && exit 0

# Fuzz the targets, as many at a time as there are cores.
pids=()
for target in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= $(nproc))); do sleep 1; done
  fuzz "$target" &
  pids+=("$!")
done
for i in "${!targets[@]}"; do
  target="${targets[$i]}"
  if wait "${pids[$i]}"; then
    echo "fuzz: $target: $(summary "$build/logs/$target.log"), 0 crashes"
  else
    echo "fuzz: $target: FAILED after $(summary "$build/logs/$target.log"); the input is in" \
         "$build/crashes/$target/ (log: $build/logs/$target.log):" >&2
    tail -60 "$build/logs/$target.log" >&2
    failed=1
  fi
done
exit "$failed"
