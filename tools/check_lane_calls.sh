#!/usr/bin/env bash
# Two checks on the compiled CPU elementwise kernels that nothing else shows but a slower op (Ai
# ran 2.5 times slower, ndtri 5 times, float atan2 lost its lanes, each time because GCC had left
# a piece of per-element math out of line, which keeps a loop scalar):
# - the lane loops of the range-limited ops (fill_range_limited and the *_lanes functions of
#   kernels/cpu/elementwise_range_limited.cpp, Note [Range-limited elementwise ops] and Note
#   [Incomplete gamma in lanes]) hold no call;
# - no elementwise object (kernels/cpu/elementwise*.cpp) defines a function of the per-element
#   math, which the loops must inline (LG_ALWAYS_INLINE, core/macros.h): binary_op_apply,
#   unary_op_apply, compare_op_apply, pow_scalar_apply, the *_element functions and the
#   activations' element structs of kernels/elementwise_math.h, and the *_polynomial forms of
#   kernels/cpu/float_polynomials.h. An out-of-line copy exists only where some loop calls it;
# - every AVX-512 copy of an elementwise loop (plain_run_avx512, Note [AVX-512 elementwise loops])
#   that makes no call is vectorised: it holds a ymm or zmm instruction. leaky_relu's had lost its
#   lanes to a functor taken by reference (kernels/cpu/elementwise_loops.h), 13 times slower.
#   cast's copies are left out: a float from a bool or a strided float16 is one conversion an
#   element, and the dense float16 ones go through F16C's loop (cast_half_dense).
# The test suite runs this on the compiled objects of an optimised GCC build (ctest -R
# lane_calls); it lists each call and each function it finds.
#   tools/check_lane_calls.sh OBJECT_FILE...   (the library's objects, elementwise*.cpp.o among them)
set -euo pipefail
object=""
elementwise=()
for file in "$@"; do
  [[ $file == */elementwise_range_limited.cpp.o ]] && object=$file
  [[ $file == */kernels/cpu/elementwise*.cpp.o ]] && elementwise+=("$file")
done
[[ -n $object ]] || { echo "check_lane_calls.sh: no elementwise_range_limited.cpp.o among the arguments" >&2; exit 2; }
status=0
objdump -d --no-show-raw-insn -C "$object" | awk '
  /^[0-9a-f]+ <.*>:$/ { in_loop = ($0 ~ /(fill_range_limited(_avx512)?<|[a-z_]+_lanes[<(])/); if (in_loop) ++loops; name = $0; next }
  in_loop && /\tcall/ { print "a call in " name "\n   " $0; ++calls }
  END {
    if (loops == 0) { print "no lane loop in the object"; exit 1 }
    if (calls > 0) { print calls " calls in " loops " lane loops"; exit 1 }
    print loops " lane loops, no calls"
  }' || status=1
math='^[^(]*leangrad::kernels::((cpu::)?[a-z0-9_]*(_op_apply|_element|_polynomial)|pow_scalar_apply|[A-Za-z]+Element<.*>::)'
out_of_line=$(for file in "${elementwise[@]}"; do
  objdump -t "$file" | awk '$0 ~ /[ \t]F[ \t]/ { print $NF }' | c++filt | grep -E "$math" |
    sed "s|^|  in ${file##*/}: |" || true
done)
scalar_copies=$(for file in "${elementwise[@]}"; do
  objdump -d --no-show-raw-insn -C "$file" | awk -v file="${file##*/}" '
    function check() {
      if (in_copy) { ++copies; if (calls == 0 && vector == 0) print "  in " file ": " substr(name, 1, 300) }
    }
    /^[0-9a-f]+ <.*>:$/ {
      check()
      in_copy = ($0 ~ /plain_run_avx512</ && $0 !~ /plain_run_avx512<leangrad::kernels::cpu::cast\(/)
      name = $0; calls = 0; vector = 0; next
    }
    in_copy && /\tcall/ { ++calls }
    in_copy && /%[yz]mm/ { ++vector }
    END { check(); print "copies " copies + 0 }'
done)
copies=$(sed -n 's/^copies //p' <<<"$scalar_copies" | awk '{ n += $1 } END { print n + 0 }')
scalar_copies=$(grep -v '^copies ' <<<"$scalar_copies" || true)
if [[ -n $scalar_copies ]]; then
  echo "AVX-512 copies of elementwise loops with no call and no ymm or zmm instruction (scalar):"
  echo "$scalar_copies"
  status=1
elif ((copies == 0)); then
  echo "no AVX-512 copies of the elementwise loops in this build (not x86-64, or not GCC)"
else
  echo "$copies AVX-512 copies of elementwise loops (cast's left out), each vectorised or calling"
fi
if [[ -n $out_of_line ]]; then
  echo "per-element math out of line:"
  echo "$out_of_line"
  status=1
else
  echo "${#elementwise[@]} elementwise objects, no per-element math out of line"
fi
exit $status
