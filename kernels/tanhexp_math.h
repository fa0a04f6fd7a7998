// The math of TanhExp (Liu & Di, 2020), f(x) = x * tanh(e^x), shared by the CPU loop
// (kernels/cpu/tanhexp.cpp) and the CUDA kernel (kernels/cuda/tanhexp.cu): both call these
// LG_HOST_DEVICE functions, so the CPU tests check the formulas the GPU runs.
//
// Note [Stable TanhExp]
//   With u = e^x:  f(x) = x tanh(u),
//                  f'(x) = tanh(u) + x u sech^2(u)  (= tanh(u) - x u (tanh^2(u) - 1)).
//   - e^x overflows float for x > ~88.7 (double: ~709.8); the composed formula then computes
//     x * inf * 0 = NaN in the gradient. But tanh(u) is 1 to double precision once u > 19.1, that
//     is x > 2.95: the exponent is clamped at kTanhExpMaxExponent = 20, so u stays finite
//     (4.85e8) and changes nothing: f = x exactly and f' = 1 beyond the clamp, as in the limit.
//   - Both tanh and sech^2 come from one exponential, t = e^{-2u} in (0, 1] (u >= 0):
//       r = 1 / (1 + t),   tanh(u) = (1 - t) r,   sech^2(u) = 4 t r^2,
//     which costs one exp and one division where tanh(u) and a separate sech^2 cost two of
//     each; no overflow, and sech^2 has no cancellation (for large u, t underflows to 0: the
//     right limit).
//   - 1 - t cancels when u is small (x very negative: tanh(u) ~ u). In float, below u = 1/2 it
//     is computed as its Taylor series in v = 2u, v (1 - v/2 (1 - v/3 (... (1 - v/11)))), whose
//     first omitted term is below 2^-24 relative; from u = 1/2 on, 1 - t >= 1 - 1/e and the
//     subtraction loses less than one bit. Both are computed and one selected: no divergence
//     on the GPU. In double it is -expm1(-2u).
//   - For very negative x, u underflows to 0: f = x * 0 = -0 and f' = 0 + x * 0 * 1 = 0, finite.
//   Every finite input thus gives a finite f and f' (NaN propagates; +-inf are not special-cased).
//   Accuracy (tests/kernels/test_tanhexp.cpp, every 97th float32 above -87): within 5 ulps of
//   a double-precision reference for f, and for f' within 5 ulps of |tanh(u)| + |x u sech^2(u)|
//   (f' crosses 0 near x = -1.08, where a relative bound means nothing); the former
//   tanhf-based formulas were within 4. Float16/BFloat16 are computed in float (opmath_t) and
//   rounded once.
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

// tanh(u) and sech^2(u) for u >= 0 from one exponential (Note [Stable TanhExp]).
template <typename M>
struct TanhSech2 {
  M tanh;
  M sech2;
};

template <typename M>
LG_HOST_DEVICE LG_INLINE TanhSech2<M> tanh_sech2_nonnegative(M u) {
  const M t = std::exp(M(-2) * u);  // in (0, 1]
  const M r = M(1) / (M(1) + t);
  const M v = M(2) * u;
  M one_minus_t;
  if constexpr (sizeof(M) == sizeof(double)) {
    one_minus_t = -std::expm1(-v);  // double: the library's expm1 (11 Taylor terms are not enough)
  } else {
    // 1 - e^{-v} for v = 2u < 1: the Taylor series, nested (the factors are 1/k, k = 11 .. 2).
    M p = M(1) - v * M(1.0 / 11);
    p = M(1) - v * M(1.0 / 10) * p;
    p = M(1) - v * M(1.0 / 9) * p;
    p = M(1) - v * M(1.0 / 8) * p;
    p = M(1) - v * M(1.0 / 7) * p;
    p = M(1) - v * M(1.0 / 6) * p;
    p = M(1) - v * M(1.0 / 5) * p;
    p = M(1) - v * M(1.0 / 4) * p;
    p = M(1) - v * M(1.0 / 3) * p;
    p = M(1) - v * M(1.0 / 2) * p;
    one_minus_t = u < M(0.5) ? v * p : M(1) - t;
  }
  return {one_minus_t * r, M(4) * t * r * r};
}

// f(x) = x tanh(e^x), in the math type M (float or double).
template <typename M>
LG_HOST_DEVICE LG_INLINE M tanhexp_forward_math(M x) {
  return x * tanh_sech2_nonnegative(tanhexp_clamped_exp(x)).tanh;
}

// f'(x) = tanh(u) + x u sech^2(u), u = e^x.
template <typename M>
LG_HOST_DEVICE LG_INLINE M tanhexp_derivative_math(M x) {
  const M u = tanhexp_clamped_exp(x);
  const TanhSech2<M> ts = tanh_sech2_nonnegative(u);
  // x * (u sech^2(u)), not (x u) sech^2(u): x u overflows for x > ~1e29 (float) while
  // u sech^2(u) is already 0 there, and inf * 0 would be NaN.
  return ts.tanh + x * (u * ts.sech2);
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
