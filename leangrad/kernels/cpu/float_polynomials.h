// e^x - 1, tanh, log, log2, log10, log(1 + x), erf, erfc, sinh, cosh, asinh, acosh, atanh, sin,
// cos, tan, asin, acos, atan, atan2, hypot, and
// GELU with its derivative, of float as straight-line code the compiler runs in SIMD lanes,
// beside exp_polynomial.h's e^x: the host's elementwise ops and activations of float (so of
// float16 and bfloat16, computed in float) take them (Note [Polynomial exp on the CPU] in
// kernels/elementwise_math.h), where a C library call per element kept each loop scalar.
//
// Note [Float polynomials]
//   - Each reduces its argument with exact or fused operations, evaluates a polynomial fitted by
//     tools/fit_polynomials.py (near-minimax in relative error; the coefficients are its output,
//     rounded to float) in Horner's form with fused multiply-adds, and puts the result together;
//     the branches of a function are all computed and one is chosen by a select, so a vector of
//     inputs takes one path. Special values (NaN, +-inf, +-0, the domain's ends) are selects too.
//     Conditions are combined with & rather than && and Horner's rule is one expression rather
//     than a loop: a short-circuit, or a loop the vectoriser meets before it is unrolled, left
//     the caller's loop scalar (GCC 12's -fopt-info-vec: "control flow in loop").
//   - expm1: n = round(x / ln 2), r = x - n ln 2 (Cody & Waite, as exp_polynomial), e^r - 1 =
//     r + r^2/2 + r^3 P(r); then e^x - 1 = 2^n (e^r - 1) + (2^n - 1) in one fused multiply-add,
//     2^n - 1 exact for n <= 24. Above (x > 16.6), e^x - 1 rounds as e^x: (e^r - 1 + 1) 2^n.
//   - tanh: |x| < 0.625: x + x^3 P(x^2); above, 1 - q with q = 2 / (e^2|x| + 1) from
//     exp_polynomial, q's error reaching the result scaled by q / tanh(x) <= 0.8; the sign of x
//     restored.
//   - sinh: |x| < 1: x + x^3 P(x^2); below 88, (E + E / (E + 1)) / 2 with E = e^|x| - 1 from
//     expm1 (two positive terms); the sign of x restored. cosh: e^|x| / 2 + 1 / (2 e^|x|) below
//     88. Above 88 both are e^|x| / 2 (e^-|x| is far below an ulp), where e^|x| itself would
//     overflow before the result does: e^(|x| - 88) times e^88 / 2 held in two floats.
//   - log: x = 2^k m with m in [sqrt(1/2), sqrt(2)) from the bits (subnormals scaled by 2^23
//     first), f = m - 1 exact, log(1 + f) = f - f^2/2 + f^3 P(f), plus k ln 2 in two parts.
//   - log2, log10: log of double from kernels/cpu/double_polynomials.h (every float is a normal
//     double) times log2(e) or log10(e) in double, rounded to float once.
//   - log1p: u = 1 + x rounded, log1p(x) = log(u) + (x - (u - 1)) / u: the second term puts back
//     what the rounding of 1 + x lost (exact, as u - 1 and its difference from x are).
//   - erf: |x| < 1.25: x P(x^2); below 3.92, 1 - e^(-x^2) Q(|x| - 2.585), x^2 split exactly into
//     hi + lo with a fused multiply-add and e^(-x^2) = e^-hi (1 - lo); above, +-1 (erfc(3.92) is
//     below half a float ulp of 1).
//   - erfc: in double, rounded to float once: erfc(a) = e^(-a^2) t P(t) for a = |x|, t =
//     1 / (1 + a/2) (the substitution maps [0, 10.06] to [0.17, 1] and the tail's 1/a decay to a
//     polynomial's, as gelu's below; P of degree 10, within 5e-9 of the function), a^2 exact in
//     double, e^(-a^2) from kernels/cpu/double_polynomials.h; 2 - erfc(a) below 0, without
//     cancellation (at least 1). In float the same formula was within 4.9 ulps (t's rounding and
//     the exp's error compound near a = 1.1); in double the result is within 0.583 ulps, where
//     glibc's erfc of double, rounded, was one call per element. Beyond a = 10.06, erfc rounds to
//     0 (2 below -10.06) and those lanes compute at 0.
//   - gelu: x Phi(x) and its derivative Phi(x) + x phi(x), Phi the standard normal distribution
//     function and phi = e^(-x^2/2) / sqrt(2 pi) its density, from the upper tail Q = Phi(-|x|) =
//     e^(-x^2/2) t P(t), t = 1 / (1 + |x|/4): the substitution maps |x| in [0, 15] to t in
//     [0.21, 1] and turns the tail's 1/|x| decay into a polynomial's; 1 + |x|/4 is a float sum
//     whose rounding error is exact, and one Newton step takes it and the division's error out of
//     t; x^2/2 is split as erf's. Phi is Q below 0 and 1 - Q above, so the value keeps its relative
//     accuracy for negative x, where x/2 (1 + erf(x / sqrt 2)) (PyTorch's formula, and what this
//     code computed with erf_polynomial) cancels: 100 ulps at x = -3, no correct bit left below
//     -5.5. The derivative's phi is the tail's own e^(-x^2/2): one exp each way, where erf and
//     phi took two in the gradient. Beyond |x| = 15 the tail is taken at 15 (Q(15) ~ 4e-51 rounds
//     to 0 in either use); at -inf both are NaN, and at +inf the derivative is, as PyTorch's
//     (-inf times 0, inf times 0).
//   - asinh, acosh, atanh: glibc's forms over log1p and log above, each form computed and one
//     chosen: asinh log1p(a + a^2 / (1 + sqrt(1 + a^2))) below a = |x| = 2, log(2a + 1 / (sqrt(a^2
//     + 1) + a)) below 2^12, log(a) + ln 2 above; acosh log1p(t + sqrt(2t + t^2)), t = x - 1, below
//     2, log(2x - 1 / (x + sqrt(x^2 - 1))) below 2^12, log(x) + ln 2 above; atanh log1p(2a + 2a^2 /
//     (1 - a)) / 2 below 1/2, log1p(2a / (1 - a)) / 2 above. Within 1.78, 2.13 and 1.71 ulps,
//     where the C library's were one call per element (17, 12 and 17 ns on a Zen 5 core).
//   - sin, cos, tan: computed in double, then rounded to float once. x = n pi/2 + r, |r| <= pi/4,
//     n = round(x 2/pi) by adding 1.5 2^52 (its low bits are n mod 4), r = (x - n P1) - n P2 with
//     pi/2 = P1 + P2 to 2^-88: P1 has 33 bits, so n P1 is exact for |x| < kTrigPolynomialRange =
//     2^20 and so is x - n P1; sin r = r + r^3 S(r^2) and cos r = 1 + r^2 C(r^2) are Taylor's
//     series to r^13 and r^12 (1/15! r^15 and 1/14! r^14 are below 2^-40 of the value for
//     |r| <= pi/4; the coefficients 1/k! rounded to double), and n mod 4 picks +-sin r or +-cos r
//     (tan: sin r / cos r, or -cos r / sin r). Double makes the reduction safe where x is close to
//     a multiple of pi/2 (r then has few correct bits in float arithmetic) and leaves one rounding:
//     within 0.50001 ulps. From 2^20 on (and at +-inf, NaN) the *_polynomial functions take the C
//     library's sin of double, whose reduction is exact for any argument; the elementwise ops run a
//     chunk of their elements through the *_in_range forms, in SIMD lanes, when every element of
//     the chunk is below 2^20, and through the C library's where one is not (Note [Range-limited
//     elementwise ops] in kernels/cpu/elementwise_range_limited.cpp). sin and tan are odd and cos
//     even: each is computed at |x| and the sign put back, so -0 keeps its sign.
//   - asin, acos: |x| <= 1/2: asin(x) = x + x^3 P(x^2); above, asin(|x|) = pi/2 - 2 asin(s) with
//     s = sqrt((1 - |x|) / 2) in [0, 1/2] (1 - |x| exact, Sterbenz), the same P. There the
//     subtraction would double asin(s)'s error against a result as small as pi/6 (1.85 ulps):
//     so s's rounding error, (z - s^2) / 2s from a fused multiply-add, is carried beside it, and
//     pi/2 - 2s is taken with its own rounding error recovered (Fast2Sum, 2s <= pi/2), the small
//     terms added to that error first. acos is pi/2 - asin(x) below |x| = 1/2 (Fast2Sum again),
//     2 asin(s) above 1/2, and pi - 2 asin(s) below -1/2. NaN beyond [-1, 1] (the square
//     root of a negative z) and for NaN (through the first form).
//   - hypot: no polynomial: sqrt(x^2 + y^2) in double (hypot_of_float below), within
//     0.5 + 2^-28 ulps, as glibc's hypotf computes it, but in lanes.
//   - atan: |x| > 1 is pi/2 - atan(1/|x|) (pi/2 in two floats; pi/2 - atan(t) >= pi/4 is exact
//     in its first step, Sterbenz); atan(t) = t + t^3 P(t^2) on [0, 1]; the sign of x put back.
//     atan2(y, x): t = min(|x|, |y|) / max(|x|, |y|), p = atan(t), the angle of (|x|, |y|) p or
//     pi/2 - p (|y| > |x|), and of (-|x|, |y|) (x's sign bit set) pi/2 + p or pi - p, each a base
//     in two floats plus or minus p; the sign of y put back; t = 0 where both are zero
//     (atan2(+-0, +-0) is +-0 or +-pi, by x's sign) and 1 where both are infinite (+-pi/4,
//     +-3pi/4), as C's atan2.
//   - Accuracy: each function's bound below (kExpm1PolynomialMaxUlps ...) holds for every float
//     input against the function in double, all 2^32 of them checked once by
//     tests/kernels/test_float_polynomials.cpp's exhaustive mode; the test checks every 257th
//     float in CI. As for exp_polynomial (Note [Polynomial exp]), every step is an IEEE 754
//     operation and each multiply that feeds an add is written as std::fma, so the bits are the
//     same under any -ffp-contract, in any vector width and in scalar code.
//   - The fit rounds the coefficients to float one at a time, each later one fit again to make up
//     for the rounding of those before it; erf's constant term 2/sqrt(pi) is two floats.
//   - PyTorch's CPU kernels take these from SLEEF (within 1 ulp; erf is a polynomial of its own);
//     glibc's float functions are within 1 to 2 ulps but a call per element. atan2 has two
//     arguments, too many floats for every pair: its bound is the worst over a sample (in the
//     test's comment), and it shares atan's polynomial.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>

