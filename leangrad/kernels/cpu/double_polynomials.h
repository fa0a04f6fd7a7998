// log, and sin with cos, of double as straight-line code the compiler runs in SIMD lanes, where a
// C library call per element kept the loops scalar: the Box-Muller transform of the CPU's normal_
// (Note [Random fills in lanes] in kernels/cpu/random.cpp), log2 and log10 of float
// (kernels/cpu/float_polynomials.h), and the Bessel functions J and Y and ndtri
// (Note [Special functions in lanes] in kernels/cpu/elementwise_range_limited.cpp).
//
// Note [Double polynomials]
//   - log(x) for a positive normal x: x = 2^k m with m in [sqrt(1/2), sqrt(2)) from the bits,
//     f = m - 1 (exact), s = f / (2 + f), so that log(1 + f) = 2 atanh(s) = 2s + s R(s^2) with
//     R(z) = sum_j 2 z^j / (2j + 1), Taylor's series (|s| <= 0.1716, z <= 0.0295: the first term
//     left out, 2 z^11 / 23, is below 2^-60 of the value). 2s is not formed: 2s = f - s f and
//     s f = f^2/2 (1 - s) give log(1 + f) = f - (f^2/2 - s (f^2/2 + R)), where the rounding of s
//     reaches only the correction in parentheses, and k ln 2 is added in two parts (ln 2's first
//     42 bits, so that k times them is exact for every k of a double).
//   - sin and cos of |a| <= 2^20: n = round(a 2/pi) by adding 1.5 2^52 (|n| < 2^20; its low bits
//     are n mod 4), r = a - n pi/2 with pi/2 = P1 + P2 + P3 + P4 (33, 33, 33 and 53 bits, to
//     2^-160): a - n P1 is exact (n P1 is, and the difference is below 1 and a multiple of the
//     smaller of a's ulp and P1's), n P2 and n P3 are exact too and are taken off by two-sums,
//     which keep the rounding errors, and n P4 off the errors; a fast two-sum leaves
//     r = r_hi + r_lo, accurate to 2^-133 absolutely. The doubles up to 2^20 come no closer to a
//     multiple of pi/2 than 2^-60.5 (at n = 29; tools/double_sin_cos_hard_cases.py), so r keeps
//     its relative accuracy where a cancels most. |r| <= pi/4. sin r_hi = r + r^3 S(r^2) and
//     cos r_hi = 1 - r^2/2 + r^4 C(r^2) are Taylor's series to r^17 and r^16 (the next terms are
//     below 2^-60 of the values), their coefficients 1/k! rounded to double; r_lo enters to
//     first order (r_lo cos r_hi, -r_lo sin r_hi). 1 - r^2/2 is formed as a rounded w and its
//     exact remainder (with r^2's own rounding error), added to the tail before the one rounding
//     of the sum. Rounding r to one double had cost up to 1.43 ulps, and cos as 1 + r^2 C(r^2)
//     1.15. n mod 4 picks +-sin r or +-cos r for each. The Box-Muller angles are below 2 pi; the
//     Bessel functions' Hankel forms (Note [Special functions in lanes] in
//     kernels/cpu/elementwise_range_limited.cpp) take the rest of the range.
//   - e^x: n = round(x / ln 2) by the same shifter, r = x - n ln 2 with ln 2 in two parts (x - n
//     times the first 42 bits is exact, n the second's rounding kept by a two-sum), |r| <= 0.35;
//     e^r = 1 + r + r^2 E(r) with E Taylor's series to r^13 (the next term below 2^-57 of e^r),
//     1 + r formed exactly as a rounded sum and its remainder, so that the one rounding of
//     (1 + r) + (r^2 E + remainders) is the last. 2^n = 2^a 2^b (a = floor(n / 2), b = n - a, each
//     a normal double for n in [-1076, 1024], its bits from a + 1023 + 2^52): the first product
//     is exact, so only a subnormal result rounds again (to within half its spacing more), and
//     overflow gives +inf. x is clamped to [-746, 710] first (e^-746
//     rounds to 0, e^710 to +inf); NaN stays NaN.
//   - Every step is an IEEE operation and the fused multiply-adds are written as std::fma; the
//     files using these are compiled with -ffp-contract=off, so the bits are the same in any
//     vector width and in scalar code. Conditions are selects on values computed for every lane.
//   - Accuracy: tests/kernels/test_double_polynomials.cpp measures both against long double's
//     logl, sinl, cosl and expl over every argument float32's normal_ gives them (2^24 each), 2^21
//     samples of float64's, 2^20 samples up to 2^20 and the hard cases (near 1 and sqrt(1/2) for
//     log, next to every multiple of pi/2 up to 2^20 for sin and cos), and 2^21 samples of exp's
//     whole range, the subnormal results apart; kLogDoubleMaxUlps, kSinCosDoubleMaxUlps and
//     kExpDoubleMaxUlps below are the worst it found. glibc's log, sin and cos are within 1 ulp
//     too.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace leangrad::kernels::cpu {

