"""torch.special's orthogonal polynomials in PyTorch 1.13 and mpmath
(tests/autograd/test_orthogonal_polynomials.cpp).

chebyshev_polynomial_t/u/v/w, shifted_chebyshev_polynomial_t/u/v/w, hermite_polynomial_h/he,
laguerre_polynomial_l and legendre_polynomial_p at float64 points x and degrees n (elementwise):
  "exact_" cases: mpmath's values at 60 digits (exact), rounded once, and PyTorch 1.13's (out0),
      over degrees 1 to 1000 (Chebyshev also 10^5 to 10^12, through the closed forms), inside,
      at and beyond the orthogonality interval, short of overflow. Every case also holds
        scale: what an absolute error is measured against, in units of 2^-53: where the
               kernel runs the recurrence, its running error bound (running_bound below: each
               operation's rounding, carried through the later steps); where it takes a
               Chebyshev closed form, 4 (n + 1) max over k <= n of |p_k(x)| (theta's rounding
               times d/dtheta, which Bernstein's inequality bounds by about n times the
               envelope; for T, n |sin(n theta)|);
        slope: the derivative in x (for the gradient), and slope_scale, the running error bound
               of the derivative's recurrence, which the kernel always runs.
      The value of p_k comes from the recurrence run in mpmath at 60 digits, checked here
      against the Chebyshev kinds' trigonometric forms (cos(n theta), sin((n + 1) theta) /
      sin(theta), cos((n + 1/2) theta) / cos(theta / 2), sin((n + 1/2) theta) / sin(theta / 2),
      complex beyond +-1) and mpmath's hermite, laguerre and legendre; the derivative from the
      recurrence's derivative, checked against mpmath's numerical diff, to degree 200.
  "edges_" cases: PyTorch's values at the edges (negative, zero and fractional degrees, x = +-1,
      0, NaN, overflow), which ours match but where the C++ test says otherwise.

Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_orthogonal_polynomials.py
"""
import mpmath as mp
import torch

from reference import write

mp.mp.dps = 60
generator = torch.Generator().manual_seed(58)
f64 = torch.float64
S = torch.special

# name -> (torch function, family, shifted)
FUNCTIONS = {
    "special_chebyshev_polynomial_t": (S.chebyshev_polynomial_t, "T", False),
    "special_chebyshev_polynomial_u": (S.chebyshev_polynomial_u, "U", False),
    "special_chebyshev_polynomial_v": (S.chebyshev_polynomial_v, "V", False),
    "special_chebyshev_polynomial_w": (S.chebyshev_polynomial_w, "W", False),
    "special_shifted_chebyshev_polynomial_t": (S.shifted_chebyshev_polynomial_t, "T", True),
    "special_shifted_chebyshev_polynomial_u": (S.shifted_chebyshev_polynomial_u, "U", True),
    "special_shifted_chebyshev_polynomial_v": (S.shifted_chebyshev_polynomial_v, "V", True),
    "special_shifted_chebyshev_polynomial_w": (S.shifted_chebyshev_polynomial_w, "W", True),
    "special_hermite_polynomial_h": (S.hermite_polynomial_h, "H", False),
    "special_hermite_polynomial_he": (S.hermite_polynomial_he, "He", False),
    "special_laguerre_polynomial_l": (S.laguerre_polynomial_l, "L", False),
    "special_legendre_polynomial_p": (S.legendre_polynomial_p, "P", False),
}


def first_term(family, y):
    return {"T": y, "U": 2 * y, "V": 2 * y - 1, "W": 2 * y + 1, "H": 2 * y, "He": y,
            "L": 1 - y, "P": y}[family]


def step(family, k, y, p, q):
    """p_{k+1} from p = p_k and q = p_{k-1} (DLMF 18.9.1, 18.9.2)."""
    if family in ("T", "U", "V", "W"):
        return 2 * y * p - q
    if family == "H":
        return 2 * y * p - 2 * k * q
    if family == "He":
        return y * p - k * q
    if family == "L":
        return ((2 * k + 1 - y) * p - k * q) / (k + 1)
    return ((2 * k + 1) * y * p - k * q) / (k + 1)