#include <leangrad/kernels/cpu/double_polynomials.h>
#include <leangrad/kernels/cpu/exp_polynomial.h>

namespace leangrad::kernels::cpu {

// The measured bounds: ulps of the exact result, the worst over every float input (Note [Float
// polynomials]), rounded up; the worst case's input beside each. Those of sin, cos, tan, atan and
// atan2 (session 43), log2 and log10 (session 45), asin, acos, erfc, asinh, acosh and atanh
// (session 69) were measured
// by a standalone program making the test's check over all 2^32 floats (and atan2's 10^8 pairs),
// not yet by the test's own every-float mode.
inline constexpr double kExpm1PolynomialMaxUlps = 1.40;   // 1.3999 at x = 17.04017
inline constexpr double kTanhPolynomialMaxUlps = 1.34;    // 1.3303 at x = -0.6283095
inline constexpr double kLogPolynomialMaxUlps = 0.87;     // 0.8623 at x = 0.6990557
inline constexpr double kLog2PolynomialMaxUlps = 0.501;   // 0.50000 at x = 0.3134363
inline constexpr double kLog10PolynomialMaxUlps = 0.501;  // 0.50000 at x = 1.53806442e+21
inline constexpr double kLog1pPolynomialMaxUlps = 0.94;   // 0.9317 at x = -0.2981905
inline constexpr double kErfPolynomialMaxUlps = 1.74;     // 1.7368 at x = -1.242962
inline constexpr double kSinhPolynomialMaxUlps = 1.47;    // 1.4695 at x = 89.40056
inline constexpr double kCoshPolynomialMaxUlps = 1.47;    // 1.4695 at x = 89.40056
inline constexpr double kGeluPolynomialMaxUlps = 5.53;    // 5.5287 at x = -1.834535
inline constexpr double kSinPolynomialMaxUlps = 0.51;     // 0.50001 at x = 527449.06
inline constexpr double kCosPolynomialMaxUlps = 0.51;     // 0.50001 at x = -58.906769
inline constexpr double kTanPolynomialMaxUlps = 0.51;     // 0.50001 at x = 10.202437
inline constexpr double kAtanPolynomialMaxUlps = 1.47;    // 1.4681 at x = -1.0022472
inline constexpr double kAsinPolynomialMaxUlps = 0.67;    // 0.6607 at x = 0.50021869
inline constexpr double kAcosPolynomialMaxUlps = 0.64;    // 0.6372 at x = 0.48154578
inline constexpr double kErfcPolynomialMaxUlps = 0.59;    // 0.5830 at x = 0.036526628
inline constexpr double kAsinhPolynomialMaxUlps = 1.78;   // 1.7781 at x = 0.51813507
inline constexpr double kAcoshPolynomialMaxUlps = 2.13;   // 2.1244 at x = 1.0305214
inline constexpr double kAtanhPolynomialMaxUlps = 1.71;   // 1.7015 at x = 0.12107606
// The worst over 10^8 pairs (the sample of tests/kernels/test_float_polynomials.cpp), not over
// every pair: 1.5020 at y = -0x1.235144p-13, x = 0x1.034786p-13.
inline constexpr double kAtan2PolynomialMaxUlps = 1.51;
// The derivative in ulps of its larger term, max(Phi(x), |x| phi(x)): where the two cancel (the
// derivative is 0 at x = -0.7518) no float formula is good to ulps of the result. Below x = -13.2,
// e^(-x^2/2) is a subnormal float, which the worst case's few extra ulps come from.
inline constexpr double kGeluGradientPolynomialMaxUlps = 7.25;  // 7.2495 at x = -13.29349

namespace polynomial_detail {

// c0 x^n + c1 x^(n-1) + ... + cn by Horner's rule in fused multiply-adds, as one expression, in
// float or in double (R, the type of x and of every coefficient). Everything here is always
// inlined: a call left in a loop keeps it scalar, and GCC stops inlining ordinary functions once
// a translation unit has grown as large as the elementwise kernels' (erf of float stayed a call
// there, and scalar).
template <typename R>
[[gnu::always_inline]] inline R horner(R, R c) {
  return c;
}
template <typename R, typename... Rest>
[[gnu::always_inline]] inline R horner(R x, R c, R next, Rest... rest) {
  return horner(x, std::fma(c, x, next), rest...);
}
// The same with the coefficients of a float array, highest degree first, in float or in double
// (R; the coefficients widened exactly).
template <typename R, std::size_t N, std::size_t... I>
[[gnu::always_inline]] inline R horner(R x, const float (&c)[N], std::index_sequence<I...>) {
  return horner(x, static_cast<R>(c[I])...);
}
template <typename R, std::size_t N>
[[gnu::always_inline]] inline R horner(R x, const float (&c)[N]) {
  return horner(x, c, std::make_index_sequence<N>{});
}

// tools/fit_polynomials.py's coefficients, highest degree first.
inline constexpr float kExpm1[] = {0.000199177f, 0.0013923427f, 0.008333233f, 0.041666582f,
                                   0.16666667f};
inline constexpr float kTanh[] = {0.002794105f,  -0.008845037f, 0.021945467f,
                                  -0.053984936f, 0.13333437f,   -0.33333334f};
inline constexpr float kSinh[] = {6.772328e-07f, 1.4558958e-06f, 0.00019922145f, 0.008333173f,
                                  0.16666667f};
inline constexpr float kLog1p[] = {0.070393145f,  -0.11511297f, 0.11674628f,
                                   -0.124205485f, 0.14249672f,  -0.16668046f,
                                   0.20000699f,   -0.24999994f, 0.3333333f};
inline constexpr float kErf[] = {7.235291e-07f, -1.2147986e-05f, 0.00011572195f, -0.00084981415f,
                                 0.005220894f,  -0.026865112f,   0.11283774f,    -0.37612638f};
inline constexpr float kErfc[] = {1.1142274e-06f, -4.6085797e-06f, 1.271308e-05f, -4.6837245e-05f,
                                  0.00017911528f, -0.00063602615f, 0.0021770226f, -0.0072128205f,
                                  0.023000142f,   -0.07027548f,    0.20466223f};

inline constexpr float kNormalTail[] = {0.017176941f, -0.066117994f, 0.059690535f, 0.017387863f,
                                        0.02221069f,  0.08136868f,   0.07390229f,  0.09508968f,
                                        0.099546336f, 0.09974499f};

// erfc(a) = e^(-a^2) t P(t), t = 1 / (1 + a/2), 0 <= a <= 10.5.
inline constexpr float kErfcTail[] = {0.036302265f,  -0.194206f,   0.3896631f,  -0.30192667f,
                                      -0.010218389f, 0.027994672f, 0.05801064f, 0.18472165f,
                                      0.24533242f,   0.28223714f,  0.28208917f};

// asin(s) = s + s^3 P(s^2), 0 <= s <= 1/2.
inline constexpr float kAsin[] = {0.038550355f, 0.014232814f, 0.0317077f,
                                  0.044548456f, 0.07500242f,  0.16666666f};

// atan(t) = t + t^3 P(t^2), 0 <= t <= 1.
inline constexpr float kAtan[] = {-0.0021609857f, 0.012644696f, -0.03453934f,
                                  0.06143732f,    -0.08610107f, 0.110226996f,
                                  -0.14277297f,   0.19999684f,  -0.3333333f};

// 2 / sqrt(pi) = kTwoOverSqrtPiHi + kTwoOverSqrtPiLo, erf's slope at 0.
inline constexpr float kTwoOverSqrtPiHi = 1.1283792f;
inline constexpr float kTwoOverSqrtPiLo = -5.8635383e-08f;

using exp_detail::kLn2Hi;  // ln 2 in two parts, and 2^n (exp_polynomial.h)
using exp_detail::kLn2Lo;
using exp_detail::pow2;

// log(x) + extra for a positive, finite float x, the extra a correction below an ulp of x.
[[gnu::always_inline]] inline float log_of_finite_positive(float x, float extra = 0.0f) {
  const bool subnormal = x < std::numeric_limits<float>::min();
  const float scaled = subnormal ? x * 0x1p23f : x;
  // k and m with x = 2^k m, m in [sqrt(1/2), sqrt(2)): shifting the bits by those of sqrt(1/2)
  // makes the exponent field k.
  const std::int32_t bits = std::bit_cast<std::int32_t>(scaled);
  const std::int32_t k = (bits - std::bit_cast<std::int32_t>(0.70710677f)) >> 23;
  const float m = std::bit_cast<float>(bits - k * (1 << 23));
  const float f = m - 1.0f;  // exact: m is within a factor 2 of 1
  const float kf = static_cast<float>(k) - (subnormal ? 23.0f : 0.0f);
  const float f2 = f * f;
  const float tail = std::fma(f2 * f, horner(f, kLog1p), f2 * -0.5f);  // -f^2/2 + f^3 P(f)
  return std::fma(kf, kLn2Hi, f + (std::fma(kf, kLn2Lo, tail) + extra));
}

// log's value where log_of_finite_positive does not apply: -inf at +-0, NaN below 0, x itself at
// +inf and NaN.
[[gnu::always_inline]] inline float log_of_special(float x) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  return x == 0.0f ? -kInf : (x < 0.0f ? std::numeric_limits<float>::quiet_NaN() : x);
}

// The standard normal's upper tail Q = Phi(-|x|) as the product of two factors, `scaled` = Q
// e^(x^2/2) and `gauss` = e^(-x^2/2), for GELU (Note [Float polynomials]).
struct NormalTail {
  float scaled;
  float gauss;
};

[[gnu::always_inline]] inline NormalTail normal_tail(float x) {
  const float magnitude = std::fabs(x);
  const float a = magnitude < 15.0f ? magnitude : 15.0f;  // NaN -> 15; restored by the callers
  // t = 1 / (d + d_lo), d + d_lo = 1 + a/4 exactly (a/4 exact, and the sum's error is a float).
  const float quarter = 0.25f * a;
  const float d = 1.0f + quarter;
  const float d_lo = (1.0f - d) + quarter;
  const float t0 = 1.0f / d;
  const float residual = std::fma(-d_lo, t0, std::fma(-d, t0, 1.0f));  // 1 - (d + d_lo) t0
  const float t = std::fma(t0, residual, t0);
  // e^-(hi + lo) = e^-hi (1 - lo), hi + lo = a^2 / 2 exactly.
  const float hi = (a * a) * 0.5f;
  const float lo = std::fma(a, a, -(a * a)) * 0.5f;
  const float e = exp_polynomial(-hi);
  return {t * horner(t, kNormalTail), std::fma(e, -lo, e)};
}

// e^a / 2 for a >= 88, where sinh and cosh are e^a / 2 to within far less than an ulp and e^a
// itself would overflow float first: e^(a - 88) (a - 88 exact for a < 176) times e^88 / 2 in two
// floats, both positive so that an infinite e^(a - 88) gives +inf, not inf - inf; +inf from
// a = 89.42 on, NaN for NaN.
[[gnu::always_inline]] inline float half_exp_above_88(float a) {
  constexpr float kHalfExp88Hi = 0x1.f1056cp+125f;  // e^88 / 2 = hi + lo to 2^-49 of it
  constexpr float kHalfExp88Lo = 0x1.c7bf22p+101f;
  // Below 88 (where the callers select the other branch) taken at 88: e^(a - 88) would be
  // subnormal there, and arithmetic on subnormals runs many times slower. NaN stays NaN.
  const float t = exp_polynomial((a < 88.0f ? 88.0f : a) - 88.0f);
  return std::fma(t, kHalfExp88Hi, t * kHalfExp88Lo);
}

// ln 2 rounded to float, for log(2a) = log(a) + ln 2 where 2a would overflow.
inline constexpr float kLn2 = 0.69314718f;

// pi/2 and pi, each the sum of two floats.
inline constexpr float kHalfPiHi = 0x1.921fb6p+0f;
inline constexpr float kHalfPiLo = -0x1.777a5cp-25f;
inline constexpr float kPiHi = 0x1.921fb6p+1f;
inline constexpr float kPiLo = -0x1.777a5cp-24f;

// sin r and cos r of x = n pi/2 + r, |r| <= pi/4, and n mod 4 in the low bits of `quadrant`, for
// 0 <= x < kTrigPolynomialRange (Note [Float polynomials]).
struct Quadrant {
  double sin_r;
  double cos_r;
  std::int64_t quadrant;
};

[[gnu::always_inline]] inline Quadrant reduce_by_half_pi(float magnitude) {
  constexpr double kShifter = 0x1.8p52;  // 1.5 * 2^52: adding it rounds to an integer
  constexpr double kTwoOverPi = 0x1.45f306dc9c883p-1;
  constexpr double kHalfPi1 = 0x1.921fb544p+0;  // 33 bits
  constexpr double kHalfPi2 = 0x1.0b4611a626331p-34;
  const double x = magnitude;
  const double shifted = std::fma(x, kTwoOverPi, kShifter);
  const double n = shifted - kShifter;                                 // exact
  const double r = std::fma(-n, kHalfPi2, std::fma(-n, kHalfPi1, x));  // the inner fma is exact
  const double s = r * r;
  // Taylor's coefficients, 1 / k! with alternating signs.
  const double sin_r = std::fma(
      r * s,
      horner(s, 1.0 / 6227020800, -1.0 / 39916800, 1.0 / 362880, -1.0 / 5040, 1.0 / 120, -1.0 / 6),
      r);
  const double cos_r = std::fma(
      s, horner(s, 1.0 / 479001600, -1.0 / 3628800, 1.0 / 40320, -1.0 / 720, 1.0 / 24, -0.5), 1.0);
  return {sin_r, cos_r, std::bit_cast<std::int64_t>(shifted)};
}

// v with the sign bit of x flipped in: -v where x is negative (-0 too).
[[gnu::always_inline]] inline float with_sign_of_odd(float v, float x) {
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(v) ^
                              (std::bit_cast<std::uint32_t>(x) & 0x80000000u));
}

