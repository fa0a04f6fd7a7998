#!/usr/bin/python3
"""Fits the polynomials of leangrad/kernels/cpu/float_polynomials.h and prints their coefficients.

Each is a near-minimax fit of relative error (Lawson's iteratively reweighted least squares on
3,000 Chebyshev nodes, the function's values from mpmath at 40 digits), printed highest degree
first, rounded to float, as Horner's rule in the header takes them. The header's accuracy is not
this fit's error but what tests/kernels/test_float_polynomials.cpp measures of the float code with
these rounded coefficients (Note [Float polynomials]).

Debian's python3 with python3-numpy and python3-mpmath (apt):
    /usr/bin/python3 tools/fit_polynomials.py
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 40


def lawson(y, basis, scale, iterations=300):
    """The c minimising max |basis c - y| scale over the points (Lawson's algorithm)."""
    weight = np.ones(len(y)) / len(y)
    for _ in range(iterations):
        w = np.sqrt(weight) * scale
        c, *_ = np.linalg.lstsq(basis * w[:, None], y * w, rcond=None)
        error = np.abs(basis @ c - y) * scale
        weight *= error
        weight /= weight.sum()
    return c, error.max()


def fit(f, lo, hi, degree, shift=0.0, exact_constant=False, nodes=3000):
    """Float coefficients of P(x - shift) ~ f on [lo, hi], lowest degree first, and the relative
    error of P with them. The coefficients are rounded to float one at a time, lowest degree
    first, each fit again with those below it fixed at their rounded values: the later ones make
    up for the rounding of the earlier. With exact_constant, the constant term is f(shift) in
    double (the header adds it as two floats) and printed as such."""
    k = np.arange(nodes)
    x = 0.5 * (lo + hi) + 0.5 * (hi - lo) * np.cos(np.pi * (k + 0.5) / nodes)
    y = np.array([float(f(mp.mpf(float(v)))) for v in x])
    half = max(abs(lo - shift), abs(hi - shift))  # powers of (x - shift) / half stay within 1
    v = (x - shift) / half
    fixed = [float(f(mp.mpf(shift)))] if exact_constant else []
    for j in range(len(fixed), degree + 1):
        rest = y - sum(c * (x - shift)**i for i, c in enumerate(fixed))
        basis = np.stack([v**i for i in range(j, degree + 1)], axis=1)
        c, _ = lawson(rest, basis, 1 / np.abs(y))
        fixed.append(float(np.float32(c[0] / half**j)))
    p = sum(c * (x - shift)**i for i, c in enumerate(fixed))
    return fixed, np.max(np.abs(p - y) / np.abs(y))


def quotient(numerator, power, at_zero):
    """numerator(v) / v^power, with its limit at 0."""
    return lambda v: numerator(v) / v**power if v != 0 else at_zero


FITS = [
    # name, what the polynomial P approximates, interval, degree[, shift]
    ("expm1: e^r - 1 = r + r^2/2 + r^3 P(r), |r| <= ln(2)/2",
     quotient(lambda r: mp.expm1(r) - r - r * r / 2, 3, mp.mpf(1) / 6),
     -float(mp.log(2) / 2), float(mp.log(2) / 2), 4),
    ("tanh: tanh(x) = x + x^3 P(x^2), |x| <= 0.625",
     quotient(lambda s: mp.tanh(mp.sqrt(s)) - mp.sqrt(s), 1.5, -mp.mpf(1) / 3), 0.0, 0.625**2, 5),
    ("sinh: sinh(x) = x + x^3 P(x^2), |x| <= 1",
     quotient(lambda s: mp.sinh(mp.sqrt(s)) - mp.sqrt(s), 1.5, mp.mpf(1) / 6), 0.0, 1.0, 4),
    ("log1p: log(1 + f) = f - f^2/2 + f^3 P(f), sqrt(1/2) - 1 <= f <= sqrt(2) - 1",
     quotient(lambda v: mp.log1p(v) - v + v * v / 2, 3, mp.mpf(1) / 3),
     float(mp.sqrt(0.5) - 1), float(mp.sqrt(2) - 1), 8),
    ("erf: erf(x) = x P(x^2), |x| <= 1.25",
     quotient(lambda s: mp.erf(mp.sqrt(s)), 0.5, 2 / mp.sqrt(mp.pi)), 0.0, 1.25**2, 8, 0.0, True),
    ("erfc: erfc(x) = e^(-x^2) P(x - 2.585), 1.25 <= x <= 3.92",
     lambda x: mp.erfc(x) * mp.exp(x * x), 1.25, 3.92, 10, 2.585),
    ("atan: atan(t) = t + t^3 P(t^2), 0 <= t <= 1",
     quotient(lambda s: mp.atan(mp.sqrt(s)) - mp.sqrt(s), 1.5, -mp.mpf(1) / 3), 0.0, 1.0, 8),
    ("erfc tail: erfc(a) = e^(-a^2) t P(t), t = 1 / (1 + a/2), 0 <= a <= 10.5",
     lambda t: mp.erfc(2 * (1 / t - 1)) * mp.exp((2 * (1 / t - 1))**2) / t, 1 / (1 + 10.5 / 2),
     1.0, 10),
    ("asin: asin(s) = s + s^3 P(s^2), 0 <= s <= 1/2",
     quotient(lambda z: mp.asin(mp.sqrt(z)) - mp.sqrt(z), 1.5, mp.mpf(1) / 6), 0.0, 0.25, 5),
    ("normal tail: Q(x) = e^(-x^2/2) t P(t), t = 1 / (1 + x/4), 0 <= x <= 15",
     lambda t: mp.ncdf(-4 * (1 / t - 1)) * mp.exp(8 * (1 / t - 1)**2) / t, 1 / (1 + 15 / 4), 1.0,
     9),
]

for name, f, lo, hi, degree, *shift in FITS:
    coefficients, error = fit(f, lo, hi, degree, *shift)
    print(f"// {name}: degree {degree}, within {error:.2e} (relative) with float coefficients")
    print(", ".join(f"{str(np.float32(c))}f" for c in reversed(coefficients[1:])), end=", ")
    constant = coefficients[0]
    if constant == float(np.float32(constant)):
        print(f"{str(np.float32(constant))}f")
    else:  # the header adds it as two floats
        high = np.float32(constant)
        print(f"constant {constant!r} = {str(high)}f + {str(np.float32(constant - float(high)))}f")
