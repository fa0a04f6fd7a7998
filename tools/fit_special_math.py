#!/usr/bin/python3
"""Writes leangrad/kernels/special_math_fits.h: the Chebyshev series that special_math.h evaluates
for erfinv, ndtri, the Bessel functions and the Airy function (Note [Chebyshev fits] there).

Each fit is a smooth function f of one variable on an interval [a, b] (the special function with
its logarithm, its zeros' factor or its exponential taken out, in a variable where it is nearly a
polynomial). Its Chebyshev coefficients come from interpolation at 60 Chebyshev nodes of the first
kind, the values from mpmath at 50 digits; the series is cut after its last coefficient above
2^-57 of f's scale (its smallest magnitude where f keeps one sign, its largest where f has a
zero). The script then evaluates the cut series, its coefficients rounded to double, by
Clenshaw's recurrence in double at 2,000 points and writes the largest error, in units of 2^-53 of
the scale, beside each fit. Those are the fits' errors; what the functions built on them reach is
what tests/autograd/test_bessel.cpp and tests/autograd/test_pointwise_math.cpp measure.

Debian's python3 with python3-mpmath (apt); clang-format, when found, formats the header:
    /usr/bin/python3 tools/fit_special_math.py
"""
import math
import os
import random
import shutil
import subprocess

import mpmath as mp

mp.mp.dps = 50
NODES = 60
CUT = 2.0**-57
HEADER = os.path.join(os.path.dirname(__file__), "..", "leangrad", "kernels",
                      "special_math_fits.h")


def ndtri_negative(q):
    """The x < 0 with Phi(x) = q, for 0 < q < 1/2: Newton's method on log Phi(x) = log q."""
    x = -mp.sqrt(-2 * mp.log(q))
    for _ in range(200):
        step = (mp.log(mp.ncdf(x)) - mp.log(q)) * mp.ncdf(x) / mp.npdf(x)
        x -= step
        if abs(step) < mp.mpf(10)**-45 * abs(x):
            return x
    raise RuntimeError("ndtri did not converge at q = %s" % q)


def erfc_inverse(q):
    """The x > 0 with erfc(x) = q, for 0 < q < 1: Newton's method on log erfc(x) = log q."""
    x = mp.sqrt(-mp.log(q))
    for _ in range(200):
        step = (mp.log(mp.erfc(x)) - mp.log(q)) * mp.erfc(x) / (-2 / mp.sqrt(mp.pi) *
                                                                  mp.exp(-x * x))
        x -= step
        if abs(step) < mp.mpf(10)**-45 * abs(x):
            return x
    raise RuntimeError("erfc_inverse did not converge at q = %s" % q)


def hankel_parts(nu, x):
    """P and Q of J_nu = A (P cos xi - Q sin xi), Y_nu = A (P sin xi + Q cos xi), A = sqrt(2/(pi
    x)), xi = x - (2 nu + 1) pi / 4 (DLMF 10.17.3)."""
    j, y = mp.besselj(nu, x), mp.bessely(nu, x)
    xi = x - (2 * nu + 1) * mp.pi / 4
    a = mp.sqrt(mp.pi * x / 2)
    return a * (j * mp.cos(xi) + y * mp.sin(xi)), a * (y * mp.cos(xi) - j * mp.sin(xi))


def airy_zeta(t):
    """zeta = (2/3) t^(3/2), the Airy functions' phase and exponent (DLMF 9.7.1)."""
    return 2 * t * mp.sqrt(t) / 3


def airy_oscillating_parts(t, prime):
    """P and Q zeta of Ai(-t) = (P cos chi + Q sin chi) / (sqrt(pi) t^(1/4)), or (prime) R and
    S zeta of Ai'(-t) = t^(1/4) (R sin chi - S cos chi) / sqrt(pi), chi = zeta - pi/4, from Ai
    and Bi (Bi has the same form with chi shifted by pi/2; DLMF 9.7.9-9.7.11)."""
    zeta = airy_zeta(t)
    chi = zeta - mp.pi / 4
    if prime:
        a = mp.sqrt(mp.pi) / t**mp.mpf(0.25) * mp.airyai(-t, derivative=1)
        b = mp.sqrt(mp.pi) / t**mp.mpf(0.25) * mp.airybi(-t, derivative=1)
        return a * mp.sin(chi) + b * mp.cos(chi), (b * mp.sin(chi) - a * mp.cos(chi)) * zeta
    a = mp.sqrt(mp.pi) * t**mp.mpf(0.25) * mp.airyai(-t)
    b = mp.sqrt(mp.pi) * t**mp.mpf(0.25) * mp.airybi(-t)
    return a * mp.cos(chi) - b * mp.sin(chi), (a * mp.sin(chi) + b * mp.cos(chi)) * zeta