// atan(t) for 0 <= t <= 1 (and NaN).
[[gnu::always_inline]] inline float atan_unit(float t) {
  const float s = t * t;
  return std::fma(t * s, horner(s, kAtan), t);
}

// asin(a), 0 <= a <= 1, in the two forms of Note [Float polynomials] ("asin, acos"). Below
// a = 1/2, p = asin(a) (s = a); above (reflected: a > 1/2), asin(a) = pi/2 - 2 asin(s) with
// s = sqrt((1 - a) / 2), and asin(s) = s + q, q carrying sqrt's rounding error besides the
// series' tail. NaN and a > 1 give NaN parts. (The caller passes `reflected`: a bool in the
// returned struct kept GCC 12 from vectorising the loops.)
struct AsinParts {
  float s;
  float q;
  float p;
};
[[gnu::always_inline]] inline AsinParts asin_parts(float a, bool reflected) {
  const float z = reflected ? (1.0f - a) * 0.5f : a * a;  // 1 - a exact for a >= 1/2 (Sterbenz)
  const float s = reflected ? std::sqrt(z) : a;
  // z - s^2 exactly, over 2s: sqrt(z) - s to first order (0 where s is 0 or the form is direct).
  const float s_error = (reflected & (s > 0.0f)) ? std::fma(-s, s, z) / (2.0f * s) : 0.0f;
  const float tail = horner(z, kAsin);
  return {s, std::fma(s * z, tail, s_error), std::fma(s * z, tail, s)};
}

