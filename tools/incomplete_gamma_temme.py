#!/usr/bin/python3
"""Derives the coefficients of Temme's uniform expansion of the incomplete gamma functions and
writes leangrad/kernels/special_math_temme.h (Note [Temme's expansion] in special_math.h).

    Q(a, x) = erfc(eta sqrt(a / 2)) / 2 + R,
    R = exp(-a eta^2 / 2) / sqrt(2 pi a) * sum_k c_k(eta) a^-k              (DLMF 8.12.3, 8.12.4)

with lambda = x / a, mu = lambda - 1 and eta^2 / 2 = mu - log(1 + mu), eta of mu's sign. Every
coefficient comes from the power series of mu in eta, in exact rational arithmetic:

  1. mu(eta) = eta + eta^2 / 3 + ...: differentiating eta^2 / 2 = mu - log(1 + mu) gives
     mu mu' = eta (1 + mu), whose coefficient of eta^n fixes m_n from the ones before it.
  2. c_0 = 1 / mu - 1 / eta (DLMF 8.12.8), from the reciprocal series of mu / eta.
  3. c_k = c_{k-1}' / eta + (-1)^k g_k / mu (DLMF 8.12.9). Each c_k is analytic at 0, so the
     1 / eta terms of the two parts cancel, and that fixes g_k = (-1)^(k+1) [eta^1] c_{k-1}: the
     coefficients of Stirling's series (DLMF 5.11.3), checked below against the first few
     published ones.

Each c_k is written as its Taylor polynomial in eta, sum_n d[k][n] eta^n. The script then picks
how many of them (K) and how many powers (N) the double evaluation needs, and where the
expansion applies, by evaluating it in Python's doubles exactly as the header does and comparing
against mpmath's gammainc at 60 digits; it prints the largest error it measured, in units of
2^-53 of the result, beside the bound the tests use (32 + 8 a eta^2 / 2 units).

Run with Debian's python3 (python3-mpmath); clang-format, when found, formats the header:
    /usr/bin/python3 tools/incomplete_gamma_temme.py
"""

import math
import os
import random
import shutil
import subprocess
from fractions import Fraction

import mpmath

K = 13           # terms c_0 .. c_{K-1} in powers of 1 / a
N = 18           # powers eta^0 .. eta^{N-1} of each
MIN_A = 20.0     # the expansion applies for a > MIN_A ...
MAX_MU = 0.3     # ... and |x - a| / a <= MAX_MU

# c_k to degree N - 1 needs c_{k-1} to N + 1, ..., mu to N + 2K + 1; 20 more powers bound the
# terms left out.
DEGREE = N + 2 * (K + 6) + 22


def mu_series(degree):
    """m[n] = [eta^n] mu(eta), n = 0 .. degree: mu mu' = eta (1 + mu), m_0 = 0, m_1 = 1."""
    m = [Fraction(0), Fraction(1)]
    for n in range(2, degree + 1):
        # [eta^n] of mu mu' = sum_i m_i (n - i + 1) m_{n-i+1}; its terms with m_n are i = 1 and
        # i = n: (n + 1) m_n. The right side's [eta^n] is m_{n-1}.
        rest = sum(m[i] * (n - i + 1) * m[n - i + 1] for i in range(2, n))
        m.append((m[n - 1] - rest) / (n + 1))
    return m


def reciprocal(series, degree):
    """1 / s for a series with s[0] = 1."""
    assert series[0] == 1
    r = [Fraction(1)]
    for n in range(1, degree + 1):
        r.append(-sum(series[i] * r[n - i] for i in range(1, min(n, len(series) - 1) + 1)))
    return r