def airy_decaying(x, prime):
    """2 sqrt(pi) x^(1/4) exp(zeta) Ai(x), or -2 sqrt(pi) x^(-1/4) exp(zeta) Ai'(x), for x > 0:
    1 at infinity (DLMF 9.7.5, 9.7.6)."""
    if prime:
        return -2 * mp.sqrt(mp.pi) / x**mp.mpf(0.25) * mp.exp(airy_zeta(x)) * mp.airyai(x, 1)
    return 2 * mp.sqrt(mp.pi) * x**mp.mpf(0.25) * mp.exp(airy_zeta(x)) * mp.airyai(x)


TWO_OVER_PI = 2 / mp.pi
SQ = mp.sqrt

# name, what the series approximates, f, a, b.
FITS = [
    ("lgamma_central", "log Gamma(u + 2) / (u (u + 1)) for -1 <= u <= 1, in u",
     lambda u: mp.loggamma(u + 2) / (u * (u + 1)), -1.0, 1.0),
    ("ndtri_central", "ndtri(1/2 + r) / r for |r| <= 0.35, in v = r^2",
     lambda v: -ndtri_negative(mp.mpf(1) / 2 - SQ(v)) / SQ(v), 0.0, 0.1225),
    ("ndtri_tail", "-ndtri(q) / s for q <= 0.15 (to 2^-1074), s = sqrt(-2 log q), in w = log s",
     lambda w: -ndtri_negative(mp.exp(-mp.exp(2 * w) / 2)) / mp.exp(w), 0.65, 3.75),
    ("erfinv_central", "erfinv(y) / y for |y| <= 0.75, in v = y^2",
     lambda v: mp.erfinv(SQ(v)) / SQ(v), 0.0, 0.5625),
    ("erfinv_tail", "erfinv(1 - q) / s for q <= 0.25 (to 2^-53), s = sqrt(-log q), in w = log s",
     lambda w: erfc_inverse(mp.exp(-mp.exp(2 * w))) / mp.exp(w), 0.16, 1.81),
    ("bessel_i0_small", "I0(x) for |x| <= 8, in v = x^2",
     lambda v: mp.besseli(0, SQ(v)), 0.0, 64.0),
    ("bessel_i1_small", "I1(x) / x for |x| <= 8, in v = x^2",
     lambda v: mp.besseli(1, SQ(v)) / SQ(v), 0.0, 64.0),
    ("bessel_i0_large", "sqrt(x) exp(-x) I0(x) for x >= 8, in u = 8 / x",
     lambda u: SQ(8 / u) * mp.exp(-8 / u) * mp.besseli(0, 8 / u), 0.0, 1.0),
    ("bessel_i1_large", "sqrt(x) exp(-x) I1(x) for x >= 8, in u = 8 / x",
     lambda u: SQ(8 / u) * mp.exp(-8 / u) * mp.besseli(1, 8 / u), 0.0, 1.0),
    ("bessel_k0_small", "K0(x) + log(x / 2) I0(x) for 0 < x <= 2, in v = x^2",
     lambda v: mp.besselk(0, SQ(v)) + mp.log(SQ(v) / 2) * mp.besseli(0, SQ(v)), 0.0, 4.0),
    ("bessel_k1_small", "x K1(x) - x log(x / 2) I1(x) for 0 < x <= 2, in v = x^2",
     lambda v: SQ(v) * (mp.besselk(1, SQ(v)) - mp.log(SQ(v) / 2) * mp.besseli(1, SQ(v))), 0.0,
     4.0),
    ("bessel_k0_large", "sqrt(x) exp(x) K0(x) for x >= 2, in u = 2 / x",
     lambda u: SQ(2 / u) * mp.exp(2 / u) * mp.besselk(0, 2 / u), 0.0, 1.0),
    ("bessel_k1_large", "sqrt(x) exp(x) K1(x) for x >= 2, in u = 2 / x",
     lambda u: SQ(2 / u) * mp.exp(2 / u) * mp.besselk(1, 2 / u), 0.0, 1.0),
    ("bessel_j0_small", "J0(x) for |x| <= 5, in v = x^2",
     lambda v: mp.besselj(0, SQ(v)), 0.0, 25.0),
    ("bessel_j1_small", "J1(x) / x for |x| <= 5, in v = x^2",
     lambda v: mp.besselj(1, SQ(v)) / SQ(v), 0.0, 25.0),
    ("bessel_y0_small", "Y0(x) - 2/pi log(x) J0(x) for 0 < x <= 5, in v = x^2",
     lambda v: mp.bessely(0, SQ(v)) - TWO_OVER_PI * mp.log(SQ(v)) * mp.besselj(0, SQ(v)), 0.0,
     25.0),
    ("bessel_y1_small", "x Y1(x) - 2/pi x log(x) J1(x) for 0 < x <= 5, in v = x^2",
     lambda v: SQ(v) * (mp.bessely(1, SQ(v)) - TWO_OVER_PI * mp.log(SQ(v)) * mp.besselj(1, SQ(v))),
     0.0, 25.0),
    ("bessel_p0", "P0(x) of J0 and Y0 for x >= 5, in u = (5 / x)^2",
     lambda u: hankel_parts(0, 5 / SQ(u))[0], 0.0, 1.0),
    ("bessel_q0", "Q0(x) x / 5 of J0 and Y0 for x >= 5, in u = (5 / x)^2",
     lambda u: hankel_parts(0, 5 / SQ(u))[1] / SQ(u), 0.0, 1.0),
    ("bessel_p1", "P1(x) of J1 and Y1 for x >= 5, in u = (5 / x)^2",
     lambda u: hankel_parts(1, 5 / SQ(u))[0], 0.0, 1.0),
    ("bessel_q1", "Q1(x) x / 5 of J1 and Y1 for x >= 5, in u = (5 / x)^2",
     lambda u: hankel_parts(1, 5 / SQ(u))[1] / SQ(u), 0.0, 1.0),
    ("airy_ai_small", "Ai(x) for -2 <= x <= 1, in x", mp.airyai, -2.0, 1.0),
    ("airy_ai_prime_small", "Ai'(x) for -2 <= x <= 1, in x", lambda x: mp.airyai(x, 1), -2.0,
     1.0),
    ("airy_ai_decaying", "2 sqrt(pi) x^(1/4) exp(zeta) Ai(x) for x >= 1, in u = x^(-3/2)",
     lambda u: airy_decaying(u**(-mp.mpf(2) / 3), False), 0.0, 1.0),
    ("airy_ai_prime_decaying", "-2 sqrt(pi) x^(-1/4) exp(zeta) Ai'(x) for x >= 1, in u = x^(-3/2)",
     lambda u: airy_decaying(u**(-mp.mpf(2) / 3), True), 0.0, 1.0),
    ("airy_p", "P(t) of Ai(-t) for t >= 2, in u = (2 / t)^(3/2)",
     lambda u: airy_oscillating_parts(2 * u**(-mp.mpf(2) / 3), False)[0], 0.0, 1.0),
    ("airy_q", "Q(t) zeta of Ai(-t) for t >= 2, in u = (2 / t)^(3/2)",
     lambda u: airy_oscillating_parts(2 * u**(-mp.mpf(2) / 3), False)[1], 0.0, 1.0),
    ("airy_r", "R(t) of Ai'(-t) for t >= 2, in u = (2 / t)^(3/2)",
     lambda u: airy_oscillating_parts(2 * u**(-mp.mpf(2) / 3), True)[0], 0.0, 1.0),
    ("airy_s", "S(t) zeta of Ai'(-t) for t >= 2, in u = (2 / t)^(3/2)",
     lambda u: airy_oscillating_parts(2 * u**(-mp.mpf(2) / 3), True)[1], 0.0, 1.0),
]