// base - 2 (s + q) for base = hi + lo (pi/2 or pi in two floats) and 2s <= hi: hi - 2s with its
// rounding error recovered (Fast2Sum), the small terms added to that error first.
[[gnu::always_inline]] inline float minus_twice(float hi, float lo, float s, float q) {
  const float two_s = 2.0f * s;
  const float head = hi - two_s;
  const float head_error = (hi - head) - two_s;
  return head + ((head_error + lo) - 2.0f * q);
}

}  // namespace polynomial_detail

// e^x - 1, within kExpm1PolynomialMaxUlps for every float x.
[[gnu::always_inline]] inline float expm1_polynomial(float x) {
  using namespace polynomial_detail;
  const float clamped_low = x > -30.0f ? x : -30.0f;  // NaN -> -30; restored at the end
  const float xc = clamped_low < 89.0f ? clamped_low : 89.0f;
  const auto [n_int, r] = exp_detail::reduce_by_ln2(xc);
  const float r2 = r * r;
  const float em1_r = r + std::fma(r2 * r, horner(r, kExpm1), r2 * 0.5f);  // e^r - 1
  // n <= 24: 2^n (e^r - 1) + (2^n - 1), 2^n - 1 exact.
  const float t = pow2(n_int < 24 ? n_int : 24);
  const float small = std::fma(t, em1_r, t - 1.0f);
  // Above: e^x, scaled in two factors as exp_polynomial's so that 2^128 does not overflow first.
  const std::int32_t a = n_int >> 1;
  const float large = (em1_r + 1.0f) * pow2(a) * pow2(n_int - a);
  const float result = n_int <= 24 ? small : large;
  return ((x == x) & (x != 0.0f)) ? result : x;  // NaN, and -0 keeps its sign
}