def terms(family, y, n):
    """p_0(y), ..., p_n(y) and their derivatives in y, in mpmath: the recurrence and its
    derivative (each step is linear in p_k and p_{k-1}, y only in the coefficient of p_k;
    exact_point checks the derivative against mpmath's numerical diff)."""
    y = mp.mpf(y)
    one, zero = mp.mpf(1), mp.mpf(0)  # both are of degree 1 in y: f(1) - f(0) is the slope
    ps, ds = [one], [zero]
    if n >= 1:
        ps.append(first_term(family, y))
        ds.append(first_term(family, one) - first_term(family, zero))
    for k in range(1, n):
        grow = step(family, k, one, 1, 0) - step(family, k, zero, 1, 0)
        ps.append(step(family, k, y, ps[-1], ps[-2]))
        ds.append(grow * ps[-2] + step(family, k, y, ds[-1], ds[-2]))
    return ps, ds


def library_value(family, y, n):
    """The cross-check, computed apart from the recurrence: the Chebyshev kinds by their
    trigonometric forms in theta = acos(y) (complex beyond +-1), the others by mpmath's
    hypergeometric series (zeroprec lets a value near a zero converge)."""
    if family in ("T", "U", "V", "W"):
        theta = mp.acos(y)
        value = {"T": lambda: mp.cos(n * theta),
                 "U": lambda: mp.sin((n + 1) * theta) / mp.sin(theta),
                 "V": lambda: mp.cos((n + 0.5) * theta) / mp.cos(theta / 2),
                 "W": lambda: mp.sin((n + 0.5) * theta) / mp.sin(theta / 2)}[family]
        if abs(y) == 1:  # the limits, by l'Hopital (DLMF 18.6.1)
            at_one = {"T": 1, "U": n + 1, "V": 1, "W": 2 * n + 1}
            kind = {"V": "W", "W": "V"}.get(family, family) if y < 0 else family
            return at_one[kind] * (1 if y > 0 or n % 2 == 0 else -1)
        return mp.re(value())
    if family == "H":
        return mp.hermite(n, y, zeroprec=4000)
    if family == "He":
        return mp.hermite(n, y / mp.sqrt(2), zeroprec=4000) / mp.mpf(2) ** (mp.mpf(n) / 2)
    if family == "L":
        return mp.laguerre(n, 0, y, zeroprec=4000)
    return mp.legendre(n, y, zeroprec=4000)


def chebyshev_closed_form(family, y, n):
    """T, U, V, W at a degree too large for the recurrence, |y| < 1 or > 1 (DLMF 18.5.1-18.5.4
    and their hyperbolic continuations), and the envelope of p_k over k <= n."""
    n = mp.mpf(n)
    if abs(y) < 1:
        theta = mp.acos(y)
        value = {"T": mp.cos(n * theta),
                 "U": mp.sin((n + 1) * theta) / mp.sin(theta),
                 "V": mp.cos((n + 0.5) * theta) / mp.cos(theta / 2),
                 "W": mp.sin((n + 0.5) * theta) / mp.sin(theta / 2)}[family]
        envelope = {"T": mp.mpf(1), "U": min(n + 1, 1 / mp.sin(theta)),
                    "V": min(2 * n + 1, 1 / mp.cos(theta / 2)),
                    "W": min(2 * n + 1, 1 / mp.sin(theta / 2))}[family]
        return value, envelope
    t = mp.acosh(abs(y))
    sign = 1 if y > 0 or int(n) % 2 == 0 else -1
    kind = family
    if y < 0:
        kind = {"V": "W", "W": "V"}.get(family, family)
    value = sign * {"T": mp.cosh(n * t),
                    "U": mp.sinh((n + 1) * t) / mp.sinh(t),
                    "V": mp.cosh((n + 0.5) * t) / mp.cosh(t / 2),
                    "W": mp.sinh((n + 0.5) * t) / mp.sinh(t / 2)}[kind]
    return value, abs(value)