def chebyshev_coefficients(f, a, b):
    """c_0 .. c_{NODES-1} of f on [a, b] = sum c_k T_k(t), t = (2v - a - b) / (b - a), and f's
    values at the nodes."""
    a, b = mp.mpf(a), mp.mpf(b)
    angles = [mp.pi * (k + mp.mpf(1) / 2) / NODES for k in range(NODES)]
    values = [f((b - a) / 2 * mp.cos(theta) + (a + b) / 2) for theta in angles]
    c = [2 * mp.fsum(v * mp.cos(j * theta) for v, theta in zip(values, angles)) / NODES
         for j in range(NODES)]
    c[0] /= 2
    return c, values


def clenshaw(c, t):
    """sum c_k T_k(t) in double, as special_math_fits.h's chebyshev_series evaluates it."""
    b1 = b2 = 0.0
    for ck in reversed(c[1:]):
        b1, b2 = ck + 2.0 * t * b1 - b2, b1
    return c[0] + t * b1 - b2


def horner(c, v):
    r = 0.0
    for ck in reversed(c):
        r = r * v + ck
    return r


def monomial(c, slope, offset):
    """The coefficients in v of sum c_k T_k(slope v + offset), in mpmath."""
    # T_k as coefficient lists in t.
    t_prev, t_cur = [mp.mpf(1)], [mp.mpf(0), mp.mpf(1)]
    in_t = [mp.mpf(0)] * len(c)
    in_t[0] += c[0]
    if len(c) > 1:
        in_t[1] += c[1]
    for k in range(2, len(c)):
        nxt = [mp.mpf(0)] * (k + 1)
        for i, x in enumerate(t_cur):
            nxt[i + 1] += 2 * x
        for i, x in enumerate(t_prev):
            nxt[i] -= x
        t_prev, t_cur = t_cur, nxt
        for i, x in enumerate(t_cur):
            in_t[i] += c[k] * x
    out = [mp.mpf(0)] * len(c)
    for k, a in enumerate(in_t):  # a (slope v + offset)^k
        for i in range(k + 1):
            out[i] += a * mp.binomial(k, i) * mp.mpf(slope)**i * mp.mpf(offset)**(k - i)
    return out