// tanh(x), within kTanhPolynomialMaxUlps for every float x.
[[gnu::always_inline]] inline float tanh_polynomial(float x) {
  using namespace polynomial_detail;
  const float magnitude = std::fabs(x);
  const float s = x * x;
  const float small = std::fma(x * s, horner(s, kTanh), x);
  const float e = exp_polynomial(2.0f * magnitude);  // +inf for large |x|: then 1 - 0
  const float large = 1.0f - 2.0f / (e + 1.0f);
  // The sign of x on both (-0 too); NaN: e is NaN, so large is.
  return std::copysign(magnitude < 0.625f ? small : large, x);
}

// sinh(x), within kSinhPolynomialMaxUlps for every float x.
[[gnu::always_inline]] inline float sinh_polynomial(float x) {
  using namespace polynomial_detail;
  const float magnitude = std::fabs(x);
  const float s = x * x;
  const float small = std::fma(magnitude * s, horner(s, kSinh), magnitude);
  // (E + E / (E + 1)) / 2, E = e^|x| - 1: both terms positive, no cancellation.
  // (Not clamped to 88 first, which is not needed: GCC 12 then left the caller's loop scalar.)
  const float e = expm1_polynomial(magnitude);
  const float moderate = 0.5f * (e + e / (e + 1.0f));
  const float large = half_exp_above_88(magnitude);
  const float result = magnitude < 1.0f ? small : (magnitude < 88.0f ? moderate : large);
  return std::copysign(result, x);  // -0 keeps its sign
}

