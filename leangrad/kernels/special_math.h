// The special functions of the unary and binary kernels (kernels/elementwise_math.h): log|Γ(x)|,
// digamma, the Hurwitz zeta function, the inverse error function, the scaled complementary error
// function, the inverse normal distribution function, the Bessel functions J0, J1, Y0, Y1, I0,
// I1, K0, K1 and sin(x) / x, the Airy function Ai and its derivative, sinc and the regularized
// incomplete gamma functions, in double on both devices (the float kernels round the double
// result once). Each is written from its defining series and identities (DLMF chapters 5, 7, 8,
// 9, 10 and 25) or, for log|Γ(x)| on [1, 3), erfinv, ndtri, the Bessel and the Airy functions,
// evaluated from series fitted to mpmath's values (Note [Chebyshev fits], special_math_fits.h);
// PyTorch's values at the poles and outside the domains (copysign(inf, -x) for digamma at 0, NaN at
// the negative integers, ...) but where docs/api-notes.md says. Every piece the CPU's lanes call
// is LG_ALWAYS_INLINE, as are the fits: a call keeps a loop scalar, and GCC leaves plain inline
// functions as calls once a file has spent its inlining budget (Ai ran 2.5 times slower, ndtri 5
// times); tools/check_lane_calls.sh checks the compiled lane loops.
#pragma once

#include <cmath>
#include <limits>

#include <leangrad/core/macros.h>
#include <leangrad/kernels/special_math_fits.h>
#include <leangrad/kernels/special_math_temme.h>

namespace leangrad::kernels::special_math {

inline constexpr double kPi = 3.14159265358979323846;

LG_HOST_DEVICE LG_INLINE double quiet_nan() {
  return std::numeric_limits<double>::quiet_NaN();
}
LG_HOST_DEVICE LG_INLINE double infinity() {
  return std::numeric_limits<double>::infinity();
}

// log(v) by the C library (CUDA's on the device): the log the special functions below take where
// they take one as a parameter, which the CPU's lanes replace by their own (Note [Special
// functions in lanes], kernels/cpu/elementwise_range_limited.cpp).
struct LibmLog {
  LG_HOST_DEVICE LG_INLINE double operator()(double v) const { return std::log(v); }
};
// exp(v) likewise.
struct LibmExp {
  LG_HOST_DEVICE LG_INLINE double operator()(double v) const { return std::exp(v); }
};

// Note [Log-gamma]
//   log Γ(x) for a positive normal x up to 2^1000 (lgamma_of_positive), in straight-line code
//   with one log, taken as a parameter:
//     - on [1, 3), log Γ(x) = (x - 1)(x - 2) R(x - 2), R a fit (fits::lgamma_central, with the
//       zeros' factors taken out): x - 1 and x - 2 are exact there (Sterbenz), so the value keeps
//       its relative accuracy next to the zeros 1 and 2;
//     - below 1, log Γ(x) = log Γ(x + 1) - log x with log Γ(x + 1) = x (x - 1) R(x - 1), x + 1
//       never formed (x - 1 is exact from 1/2 up; next to 1 the two terms cancel to their
//       difference, which is about 0.4 of the larger);
//     - on [3, 10), Γ(x) = (x - 1) ... (x - n) Γ(x - n) takes x to z = x - n in [2, 3), n =
//       floor(x) - 2 <= 7, every x - k exact: log Γ(x) = log Γ(z) + log P, P the product of the
//       factors (below 10^6), two positive terms;
//     - from 10, Stirling's series (DLMF 5.11.1) log Γ(x) = (x - 1/2) log x - x + log(2π) / 2
//       + Σ_{k=1}^{7} B_2k / (2k (2k - 1) x^(2k-1)): the first term left out is below 2^-58 of
//       the value.
//   The recurrence's factors are x - k for k = 1 .. 7 where at least 2 and 1 elsewhere, so that
//   every x runs the same steps and the forms are selected, not branched to. Every other x (0 and
//   the negative numbers, subnormals, beyond 2^1000 and NaN) takes libm's lgamma_r on the CPU
//   (glibc's lgamma also writes the global signgam, a data race between the kernel's threads) and
//   CUDA's lgamma on the device: +inf at the poles (0 and the negative integers) and at -inf, as
//   PyTorch's. tests/autograd/test_special_math.cpp measures it against long double's lgammal.
inline constexpr double kLgammaOfPositiveLimit = 0x1p1000;

LG_HOST_DEVICE LG_ALWAYS_INLINE bool lgamma_of_positive_applies(double x) {
  return x >= std::numeric_limits<double>::min() && x <= kLgammaOfPositiveLimit;  // not NaN
}

template <typename Log = LibmLog>
LG_HOST_DEVICE LG_ALWAYS_INLINE double lgamma_of_positive(double x, const Log& log = {}) {
  double product = 1.0;
  double n = 0.0;
  for (int k = 1; k <= 7; ++k) {
    const double factor = x - k;
    const bool taken = factor >= 2.0;
    product *= taken ? factor : 1.0;
    n += taken ? 1.0 : 0.0;
  }
  const bool below_one = x < 1.0;
  const bool stirling = x >= 10.0;
  const double z = x - n;  // exact; x itself below 3
  const double u = below_one ? x - 1.0 : z - 2.0;
  const double a = below_one ? x : z - 1.0;
  // log x below 1 and from 10, log P between (log 1 = 0 on [1, 3)).
  const double l = log(below_one || stirling ? x : product);
  // a u R(u) with a u's rounding error kept (a fused multiply-add), so that the product rounds
  // once.
  const double au = a * u;
  const double au_error = std::fma(a, u, -au);
  const double fitted = fits::lgamma_central(u);
  const double central = std::fma(au, fitted, au_error * fitted) + (below_one ? -l : l);
  // B_2k / (2k (2k - 1)) for k = 1 .. 7: 1/12, -1/360, 1/1260, -1/1680, 1/1188, -691/360360,
  // 1/156.
  constexpr double kHalfLogTwoPi = 0.91893853320467274178;
  const double r = 1.0 / x;
  const double r2 = r * r;
  const double tail = 1.0 / 1188 - r2 * (691.0 / 360360 - r2 * (1.0 / 156));
  const double series =
      r * (1.0 / 12 - r2 * (1.0 / 360 - r2 * (1.0 / 1260 - r2 * (1.0 / 1680 - r2 * tail))));
  const double far = std::fma(x - 0.5, l, -x) + (kHalfLogTwoPi + series);
  return stirling ? far : central;
}

LG_HOST_DEVICE LG_INLINE double lgamma(double x) {
  if (lgamma_of_positive_applies(x)) return lgamma_of_positive(x);
#if defined(__CUDA_ARCH__)
  return ::lgamma(x);
#else
  int sign = 0;
  return ::lgamma_r(x, &sign);
#endif
}

// The recurrences' shift for x > 0 (Note [Digamma]): sum f(x + k) over k in 0 .. 9 with
// x + k < 10, and their count n (x + n >= 10). Every term is computed and those past n are
// dropped, straight-line code for the CPU's lanes.
struct RecurrenceShift {
  double sum;
  double n;
};
template <typename Term>
LG_HOST_DEVICE LG_ALWAYS_INLINE RecurrenceShift shift_to_ten(double x, const Term& f) {
  RecurrenceShift shift{0.0, 0.0};
  for (int k = 0; k < 10; ++k) {
    const double term = x + k;
    const bool taken = term < 10.0;
    shift.sum += taken ? f(term) : 0.0;
    shift.n += taken ? 1.0 : 0.0;
  }
  return shift;
}

// Note [Digamma]
//   ψ(x) = d/dx log Γ(x). For x > 0 the recurrence ψ(x) = ψ(x + n) - Σ_{k<n} 1/(x + k) raises x
//   to y = x + n >= 10, n the number of k in 0 .. 9 with x + k < 10 (every term is computed and
//   those past n are dropped, so that every x runs the same steps), where the asymptotic series
//   (DLMF 5.11.2)
//     ψ(y) ~ log y - 1/(2y) - Σ_{k>=1} B_2k / (2k y^2k)
//   is summed to B_14: the first term left out, B_16 / (16 y^16), is below 5e-17 there. The log
//   is a parameter (digamma_of_positive). A negative x reflects (DLMF 5.5.4), ψ(x) = ψ(1 - x) -
//   π / tan(π x), with tan(π x) taken at the fraction of x (its period is 1), so that π x is not
//   rounded at large |x|. The poles are PyTorch's: at 0 the sign of -x times infinity (-inf at
//   +0, +inf at -0), NaN at the negative integers and at -inf; ψ(+inf) = +inf.
LG_HOST_DEVICE LG_ALWAYS_INLINE bool digamma_of_positive_applies(double x) {
  return x > 0.0 && x <= std::numeric_limits<double>::max();  // not NaN
}

template <typename Log = LibmLog>
LG_HOST_DEVICE LG_ALWAYS_INLINE double digamma_of_positive(double x, const Log& log = {}) {
  // Minus the sum of 1 / (x + k): rounding is symmetric in sign, so these are the bits of
  // subtracting each term in turn.
  const RecurrenceShift shift = shift_to_ten(x, [](double t) { return 1.0 / t; });
  const double y = x + shift.n;
  const double z = 1.0 / (y * y);
  // B_2k / 2k for k = 1 .. 7: 1/12, -1/120, 1/252, -1/240, 1/132, -691/32760, 1/12.
  const double series =
      z * (1.0 / 12 -
           z * (1.0 / 120 -
                z * (1.0 / 252 -
                     z * (1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760 - z * (1.0 / 12)))))));
  return -shift.sum + (log(y) - 0.5 / y - series);
}