def fit(name, f, a, b):
    """The cut series as (evaluation, coefficients, slope, offset, error): Clenshaw's recurrence
    on the Chebyshev coefficients at t = slope v + offset, or Horner's rule on the same polynomial
    in powers of v, whichever the measured error favours (Horner's for the positive, growing
    series of I0 and I1 and the Hankel parts, which Clenshaw's rounds relative to their largest
    value rather than their own)."""
    c, values = chebyshev_coefficients(f, a, b)
    one_sign = all(v > 0 for v in values) or all(v < 0 for v in values)
    scale = min(abs(v) for v in values) if one_sign else max(abs(v) for v in values)
    last = max(k for k, ck in enumerate(c) if abs(ck) > CUT * scale)
    slope, offset = 2.0 / (b - a), -(a + b) / (b - a)
    chebyshev = [float(ck) for ck in c[:last + 1]]
    powers = [float(x) for x in monomial(c[:last + 1], slope, offset)]
    rng = random.Random(name)
    worst = [0.0, 0.0]
    for _ in range(2000):
        v = a + (b - a) * rng.random()
        want = f(mp.mpf(v))
        unit = abs(want) if one_sign else scale
        for i, got in enumerate([clenshaw(chebyshev, v * slope + offset), horner(powers, v)]):
            worst[i] = max(worst[i], float(abs(got - want) / (unit * 2.0**-53)))
    if worst[1] < worst[0]:
        return "polynomial", powers, slope, offset, worst[1]
    return "chebyshev_series", chebyshev, slope, offset, worst[0]


