// The elementwise ops that compute in SIMD lanes over part of their domain (Note
// [Range-limited elementwise ops] in kernels/cpu/elementwise_range_limited.cpp): sin, cos and tan
// of float and the special functions, and the regularized incomplete gamma functions. Their loops
// are compiled in a file of their own so that their forms, long straight-line code that must be
// inlined into the loop to run in lanes, do not share GCC's inlining budget for a translation unit
// with the rest of the elementwise ops: when elementwise.cpp held both, Ai's forms went out of line
// and its loop stayed scalar.
#pragma once

#include <type_traits>

#include <leangrad/core/dtype.h>
#include <leangrad/kernels/elementwise_geometry.h>
#include <leangrad/kernels/ops.h>

namespace leangrad::kernels::cpu {

// The range-limited ops: sin, cos and tan, then the special functions.
inline constexpr UnaryOp kRangeLimitedOps[] = {
    UnaryOp::Sin,         UnaryOp::Cos,       UnaryOp::Tan,       UnaryOp::BesselJ0,
    UnaryOp::BesselJ1,    UnaryOp::BesselY0,  UnaryOp::BesselY1,  UnaryOp::I0,
    UnaryOp::I1,          UnaryOp::I0e,       UnaryOp::I1e,       UnaryOp::BesselK0,
    UnaryOp::BesselK1,    UnaryOp::BesselK0e, UnaryOp::BesselK1e, UnaryOp::AiryAi,
    UnaryOp::AiryAiPrime, UnaryOp::Ndtri,     UnaryOp::Lgamma,    UnaryOp::Digamma};

// Whether kOp is a range-limited op for operands of type T: sin, cos and tan of float, float16
// and bfloat16 (their polynomials are accurate to a float's precision, Note [Float polynomials]);
// the special functions of every floating dtype.
template <UnaryOp kOp, typename T>
constexpr bool is_range_limited() {
  if constexpr (kOp == UnaryOp::Sin || kOp == UnaryOp::Cos || kOp == UnaryOp::Tan) {
    return !std::is_same_v<T, double>;
  } else {
    for (const UnaryOp op : kRangeLimitedOps)
      if (op == kOp) return true;
    return false;
  }
}

// out = op(in) for a unary op and dtype with is_range_limited (an internal error otherwise).
void range_limited_unary(UnaryOp op, DType dtype, const ElementwiseGeometry& g, void* out,
                         const void* in);

// out = P(a, x) (lower: igamma) or Q(a, x) (igammac), for a floating dtype (Note [Incomplete
// gamma in lanes] in kernels/cpu/elementwise_range_limited.cpp).
void incomplete_gamma(DType dtype, bool lower, const ElementwiseGeometry& g, void* out,
                      const void* a, const void* x);

// out = zeta(2, q), polygamma(1, q), digamma's gradient, for a floating dtype.
void zeta_of_two(DType dtype, const ElementwiseGeometry& g, void* out, const void* q);

}  // namespace leangrad::kernels::cpu