LG_HOST_DEVICE LG_INLINE double digamma(double x) {
  if (x == 0.0) return std::copysign(infinity(), -x);
  if (x != x) return x;
  if (x < 0.0) {
    const double whole = std::floor(x);
    if (x == whole) return quiet_nan();  // the negative integers, and -inf
    // Reflection: psi(x) = psi(1 - x) - pi / tan(pi x), tan's period 1 taken off exactly by the
    // nearest integer (x - round(x) is exact, |.| <= 1/2), where x - floor(x) = 1 + x rounds away
    // x's digits for x near 0 (-1e-15 gave 9.72e14 for 1e15).
    return digamma_of_positive(1.0 - x) - kPi / std::tan(kPi * (x - std::round(x)));
  }
  return digamma_of_positive(x);
}

// base^-s: for an integral s up to 64 by repeated squaring, a few multiplications and one
// division (polygamma's orders; std::pow costs tens of nanoseconds, and zeta takes nine or more
// of them), within a few ulps as pow is; std::pow otherwise.
LG_HOST_DEVICE LG_INLINE double inverse_power(double base, double s, bool integral_s) {
  if (!integral_s) return std::pow(base, -s);
  double result = 1.0;
  for (auto n = static_cast<unsigned>(s); n != 0; n >>= 1) {
    if ((n & 1u) != 0) result *= base;
    base *= base;
  }
  return 1.0 / result;
}

// zeta(2, q) = polygamma(1, q) for q > 0, the one digamma's gradient takes: the recurrence
// psi1(q) = psi1(q + n) + sum_{k<n} 1/(q + k)^2 raises q to w = q + n >= 10 (n and the terms as
// digamma's, Note [Digamma]: straight-line code, which the CPU's lanes run), then the asymptotic
// series (DLMF 5.15.8)
//   psi1(w) ~ 1/w + 1/(2 w^2) + sum_{k>=1} B_2k / w^(2k+1)
// to B_18: the first term left out, B_20 / w^21, is below 5e-19 there. Cheaper than zeta's
// general summation, which the other orders and a negative q take.
LG_HOST_DEVICE LG_ALWAYS_INLINE double trigamma_of_positive(double q) {
  const RecurrenceShift shift = shift_to_ten(q, [](double t) { return 1.0 / (t * t); });
  const double r = 1.0 / (q + shift.n);
  const double z = r * r;
  // B_2k for k = 1 .. 9: 1/6, -1/30, 1/42, -1/30, 5/66, -691/2730, 7/6, -3617/510, 43867/798.
  const double series =
      z * r *
      (1.0 / 6 +
       z * (-1.0 / 30 +
            z * (1.0 / 42 +
                 z * (-1.0 / 30 +
                      z * (5.0 / 66 +
                           z * (-691.0 / 2730 +
                                z * (7.0 / 6 + z * (-3617.0 / 510 + z * (43867.0 / 798)))))))));
  return shift.sum + (r + 0.5 * z + series);
}