def main():
    out = []
    for name, comment, f, a, b in FITS:
        evaluation, coefficients, slope, offset, worst = fit(name, f, a, b)
        print("%-16s %-16s %2d terms, error %.2f units of 2^-53" %
              (name, evaluation, len(coefficients), worst))
        body = ",\n                          ".join(repr(x) for x in coefficients)
        argument = "v" if evaluation == "polynomial" else "v * %r + %r" % (slope, offset)
        out.append("// %s on [%r, %r]: %d terms, %s, %.2f units of 2^-53.\n"
                   "LG_HOST_DEVICE %s double %s(double v) {\n"
                   "  constexpr double c[] = {%s};\n"
                   "  return %s(c, %s);\n"
                   "}\n" % (comment, a, b, len(coefficients), UNITS[evaluation],
                            math.ceil(worst * 100) / 100,
                            "LG_INLINE" if name in NOT_IN_LANES else "LG_ALWAYS_INLINE", name,
                            body, evaluation, argument))
    with open(HEADER, "w") as h:
        h.write(PREAMBLE)
        h.write("\n".join(out))
        h.write("\n}  // namespace leangrad::kernels::special_math::fits\n")
    if shutil.which("clang-format"):  # the repository's .clang-format: wrapped comments
        subprocess.run(["clang-format", "-i", HEADER], check=True)


UNITS = {"polynomial": "powers of v", "chebyshev_series": "Chebyshev"}
# Every fit but erfinv's is called in the CPU's lanes (Note [Special functions in lanes]) and is
# always inlined: a call keeps the loop scalar, and GCC leaves calls once a file outgrows its
# inlining budget. erfinv is not a lane op.
NOT_IN_LANES = {"erfinv_central", "erfinv_tail"}
PREAMBLE = """\
// Generated by tools/fit_special_math.py; do not edit. The fitted series of special_math.h
// (Note [Chebyshev fits]): each function takes its fit's variable v on [a, b] and returns the
// series there, either Chebyshev's, sum c_k T_k(t) at t = (2v - a - b) / (b - a), or the same
// polynomial in powers of v, whichever the script measured to be the more accurate. The comment
// gives the fitted function and the largest error measured of the double evaluation, in units
// of 2^-53 of the function's value (or of its largest magnitude where it has a zero).
#pragma once

#include <cstddef>

#include <leangrad/core/macros.h>

namespace leangrad::kernels::special_math::fits {

// Both evaluations are written out step by step at compile time (a recursion on the step, no
// loop), so that a CPU loop over elements runs a whole series in SIMD lanes (Note [Special
// functions in lanes], kernels/cpu/elementwise_range_limited.cpp): GCC vectorises no loop with a
// loop inside. For the same reason every fit the lanes call, all but erfinv's, is always inlined:
// GCC leaves a plain inline function as a call once a file has spent its inlining budget.

// Clenshaw's steps k = K down to 1: b_k = c_k + 2t b_{k+1} - b_{k+2}.
template <std::size_t K, std::size_t N>
LG_HOST_DEVICE LG_ALWAYS_INLINE void clenshaw_steps(const double (&c)[N], double two_t, double& b1,
                                                    double& b2) {
  if constexpr (K >= 1) {
    const double b = c[K] + two_t * b1 - b2;
    b2 = b1;
    b1 = b;
    clenshaw_steps<K - 1>(c, two_t, b1, b2);
  }
}

// sum c_k T_k(t) for t in [-1, 1] by Clenshaw's recurrence.
template <std::size_t N>
LG_HOST_DEVICE LG_ALWAYS_INLINE double chebyshev_series(const double (&c)[N], double t) {
  const double two_t = 2.0 * t;
  double b1 = 0.0, b2 = 0.0;
  clenshaw_steps<N - 1>(c, two_t, b1, b2);
  return c[0] + t * b1 - b2;
}

// Horner's steps from r = c_K ... down: r v + c_{K-1}, and so on to c_0.
template <std::size_t K, std::size_t N>
LG_HOST_DEVICE LG_ALWAYS_INLINE double horner_steps(const double (&c)[N], double v, double r) {
  if constexpr (K >= 1) {
    return horner_steps<K - 1>(c, v, r * v + c[K - 1]);
  } else {
    return r;
  }
}

// sum c_k v^k by Horner's rule.
template <std::size_t N>
LG_HOST_DEVICE LG_ALWAYS_INLINE double polynomial(const double (&c)[N], double v) {
  return horner_steps<N - 1>(c, v, c[N - 1]);
}

"""


if __name__ == "__main__":
    main()