// cosh(x), within kCoshPolynomialMaxUlps for every float x.
[[gnu::always_inline]] inline float cosh_polynomial(float x) {
  const float magnitude = std::fabs(x);
  // e^|x| / 2 + 1 / (2 e^|x|): both terms positive.
  const float e = exp_polynomial(magnitude);
  const float moderate = std::fma(0.5f, e, 0.5f / e);
  const float large = polynomial_detail::half_exp_above_88(magnitude);
  return magnitude < 88.0f ? moderate : large;  // NaN: large is NaN
}

// log(x), within kLogPolynomialMaxUlps for every float x.
[[gnu::always_inline]] inline float log_polynomial(float x) {
  using namespace polynomial_detail;
  const bool finite_positive = (x > 0.0f) & (x < std::numeric_limits<float>::infinity());
  const float core = log_of_finite_positive(finite_positive ? x : 1.0f);
  return finite_positive ? core : log_of_special(x);
}

// log2(x) and log10(x) of float: log of double (kernels/cpu/double_polynomials.h, within 0.81 ulps
// of double) times log2(e) or log10(e) in double, rounded to float once, so within half an ulp
// of float and a hair (Note [Float polynomials]); log's special values (-inf at +-0, NaN below 0,
// +inf and NaN themselves).
[[gnu::always_inline]] inline float scaled_log_polynomial(float x, double scale) {
  using namespace polynomial_detail;
  const bool finite_positive = (x > 0.0f) & (x < std::numeric_limits<float>::infinity());
  const double in_range = finite_positive ? static_cast<double>(x) : 1.0;  // a float: normal
  const auto core = static_cast<float>(log_of_positive_normal(in_range) * scale);
  return finite_positive ? core : log_of_special(x);
}

// log2(x), within kLog2PolynomialMaxUlps for every float x.
[[gnu::always_inline]] inline float log2_polynomial(float x) {
  return scaled_log_polynomial(x, 1.4426950408889634);  // log2(e)
}

// log10(x), within kLog10PolynomialMaxUlps for every float x.
[[gnu::always_inline]] inline float log10_polynomial(float x) {
  return scaled_log_polynomial(x, 0.4342944819032518);  // log10(e)
}

// log(1 + x), within kLog1pPolynomialMaxUlps for every float x.
[[gnu::always_inline]] inline float log1p_polynomial(float x) {
  using namespace polynomial_detail;
  const float u = 1.0f + x;
  const bool finite_positive = (u > 0.0f) & (u < std::numeric_limits<float>::infinity());
  const float us = finite_positive ? u : 1.0f;
  const float core = log_of_finite_positive(us, (x - (us - 1.0f)) / us);
  const float special = log_of_special(u);
  const float result = finite_positive ? core : special;
  return x != 0.0f ? result : x;  // -0 keeps its sign
}

// asinh(x), within kAsinhPolynomialMaxUlps for every float x: with a = |x|, log1p(a + a^2 / (1 +
// sqrt(1 + a^2))) below 2, log(2a + 1 / (sqrt(a^2 + 1) + a)) below 2^12, and log(a) + ln 2
// above (glibc's forms; there 1 + a^2 would lose the 1, and beyond 2^64 overflow); the sign of x
// put back, so -0 keeps it. Every form is computed and one chosen (Note [Float polynomials]).
[[gnu::always_inline]] inline float asinh_polynomial(float x) {
  using namespace polynomial_detail;
  const float a = std::fabs(x);
  const float a2 = a * a;
  const float root = std::sqrt(a2 + 1.0f);
  const float small = log1p_polynomial(a + a2 / (1.0f + root));
  const float middle = log_polynomial(std::fma(2.0f, a, 1.0f / (root + a)));
  const float large = log_polynomial(a) + kLn2;
  const float magnitude = a < 2.0f ? small : (a < 4096.0f ? middle : large);
  return x == x ? std::copysign(magnitude, x) : x;
}

// acosh(x), within kAcoshPolynomialMaxUlps for every float x: with t = x - 1 (exact below 2),
// log1p(t + sqrt(2t + t^2)) below 2, log(2x - 1 / (x + sqrt(x^2 - 1))) below 2^12, and
// log(x) + ln 2 above (glibc's forms); NaN below 1.
[[gnu::always_inline]] inline float acosh_polynomial(float x) {
  using namespace polynomial_detail;
  const float t = x - 1.0f;
  const float small = log1p_polynomial(t + std::sqrt(std::fma(t, t, 2.0f * t)));
  const float middle = log_polynomial(std::fma(2.0f, x, -1.0f / (x + std::sqrt(x * x - 1.0f))));
  const float large = log_polynomial(x) + kLn2;
  const float value = x < 2.0f ? small : (x < 4096.0f ? middle : large);
  const float below_one = x == x ? std::numeric_limits<float>::quiet_NaN() : x;
  return x >= 1.0f ? value : below_one;
}