// Note [Hurwitz zeta]
//   ζ(s, q) = Σ_{k>=0} (k + q)^-s, for s > 1 (DLMF 25.11.1). Summed directly until the base
//   k + q passes 9 (and at least 9 terms), then the Euler-Maclaurin remainder at w = q + N
//   (DLMF 25.11.5 with the sum cut at N):
//     w^(1-s) / (s - 1) + w^-s / 2 + Σ_{j>=1} B_2j / (2j)! s (s+1) ... (s+2j-2) w^(-s-2j+1)
//   to j = 12, stopping when a term no longer changes the sum. For q > 1e8 the first two terms
//   of the expansion in 1/q (DLMF 25.11.43) are exact to rounding. s = 1 is the pole (+inf),
//   s < 1 NaN; at q = 0 and the negative integers +inf (a pole of the sum's first terms); a
//   negative q with a fractional s is NaN (a negative base to a fractional power), with an
//   integral s the sum runs through the negative bases, which is polygamma's continuation.
//   These are PyTorch's (Cephes') rules; q = -inf, which they send to +inf, is NaN here. s = 2
//   with q > 0 (trigamma) takes trigamma_of_positive instead.
LG_HOST_DEVICE LG_INLINE double zeta(double s, double q) {
  constexpr double kEps = 1.1102230246251565e-16;  // 2^-53
  // B_2j / (2j)! for j = 1 .. 12.
  constexpr double kBernoulliOverFactorial[] = {1.0 / 6 / 2,
                                                -1.0 / 30 / 24,
                                                1.0 / 42 / 720,
                                                -1.0 / 30 / 40320,
                                                5.0 / 66 / 3628800,
                                                -691.0 / 2730 / 479001600,
                                                7.0 / 6 / 87178291200.0,
                                                -3617.0 / 510 / 20922789888000.0,
                                                43867.0 / 798 / 6402373705728000.0,
                                                -174611.0 / 330 / 2432902008176640000.0,
                                                854513.0 / 138 / 1.1240007277776077e21,
                                                -236364091.0 / 2730 / 6.204484017332394e23};
  if (s != s || q != q) return quiet_nan();
  if (s == 1.0) return infinity();
  if (s < 1.0) return quiet_nan();
  if (q <= 0.0) {
    if (q == -infinity()) return quiet_nan();
    if (q == std::floor(q)) return infinity();
    if (s != std::floor(s)) return quiet_nan();
  }
  if (q > 1e8) return (1.0 / (s - 1.0) + 0.5 / q) * std::pow(q, 1.0 - s);
  if (s == 2.0 && q > 0.0) return trigamma_of_positive(q);
  const bool integral_s = s == std::floor(s) && s <= 64.0;
  double sum = inverse_power(q, s, integral_s);
  double w = q;
  double term = sum;
  for (int n = 0; n < 9 || w <= 9.0; ++n) {
    w += 1.0;
    term = inverse_power(w, s, integral_s);
    sum += term;
    if (std::fabs(term / sum) < kEps) return sum;
  }
  // term = w^-s was added whole; the remainder takes half of it.
  sum += term * w / (s - 1.0) - 0.5 * term;
  double rising = 1.0;  // s (s+1) ... (s+2j-2)
  double power = term;  // w^(-s-2j+1)
  double k = 0.0;
  for (const double c : kBernoulliOverFactorial) {
    rising *= s + k;
    power /= w;
    const double t = c * rising * power;
    sum += t;
    if (std::fabs(t / sum) < kEps) break;
    rising *= s + k + 1.0;
    power /= w;
    k += 2.0;
  }
  return sum;
}

// Note [Inverse error function]
//   erfinv(y) for y in (-1, 1), from fits (Note [Chebyshev fits]): for |y| <= 0.75 it is
//   y g(y^2), g a fit of erfinv(y) / y; beyond, with q = 1 - |y| (exact there, Sterbenz, so the
//   tail toward 1 keeps its digits) and s = sqrt(-log q), the first term of the tail's expansion,
//   it is s h(log s), h a fit of erfinv(1 - q) / s down to q = 2^-53 (the smallest q a double y
//   gives). erfinv(+-1) is +-inf, |y| > 1 and NaN give NaN, and +-0 itself.
LG_HOST_DEVICE LG_INLINE double erfinv(double y) {
  const double a = std::fabs(y);
  if (!(a <= 1.0)) return quiet_nan();
  if (a == 1.0) return std::copysign(infinity(), y);
  if (a <= 0.75) return y * fits::erfinv_central(y * y);
  const double s = std::sqrt(-std::log(1.0 - a));
  return std::copysign(s * fits::erfinv_tail(std::log(s)), y);
}

// exp(x^2) without the rounding of the square: x^2 = h + l exactly (l from an fma), and
// exp(h + l) = exp(h) (1 + l) to within l^2. A rounded square would cost x^2 u relative (50 ulps
// at x = 10).
LG_HOST_DEVICE LG_INLINE double exp_of_square(double x) {
  const double h = x * x;
  const double l = std::fma(x, x, -h);
  return std::exp(h) * (1.0 + l);
}

// Note [Scaled complementary error function]
//   erfcx(x) = exp(x^2) erfc(x). For 0 <= x < 10 the product itself (exp_of_square, libm's
//   erfc). From 10 on the asymptotic series (DLMF 7.12.1)
//     erfcx(x) ~ 1 / (x sqrt(pi)) sum_k (-1)^k (2k - 1)!! / (2 x^2)^k,
//   whose 14th term is below 1e-17 there; past 1e8 only its first term counts. A negative x
//   reflects, erfcx(x) = 2 exp(x^2) - erfcx(-x), +inf below -26.7 where exp(x^2) overflows.
LG_HOST_DEVICE LG_INLINE double erfcx_of_nonnegative(double x) {
  constexpr double kInvSqrtPi = 0.56418958354775628695;
  if (x < 10.0) return exp_of_square(x) * std::erfc(x);
  if (x > 1e8) return kInvSqrtPi / x;  // also 0 at +inf
  const double z = 0.5 / (x * x);
  double term = 1.0, sum = 1.0;
  for (int k = 1; k <= 14; ++k) {
    term *= -(2.0 * k - 1.0) * z;
    sum += term;
  }
  return kInvSqrtPi / x * sum;
}
LG_HOST_DEVICE LG_INLINE double erfcx(double x) {
  if (std::isnan(x)) return x;
  if (x >= 0.0) return erfcx_of_nonnegative(x);
  if (x < -26.7) return infinity();
  return 2.0 * exp_of_square(x) - erfcx_of_nonnegative(-x);
}

// Note [Chebyshev fits]
//   erfinv, ndtri and the Bessel functions are evaluated from fitted series (special_math_fits.h,
//   written by tools/fit_special_math.py from mpmath's values at 50 digits): in each region the
//   function, with what makes it hard to fit taken out (a logarithm, an exponential, the
//   1/sqrt(x) decay, the oscillation), is a smooth function of a variable in which a series of
//   10 to 30 terms reaches 2^-57 of it. Each is a fixed number of multiply-adds: no loop runs to
//   convergence and no term divides, where the defining series take up to 50 terms, each with a
//   division, and iterations take a libm call a step. The script measures each fit's rounding in
//   double (1 to 5 units of 2^-53); tests/autograd/test_bessel.cpp, test_special_math.cpp and
//   test_pointwise_math.cpp measure the functions against mpmath and long double.