// The measured bounds, in ulps of the exact result: the worst over the test's arguments (every one
// of float32's Box-Muller pairs, and samples; Note [Double polynomials]), rounded up.
inline constexpr double kLogDoubleMaxUlps = 0.81;     // 0.8086
inline constexpr double kSinCosDoubleMaxUlps = 0.75;  // sin 0.7402, cos 0.7383
inline constexpr double kExpDoubleMaxUlps = 0.68;     // 0.6699 over 2e7 samples (the test: 0.6523)

namespace double_polynomial_detail {

// c[0] + x (c[1] + x (... + x c[N-1])): Horner's rule written out, so that the vectoriser sees
// straight-line code.
template <std::size_t N, std::size_t I = 0>
[[gnu::always_inline]] inline double horner(double x, const double (&c)[N]) {
  if constexpr (I + 1 == N) {
    return c[I];
  } else {
    return std::fma(x, horner<N, I + 1>(x, c), c[I]);
  }
}

// E's coefficients 1 / k!, k = 2 .. 13, as e^r = 1 + r + r^2 horner(r, kExp).
inline constexpr double kExp[] = {1.0 / 2,       1.0 / 6,        1.0 / 24,        1.0 / 120,
                                  1.0 / 720,     1.0 / 5040,     1.0 / 40320,     1.0 / 362880,
                                  1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800};
// R's coefficients 2 / (2j + 1), j = 1 .. 10, as R(z) = z horner(z, kAtanh).
inline constexpr double kAtanh[] = {2.0 / 3,  2.0 / 5,  2.0 / 7,  2.0 / 9,  2.0 / 11,
                                    2.0 / 13, 2.0 / 15, 2.0 / 17, 2.0 / 19, 2.0 / 21};
// sin r = r + r^3 horner(r^2, kSin), cos r = 1 - r^2/2 + r^4 horner(r^2, kCosTail):
// (-1)^j / (2j + 1)!, j = 1 .. 8, and (-1)^j / (2j)!, j = 2 .. 8.
inline constexpr double kSin[] = {
    -1.0 / 6,        1.0 / 120,        -1.0 / 5040,          1.0 / 362880,
    -1.0 / 39916800, 1.0 / 6227020800, -1.0 / 1307674368000, 1.0 / 355687428096000};
inline constexpr double kCosTail[] = {
    1.0 / 24,        -1.0 / 720,         1.0 / 40320,         -1.0 / 3628800,
    1.0 / 479001600, -1.0 / 87178291200, 1.0 / 20922789888000};

inline constexpr double kLn2Hi = 0x1.62e42fefa38p-1;  // ln 2's first 42 bits
inline constexpr double kLn2Lo = 0x1.ef35793c7673p-45;
inline constexpr double kHalfPi1 = 0x1.921fb544p+0;  // pi/2 = P1 + P2 + P3 + P4 to 2^-160
inline constexpr double kHalfPi2 = 0x1.0b4611a6p-34;
inline constexpr double kHalfPi3 = 0x1.3198a2ep-69;
inline constexpr double kHalfPi4 = 0x1.b839a252049c1p-104;

// s + e = x + y exactly, s the rounded sum (Knuth's two-sum).
struct TwoSum {
  double s;
  double e;
};
[[gnu::always_inline]] inline TwoSum two_sum(double x, double y) {
  const double s = x + y;
  const double back = s - x;
  return {s, (x - (s - back)) + (y - back)};
}

}  // namespace double_polynomial_detail

// log(x) for a positive normal double x (not 0, a subnormal, inf or NaN), within
// kLogDoubleMaxUlps.
[[gnu::always_inline]] inline double log_of_positive_normal(double x) {
  using namespace double_polynomial_detail;
  const auto bits = std::bit_cast<std::uint64_t>(x);
  // The biased exponent of x / sqrt(1/2): shifting the bits by those of sqrt(1/2), and by 1023 in
  // the exponent field so that the difference stays positive (a logical shift, which SIMD lanes
  // have for 64 bits where an arithmetic one they do not).
  constexpr std::uint64_t kSqrtHalfBits = 0x3fe6a09e667f3bcdull;
  constexpr std::uint64_t kExponentOne = 0x3ffull << 52;
  const std::uint64_t biased = (bits - kSqrtHalfBits + kExponentOne) >> 52;  // k + 1023
  const double m = std::bit_cast<double>(bits - ((biased - 0x3ff) << 52));
  // k as a double: 2^52 + (k + 1023) from the bits, exact.
  const double k = (std::bit_cast<double>(biased | (std::uint64_t{0x433} << 52)) - 0x1p52) - 1023.0;
  const double f = m - 1.0;  // exact: m is within a factor 2 of 1
  const double s = f / (2.0 + f);
  const double z = s * s;
  const double half_f2 = 0.5 * f * f;
  const double r = z * horner(z, kAtanh);
  const double correction = std::fma(s, half_f2 + r, k * kLn2Lo);
  return std::fma(k, kLn2Hi, f - (half_f2 - correction));
}