def derive():
    m = mu_series(DEGREE + 1)
    # mu / eta = sum m_{n+1} eta^n, so 1 / mu = (1 / eta) sum r_n eta^n.
    r = reciprocal(m[1:], DEGREE)
    # c_0 = 1 / mu - 1 / eta = sum_{n >= 0} r_{n+1} eta^n.
    c = [r[n + 1] for n in range(DEGREE - 1)]
    coefficients = [c]
    g = [Fraction(1)]
    for k in range(1, K + 6):
        # c_{k-1}' / eta = sum_n (n + 2) c_{n+2} eta^n + c_1 / eta; (-1)^k g_k / mu contributes
        # (-1)^k g_k r_{n+1} eta^n and (-1)^k g_k / eta: the 1 / eta terms cancel.
        g_k = (-1) ** (k + 1) * c[1]
        g.append(g_k)
        sign = (-1) ** k
        c = [(n + 2) * c[n + 2] + sign * g_k * r[n + 1] for n in range(len(c) - 2)]
        coefficients.append(c)
    # Stirling's series, DLMF 5.11.4: g_1 .. g_5.
    published = [Fraction(1, 12), Fraction(1, 288), Fraction(-139, 51840),
                 Fraction(-571, 2488320), Fraction(163879, 209018880)]
    assert g[1:6] == published, g[1:6]
    # DLMF 8.12.8's first values: c_0(0) = -1/3, c_1(0) = -1/540.
    assert coefficients[0][0] == Fraction(-1, 3) and coefficients[1][0] == Fraction(-1, 540)
    check_truncation(coefficients)
    return [[float(d) for d in ck[:N]] for ck in coefficients[:K]]


def check_truncation(coefficients):
    """The terms K and N leave out, at the largest |eta| (mu = -MAX_MU) and the smallest a, are
    below 2^-60 of |c_0| there (at least 1/3): a fraction of the double evaluation's rounding.
    The series in 1 / a diverges for fixed a, but its terms still fall through k = K + 5."""
    eta = math.sqrt(2.0 * (-MAX_MU - math.log1p(-MAX_MU)))
    def size(k, first, last):
        return sum(abs(float(d)) * eta ** n for n, d in enumerate(coefficients[k][first:last],
                                                                   start=first)) / MIN_A ** k
    powers_left = sum(size(k, N, N + 20) for k in range(K))
    terms_left = [size(k, 0, N + 20) for k in range(K, K + 6)]
    assert all(b < a for a, b in zip(terms_left, terms_left[1:])), terms_left
    assert powers_left + sum(terms_left) < 2.0 ** -60 / 3, (powers_left, terms_left)


# ---- The double evaluation, as special_math.h writes it ----------------------------------------

def log1pmx_negated(mu):
    """mu - log(1 + mu) for |mu| <= MAX_MU without cancellation: with s = mu / (2 + mu),
    log(1 + mu) = 2 atanh(s), so mu - log(1 + mu) = mu^2 / (2 + mu) - 2 (s^3 / 3 + s^5 / 5 + ...)."""
    s = mu / (2.0 + mu)
    s2 = s * s
    tail = 0.0
    for j in range(TAIL_TERMS, 0, -1):  # sum_{j >= 1} s^(2j) / (2j + 1), Horner in s^2
        tail = (tail + 1.0 / (2 * j + 1)) * s2
    return mu * mu / (2.0 + mu) - 2.0 * s * tail


# |s| <= 0.3 / 1.7: the tail's terms fall by s^2 <= 0.0312 each; 12 of them reach 2^-60.
TAIL_TERMS = 12


def temme(a, x, d, lower):
    mu = (x - a) / a
    half_eta_squared = log1pmx_negated(mu)
    eta = math.copysign(math.sqrt(2.0 * half_eta_squared), mu)
    total = 0.0
    inv_a = 1.0 / a
    for k in range(len(d) - 1, -1, -1):
        ck = 0.0
        for n in range(len(d[k]) - 1, -1, -1):
            ck = ck * eta + d[k][n]
        total = total * inv_a + ck
    r = math.exp(-a * half_eta_squared) / (2.50662827463100050242 * math.sqrt(a)) * total
    z = eta * math.sqrt(0.5 * a)
    return 0.5 * math.erfc(-z) - r if lower else 0.5 * math.erfc(z) + r


def exact_p_q(a, x):
    """P(a, x) and Q(a, x) from mpmath: its gammainc below a = 1e4, and above (where gammainc's
    series gives up) x^a e^-x / Gamma(a + 1) 1F1(1; a + 1; x) (DLMF 8.5.1, 13.6.5), at enough
    digits to keep a log x's and Q = 1 - P's cancellations out of the result."""
    e = a * float(log1pmx_negated((x - a) / a))
    mpmath.mp.dps = 40 + int(math.log10(a)) + int(e / 2.3)
    a, x = mpmath.mpf(a), mpmath.mpf(x)
    if a <= 1e4:
        p = mpmath.gammainc(a, 0, x, regularized=True)
        q = mpmath.gammainc(a, x, mpmath.inf, regularized=True)
    else:
        p = mpmath.exp(a * mpmath.log(x) - x - mpmath.loggamma(a + 1)) * mpmath.hyp1f1(
            1, a + 1, x, maxterms=10**8)
        q = 1 - p
    return p, q