// Note [Inverse normal distribution function]
//   ndtri(p), the x with Phi(x) = p. For 0.15 <= p <= 0.85 it is r g(r^2) for r = p - 1/2 (exact
//   from p = 1/4 on, within half an ulp of r below), g a fit of ndtri(1/2 + r) / r. In the tails
//   q = min(p, 1 - p) (1 - p exact, Sterbenz, so the upper tail does not cancel) and
//   s = sqrt(-2 log q), the first term of x's expansion in the tail; x = s h(log s), h a fit of
//   |x| / s over q from 0.15 down to the smallest subnormal (log s from 0.67 to 3.65), negated
//   below 1/2. ndtri(0) = -inf, ndtri(1) = +inf, outside [0, 1] and NaN give NaN, as PyTorch's.
//   The CPU's lanes take both forms with their own log (Note [Special functions in lanes] in
//   kernels/cpu/elementwise_range_limited.cpp): the tail takes the log as an argument.
LG_HOST_DEVICE LG_ALWAYS_INLINE bool ndtri_central_applies(double p) {
  return std::fabs(p - 0.5) <= 0.35;  // false for NaN
}
LG_HOST_DEVICE LG_ALWAYS_INLINE double ndtri_central(double p) {
  const double r = p - 0.5;
  return r * fits::ndtri_central(r * r);
}
// ndtri(p) for 0 < p < 1 outside the central range, with log(v) as log(v) (v positive and normal
// for every such normal p).
template <typename Log>
LG_HOST_DEVICE LG_ALWAYS_INLINE double ndtri_tail(double p, const Log& log) {
  const bool lower = p < 0.5;
  const double s = std::sqrt(-2.0 * log(lower ? p : 1.0 - p));
  const double x = s * fits::ndtri_tail(log(s));
  return lower ? -x : x;
}
LG_HOST_DEVICE LG_INLINE double ndtri(double p) {
  if (!(p >= 0.0 && p <= 1.0)) return quiet_nan();
  if (p == 0.0) return -infinity();
  if (p == 1.0) return infinity();
  if (ndtri_central_applies(p)) return ndtri_central(p);
  return ndtri_tail(p, LibmLog{});
}

// Note [Modified Bessel functions]
//   I0 and I1 and their scaled forms I0e(x) = exp(-|x|) I0(x), I1e(x) = exp(-|x|) I1(x), from
//   fits (Note [Chebyshev fits]): for |x| <= 8 I0 and I1 / x as polynomials in x^2 (the power
//   series' positive, growing terms, summed by Horner's rule without cancellation); beyond,
//   sqrt(x) exp(-x) I_nu(x), which tends to 1 / sqrt(2 pi), in 8 / x. I0 is even and I1 odd;
//   beyond 8, I0(x) is exp(|x| / 2) exp(|x| / 2) I0e(x), so that it overflows only where the
//   function does (|x| > 713).
//   K0 and K1 (x > 0): for x <= 2, K0(x) = R0(x^2) - log(x / 2) I0(x) and
//   K1(x) = R1(x^2) / x + log(x / 2) I1(x) with R0, R1 fits of the smooth parts (DLMF 10.31.2);
//   beyond, sqrt(x) exp(x) K_nu(x) in 2 / x, K_nu(x) that times exp(-x) / sqrt(x). K(0) = +inf,
//   a negative x NaN, K(inf) = 0 (the scaled forms too), as PyTorch's. Each function is its
//   forms' pieces below, which the CPU's lanes compose without branches (bessel_i_of_finite,
//   bessel_k_of_positive), with their own exp and log in place of libm's.
// The central forms of I0 and I1: their values for |x| <= 8 (where bessel_i_series_applies),
// straight-line code with no library call, which the CPU's elementwise loop runs in SIMD lanes
// (Note [Special functions in lanes], kernels/cpu/elementwise_range_limited.cpp). bessel_i0 and
// bessel_i1 take the same operations there, so a value is the same in either loop.
LG_HOST_DEVICE LG_ALWAYS_INLINE bool bessel_i_series_applies(double x) {
  return std::fabs(x) <= 8.0;  // false for NaN
}
LG_HOST_DEVICE LG_ALWAYS_INLINE double bessel_i_series_of_magnitude(int nu, double a) {
  const double v = a * a;
  return nu == 0 ? fits::bessel_i0_small(v) : a * fits::bessel_i1_small(v);
}
LG_HOST_DEVICE LG_ALWAYS_INLINE double bessel_i0_series(double x) {
  return bessel_i_series_of_magnitude(0, std::fabs(x));
}
LG_HOST_DEVICE LG_ALWAYS_INLINE double bessel_i1_series(double x) {
  return std::copysign(bessel_i_series_of_magnitude(1, std::fabs(x)), x);
}
// exp(-a) I_nu(a) for a > 8 (a = inf gives 0).
LG_HOST_DEVICE LG_ALWAYS_INLINE double bessel_i_scaled_large(int nu, double a) {
  const double u = 8.0 / a;
  return (nu == 0 ? fits::bessel_i0_large(u) : fits::bessel_i1_large(u)) / std::sqrt(a);
}
// I_nu(a) for a > 8 from its scaled form s and half = exp(a / 2): overflows only where I does.
LG_HOST_DEVICE LG_ALWAYS_INLINE double bessel_i_unscaled_large(double s, double half) {
  return half * (half * s);
}
// exp(-|x|) I_nu(|x|) when scaled, else I_nu(|x|); nu is 0 or 1.
LG_HOST_DEVICE LG_INLINE double bessel_i_of_magnitude(int nu, double a, bool scaled) {
  if (std::isnan(a)) return a;
  if (a <= 8.0) {
    const double i = bessel_i_series_of_magnitude(nu, a);
    return scaled ? std::exp(-a) * i : i;
  }
  if (std::isinf(a)) return scaled ? 0.0 : a;
  const double s = bessel_i_scaled_large(nu, a);
  return scaled ? s : bessel_i_unscaled_large(s, std::exp(0.5 * a));
}
LG_HOST_DEVICE LG_INLINE double bessel_i0(double x, bool scaled) {
  return bessel_i_of_magnitude(0, std::fabs(x), scaled);
}
LG_HOST_DEVICE LG_INLINE double bessel_i1(double x, bool scaled) {
  return std::copysign(bessel_i_of_magnitude(1, std::fabs(x), scaled), x);
}
// bessel_i0 (nu = 0) or bessel_i1 of a finite x as straight-line code, both forms computed and
// one kept, with exp(v) as exp: the same operations as theirs, whose exp is libm's.
template <typename Exp = LibmExp>
LG_HOST_DEVICE LG_ALWAYS_INLINE double bessel_i_of_finite(int nu, double x, bool scaled,
                                                          const Exp& exp = {}) {
  const double a = std::fabs(x);
  const bool small = a <= 8.0;
  const double series = bessel_i_series_of_magnitude(nu, a);
  const double s = bessel_i_scaled_large(nu, a);
  // One exp: exp(-a) for the scaled series, exp(a / 2) for the unscaled large form.
  const double e = exp(scaled ? -a : 0.5 * a);
  const double value =
      scaled ? (small ? e * series : s) : (small ? series : bessel_i_unscaled_large(s, e));
  return nu == 0 ? value : std::copysign(value, x);
}