def running_bound(family, y, n):
    """Running error bounds (Higham, Accuracy and Stability of Numerical Algorithms, 3.3) of the
    kernel's recurrence for p_n(y) and its derivative, in units of the unit roundoff u, in
    double from the kernel's own operations: each operation's rounding is at most u times its
    result, and the errors already in p_k, p_{k-1} (and their derivatives) pass through the step
    with the absolute values of its coefficients. A first-order bound that does not count on
    cancelling errors; it grows like n^2 where the recurrence's other solution grows (Laguerre
    near 0: PyTorch's own values there lose up to about 64 (n + 1) units)."""
    y = float(y)
    q, dq, eq, edq = 1.0, 0.0, 0.0, 0.0
    r = first_term(family, y)
    dr = float(first_term(family, 1.0) - first_term(family, 0.0))
    er, edr = abs(r), 0.0
    for k in range(1, n):
        if family in ("T", "U", "V", "W", "H", "He"):
            a = 1.0 if family == "He" else 2.0
            c = float(k) if family == "He" else 2.0 * k if family == "H" else 1.0
            m = a * y
            nxt = m * r - c * q
            dnxt = a * r + m * dr - c * dq
            local = abs(m * r) + abs(c * q) + abs(nxt)
            dlocal = abs(a * r) + 2 * abs(m * dr) + abs(c * dq) + 2 * abs(dnxt)
            e = abs(m) * er + c * eq + local
            de = a * er + abs(m) * edr + c * edq + dlocal
        else:
            d = k + 1.0
            if family == "L":
                m, a, c = 2.0 * k + 1.0 - y, -1.0, float(k)
            else:
                m, a, c = (2.0 * k + 1.0) * y, 2.0 * k + 1.0, float(k)
            nxt = (m * r - c * q) / d
            dnxt = (m * dr + a * r - c * dq) / d
            local = (2 * abs(m * r) + abs(c * q) + abs(m * r - c * q)) / d + abs(nxt)
            dlocal = (2 * abs(m * dr) + 2 * abs(a * r) + abs(c * dq) + 2 * abs(d * dnxt)) / d \
                + abs(dnxt)
            e = (abs(m) * er + c * eq) / d + local
            de = (abs(a) * er + abs(m) * edr + c * edq) / d + dlocal
        q, dq, eq, edq = r, dr, er, edr
        r, dr, er, edr = nxt, dnxt, e, de
    return er, edr


def closed_form_path(family, y, n):
    """Whether the kernel takes a Chebyshev closed form at (y, n) (Note [Orthogonal
    polynomials]): at +-1, inside for n > 6, beyond for n > 64."""
    a = abs(float(y))
    return family in ("T", "U", "V", "W") and (a == 1 or (a < 1 and n > 6) or (a > 1 and n > 64))


def exact_point(family, shifted, x, n):
    """(value, scale, slope, slope_scale) at float64 x, integral n."""
    x = mp.mpf(x)
    y = 2 * x - 1 if shifted else x
    chain = 2 if shifted else 1
    if n > 5000:
        value, envelope = chebyshev_closed_form(family, y, n)
        return value, 4 * (n + 1) * envelope, None, None
    ps, ds = terms(family, y, n)
    value = ps[-1]
    if n <= 200:
        check = library_value(family, y, n)
        envelope = (n + 1) * max(abs(p) for p in ps)
        assert abs(check - value) <= mp.mpf(10) ** -40 * envelope, (family, x, n, check, value)
        numeric = mp.diff(lambda t: terms(family, t, n)[0][-1], y)
        slope_envelope = (n + 1) * max(abs(d) for d in ds)
        assert abs(numeric - ds[-1]) <= mp.mpf(10) ** -30 * slope_envelope, (family, x, n)
    bound, slope_bound = running_bound(family, y, n)
    if closed_form_path(family, y, n):
        bound = 4 * (n + 1) * max(abs(p) for p in ps)
    # The rounding of 2x - 1 (exact for most points) moves p_n by p'_n(y) u |y|.
    rounding = abs(ds[-1] * y) if shifted else 0
    return value, bound + rounding, chain * ds[-1], chain * slope_bound


