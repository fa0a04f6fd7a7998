// The math of TanhExp (Liu & Di, 2020), f(x) = x * tanh(e^x), shared by the CPU loop
// (kernels/cpu/tanhexp.cpp) and the CUDA kernel (kernels/cuda/tanhexp.cu): both call these
// LG_HOST_DEVICE functions, so the CPU tests check the formulas the GPU runs (STYLE.md habit 2).
//
// Note [Stable TanhExp]
//   With u = e^x:  f(x) = x tanh(u),
//                  f'(x) = tanh(u) + x u sech^2(u)  (= tanh(u) - x u (tanh^2(u) - 1)).
//   - e^x overflows float for x > ~88.7 (double: ~709.8); the composed formula then computes
//     x * inf * 0 = NaN in the gradient. But tanh(u) is 1 to double precision once u > 19.1, that
//     is x > 2.95: the exponent is clamped at kTanhExpMaxExponent = 20, so u stays finite
//     (4.85e8) and changes nothing: f = x exactly and f' = 1 beyond the clamp, as in the limit.
//   - 1 - tanh^2(u) cancels catastrophically for large u. It is computed as
//     sech^2(u) = 4 e^{-2u} / (1 + e^{-2u})^2, where e^{-2u} is in (0, 1] because u >= 0: no
//     overflow and no cancellation; for large u it underflows to 0, the right limit.
//   - For very negative x, u underflows to 0: f = x * 0 = -0 and f' = 0 + x * 0 * 1 = 0, finite.
//   Every finite input thus gives a finite f and f' (NaN propagates; +-inf are not special-cased).
//   Float16/BFloat16 are computed in float (opmath_t) and rounded once.
#pragma once

#include <cmath>

#include "core/dtype.h"
#include "core/macros.h"

namespace leangrad::kernels {

// Beyond this exponent tanh(e^x) == 1 in double and float (see Note [Stable TanhExp]).
inline constexpr double kTanhExpMaxExponent = 20.0;

// u = e^min(x, 20); NaN stays NaN through x in the callers (NaN < 20 is false: u = e^20).
template <typename M>
LG_HOST_DEVICE LG_INLINE M tanhexp_clamped_exp(M x) {
  const M max_exponent = static_cast<M>(kTanhExpMaxExponent);
  return std::exp(x < max_exponent ? x : max_exponent);
}

// sech^2(u) = 1 - tanh^2(u) for u >= 0, without cancellation.
template <typename M>
LG_HOST_DEVICE LG_INLINE M sech_squared_nonnegative(M u) {
  const M t = std::exp(M(-2) * u);  // in (0, 1]
  const M one_plus_t = M(1) + t;
  return M(4) * t / (one_plus_t * one_plus_t);
}

// f(x) = x tanh(e^x), in the math type M (float or double).
template <typename M>
LG_HOST_DEVICE LG_INLINE M tanhexp_forward_math(M x) {
  return x * std::tanh(tanhexp_clamped_exp(x));
}

// f'(x) = tanh(u) + x u sech^2(u), u = e^x.
template <typename M>
LG_HOST_DEVICE LG_INLINE M tanhexp_derivative_math(M x) {
  const M u = tanhexp_clamped_exp(x);
  // x * (u sech^2(u)), not (x u) sech^2(u): x u overflows for x > ~1e29 (float) while
  // u sech^2(u) is already 0 there, and inf * 0 would be NaN.
  return std::tanh(u) + x * (u * sech_squared_nonnegative(u));
}

// What a kernel calls for one element of T (float, double, Half, BFloat16).
template <typename T>
LG_HOST_DEVICE LG_INLINE T tanhexp_forward_element(T x) {
  return static_cast<T>(tanhexp_forward_math(static_cast<opmath_t<T>>(x)));
}

// dx = dy * f'(x).
template <typename T>
LG_HOST_DEVICE LG_INLINE T tanhexp_backward_element(T dy, T x) {
  using M = opmath_t<T>;
  return static_cast<T>(static_cast<M>(dy) * tanhexp_derivative_math(static_cast<M>(x)));
}

}  // namespace leangrad::kernels