// K_nu(x) for 0 < x <= 2, l = log(x / 2).
LG_HOST_DEVICE LG_ALWAYS_INLINE double bessel_k_small(int nu, double x, double l) {
  const double v = x * x;
  return nu == 0 ? fits::bessel_k0_small(v) - l * fits::bessel_i0_small(v)
                 : fits::bessel_k1_small(v) / x + l * x * fits::bessel_i1_small(v);
}
// exp(x) K_nu(x) for x > 2.
LG_HOST_DEVICE LG_ALWAYS_INLINE double bessel_k_scaled_large(int nu, double x) {
  const double u = 2.0 / x;
  return (nu == 0 ? fits::bessel_k0_large(u) : fits::bessel_k1_large(u)) / std::sqrt(x);
}
// exp(x) K_nu(x) when scaled, else K_nu(x); nu is 0 or 1.
LG_HOST_DEVICE LG_INLINE double bessel_k(int nu, double x, bool scaled) {
  if (!(x >= 0.0)) return quiet_nan();  // negative, NaN
  if (x == 0.0) return infinity();
  if (x <= 2.0) {
    const double k = bessel_k_small(nu, x, std::log(0.5 * x));
    return scaled ? std::exp(x) * k : k;
  }
  if (std::isinf(x)) return 0.0;
  const double s = bessel_k_scaled_large(nu, x);
  return scaled ? s : std::exp(-x) * s;
}
// Where bessel_k_of_positive applies: x finite and x / 2 a normal double (its log's domain in the
// CPU's lanes).
LG_HOST_DEVICE LG_ALWAYS_INLINE bool bessel_k_of_positive_applies(double x) {
  return x >= 0x1p-1021 && x <= std::numeric_limits<double>::max();  // not NaN
}
// bessel_k for such x as straight-line code, both forms computed and one kept, with log(v) and
// exp(v) as log and exp: the same operations as bessel_k's, whose log and exp are libm's.
template <typename Log = LibmLog, typename Exp = LibmExp>
LG_HOST_DEVICE LG_ALWAYS_INLINE double bessel_k_of_positive(int nu, double x, bool scaled,
                                                            const Log& log = {},
                                                            const Exp& exp = {}) {
  const bool small = x <= 2.0;
  const double k = bessel_k_small(nu, x, log(0.5 * x));
  const double s = bessel_k_scaled_large(nu, x);
  // One exp: exp(x) for the scaled small form, exp(-x) for the unscaled large one.
  const double e = exp(small ? x : -x);
  return scaled ? (small ? e * k : s) : (small ? k : e * s);
}

// Note [Bessel functions of the first and second kind]
//   J0, J1 (every x) and Y0, Y1 (x > 0) from fits (Note [Chebyshev fits]). For |x| <= 5, J0 and
//   J1 / x are series in x^2, and Y0 and Y1 their logarithmic parts plus fits of the rest
//   (DLMF 10.8.2): Y0(x) = 2/pi log(x) J0(x) + R0(x^2), Y1(x) = 2/pi log(x) J1(x) + R1(x^2) / x.
//   Beyond 5, Hankel's form (DLMF 10.17.3) with xi = x - (2 nu + 1) pi / 4:
//     J_nu(x) = sqrt(2 / (pi x)) (P_nu(x) cos xi - Q_nu(x) sin xi),
//     Y_nu(x) = sqrt(2 / (pi x)) (P_nu(x) sin xi + Q_nu(x) cos xi),
//   with P_nu and x Q_nu fits in (5 / x)^2, and cos xi, sin xi from libm's cos x and sin x
//   ((cos x +- sin x) / sqrt 2): x itself is exact, where x - pi/4 would be rounded by up to
//   half an ulp of x, a large relative error near a zero at large x. Near a zero the absolute
//   error is an ulp or a few of the function's scale, which the zero's own conditioning
//   (|x J'/J|) amplifies as it does any rounding of x. J0 is even and J1 odd; Y of x < 0 is NaN,
//   Y(0) = -inf; all four are 0 at +-inf (the limit: PyTorch's are NaN there).
//   The CPU's lanes take Hankel's form up to 2^20 with their own cos x and sin x, and Y0 and Y1's
//   central form with their own log x (Note [Special functions in lanes] in
//   kernels/cpu/elementwise_range_limited.cpp): the functions below take those as arguments.
struct BesselPair {
  double j;
  double y;
};
// J_nu(x) and Y_nu(x), nu 0 or 1, for x > 5 by Hankel's form, from cos x and sin x.
LG_HOST_DEVICE LG_ALWAYS_INLINE BesselPair bessel_hankel(int nu, double x, double cos_x,
                                                         double sin_x) {
  constexpr double kSqrtTwoOverPi = 0.79788456080286535588;
  constexpr double kSqrtHalf = 0.70710678118654752440;
  const double w = 5.0 / x;
  const double u = w * w;
  const double p = nu == 0 ? fits::bessel_p0(u) : fits::bessel_p1(u);
  const double q = w * (nu == 0 ? fits::bessel_q0(u) : fits::bessel_q1(u));
  // xi = x - pi/4: cos xi = (c + s) / sqrt 2, sin xi = (s - c) / sqrt 2; xi = x - 3pi/4:
  // cos xi = (s - c) / sqrt 2, sin xi = -(c + s) / sqrt 2.
  const double c = cos_x, s = sin_x;
  const double cos_xi = kSqrtHalf * (nu == 0 ? c + s : s - c);
  const double sin_xi = kSqrtHalf * (nu == 0 ? s - c : -(c + s));
  const double a = kSqrtTwoOverPi / std::sqrt(x);
  return {a * (p * cos_xi - q * sin_xi), a * (p * sin_xi + q * cos_xi)};
}
LG_HOST_DEVICE LG_ALWAYS_INLINE BesselPair bessel_hankel(int nu, double x) {
  return bessel_hankel(nu, x, std::cos(x), std::sin(x));
}
// The central forms of J0 and J1: their values for |x| <= 5 (where bessel_j_series_applies),
// straight-line code for the CPU's lanes as bessel_i0_series above.
LG_HOST_DEVICE LG_ALWAYS_INLINE bool bessel_j_series_applies(double x) {
  return std::fabs(x) <= 5.0;  // false for NaN
}
LG_HOST_DEVICE LG_ALWAYS_INLINE double bessel_j0_series(double x) {
  return fits::bessel_j0_small(x * x);
}
LG_HOST_DEVICE LG_ALWAYS_INLINE double bessel_j1_series(double x) {
  return x * fits::bessel_j1_small(x * x);
}
LG_HOST_DEVICE LG_INLINE double bessel_j0(double x) {
  if (bessel_j_series_applies(x)) return bessel_j0_series(x);
  if (std::isnan(x)) return x;
  const double a = std::fabs(x);
  if (std::isinf(a)) return 0.0;
  return bessel_hankel(0, a).j;
}
LG_HOST_DEVICE LG_INLINE double bessel_j1(double x) {
  if (bessel_j_series_applies(x)) return bessel_j1_series(x);
  if (std::isnan(x)) return x;
  const double a = std::fabs(x);
  if (std::isinf(a)) return std::copysign(0.0, x);
  const double j = bessel_hankel(1, a).j;
  return x < 0.0 ? -j : j;
}
// Y_nu(x), nu 0 or 1, for 0 < x <= 5 (where bessel_y_series_applies), from log x.
LG_HOST_DEVICE LG_ALWAYS_INLINE bool bessel_y_series_applies(double x) {
  return x > 0.0 && x <= 5.0;  // false for NaN
}
LG_HOST_DEVICE LG_ALWAYS_INLINE double bessel_y_series(int nu, double x, double log_x) {
  constexpr double kTwoOverPi = 0.63661977236758134308;
  const double v = x * x;
  const double l = kTwoOverPi * log_x;
  return nu == 0 ? fits::bessel_y0_small(v) + l * fits::bessel_j0_small(v)
                 : fits::bessel_y1_small(v) / x + l * x * fits::bessel_j1_small(v);
}
LG_HOST_DEVICE LG_INLINE double bessel_y(int nu, double x) {
  if (!(x >= 0.0)) return quiet_nan();  // negative, NaN
  if (x == 0.0) return -infinity();
  if (bessel_y_series_applies(x)) return bessel_y_series(nu, x, std::log(x));
  if (std::isinf(x)) return 0.0;
  return bessel_hankel(nu, x).y;
}