def uniform(low, high, count):
    return (torch.rand(count, generator=generator, dtype=f64) * (high - low) + low).tolist()


def points_for(family, shifted):
    """(x, n) pairs: inside the interval of orthogonality, at its ends, beyond."""
    inside = uniform(-1.0, 1.0, 6) + [0.0, 0.5, -0.999, 0.9999999]
    beyond = [1.0000001, -1.25, 2.5, -3.0, 17.0]
    degrees = [1, 2, 3, 5, 6, 7, 8, 13, 40, 64, 65, 100]
    if family in ("H", "He"):
        inside = uniform(-4.0, 4.0, 6) + [0.0, 0.1]
        beyond = [-9.5, 12.0]
        degrees = [1, 2, 3, 5, 8, 13, 40, 100, 150]
    if family == "L":
        inside = uniform(0.0, 30.0, 6) + [1e-3]
        beyond = [-2.0, -0.5, 60.0]
        degrees = [1, 2, 3, 5, 8, 13, 40, 100, 400, 1000]
    if family == "P":
        degrees += [400, 1000]
    pairs = []
    for x in inside + beyond:
        for n in degrees:
            pairs.append((x, n))
    if family in ("T", "U", "V", "W"):
        for x in [0.3, -0.7, 0.999, 1.0000001, -1.0001]:
            for n in [100000, 123456789, 10**12]:
                pairs.append((x, n))
    if shifted:
        pairs = [((x + 1) / 2, n) for x, n in pairs]
    return pairs


def exact_case(name):
    fn, family, shifted = FUNCTIONS[name]
    xs, ns, values, scales, dxs, dns, slopes, slope_scales = [], [], [], [], [], [], [], []
    for x, n in points_for(family, shifted):
        value, scale, slope, slope_scale = exact_point(family, shifted, x, n)
        if abs(value) > 1e300 or (slope is not None and abs(slope) > 1e300):
            continue  # overflow: the edges cases
        xs.append(x)
        ns.append(float(n))
        values.append(float(value))
        scales.append(float(scale))
        if slope is not None and n <= 1000:
            dxs.append(x)
            dns.append(float(n))
            slopes.append(float(slope))
            slope_scales.append(float(slope_scale))
    x = torch.tensor(xs, dtype=f64)
    n = torch.tensor(ns, dtype=f64)
    return {"name": "exact_" + name, "params": {"inputs": ["x", "n"], "no_grad": []},
            "tensors": {"x": x, "n": n, "out0": fn(x, n), "exact": torch.tensor(values, dtype=f64),
                        "scale": torch.tensor(scales, dtype=f64),
                        "slope_x": torch.tensor(dxs, dtype=f64),
                        "slope_n": torch.tensor(dns, dtype=f64),
                        "slope": torch.tensor(slopes, dtype=f64),
                        "slope_scale": torch.tensor(slope_scales, dtype=f64)}}


def edges_case(name):
    fn, family, shifted = FUNCTIONS[name]
    ends = [1.0, -1.0, 0.0, 0.5, 2.0, float("nan")]
    if shifted:
        ends = [(e + 1) / 2 for e in ends]
    pairs = [(x, n) for x in ends for n in [-3.0, -1.0, -0.5, 0.0, 0.7, 1.0, 1.9, 2.0, 7.0, 70.0]]
    pairs += [(x, 400.0) for x in [1e3, -1e3, 0.5]] + [(1e200, 4.0), (-1e200, 5.0)]
    x = torch.tensor([p[0] for p in pairs], dtype=f64)
    n = torch.tensor([p[1] for p in pairs], dtype=f64)
    return {"name": "edges_" + name, "params": {"inputs": ["x", "n"], "no_grad": []},
            "tensors": {"x": x, "n": n, "out0": fn(x, n)}}


cases = []
for function_name in FUNCTIONS:
    cases.append(exact_case(function_name))
    cases.append(edges_case(function_name))

if __name__ == "__main__":
    write("orthogonal_polynomials.json", "make_orthogonal_polynomials.py", cases)
