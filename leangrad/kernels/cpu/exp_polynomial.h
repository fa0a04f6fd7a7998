// e^x for float as straight-line code the compiler runs in SIMD lanes (no table, no branch, no
// libm call), for the CPU's vectorised kernels (TanhExp, softmax, fused attention) and the host's
// elementwise exp and sigmoid of float (Note [Polynomial exp on the CPU] in
// kernels/elementwise_math.h); and PolynomialExpMath, which plugs it into the shared formulas of
// kernels/tanhexp_math.h.
//
// Note [Polynomial exp]
//   - e^x = 2^n e^r with n = round(x / ln 2) and r = x - n ln 2 in [-ln2/2, ln2/2]. n comes from
//     one fused multiply-add with 1.5 * 2^23 (the sum rounds x log2(e) to an integer, which then
//     sits in the low bits of the float: no float -> int conversion, so nothing undefined for
//     any input). r is reduced in two steps (Cody & Waite): ln 2 = C1 + C2 with C1 = 0.693359375
//     (9 bits, so n C1 is exact and x - n C1 too), the second step one fused multiply-add.
//   - e^r = 1 + r + r^2 P(r), P the degree-5 polynomial of Cephes' expf (S. Moshier), in
//     Horner's form with fused multiply-adds.
//   - 2^n is applied as 2^a 2^b, a = floor(n / 2), b = n - a: both are normal floats for every
//     n in [-150, 128], so results down to the smallest subnormal round once and overflow gives
//     +inf. x is clamped to 89 first (e^89 rounds to +inf); NaN returns NaN.
//   - Below -104, e^x rounds to +0. Those lanes compute e^0 and a select returns 0: were they
//     computed at -104, the last multiply would round to 0 through a subnormal, and on x86 a
//     multiply whose result is subnormal (or underflows to 0) takes a microcode assist, tens to a
//     hundred cycles. A vector with one such lane pays it: on a Zen 5 core, exp over inputs in
//     [-120, -110] ran 3 times slower than over [-2, 2], and so did TanhExp above x = 3.95, whose
//     t = e^(-2 e^x) is taken of arguments down to -9.7e8 (kernels/tanhexp_math.h); softmax and
//     sigmoid over wide inputs the same
//     (bench/results/2026-12-06-cpu-subnormal-cliffs-zen5-2core.md). Results that are themselves
//     subnormal (x in [-104, -87.34]) still take it: they are the right answer.
//   - Accuracy: within 1.02 ulps of e^x (computed in double) for every float x in [-104, 88.72],
//     the range with a finite non-zero result, all 2,239,852,710 of them checked once (worst:
//     1.0103 ulps at x = -5.877); tests/kernels/test_tanhexp_vectorized.cpp checks every 97th.
//     That bound holds on every machine: each step is an IEEE 754 operation (fused multiply-add,
//     multiply, add, compare, select, integer and bit operations), rounded the same way in any
//     vector width and in scalar code. Its fused multiply-adds are written as std::fma and no
//     other multiply feeds an add, so FMA contraction (clang's default, GCC's outside ISO mode)
//     has nothing to fuse: the header gives the same bits under any -ffp-contract. The
//     vectorised kernels' files are compiled with -ffp-contract=off all the same, for their own
//     formulas (CMakeLists.txt).
//   - glibc's expf is within 0.5 ulps but is a call per element, which keeps a loop scalar; this
//     is about 25 vector instructions (7 fused multiply-adds) per 8 floats (AVX2) or 16 (AVX-512).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace leangrad::kernels::cpu {

// Within 1.02 ulps of e^x for every float x (Note [Polynomial exp]).
inline constexpr double kExpPolynomialMaxUlps = 1.02;

namespace exp_detail {

// ln 2 = kLn2Hi + kLn2Lo; kLn2Hi has 9 significant bits, so n kLn2Hi is exact for |n| < 2^15.
inline constexpr float kLn2Hi = 0.693359375f;
inline constexpr float kLn2Lo = -2.12194440e-4f;

// x = n ln 2 + r with n = round(x / ln 2) and |r| <= ln(2)/2 (Note [Polynomial exp]), for x
// within [-150 ln 2, 128 ln 2]: n as an integer, r reduced in two steps.
struct Ln2Reduction {
  std::int32_t n_int;
  float r;
};

[[gnu::always_inline]] inline Ln2Reduction reduce_by_ln2(float x) {
  constexpr float kShifter = 0x1.8p23f;  // 1.5 * 2^23: adding it rounds to an integer
  const float shifted = std::fma(x, 1.44269504088896341f, kShifter);
  const float n = shifted - kShifter;  // exact
  const std::int32_t n_int =
      std::bit_cast<std::int32_t>(shifted) - std::bit_cast<std::int32_t>(kShifter);
  const float r = std::fma(n, -kLn2Hi, x);  // exact
  return {n_int, std::fma(n, -kLn2Lo, r)};
}

// 2^n for n in [-126, 127], from its bits.
[[gnu::always_inline]] inline float pow2(std::int32_t n) {
  return std::bit_cast<float>((n + 127) << 23);
}

}  // namespace exp_detail

[[gnu::always_inline]] inline float exp_polynomial(float x) {
  using namespace exp_detail;
  // Below -104 (and for NaN) the lanes compute e^0, and the result is chosen at the end: computed
  // at -104, the last multiply would round to 0 through a subnormal (Note [Polynomial exp]).
  const bool in_range = x >= -104.0f;  // false for NaN
  const float low_clamped = in_range ? x : 0.0f;
  const float xc = low_clamped < 89.0f ? low_clamped : 89.0f;
  const auto [n_int, r] = reduce_by_ln2(xc);
  float p = 1.9875691500e-4f;
  p = std::fma(p, r, 1.3981999507e-3f);
  p = std::fma(p, r, 8.3334519073e-3f);
  p = std::fma(p, r, 4.1665795894e-2f);
  p = std::fma(p, r, 1.6666665459e-1f);
  p = std::fma(p, r, 5.0000001201e-1f);
  const float e_r = std::fma(p, r * r, r) + 1.0f;
  const std::int32_t a = n_int >> 1;  // floor(n / 2)
  const float scaled = e_r * pow2(a) * pow2(n_int - a);
  const float below_range = x < 0.0f ? 0.0f : x;  // +0 below -104 (e^-104 rounds to 0), NaN: NaN
  return in_range ? scaled : below_range;
}

// The Math of kernels/tanhexp_math.h for float on the CPU's vectorised path: the polynomial exp
// and a true division (IEEE: the same in every lane).
struct PolynomialExpMath {
  static float exp(float x) { return exp_polynomial(x); }
  static float reciprocal(float d) { return 1.0f / d; }
};

}  // namespace leangrad::kernels::cpu