// atanh(x), within kAtanhPolynomialMaxUlps for every float x: with a = |x|, log1p(2a + 2a^2 /
// (1 - a)) / 2 below 1/2 and log1p(2a / (1 - a)) / 2 above (glibc's forms; 1 - a exact there);
// +-inf at +-1, NaN beyond, the sign of x put back.
[[gnu::always_inline]] inline float atanh_polynomial(float x) {
  const float a = std::fabs(x);
  const float one_minus = 1.0f - a;
  const float twice = 2.0f * a;
  const float small = log1p_polynomial(std::fma(twice, a / one_minus, twice));
  const float large = log1p_polynomial(twice / one_minus);
  const float magnitude = 0.5f * (a < 0.5f ? small : large);
  return x == x ? std::copysign(magnitude, x) : x;
}

// erf(x), within kErfPolynomialMaxUlps for every float x.
[[gnu::always_inline]] inline float erf_polynomial(float x) {
  using namespace polynomial_detail;
  const float magnitude = std::fabs(x);
  // x (c + s Q(s)), s = x^2, with the constant c = 2 / sqrt(pi) in two floats.
  const float small =
      std::fma(x, kTwoOverSqrtPiHi, x * std::fma(x * x, horner(x * x, kErf), kTwoOverSqrtPiLo));
  const float a = magnitude < 3.92f ? magnitude : 3.92f;  // NaN -> 3.92; restored at the end
  const float hi = a * a;
  const float lo = std::fma(a, a, -hi);  // a^2 = hi + lo exactly
  const float e = exp_polynomial(-hi);
  const float e_a2 = std::fma(e, -lo, e);  // e^-(hi + lo) = e^-hi (1 - lo)
  const float tail = std::fma(-e_a2, horner(a - 2.585f, kErfc), 1.0f);  // a - 2.585 exact
  const float result = magnitude < 1.25f ? small : (magnitude < 3.92f ? tail : 1.0f);
  return x == x ? std::copysign(result, x) : x;  // the sign of x (-0 too)
}

// sin, cos and tan compute in double below |x| = 2^20 (Note [Float polynomials]); from there on,
// and at +-inf and NaN, they take the C library's.
inline constexpr float kTrigPolynomialRange = 0x1p20f;

// Whether the *_in_range forms below apply to x: |x| < kTrigPolynomialRange (false for NaN).
[[gnu::always_inline]] inline bool trig_polynomial_applies(float x) {
  return std::fabs(x) < kTrigPolynomialRange;
}

// sin(x), within kSinPolynomialMaxUlps, for |x| < kTrigPolynomialRange.
[[gnu::always_inline]] inline float sin_polynomial_in_range(float x) {
  const polynomial_detail::Quadrant q = polynomial_detail::reduce_by_half_pi(std::fabs(x));
  const double v = (q.quadrant & 1) != 0 ? q.cos_r : q.sin_r;
  const double signed_v = (q.quadrant & 2) != 0 ? -v : v;
  return polynomial_detail::with_sign_of_odd(static_cast<float>(signed_v), x);
}

// cos(x), within kCosPolynomialMaxUlps, for |x| < kTrigPolynomialRange.
[[gnu::always_inline]] inline float cos_polynomial_in_range(float x) {
  const polynomial_detail::Quadrant q = polynomial_detail::reduce_by_half_pi(std::fabs(x));
  const double v = (q.quadrant & 1) != 0 ? q.sin_r : q.cos_r;
  return static_cast<float>(((q.quadrant + 1) & 2) != 0 ? -v : v);
}

// tan(x), within kTanPolynomialMaxUlps, for |x| < kTrigPolynomialRange.
[[gnu::always_inline]] inline float tan_polynomial_in_range(float x) {
  const polynomial_detail::Quadrant q = polynomial_detail::reduce_by_half_pi(std::fabs(x));
  const double v = (q.quadrant & 1) != 0 ? -q.cos_r / q.sin_r : q.sin_r / q.cos_r;
  return polynomial_detail::with_sign_of_odd(static_cast<float>(v), x);
}

// sin(x), within kSinPolynomialMaxUlps for every float x.
inline float sin_polynomial(float x) {
  return trig_polynomial_applies(x) ? sin_polynomial_in_range(x)
                                    : static_cast<float>(std::sin(static_cast<double>(x)));
}

// cos(x), within kCosPolynomialMaxUlps for every float x.
inline float cos_polynomial(float x) {
  return trig_polynomial_applies(x) ? cos_polynomial_in_range(x)
                                    : static_cast<float>(std::cos(static_cast<double>(x)));
}

// tan(x), within kTanPolynomialMaxUlps for every float x.
inline float tan_polynomial(float x) {
  return trig_polynomial_applies(x) ? tan_polynomial_in_range(x)
                                    : static_cast<float>(std::tan(static_cast<double>(x)));
}

// atan(x), within kAtanPolynomialMaxUlps for every float x.
[[gnu::always_inline]] inline float atan_polynomial(float x) {
  using namespace polynomial_detail;
  const float magnitude = std::fabs(x);
  const bool above_one = magnitude > 1.0f;
  const float p = atan_unit(above_one ? 1.0f / magnitude : magnitude);  // +inf: atan(0)
  return std::copysign(above_one ? (kHalfPiHi - p) + kHalfPiLo : p, x);
}

// erfc(x) of float, within kErfcPolynomialMaxUlps for every float x (Note [Float polynomials],
// "erfc"): in double, erfc(|x|) = e^(-x^2) t P(t) with t = 1 / (1 + |x|/2), and 2 - erfc(|x|)
// below 0, rounded to float once.
[[gnu::always_inline]] inline float erfc_polynomial(float x) {
  using namespace polynomial_detail;
  const float magnitude = std::fabs(x);
  // erfc rounds to +0 beyond 10.06: those lanes compute erfc(0) and take 0 below, where the
  // conversion of a double below float's range would round through a subnormal (Note
  // [Polynomial exp], subnormals). NaN flows through as NaN.
  const bool beyond = magnitude > 10.06f;
  const double a = beyond ? 0.0 : static_cast<double>(magnitude);
  const double t = 1.0 / (1.0 + 0.5 * a);
  const double upper = t * horner(t, kErfcTail) * exp_of_double(-(a * a));  // a^2 exact
  const auto result = static_cast<float>(x < 0.0f ? 2.0 - upper : upper);
  const float value = beyond ? (x < 0.0f ? 2.0f : 0.0f) : result;
  return x == x ? value : x;  // NaN: x's own, whichever NaN the lanes' operations kept
}