// e^x for every double x: 0 below about -745.13, +inf above about 709.78, NaN for NaN; within
// kExpDoubleMaxUlps where the result is a normal double, and 0.5 + kExpDoubleMaxUlps of the
// subnormals' spacing (2^-1074) where it is subnormal.
[[gnu::always_inline]] inline double exp_of_double(double x) {
  using namespace double_polynomial_detail;
  constexpr double kShifter = 0x1.8p52;
  constexpr double kLog2e = 0x1.71547652b82fep0;
  const double clamped = x < -746.0 ? -746.0 : (x > 710.0 ? 710.0 : x);  // NaN stays
  const double shifted = std::fma(clamped, kLog2e, kShifter);
  const double n = shifted - kShifter;  // exact
  // r = x - n ln 2 = r + r_error: x - n times ln 2's first 42 bits exact, then the rest.
  const double r_high = std::fma(-n, kLn2Hi, clamped);
  const double low = n * kLn2Lo;
  const double r = r_high - low;
  const double r_error = (r_high - r) - low;
  // 1 + r = one + one_remainder exactly, then the small terms, then one rounding.
  const double one = 1.0 + r;
  const double one_remainder = (1.0 - one) + r;
  const double e = one + std::fma(r * r, horner(r, kExp), one_remainder + r_error);
  // 2^n as 2^a 2^b, each from the bits of a + 1023 placed above the significand.
  constexpr double kBiased = 0x1p52 + 1023.0;
  const double a = std::floor(0.5 * n);
  const double scale_a = std::bit_cast<double>(std::bit_cast<std::uint64_t>(a + kBiased) << 52);
  const double scale_b =
      std::bit_cast<double>(std::bit_cast<std::uint64_t>((n - a) + kBiased) << 52);
  return e * scale_a * scale_b;
}

// The largest |a| sin_cos_moderate takes.
inline constexpr double kSinCosModerateLimit = 0x1p20;

// sin(a) and cos(a) for |a| <= kSinCosModerateLimit, each within kSinCosDoubleMaxUlps.
struct SinCos {
  double sin;
  double cos;
};

[[gnu::always_inline]] inline SinCos sin_cos_moderate(double a) {
  using namespace double_polynomial_detail;
  constexpr double kShifter = 0x1.8p52;  // 1.5 2^52: adding it rounds to an integer
  constexpr double kTwoOverPi = 0x1.45f306dc9c883p-1;
  const double shifted = std::fma(a, kTwoOverPi, kShifter);
  const double n = shifted - kShifter;  // exact
  // r = a - n (P1 + P2 + P3 + P4) = r_hi + r_lo: a - n P1 exact, then n P2 and n P3 (exact) taken
  // off with their rounding errors kept, and n P4 off the errors.
  const double r1 = std::fma(-n, kHalfPi1, a);
  const TwoSum second = two_sum(r1, -n * kHalfPi2);
  const TwoSum third = two_sum(second.s, -n * kHalfPi3);
  const double low = (second.e + third.e) - n * kHalfPi4;
  const double r_hi = third.s + low;  // |low| is far below |third.s|: a fast two-sum
  const double r_lo = low - (r_hi - third.s);
  // sin(r_hi + r_lo) = sin r_hi + r_lo cos r_hi and cos(r_hi + r_lo) = cos r_hi - r_lo sin r_hi,
  // to far below an ulp (r_lo is below an ulp of r_hi).
  const double r2 = r_hi * r_hi;
  const double sin_r = r_hi + std::fma(r_hi * r2, horner(r2, kSin), r_lo * (1.0 - 0.5 * r2));
  // cos: 1 - r^2/2 = w + ((1 - w) - r^2/2) (1 - w exact, Sterbenz), r^2's rounding error from a
  // fused multiply-add, and the tail r^4 C4(r^2) on top: the sum rounds once.
  const double r2_error = std::fma(r_hi, r_hi, -r2);
  const double half_r2 = 0.5 * r2;
  const double w = 1.0 - half_r2;
  const double tail =
      std::fma(r2 * r2, horner(r2, kCosTail), -std::fma(0.5, r2_error, r_hi * r_lo));
  const double cos_r = w + (((1.0 - w) - half_r2) + tail);
  const std::uint64_t quadrant = std::bit_cast<std::uint64_t>(shifted);  // n mod 4 in bits 0, 1
  const bool swap = (quadrant & 1) != 0;
  const double sin_abs = swap ? cos_r : sin_r;
  const double cos_abs = swap ? sin_r : cos_r;
  return {(quadrant & 2) != 0 ? -sin_abs : sin_abs, ((quadrant + 1) & 2) != 0 ? -cos_abs : cos_abs};
}

}  // namespace leangrad::kernels::cpu
