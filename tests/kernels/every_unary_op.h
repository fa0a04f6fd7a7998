// Every UnaryOp of kernels/ops.h, in its order: the list the kernel tests cross with the dtypes
// (test_elementwise.cpp against references of their own, test_elementwise_float16.cpp against the
// element function, every float16 value), one list so that a new op reaches both.
#pragma once

#include <array>
#include <cstddef>

#include <leangrad/kernels/ops.h>

namespace leangrad::test {

inline constexpr std::array kEveryUnaryOp = {UnaryOp::Neg,
                                             UnaryOp::Abs,
                                             UnaryOp::Exp,
                                             UnaryOp::Log,
                                             UnaryOp::Sqrt,
                                             UnaryOp::Tanh,
                                             UnaryOp::Sigmoid,
                                             UnaryOp::Relu,
                                             UnaryOp::Erf,
                                             UnaryOp::Expm1,
                                             UnaryOp::Log1p,
                                             UnaryOp::Sin,
                                             UnaryOp::Cos,
                                             UnaryOp::Rsqrt,
                                             UnaryOp::Reciprocal,
                                             UnaryOp::Sign,
                                             UnaryOp::Floor,
                                             UnaryOp::Ceil,
                                             UnaryOp::Round,
                                             UnaryOp::Trunc,
                                             UnaryOp::Log2,
                                             UnaryOp::Log10,
                                             UnaryOp::Tan,
                                             UnaryOp::Asin,
                                             UnaryOp::Acos,
                                             UnaryOp::Atan,
                                             UnaryOp::Sinh,
                                             UnaryOp::Cosh,
                                             UnaryOp::Asinh,
                                             UnaryOp::Acosh,
                                             UnaryOp::Atanh,
                                             UnaryOp::Exp2,
                                             UnaryOp::Lgamma,
                                             UnaryOp::Digamma,
                                             UnaryOp::Erfinv,
                                             UnaryOp::Erfc,
                                             UnaryOp::Erfcx,
                                             UnaryOp::Sinc,
                                             UnaryOp::I0,
                                             UnaryOp::I0e,
                                             UnaryOp::I1,
                                             UnaryOp::I1e,
                                             UnaryOp::Ndtri,
                                             UnaryOp::BesselJ0,
                                             UnaryOp::BesselJ1,
                                             UnaryOp::BesselY0,
                                             UnaryOp::BesselY1,
                                             UnaryOp::BesselK0,
                                             UnaryOp::BesselK1,
                                             UnaryOp::BesselK0e,
                                             UnaryOp::BesselK1e,
                                             UnaryOp::SphericalBesselJ0,
                                             UnaryOp::FrexpMantissa,
                                             UnaryOp::FrexpExponent,
                                             UnaryOp::AiryAi,
                                             UnaryOp::AiryAiPrime};
// Holes or repeats break the count; an op added past the last one needs adding here (the enum
// has no end marker to compare with).
static_assert(static_cast<std::size_t>(kEveryUnaryOp.back()) + 1 == kEveryUnaryOp.size(),
              "kEveryUnaryOp lists each UnaryOp once, in the enum's order");

}  // namespace leangrad::test