// asin(x), within kAsinPolynomialMaxUlps for every float x (NaN beyond [-1, 1]).
[[gnu::always_inline]] inline float asin_polynomial(float x) {
  using namespace polynomial_detail;
  const float a = std::fabs(x);
  const bool reflected = a > 0.5f;  // false for NaN
  const AsinParts parts = asin_parts(a, reflected);
  return std::copysign(reflected ? minus_twice(kHalfPiHi, kHalfPiLo, parts.s, parts.q) : parts.p,
                       x);
}

// acos(x), within kAcosPolynomialMaxUlps for every float x (NaN beyond [-1, 1]): pi/2 - asin(x)
// below |x| = 1/2, else 2 asin(s) (x > 0) or pi - 2 asin(s).
[[gnu::always_inline]] inline float acos_polynomial(float x) {
  using namespace polynomial_detail;
  const float a = std::fabs(x);
  const bool reflected = a > 0.5f;  // false for NaN
  const AsinParts parts = asin_parts(a, reflected);
  const float signed_p = std::copysign(parts.p, x);
  const float head = kHalfPiHi - signed_p;  // |p| <= pi/6: Fast2Sum's condition holds
  const float central = head + (((kHalfPiHi - head) - signed_p) + kHalfPiLo);
  const float tail =
      std::signbit(x) ? minus_twice(kPiHi, kPiLo, parts.s, parts.q) : 2.0f * (parts.s + parts.q);
  return reflected ? tail : central;
}

// hypot(x, y) of float: sqrt(x^2 + y^2) in double, where both squares are exact and can neither
// overflow nor underflow, rounded to float. The sum and the square root round once each in double,
// so the result is within 0.5 + 2^-28 ulps of the exact value, and it is what glibc's hypotf
// computes for finite operands, but in SIMD lanes: glibc's call per element kept the loop scalar.
// An infinite operand gives +inf even beside a NaN, as C's hypot.
[[gnu::always_inline]] inline float hypot_of_float(float x, float y) {
  const double dx = x;
  const double dy = y;
  const auto root = static_cast<float>(std::sqrt(dx * dx + dy * dy));
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const bool infinite =
      static_cast<int>(std::fabs(x) == kInf) | static_cast<int>(std::fabs(y) == kInf);
  return infinite ? kInf : root;
}

// atan2(y, x), within kAtan2PolynomialMaxUlps (Note [Float polynomials]).
[[gnu::always_inline]] inline float atan2_polynomial(float y, float x) {
  using namespace polynomial_detail;
  const float a = std::fabs(y);
  const float b = std::fabs(x);
  const bool y_larger = a > b;  // false for NaN: then t is NaN below
  const float smaller = y_larger ? b : a;
  const float larger = y_larger ? a : b;
  const bool both_zero = (a == 0.0f) & (b == 0.0f);
  // The constant named first: clang warns of a bitwise & whose operand calls a function.
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const bool both_infinite = (a == kInf) & (b == kInf);
  const float t = both_zero ? 0.0f : (both_infinite ? 1.0f : smaller / larger);
  const float p = atan_unit(t);
  // The angle of (|x|, |y|) is p or pi/2 - p, and of (-|x|, |y|) pi/2 + p or pi - p: a base in
  // two floats plus or minus p, so that the base is exact where p is 0.
  const bool x_negative = std::signbit(x);
  const float base_hi = y_larger ? kHalfPiHi : (x_negative ? kPiHi : 0.0f);
  const float base_lo = y_larger ? kHalfPiLo : (x_negative ? kPiLo : 0.0f);
  const float signed_p = y_larger == x_negative ? p : -p;
  return std::copysign((base_hi + signed_p) + base_lo, y);
}

// GELU, x Phi(x), within kGeluPolynomialMaxUlps for every float x (NaN at -inf, as x/2 (1 +
// erf(x / sqrt 2)) is).
[[gnu::always_inline]] inline float gelu_polynomial(float x) {
  const polynomial_detail::NormalTail q = polynomial_detail::normal_tail(x);
  const float negative = (x * q.scaled) * q.gauss;  // x Q, never rounded to a subnormal Q first
  const float positive = x * (1.0f - q.scaled * q.gauss);  // x (1 - Q); NaN stays NaN, -0 -0
  return x < 0.0f ? negative : positive;
}

// g times GELU's derivative Phi(x) + x phi(x), the derivative within
// kGeluGradientPolynomialMaxUlps of max(Phi(x), |x| phi(x)) for every float x.
[[gnu::always_inline]] inline float gelu_gradient_polynomial(float g, float x) {
  constexpr float kInvSqrt2Pi = 0.3989422804014327f;  // 1 / sqrt(2 pi)
  const polynomial_detail::NormalTail q = polynomial_detail::normal_tail(x);
  // Q + x phi = e^(-x^2/2) (Q e^(x^2/2) + x / sqrt(2 pi)) below 0; 1 - Q + x phi above.
  const float negative = q.gauss * std::fma(x, kInvSqrt2Pi, q.scaled);
  const float positive = std::fma(q.gauss, std::fma(x, kInvSqrt2Pi, -q.scaled), 1.0f);
  return g * (x < 0.0f ? negative : positive);
}

}  // namespace leangrad::kernels::cpu
