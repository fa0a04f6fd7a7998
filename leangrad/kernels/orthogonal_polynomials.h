// torch.special's orthogonal polynomials at one point, in double on both devices: the Chebyshev
// polynomials of the four kinds T, U, V, W (DLMF 18.3; V and W the third and fourth kinds), the
// same shifted to [0, 1] (T*(x) = T(2x - 1), ...), the physicists' and the probabilists' Hermite
// polynomials H and He, the Laguerre polynomials L and the Legendre polynomials P, each of an
// integral degree n, with the derivative in x (the slope) for the gradient. The launchers of
// kernels/cpu/orthogonal_polynomials.cpp and kernels/cuda/orthogonal_polynomials.cu call these
// per element; Note [Orthogonal polynomials] says how each is evaluated.
#pragma once

#include <cmath>
#include <cstdint>

#include <leangrad/core/macros.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/special_math.h>

namespace leangrad::kernels::orthogonal_polynomials {

// Note [Orthogonal polynomials]
//   The degree is the given value truncated toward zero, as PyTorch's: below 0 the result is 0,
//   at 0 it is 1 (even where x is NaN). A degree that is NaN or infinite gives NaN (PyTorch's
//   integer conversion of those is undefined; on x86 it gives 0). Then, with y = x, or 2x - 1
//   for the shifted kinds:
//   - Every family runs its three-term recurrence p_{k+1} = (a_k y + b_k) p_k - c_k p_{k-1}
//     from p_0 = 1 (DLMF 18.9.1, 18.9.2); the slope runs the recurrence's derivative beside it,
//     p'_{k+1} = a_k p_k + (a_k y + b_k) p'_k - c_k p'_{k-1}, so both cost O(n).
//   - Chebyshev: the closed forms, O(1) at any degree, where PyTorch's are: at y = +-1 (1, n + 1,
//     1, 2n + 1 at 1; times (-1)^n, and V and W exchanged, at -1), and for |y| < 1 and n > 6
//     with theta = acos(y): cos(n theta), sin((n + 1) theta) / sin(theta),
//     cos((n + 1/2) theta) / cos(theta / 2), sin((n + 1/2) theta) / sin(theta / 2). Past PyTorch,
//     for |y| > 1 and n > 64 the hyperbolic forms with t = acosh|y| (cosh(n t), ...;
//     V_n(-y) = (-1)^n W_n(y)), where PyTorch's recurrence would run n steps. Dividing by sin
//     of the same rounded theta keeps the quotient smooth in theta: its error is theta's
//     rounding times d/dtheta, at most about n (n + 1) units of 2^-53 (Bernstein's inequality).
//   - Hermite at y = 0 and odd n is 0 (the recurrence would meet 0 * inf past n ~ 300);
//     Laguerre at 0 is 1 and Legendre at +-1 is (+-1)^n, as PyTorch's.
//   - At y = +-inf the value is the leading term's limit, +-inf (PyTorch's recurrence gives
//     inf - inf = NaN there); the slope likewise.
//   - A recurrence term that overflows meets inf - inf within two steps, and NaN then stays: the
//     loop stops at the first NaN, which is the result the full loop would give. Where |y| > 1
//     for Chebyshev and Legendre the sign of every term is known (all positive beyond 1, the
//     sign of (-1)^n below -1), so there an overflow gives that signed infinity instead.
//   - Hermite's terms overflow by n ~ 400 wherever y is, so its loop ends there on its own. The
//     Laguerre and Legendre values, and every slope, would run n steps: ops::orthogonal_polynomial
//     refuses degrees above kMaxRecurrenceDegree for them (an Error), and these functions give
//     NaN there rather than loop for ever.

// The largest degree that a recurrence of n steps is run for (2^20).
inline constexpr double kMaxRecurrenceDegree = 1048576.0;

// Whether evaluating `p` (or its slope) runs a recurrence whose length is the degree, so that
// ops::orthogonal_polynomial must check the degree against kMaxRecurrenceDegree first.
LG_HOST_DEVICE constexpr bool runs_degree_long_recurrence(OrthogonalPolynomial p, bool slope) {
  return slope || p == OrthogonalPolynomial::LaguerreL || p == OrthogonalPolynomial::LegendreP;
}

namespace detail {

LG_HOST_DEVICE LG_INLINE bool is_chebyshev(OrthogonalPolynomial p) {
  return p <= OrthogonalPolynomial::ShiftedChebyshevW;
}
LG_HOST_DEVICE LG_INLINE bool is_shifted(OrthogonalPolynomial p) {
  return p >= OrthogonalPolynomial::ShiftedChebyshevT &&
         p <= OrthogonalPolynomial::ShiftedChebyshevW;
}
// 0, 1, 2, 3 for the kinds T, U, V, W, shifted or not.
LG_HOST_DEVICE LG_INLINE int chebyshev_kind(OrthogonalPolynomial p) {
  return static_cast<int>(p) % 4;
}
// (-1)^n for an integral n >= 0 (every double above 2^53 is even).
LG_HOST_DEVICE LG_INLINE double parity_sign(double n) {
  return std::fmod(n, 2.0) == 0.0 ? 1.0 : -1.0;
}
// The sign of the leading coefficient: positive but for Laguerre's, (-1)^n / n!.
LG_HOST_DEVICE LG_INLINE double leading_sign(OrthogonalPolynomial p, double n) {
  return p == OrthogonalPolynomial::LaguerreL ? parity_sign(n) : 1.0;
}

// Chebyshev of `kind` at y = +-1, degree n >= 1.
LG_HOST_DEVICE inline double chebyshev_at_edge(int kind, double y, double n) {
  const double at_one[4] = {1.0, n + 1.0, 1.0, n + n + 1.0};
  if (y > 0) return at_one[kind];
  const int mirrored = kind == 2 ? 3 : kind == 3 ? 2 : kind;  // V_n(-1) = (-1)^n W_n(1)
  return parity_sign(n) * at_one[mirrored];
}

// Chebyshev of `kind` for |y| < 1, by the angle theta = acos(y).
LG_HOST_DEVICE inline double chebyshev_trigonometric(int kind, double y, double n) {
  const double theta = std::acos(y);
  switch (kind) {
    case 0:
      return std::cos(n * theta);
    case 1:
      return std::sin((n + 1.0) * theta) / std::sin(theta);
    case 2:
      return std::cos((n + 0.5) * theta) / std::cos(0.5 * theta);
    default:
      return std::sin((n + 0.5) * theta) / std::sin(0.5 * theta);
  }
}

// Chebyshev of `kind` for |y| > 1, by t = acosh|y|.
LG_HOST_DEVICE inline double chebyshev_hyperbolic(int kind, double y, double n) {
  const double t = std::acosh(std::fabs(y));
  double sign = 1.0;
  if (y < 0) {
    sign = parity_sign(n);
    kind = kind == 2 ? 3 : kind == 3 ? 2 : kind;  // V_n(-y) = (-1)^n W_n(y), and back
  }
  switch (kind) {
    case 0:
      return sign * std::cosh(n * t);
    case 1:
      return sign * (std::sinh((n + 1.0) * t) / std::sinh(t));
    case 2:
      return sign * (std::cosh((n + 0.5) * t) / std::cosh(0.5 * t));
    default:
      return sign * (std::sinh((n + 0.5) * t) / std::sinh(0.5 * t));
  }
}

struct Terms {
  double value = 1.0;
  double slope = 0.0;
};

// p_1(y) and p_1'(y), the recurrence's first terms.
LG_HOST_DEVICE LG_INLINE Terms first_terms(OrthogonalPolynomial p, double y) {
  using P = OrthogonalPolynomial;
  if (is_chebyshev(p)) {
    const int kind = chebyshev_kind(p);
    if (kind == 0) return {y, 1.0};                       // T_1 = y
    if (kind == 1) return {y + y, 2.0};                   // U_1 = 2y
    return {kind == 2 ? y + y - 1.0 : y + y + 1.0, 2.0};  // V_1 = 2y - 1, W_1 = 2y + 1
  }
  if (p == P::HermiteH) return {y + y, 2.0};
  if (p == P::LaguerreL) return {1.0 - y, -1.0};
  return {y, 1.0};  // He, P
}

// p_{k+1}(y) from q = p_{k-1}(y) and r = p_k(y), kd = k: the family's recurrence.
LG_HOST_DEVICE LG_INLINE double next_value(OrthogonalPolynomial p, double y, double kd, double q,
                                           double r) {
  using P = OrthogonalPolynomial;
  if (is_chebyshev(p)) return (y + y) * r - q;
  if (p == P::HermiteH) return (y + y) * r - (kd + kd) * q;
  if (p == P::HermiteHe) return y * r - kd * q;
  if (p == P::LaguerreL) return ((kd + kd + 1.0 - y) * r - kd * q) / (kd + 1.0);
  return ((kd + kd + 1.0) * y * r - kd * q) / (kd + 1.0);  // Legendre
}

// p'_{k+1}(y) from r = p_k(y), dq = p'_{k-1}(y) and dr = p'_k(y): the recurrence's derivative.
LG_HOST_DEVICE LG_INLINE double next_slope(OrthogonalPolynomial p, double y, double kd, double r,
                                           double dq, double dr) {
  using P = OrthogonalPolynomial;
  if (is_chebyshev(p)) return 2.0 * r + (y + y) * dr - dq;
  if (p == P::HermiteH) return 2.0 * r + (y + y) * dr - (kd + kd) * dq;
  if (p == P::HermiteHe) return r + y * dr - kd * dq;
  if (p == P::LaguerreL) return ((kd + kd + 1.0 - y) * dr - r - kd * dq) / (kd + 1.0);
  return ((kd + kd + 1.0) * (r + y * dr) - kd * dq) / (kd + 1.0);  // Legendre
}

// p_n(y) by the family's recurrence (and p'_n(y) with kSlope), 1 <= n <= kMaxRecurrenceDegree;
// stops at the first NaN (Note [Orthogonal polynomials]).
template <bool kSlope>
LG_HOST_DEVICE inline Terms recurrence(OrthogonalPolynomial p, double y, std::int64_t n) {
  double q = 1.0, dq = 0.0;  // p_{k-1}
  const Terms first = first_terms(p, y);
  double r = first.value, dr = first.slope;  // p_k, from p_1
  for (std::int64_t k = 1; k < n; ++k) {
    const auto kd = static_cast<double>(k);
    const double next = next_value(p, y, kd, q, r);
    if constexpr (kSlope) {
      const double dnext = next_slope(p, y, kd, r, dq, dr);
      dq = dr, dr = dnext;
    }
    q = r, r = next;
    if (std::isnan(r) || (kSlope && std::isnan(dr))) break;
  }
  return {r, dr};
}

// Whether the sign of every term at y is known (Chebyshev and Legendre beyond +-1), so that a
// NaN from an overflowed recurrence is that signed infinity.
LG_HOST_DEVICE LG_INLINE bool sign_is_known(OrthogonalPolynomial p, double y) {
  return (is_chebyshev(p) || p == OrthogonalPolynomial::LegendreP) && std::fabs(y) > 1.0;
}

// The argument the family is evaluated at: x, or 2x - 1 for the shifted kinds.
LG_HOST_DEVICE LG_INLINE double argument(OrthogonalPolynomial p, double x) {
  return is_shifted(p) ? x + x - 1.0 : x;
}

}  // namespace detail

// p_n(x) (Note [Orthogonal polynomials]).
LG_HOST_DEVICE inline double value(OrthogonalPolynomial p, double x, double n) {
  using P = OrthogonalPolynomial;
  if (!std::isfinite(n)) return special_math::quiet_nan();
  n = std::trunc(n);
  if (n < 0) return 0.0;
  if (n == 0) return 1.0;
  if (std::isnan(x)) return x;
  const double y = detail::argument(p, x);
  if (std::isinf(y)) {
    const double sign = y > 0 ? 1.0 : detail::parity_sign(n);
    return detail::leading_sign(p, n) * sign * special_math::infinity();
  }
  if (detail::is_chebyshev(p)) {
    const int kind = detail::chebyshev_kind(p);
    const double magnitude = std::fabs(y);
    if (magnitude == 1.0) return detail::chebyshev_at_edge(kind, y, n);
    if (magnitude < 1.0 && n > 6) return detail::chebyshev_trigonometric(kind, y, n);
    if (magnitude > 1.0 && n > 64) return detail::chebyshev_hyperbolic(kind, y, n);
  } else if (p == P::HermiteH || p == P::HermiteHe) {
    if (y == 0 && detail::parity_sign(n) < 0) return 0.0;
  } else if (p == P::LaguerreL) {
    if (y == 0) return 1.0;
  } else if (std::fabs(y) == 1.0) {  // Legendre
    return y > 0 ? 1.0 : detail::parity_sign(n);
  }
  if (n > kMaxRecurrenceDegree) return special_math::quiet_nan();
  const double result = detail::recurrence<false>(p, y, static_cast<std::int64_t>(n)).value;
  if (std::isnan(result) && detail::sign_is_known(p, y))
    return (y > 0 ? 1.0 : detail::parity_sign(n)) * special_math::infinity();
  return result;
}

// d/dx p_n(x) (Note [Orthogonal polynomials]): 0 for n < 1, the chain rule's 2 for the shifted
// kinds.
LG_HOST_DEVICE inline double slope(OrthogonalPolynomial p, double x, double n) {
  if (!std::isfinite(n)) return special_math::quiet_nan();
  n = std::trunc(n);
  if (n < 1) return 0.0;
  if (std::isnan(x)) return x;
  const double y = detail::argument(p, x);
  if (std::isinf(y) && n > 1) {  // n lead y^(n-1); p_1's slope is a constant
    const double sign = y > 0 ? 1.0 : detail::parity_sign(n - 1.0);
    return detail::leading_sign(p, n) * sign * special_math::infinity();
  }
  if (n > kMaxRecurrenceDegree) return special_math::quiet_nan();
  const double chain = detail::is_shifted(p) ? 2.0 : 1.0;
  const double result = detail::recurrence<true>(p, y, static_cast<std::int64_t>(n)).slope;
  if (std::isnan(result) && detail::sign_is_known(p, y))  // p' has p's sign beyond the zeros
    return (y > 0 ? 1.0 : detail::parity_sign(n - 1.0)) * special_math::infinity();
  return chain * result;
}

// The |y| up to which no term or slope of any family's recurrence to degree n >= 1 can overflow:
// each step multiplies the larger of the last two terms by at most 2|y| + 2n + 1 (Hermite's
// 2|y| + 2k, the others' less), so every term is below (2|y| + 2n + 3)^n and every slope below
// n (n + 1) times that; keeping (2|y| + 2n + 3)^(n + 1) below 2^950 leaves 2^74 to spare for n up
// to kMaxRecurrenceDegree. Negative (nothing is safe) for large n; then |y| < 1 still is for
// Chebyshev and Legendre, whose terms and slopes there stay below (2n + 1)^2.
LG_HOST_DEVICE LG_INLINE double recurrence_safe_magnitude(double n) {
  return 0.5 * (std::exp2(950.0 / (n + 1.0)) - 2.0 * n - 3.0);
}

// Whether value(p, x, n) (slope(p, x, n) with `slope`) is the recurrence's term at
// y = detail::argument(p, x) with nothing else, for an integral n in [1, kMaxRecurrenceDegree],
// safe = recurrence_safe_magnitude(n): y is finite, no special case or closed form applies, and
// no term overflows (so the loop's stop at the first NaN and the signed infinities beyond +-1
// never come in). The CPU then runs the recurrence for a block of elements of one degree in SIMD
// lanes (kernels/cpu/orthogonal_polynomials.cpp), the same operations, so each element's value is
// the same as in value and slope.
LG_HOST_DEVICE LG_INLINE bool is_recurrence_alone(OrthogonalPolynomial p, bool slope, double y,
                                                  double n, double safe) {
  using P = OrthogonalPolynomial;
  const double a = std::fabs(y);
  const bool chebyshev = detail::is_chebyshev(p);
  const bool below_one = a < 1.0 && (chebyshev || p == P::LegendreP);
  if (!(below_one || a <= safe)) return false;  // and NaN, infinities
  if (slope) return true;
  if (chebyshev) return a < 1.0 ? n <= 6 : a > 1.0 && n <= 64;  // edges, closed forms beyond
  if (p == P::LegendreP) return a != 1.0;
  return y != 0.0;  // Hermite, Laguerre
}

}  // namespace leangrad::kernels::orthogonal_polynomials
