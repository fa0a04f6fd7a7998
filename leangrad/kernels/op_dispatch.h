// The op chosen at runtime as a template argument: with_op(op, f) calls
// f.template operator()<op>() for the elementwise families' op enums (BinaryOp, UnaryOp,
// CompareOp in kernels/ops.h), so each op's element function is compiled on its own. The CPU
// launchers (kernels/cpu/elementwise*.cpp) and the CUDA ones (kernels/cuda/elementwise*.cu) share
// it, as they share the element functions (kernels/elementwise_math.h); the activations have
// their own in elementwise_math.h, where each kind also picks its element's parameters.
#pragma once

#include <utility>

#include <leangrad/core/error.h>
#include <leangrad/kernels/ops.h>

namespace leangrad::kernels {

// The number of enumerators of an op enum, numbered from 0 without gaps (ops.h gives each
// enum's last).
template <typename Op>
inline constexpr int kOpCount = 0;
template <>
inline constexpr int kOpCount<BinaryOp> = static_cast<int>(kLastBinaryOp) + 1;
template <>
inline constexpr int kOpCount<UnaryOp> = static_cast<int>(kLastUnaryOp) + 1;
template <>
inline constexpr int kOpCount<CompareOp> = static_cast<int>(kLastCompareOp) + 1;

// f.template operator()<op>(), op turned from a value into a constant by comparing it with each
// enumerator in turn (GCC and Clang make of the chain the jump table a switch would be).
template <typename Op, typename F>
void with_op(Op op, F&& f) {
  static_assert(kOpCount<Op> > 0, "with_op: not an elementwise op enum");
  const bool known = [&]<int... kIndex>(std::integer_sequence<int, kIndex...>) {
    return ((static_cast<int>(op) == kIndex &&
             (f.template operator()<static_cast<Op>(kIndex)>(), true)) ||
            ...);
  }
  (std::make_integer_sequence<int, kOpCount<Op>>{});
  LG_CHECK(known, op_name(op), " (", static_cast<int>(op), "): not an op the kernels know");
}

}  // namespace leangrad::kernels
