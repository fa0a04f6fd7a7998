// The math of TanhExp (Liu & Di, 2020), f(x) = x * tanh(e^x), shared by the CPU reference loop
// (kernels/cpu/tanhexp.cpp), the CPU's vectorised kernel (kernels/cpu/tanhexp_vectorized.cpp) and
// the CUDA kernel (kernels/cuda/tanhexp.cu): all call these LG_HOST_DEVICE functions, so the CPU
// tests check the formulas the GPU runs.
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
//     is computed as its Taylor series in v = 2u, v (1 - v/2! + v^2/3! - ... - v^10/11!) (Horner's
//     form: one fused multiply-add per term), whose first omitted term is below 2^-24 relative;
//     from u = 1/2 on, 1 - t >= 1 - 1/e and the subtraction loses less than one bit. Both are
//     computed and one selected: no divergence on the GPU. In double it is -expm1(-2u).
//   - For very negative x, u underflows to 0: f = x * 0 = -0 and f' = 0 + x * 0 * 1 = 0, finite.
//   - Float16/BFloat16 are computed in float and rounded once. On the GPU they use the hardware's
//     approximate exp and division (exp_of, reciprocal_of): within ~25 ulps of float for the
//     clamped range, 10^-6 relative, which a 16-bit result (2^-9 or 2^-12) never shows except in
//     the rare rounding tie it moves by one 16-bit ulp; the exact functions would cost more
//     instructions per element than HBM allows at 2 bytes an element (docs/kernels.md).
//   - The CPU's vectorised kernel (kernels/cpu/tanhexp_vectorized.cpp) runs these formulas with
//     PolynomialExpMath: a polynomial exp within 1.02 ulps that SIMD lanes compute in place of
//     libm's expf (Note [Vectorised TanhExp] derives its bounds: f within 9.08 ulps, f' within
//     11.12; measured 3.84 and 4.58).
//   Every finite input thus gives a finite f and f' (NaN propagates; +-inf are not special-cased).
//   Accuracy (tests/kernels/test_tanhexp.cpp, every 97th float32 above -87): within 5 ulps of
//   a double-precision reference for f, and for f' within 5 ulps of |tanh(u)| + |x u sech^2(u)|
//   (f' crosses 0 near x = -1.08, where a relative bound means nothing); the former
//   tanhf-based formulas were within 4.
#pragma once

#include <cmath>

#include <leangrad/core/dtype.h>
#include <leangrad/core/macros.h>