// Note [Airy function]
//   Ai(x) and Ai'(x) (torch.special.airy_ai, and the derivative for its gradient) from fits
//   (Note [Chebyshev fits]): for -2 <= x <= 1 each directly in x. Beyond 1, with
//   zeta = (2/3) x^(3/2), the decaying forms Ai(x) = exp(-zeta) F(u) / (2 sqrt(pi) x^(1/4)) and
//   Ai'(x) = -x^(1/4) exp(-zeta) G(u) / (2 sqrt(pi)), F and G fitted in u = x^(-3/2) (both 1 at
//   infinity, DLMF 9.7.5-6). Below -2, with t = -x, the oscillating forms
//   Ai(-t) = (P cos chi + Q sin chi) / (sqrt(pi) t^(1/4)) and
//   Ai'(-t) = t^(1/4) (R sin chi - S cos chi) / sqrt(pi), chi = zeta - pi/4 (DLMF 9.7.9-10), the
//   smooth P, Q zeta, R, S zeta fitted in u = (2/t)^(3/2) from mpmath's Ai and Bi; cos chi and
//   sin chi come from the cosine and sine of zeta itself ((c + s) / sqrt 2, (s - c) / sqrt 2), so
//   pi/4 is never subtracted from a large rounded zeta, and zeta's own rounding (zeta 2^-53,
//   10^-9 at x = -10^5) is taken back by its low part l, exact from fma: cos(zeta + l) from the
//   cosines and sines of both, exp(-zeta - l) as exp(-zeta) (1 - l). At +inf both are 0, at -inf Ai
//   is 0 (its amplitude t^(-1/4) decays; PyTorch's is NaN at both) and Ai' NaN (its amplitude
//   grows); where zeta overflows (|x| > 1e205) the same. The CPU's lanes take the decaying and
//   oscillating forms with their own exp, cosine and sine (Note [Special functions in lanes] in
//   kernels/cpu/elementwise_range_limited.cpp): the functions below take those as arguments.
// The central forms of Ai and Ai': their values for -2 <= x <= 1 (where airy_series_applies),
// straight-line code for the CPU's lanes as bessel_i0_series above.
LG_HOST_DEVICE LG_ALWAYS_INLINE bool airy_series_applies(double x) {
  return x >= -2.0 && x <= 1.0;  // false for NaN
}
LG_HOST_DEVICE LG_ALWAYS_INLINE double airy_series(double x, bool prime) {
  return prime ? fits::airy_ai_prime_small(x) : fits::airy_ai_small(x);
}
// zeta = (2/3) |x|^(3/2) as zeta + low, and |x|^(1/4) (Note [Airy function]).
struct AiryPhase {
  double zeta;
  double low;
  double product;  // |x|^(3/2)
  double quarter;  // |x|^(1/4)
};
LG_HOST_DEVICE LG_ALWAYS_INLINE AiryPhase airy_phase(double x) {
  const double t = std::fabs(x);
  const double root = std::sqrt(t);
  constexpr double kTwoThirds = 0.66666666666666662966, kTwoThirdsLow = 3.7007434154171883e-17;
  const double product = t * root;
  const double zeta = product * kTwoThirds;
  // zeta's rounding, about zeta 2^-53, would move the exponent or the phase by as much: its low
  // part, from the exact errors of the square root and the two products (fma), corrects them.
  const double root_low = std::fma(-root, root, t) / (root + root);
  const double product_low = std::fma(t, root, -product) + t * root_low;
  const double zeta_low =
      std::fma(product, kTwoThirds, -zeta) + product * kTwoThirdsLow + product_low * kTwoThirds;
  return {zeta, zeta_low, product, std::sqrt(root)};
}
// Ai(x) (Ai'(x) when prime) for x > 1, finite zeta, from exp(-zeta) (the CPU's lanes pass their
// own).
LG_HOST_DEVICE LG_ALWAYS_INLINE double airy_decaying(const AiryPhase& z, bool prime,
                                                     double exp_minus_zeta) {
  constexpr double kInvSqrtPi = 0.56418958354775628695;  // 1 / sqrt(pi)
  const double u = 1.0 / z.product;
  const double e = exp_minus_zeta * (1.0 - z.low) * (0.5 * kInvSqrtPi);
  return prime ? -z.quarter * e * fits::airy_ai_prime_decaying(u)
               : e / z.quarter * fits::airy_ai_decaying(u);
}
// Ai(x) (Ai'(x) when prime) for x < -2, finite zeta, from the cosines and sines of zeta and of
// its low part (the CPU's lanes pass their own).
LG_HOST_DEVICE LG_ALWAYS_INLINE double airy_oscillating(const AiryPhase& z, bool prime, double c0,
                                                        double s0, double cl, double sl) {
  constexpr double kInvSqrtPi = 0.56418958354775628695;  // 1 / sqrt(pi)
  constexpr double kSqrtHalf = 0.70710678118654752440;
  const double u = 2.0 * 1.41421356237309504880 / z.product;  // (2 / t)^(3/2)
  const double c = c0 * cl - s0 * sl, s = s0 * cl + c0 * sl;
  const double cos_chi = kSqrtHalf * (c + s), sin_chi = kSqrtHalf * (s - c);
  if (prime)
    return z.quarter * kInvSqrtPi *
           (fits::airy_r(u) * sin_chi - fits::airy_s(u) / z.zeta * cos_chi);
  return kInvSqrtPi / z.quarter * (fits::airy_p(u) * cos_chi + fits::airy_q(u) / z.zeta * sin_chi);
}
LG_HOST_DEVICE LG_INLINE double airy(double x, bool prime) {
  if (airy_series_applies(x)) return airy_series(x, prime);
  if (std::isnan(x)) return x;
  const AiryPhase z = airy_phase(x);
  if (x > 1.0) {
    if (std::isinf(z.zeta)) return 0.0;
    return airy_decaying(z, prime, std::exp(-z.zeta));
  }
  if (std::isinf(z.zeta)) return prime ? quiet_nan() : 0.0;
  // |low| <= 1 below 1e15.
  return airy_oscillating(z, prime, std::cos(z.zeta), std::sin(z.zeta), std::cos(z.low),
                          std::sin(z.low));
}

