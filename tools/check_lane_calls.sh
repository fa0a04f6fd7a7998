#!/usr/bin/env bash
# The lane loops of the range-limited elementwise ops (fill_range_limited and the *_lanes
# functions of kernels/cpu/elementwise_range_limited.cpp, Note [Range-limited elementwise ops] and
# Note [Incomplete gamma in lanes]) must hold no call: a call per element keeps GCC's loop scalar, and nothing else shows it but a slower op
# (Ai ran 2.5 times slower, ndtri 5 times, each time because GCC had left a piece of its forms out
# of line). The test suite runs this on the compiled object of an optimised GCC build (ctest -R
# lane_calls); it lists each call it finds with the function that makes it.
#   tools/check_lane_calls.sh OBJECT_FILE...   (the one named elementwise_range_limited.cpp.o)
set -euo pipefail
object=""
for file in "$@"; do
  [[ $file == */elementwise_range_limited.cpp.o ]] && object=$file
done
[[ -n $object ]] || { echo "check_lane_calls.sh: no elementwise_range_limited.cpp.o among the arguments" >&2; exit 2; }
objdump -d --no-show-raw-insn -C "$object" | awk '
  /^[0-9a-f]+ <.*>:$/ { in_loop = ($0 ~ /(fill_range_limited<|[a-z_]+_lanes[<(])/); if (in_loop) ++loops; name = $0; next }
  in_loop && /\tcall/ { print "a call in " name "\n   " $0; ++calls }
  END {
    if (loops == 0) { print "no lane loop in the object"; exit 1 }
    if (calls > 0) { print calls " calls in " loops " lane loops"; exit 1 }
    print loops " lane loops, no calls"
  }'