def measure(d, samples):
    worst = 0.0
    worst_ratio = 0.0
    for a, x in samples:
        p, q = exact_p_q(a, x)
        e = a * float(log1pmx_negated((x - a) / a))
        for lower, exact in ((True, p), (False, q)):
            got = temme(a, x, d, lower)
            units = float(abs(mpmath.mpf(got) - exact) / abs(exact)) * 2.0 ** 53
            worst = max(worst, units)
            worst_ratio = max(worst_ratio, units / (32 + 8 * e))
    return worst, worst_ratio


def samples(rng, count):
    """a log-uniform in (MIN_A, 1e10) (a third of them below 100), x with |x - a| / a up to
    MAX_MU, or, half of them, within 8 sqrt(a) of a; always where exp(-a eta^2 / 2) > 1e-300."""
    out = []
    while len(out) < count:
        a = math.exp(rng.uniform(math.log(MIN_A), math.log(1e10)))
        if rng.random() < 0.3:
            a = rng.uniform(MIN_A, 100.0)
        width = MAX_MU if rng.random() < 0.5 else min(MAX_MU, 8.0 / math.sqrt(a))
        x = a * (1.0 + rng.uniform(-width, width))
        if a * log1pmx_negated((x - a) / a) < 690:
            out.append((a, x))
    return out


def write_header(d, path, worst):
    lines = [
        "// Generated by tools/incomplete_gamma_temme.py; do not edit. The coefficients of Temme's",
        "// uniform expansion of the incomplete gamma functions (Note [Temme's expansion] in",
        "// special_math.h): d[k][n] = [eta^n] c_k(eta), derived in exact rational arithmetic from",
        "// the series of mu(eta) (DLMF 8.12.8 and 8.12.9) and rounded once to double. The script",
        f"// measured the expansion within {worst:.1f} units of 2^-53 of mpmath's values over",
        f"// {len(SAMPLES)} random (a, x) with a > {MIN_A:g} and |x - a| / a <= {MAX_MU:g}.",
        "#pragma once",
        "",
        "#include <leangrad/core/macros.h>",
        "",
        "namespace leangrad::kernels::special_math {",
        "",
        f"inline constexpr double kTemmeMinA = {MIN_A!r};",
        f"inline constexpr double kTemmeMaxMu = {MAX_MU!r};",
        f"inline constexpr int kTemmeLogTailTerms = {TAIL_TERMS};",
        "",
        "// sum_k c_k(eta) inv_a^k for k < " + str(K) + ", each c_k its Taylor polynomial to eta^"
        + str(N - 1) + ".",
        "LG_HOST_DEVICE LG_INLINE double temme_sum(double eta, double inv_a) {",
        f"  constexpr double d[{K}][{N}] = {{",
    ]
    for row in d:
        lines.append("      {" + ", ".join(repr(v) for v in row) + "},")
    lines += [
        "  };",
        "  double total = 0.0;",
        f"  for (int k = {K - 1}; k >= 0; --k) {{",
        f"    double ck = d[k][{N - 1}];",
        f"    for (int n = {N - 2}; n >= 0; --n)",
        "      ck = ck * eta + d[k][n];",
        "    total = total * inv_a + ck;",
        "  }",
        "  return total;",
        "}",
        "",
        "}  // namespace leangrad::kernels::special_math",
        "",
    ]
    with open(path, "w") as f:
        f.write("\n".join(lines))
    if shutil.which("clang-format"):  # the repository's .clang-format: wrapped rows
        subprocess.run(["clang-format", "-i", path], check=True)


SAMPLES = samples(random.Random(20261207), 1500)

if __name__ == "__main__":
    d = derive()
    worst, ratio = measure(d, SAMPLES)
    print(f"K = {K}, N = {N}: worst {worst:.1f} units of 2^-53; worst / (32 + 8 E) = {ratio:.3f}")
    assert ratio < 1.0
    here = os.path.dirname(os.path.abspath(__file__))
    write_header(d, os.path.join(here, "..", "leangrad", "kernels", "special_math_temme.h"), worst)