// sin(x) / x, 1 at 0 and 0 at +-inf (torch.special.spherical_bessel_j0).
LG_HOST_DEVICE LG_INLINE double spherical_bessel_j0(double x) {
  if (x == 0.0) return 1.0;
  if (std::isnan(x)) return x;
  if (std::isinf(x)) return 0.0;
  return std::sin(x) / x;
}

// sinc(x) = sin(pi x) / (pi x), 1 at 0. The sine is taken at x less the nearest even integer
// (exact), folded into [-1/2, 1/2] by sin(pi r) = sin(pi (1 - r)) (1 - r exact too), so sinc is
// exactly 0 at the nonzero integers and pi x is never rounded before the sine. NaN at +-inf, as
// PyTorch's sin(pi x) / (pi x).
LG_HOST_DEVICE LG_INLINE double sinc(double x) {
  if (x == 0.0) return 1.0;
  double r = x - 2.0 * std::round(0.5 * x);  // in [-1, 1]
  if (r > 0.5) {
    r = 1.0 - r;
  } else if (r < -0.5) {
    r = -1.0 - r;
  }
  return std::sin(kPi * r) / (kPi * x);
}

// Note [Regularized incomplete gamma functions]
//   P(a, x) = gamma(a, x) / Gamma(a) and Q(a, x) = 1 - P(a, x) for a, x >= 0 (torch.igamma and
//   igammac). Below x = a + 1 the series (DLMF 8.11.4)
//     P(a, x) = x^a e^-x / Gamma(a + 1) sum_n x^n / ((a + 1) ... (a + n)),
//   of positive terms; from there the continued fraction for Q (DLMF 8.9.2) by the modified
//   Lentz method, which converges quickly once x > a + 1. The other function is one minus the
//   first: never a cancellation beyond a digit or two, as each is at most about 1/2 (but for
//   small a, where P(a, x) nears 1 for x < 1). The prefactor x^a e^-x / Gamma(a) is
//   exp(a log x - x - lgamma(a)), whose rounding grows with its terms (a relative 1e-13 at
//   a = 1000), and near x = a the series needs about 8 sqrt(a) terms: for a > 20 and
//   |x - a| <= 0.3 a, Temme's uniform expansion takes over (Note [Temme's expansion]), as in
//   PyTorch's Cephes-derived kernel. The edges are PyTorch's: NaN for negative operands,
//   P(0, x > 0) = 1, P(0, 0) NaN, P(a, 0) = 0, P(inf, x) = 0 but NaN at x = inf, P(a, inf) = 1.
//   For a normal a up to 2^1000 and a normal, finite x outside Temme's range the CPU's lanes run
//   the series and the fraction for several elements in lockstep, each lane stopping where its
//   own loop does (Note [Incomplete gamma in lanes] in kernels/cpu/elementwise_range_limited.cpp),
//   and the prefactor with their own log and exp; incomplete_gamma_of_positive is that
//   computation one element at a time, with the log and exp as parameters.
// Where Temme's expansion takes P and Q (Note [Temme's expansion]).
LG_HOST_DEVICE LG_ALWAYS_INLINE bool incomplete_gamma_temme_applies(double a, double x) {
  return a > kTemmeMinA && std::fabs(x - a) <= kTemmeMaxMu * a;  // false for NaN and inf
}
// Where the series or the fraction take them with lgamma_of_positive in the prefactor.
LG_HOST_DEVICE LG_ALWAYS_INLINE bool incomplete_gamma_of_positive_applies(double a, double x) {
  return lgamma_of_positive_applies(a) && x >= std::numeric_limits<double>::min() &&
         x <= std::numeric_limits<double>::max() &&  // false for NaN
         !incomplete_gamma_temme_applies(a, x);
}
// exp(a log x - x - log Gamma(a)) where incomplete_gamma_of_positive_applies, with log and exp
// as given (lgamma_of_positive's log too).
template <typename Log = LibmLog, typename Exp = LibmExp>
LG_HOST_DEVICE LG_ALWAYS_INLINE double incomplete_gamma_prefactor_of_positive(double a, double x,
                                                                              const Log& log = {},
                                                                              const Exp& exp = {}) {
  return exp(a * log(x) - x - lgamma_of_positive(a, log));
}
// The series' sum, sum_n x^n / (a (a + 1) ... (a + n)) (P without the prefactor), for x < a + 1.
// The lanes' copy is incomplete_gamma_series_lanes: the same operations, in the same order.
LG_HOST_DEVICE LG_INLINE double incomplete_gamma_series_sum(double a, double x) {
  double ap = a, term = 1.0 / a, sum = term;
  for (int n = 0; n < 100000; ++n) {  // about sqrt(a) terms near x = a
    ap += 1.0;
    term *= x / ap;
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return sum;
}
// The continued fraction's value (Q without the prefactor), for x >= a + 1. The lanes' copy is
// incomplete_gamma_fraction_lanes.
inline constexpr double kIncompleteGammaTiny = 1e-300;
LG_HOST_DEVICE LG_INLINE double incomplete_gamma_fraction_value(double a, double x) {
  constexpr double kTiny = kIncompleteGammaTiny;
  double b = x + 1.0 - a;
  double c = 1.0 / kTiny, d = 1.0 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    const double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0) < 1e-16) break;
  }
  return h;
}
// P(a, x) when lower, else Q(a, x), from the series' sum (series) or the fraction's value and the
// prefactor.
LG_HOST_DEVICE LG_ALWAYS_INLINE double incomplete_gamma_from(bool series, double value,
                                                             double prefactor, bool lower) {
  const double first = value * prefactor;  // P from the series, Q from the fraction
  return series == lower ? first : 1.0 - first;
}
// P(a, x) when lower, else Q(a, x), by the series or the fraction, with the prefactor given.
LG_HOST_DEVICE LG_INLINE double incomplete_gamma_with_prefactor(double a, double x, bool lower,
                                                                double prefactor) {
  const bool series = x < a + 1.0;
  const double value =
      series ? incomplete_gamma_series_sum(a, x) : incomplete_gamma_fraction_value(a, x);
  return incomplete_gamma_from(series, value, prefactor, lower);
}
// P(a, x) when lower, else Q(a, x), where incomplete_gamma_of_positive_applies.
template <typename Log = LibmLog, typename Exp = LibmExp>
LG_HOST_DEVICE LG_INLINE double incomplete_gamma_of_positive(double a, double x, bool lower,
                                                             const Log& log = {},
                                                             const Exp& exp = {}) {
  return incomplete_gamma_with_prefactor(a, x, lower,
                                         incomplete_gamma_prefactor_of_positive(a, x, log, exp));
}
// Note [Temme's expansion]
//   For large a the incomplete gamma functions turn into the normal distribution's around x = a.
//   Temme's uniform expansion (DLMF 8.12.3 and 8.12.4) makes that exact:
//     Q(a, x) = erfc(eta sqrt(a / 2)) / 2 + R,  P(a, x) = erfc(-eta sqrt(a / 2)) / 2 - R,
//     R = exp(-a eta^2 / 2) / sqrt(2 pi a) sum_k c_k(eta) a^-k,
//   where mu = (x - a) / a and eta^2 / 2 = mu - log(1 + mu), eta of mu's sign. The c_k are
//   analytic at eta = 0; tools/incomplete_gamma_temme.py derives their Taylor coefficients from
//   the series of mu(eta) and measured the double evaluation against mpmath for a > 20 and
//   |mu| <= 0.3, where 13 of them and 18 powers of eta leave out less than 2^-60 of the sum
//   (special_math_temme.h). Neither the exponent nor the sum cancels:
//   - mu is exact but for the division's rounding (x - a is, for x within a factor 2 of a), and
//     mu - log(1 + mu), which is about mu^2 / 2 and would lose a digit per factor 10 that mu is
//     small in a subtraction, is mu^2 / (2 + mu) - 2 (s^3 / 3 + s^5 / 5 + ...) with
//     s = mu / (2 + mu) (log(1 + mu) = 2 atanh(s)): the series is at most mu / 6 of the first
//     term, and 12 of its terms reach 2^-60 for |mu| <= 0.3.
//   - Where R and the erfc term have opposite signs (Q above a; P below a is a sum of two
//     positive terms), R is a small part of the erfc term: about |eta| / 3 <= 0.11 of it in the
//     tail, and at most c_0 / sqrt(2 pi a) < 0.03 of its 1/2 at x = a.
//   So the result's rounding is a few ulps plus the exponent's, a eta^2 / 2 times the few ulps
//   of mu - log(1 + mu): the same growth as P's own condition number in x in the tails. The
//   series and the fraction need about 8 sqrt(a) steps here and their prefactor rounds with
//   a log x; at a = 1e10 they gave P(a, a) = 0.341 (session 76) where this gives 0.5000013.
// mu - log(1 + mu) for |mu| <= kTemmeMaxMu, without cancellation (Note [Temme's expansion]).
LG_HOST_DEVICE LG_INLINE double mu_minus_log1p(double mu) {
  const double s = mu / (2.0 + mu);
  const double s2 = s * s;
  double tail = 0.0;  // sum_{j >= 1} s^(2j) / (2j + 1), by Horner's rule in s^2
  for (int j = kTemmeLogTailTerms; j >= 1; --j)
    tail = (tail + 1.0 / (2 * j + 1)) * s2;
  return mu * mu / (2.0 + mu) - 2.0 * s * tail;
}
// P(a, x) when lower, else Q(a, x), where incomplete_gamma_temme_applies.
LG_HOST_DEVICE LG_INLINE double incomplete_gamma_temme(double a, double x, bool lower) {
  constexpr double kSqrt2Pi = 2.50662827463100050242;
  const double mu = (x - a) / a;
  const double half_eta_squared = mu_minus_log1p(mu);
  const double eta = std::copysign(std::sqrt(2.0 * half_eta_squared), mu);
  // sqrt(2 pi) sqrt(a), not sqrt(2 pi a): finite for every finite a.
  const double r =
      std::exp(-a * half_eta_squared) / (kSqrt2Pi * std::sqrt(a)) * temme_sum(eta, 1.0 / a);
  const double z = eta * std::sqrt(0.5 * a);
  return lower ? 0.5 * std::erfc(-z) - r : 0.5 * std::erfc(z) + r;
}

// P(a, x) when lower, else Q(a, x).
LG_HOST_DEVICE LG_INLINE double incomplete_gamma(double a, double x, bool lower) {
  if (std::isnan(a) || std::isnan(x) || a < 0.0 || x < 0.0) return quiet_nan();
  if (a == 0.0) return x > 0.0 ? (lower ? 1.0 : 0.0) : quiet_nan();
  if (x == 0.0) return lower ? 0.0 : 1.0;
  if (std::isinf(a)) return std::isinf(x) ? quiet_nan() : (lower ? 0.0 : 1.0);
  if (std::isinf(x)) return lower ? 1.0 : 0.0;
  if (incomplete_gamma_temme_applies(a, x)) return incomplete_gamma_temme(a, x, lower);
  if (incomplete_gamma_of_positive_applies(a, x)) return incomplete_gamma_of_positive(a, x, lower);
  // A subnormal a or x, or a beyond 2^1000.
  return incomplete_gamma_with_prefactor(a, x, lower, std::exp(a * std::log(x) - x - lgamma(a)));
}

}  // namespace leangrad::kernels::special_math