namespace leangrad::kernels {

// Beyond this exponent tanh(e^x) == 1 in double and float (see Note [Stable TanhExp]).
inline constexpr double kTanhExpMaxExponent = 20.0;

// e^x and 1 / d in M. With kApproximate, device code uses the hardware's approximations
// (__expf: an FMUL and an EX2, within 2 + 1.16 |x| ulps of float; __fdividef: within 2 ulps),
// a quarter of the instructions of the accurate functions: the 16-bit dtypes use them, whose
// results are rounded to 8 or 11 bits anyway (Note [Stable TanhExp]). Host code always computes
// the accurate functions: the CPU reference is the formula itself.
template <bool kApproximate, typename M>
LG_HOST_DEVICE LG_INLINE M exp_of(M x) {
#if defined(__CUDA_ARCH__)
  if constexpr (kApproximate && sizeof(M) == sizeof(float)) return __expf(x);
#endif
  return std::exp(x);
}

template <bool kApproximate, typename M>
LG_HOST_DEVICE LG_INLINE M reciprocal_of(M d) {
#if defined(__CUDA_ARCH__)
  if constexpr (kApproximate && sizeof(M) == sizeof(float)) return __fdividef(1.0f, d);
#endif
  return M(1) / d;
}

// The exp and 1 / d the formulas below are computed with: LibraryMath (exp_of and reciprocal_of
// above: the library's functions, and on the GPU with kApproximate the hardware's
// approximations), or on the CPU's vectorised path PolynomialExpMath (kernels/cpu/exp_polynomial.h,
// an exp the compiler runs in SIMD lanes). The formulas are the same for both.
template <bool kApproximate>
struct LibraryMath {
  template <typename M>
  LG_HOST_DEVICE static LG_INLINE M exp(M x) {
    return exp_of<kApproximate>(x);
  }
  template <typename M>
  LG_HOST_DEVICE static LG_INLINE M reciprocal(M d) {
    return reciprocal_of<kApproximate>(d);
  }
};

// u = e^min(x, 20); NaN stays NaN through x in the callers (NaN < 20 is false: u = e^20).
template <typename M, typename Math = LibraryMath<false>>
LG_HOST_DEVICE LG_INLINE M tanhexp_clamped_exp(M x) {
  const M max_exponent = static_cast<M>(kTanhExpMaxExponent);
  return Math::exp(x < max_exponent ? x : max_exponent);
}

// tanh(u) and sech^2(u) for u >= 0 from one exponential (Note [Stable TanhExp]).
template <typename M>
struct TanhSech2 {
  M tanh;
  M sech2;
};

template <typename M, typename Math = LibraryMath<false>>
LG_HOST_DEVICE LG_INLINE TanhSech2<M> tanh_sech2_nonnegative(M u) {
  const M t = Math::exp(M(-2) * u);  // in (0, 1]
  const M r = Math::reciprocal(M(1) + t);
  const M v = M(2) * u;
  M one_minus_t;
  if constexpr (sizeof(M) == sizeof(double)) {
    one_minus_t = -std::expm1(-v);  // double: the library's expm1 (11 Taylor terms are not enough)
  } else {
    // 1 - e^{-v} for v = 2u < 1: v (1 - v/2! + v^2/3! - ... - v^10/11!), in Horner's form
    // (one fused multiply-add per term).
    // std::fma, not p * v + c: the CPU's TanhExp files are compiled with -ffp-contract=off, and
    // there a written-out product and sum would round twice (nvcc contracts them anyway).
    M p = M(-1.0 / 39916800);
    p = std::fma(p, v, M(1.0 / 3628800));
    p = std::fma(p, v, M(-1.0 / 362880));
    p = std::fma(p, v, M(1.0 / 40320));
    p = std::fma(p, v, M(-1.0 / 5040));
    p = std::fma(p, v, M(1.0 / 720));
    p = std::fma(p, v, M(-1.0 / 120));
    p = std::fma(p, v, M(1.0 / 24));
    p = std::fma(p, v, M(-1.0 / 6));
    p = std::fma(p, v, M(1.0 / 2));
    p = std::fma(-p, v, M(1));
    one_minus_t = u < M(0.5) ? v * p : M(1) - t;
  }
  return {one_minus_t * r, M(4) * t * r * r};
}

// f(x) = x tanh(e^x), in the math type M (float or double).
template <typename M, typename Math = LibraryMath<false>>
LG_HOST_DEVICE LG_INLINE M tanhexp_forward_math(M x) {
  const M u = tanhexp_clamped_exp<M, Math>(x);
  return x * tanh_sech2_nonnegative<M, Math>(u).tanh;
}

// f'(x) = tanh(u) + x u sech^2(u), u = e^x.
template <typename M, typename Math = LibraryMath<false>>
LG_HOST_DEVICE LG_INLINE M tanhexp_derivative_math(M x) {
  const M u = tanhexp_clamped_exp<M, Math>(x);
  const TanhSech2<M> ts = tanh_sech2_nonnegative<M, Math>(u);
  // x * (u sech^2(u)), not (x u) sech^2(u): x u overflows for x > ~1e29 (float) while
  // u sech^2(u) is already 0 there, and inf * 0 would be NaN.
  return ts.tanh + x * (u * ts.sech2);
}

// Whether elements of T take the approximate exp and division on the GPU: the 16-bit dtypes.
template <typename T>
inline constexpr bool kTanhExpApproximate = sizeof(T) == 2;

// What a kernel calls for one element of T (float, double, Half, BFloat16).
template <typename T>
LG_HOST_DEVICE LG_INLINE T tanhexp_forward_element(T x) {
  using M = opmath_t<T>;
  return static_cast<T>(
      tanhexp_forward_math<M, LibraryMath<kTanhExpApproximate<T>>>(static_cast<M>(x)));
}

// dx = dy * f'(x).
template <typename T>
LG_HOST_DEVICE LG_INLINE T tanhexp_backward_element(T dy, T x) {
  using M = opmath_t<T>;
  return static_cast<T>(
      static_cast<M>(dy) *
      tanhexp_derivative_math<M, LibraryMath<kTanhExpApproximate<T>>>(static_cast<M>(x)));
}

}  // namespace leangrad::kernels
