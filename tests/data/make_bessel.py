"""torch.special's Bessel functions and airy_ai in PyTorch 1.13 and mpmath
(tests/autograd/test_bessel.cpp).

bessel_j0, bessel_j1, bessel_y0, bessel_y1, modified_bessel_k0, modified_bessel_k1,
scaled_modified_bessel_k0, scaled_modified_bessel_k1, spherical_bessel_j0 and airy_ai at float64
points:
the "exact_" cases hold mpmath's values at 40 digits, rounded once (out0 and exact), at points
reaching into the tails, the zeros and the switches between the kernel's fits, and the "hankel_"
cases the same for J and Y from 5 to 2^21 (the CPU's lanes' range, and beyond), the "wide_" case
for Ai from -2^14 to 2^20; the "torch_" cases
PyTorch 1.13's values (out0) on +-(0.05, 30) (Y and K: positive) beside mpmath's (exact).
PyTorch's float64 J and Y are off by up to 1e-7 between 5 and 8 and 1e-11 elsewhere there (and
its J0 and J1 of 3 by 5e-12, as probed), so the test holds ours to being at least as accurate as
them, not to them. Every case also holds, from mpmath:
  scale: the size an absolute error is measured against, |f(x)|, or where f oscillates through
         zeros its envelope: 1 for |x| <= 5 and sqrt(2 / (pi |x|)) beyond for J and Y (their
         amplitude), min(1, 1/|x|) for sin(x) / x, |x|^(-1/4) / sqrt(pi) below -1 for Ai;
         the larger of the two;
  slope: |x f'(x)|, how much a relative rounding of x moves f (the conditioning, for the message
         of a failure).
PyTorch 1.13 has no gradient for these functions, so the cases are values only; I0 and I1 are
test_pointwise_math.cpp's.

Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_bessel.py
"""
import mpmath as mp
import torch

from reference import write

mp.mp.dps = 40
generator = torch.Generator().manual_seed(54)
f64 = torch.float64


def uniform(low, high, n):
    return (torch.rand(n, generator=generator, dtype=f64) * (high - low) + low).tolist()


# name -> (torch function, mpmath function, mpmath derivative, envelope kind)
def k_scaled(nu):
    return lambda x: mp.exp(x) * mp.besselk(nu, x)


FUNCTIONS = {
    "special_bessel_j0": (torch.special.bessel_j0, lambda x: mp.besselj(0, x),
                          lambda x: -mp.besselj(1, x), "bessel"),
    "special_bessel_j1": (torch.special.bessel_j1, lambda x: mp.besselj(1, x),
                          lambda x: mp.besselj(1, x, derivative=1), "bessel"),
    "special_bessel_y0": (torch.special.bessel_y0, lambda x: mp.bessely(0, x),
                          lambda x: -mp.bessely(1, x), "bessel"),
    "special_bessel_y1": (torch.special.bessel_y1, lambda x: mp.bessely(1, x),
                          lambda x: mp.bessely(1, x, derivative=1), "bessel"),
    "special_modified_bessel_k0": (torch.special.modified_bessel_k0, lambda x: mp.besselk(0, x),
                                   lambda x: -mp.besselk(1, x), "value"),
    "special_modified_bessel_k1": (torch.special.modified_bessel_k1, lambda x: mp.besselk(1, x),
                                   lambda x: mp.diff(lambda t: mp.besselk(1, t), x), "value"),
    "special_scaled_modified_bessel_k0": (torch.special.scaled_modified_bessel_k0, k_scaled(0),
                                          lambda x: mp.diff(k_scaled(0), x), "value"),
    "special_scaled_modified_bessel_k1": (torch.special.scaled_modified_bessel_k1, k_scaled(1),
                                          lambda x: mp.diff(k_scaled(1), x), "value"),
    "special_spherical_bessel_j0": (torch.special.spherical_bessel_j0,
                                    lambda x: mp.sin(x) / x if x != 0 else mp.mpf(1),
                                    lambda x: (mp.cos(x) - mp.sin(x) / x) / x if x != 0 else 0,
                                    "sinc"),
    "special_airy_ai": (torch.special.airy_ai, mp.airyai, lambda x: mp.airyai(x, 1), "airy"),
}


def scale_and_slope(kind, f, df, x):
    value = f(x)
    a = abs(x)
    if kind == "bessel":
        envelope = mp.mpf(1) if a <= 5 else mp.sqrt(2 / (mp.pi * a))
    elif kind == "sinc":
        envelope = min(mp.mpf(1), 1 / a) if a != 0 else mp.mpf(1)
    elif kind == "airy":  # the amplitude below -1 (DLMF 9.7.9)
        envelope = a**mp.mpf(-0.25) / mp.sqrt(mp.pi) if x < -1 else mp.mpf(0)
    else:
        envelope = mp.mpf(0)
    return float(value), float(max(abs(value), envelope)), float(abs(x * df(x)))


def case(prefix, name, points, reference):
    _, f, df, kind = FUNCTIONS[name]
    values, scales, slopes = [], [], []
    for p in points:
        value, scale, slope = scale_and_slope(kind, f, df, mp.mpf(p))
        values.append(value)
        scales.append(scale)
        slopes.append(slope)
    x = torch.tensor(points, dtype=f64)
    exact = torch.tensor(values, dtype=f64)
    out = reference(x) if reference is not None else exact
    return {"name": prefix + name, "params": {"inputs": ["x"], "no_grad": []},
            "tensors": {"x": x, "out0": out, "exact": exact,
                        "scale": torch.tensor(scales, dtype=f64),
                        "slope": torch.tensor(slopes, dtype=f64)}}


def zeros_of(name):
    """The first zeros (rounded to double) of the oscillating functions, where the relative
    error is largest."""
    if "bessel_j" in name or "bessel_y" in name:
        kind = mp.besseljzero if "bessel_j" in name else mp.besselyzero
        nu = 0 if name.endswith("0") else 1
        return [float(kind(nu, k)) for k in (1, 2, 3, 10)]
    if "spherical" in name:
        return [float(k * mp.pi) for k in (1, 2, 30)]
    if "airy" in name:
        return [float(mp.airyaizero(k)) for k in (1, 2, 3, 10, 1000)]
    return []


cases = []
for name, (fn, *_rest) in FUNCTIONS.items():
    positive_only = "_y" in name or "_k" in name
    sign = [1.0] if positive_only else [1.0, -1.0]
    torch_points = [s * v for s in sign for v in uniform(0.05, 30.0, 20)]
    cases.append(case("torch_", name, torch_points, fn))
    small = [1e-300, 1e-100, 1e-10, 1e-3, 0.25]
    switches = [2.0, 5.0, 8.0, 2.0 * (1 - 2**-52), 5.0 * (1 + 2**-52)]
    if "airy" in name:  # the fits' ends at -2 and 1
        switches = [1.0, 1.0 + 2**-52, -2.0, -2.0 * (1 + 2**-52), 2.0]
    large = [50.0, 700.0, 1e3, 1e5, 1e10, 1e20, 1e100, 1e300]
    if "airy" in name:  # to -1e10 (the phase's rounding beyond: Note [Airy function])
        large = [50.0, 95.0, 700.0, 1e3, 1e5, 1e7, 1e10]
    middle = uniform(0.0, 6.0, 24) + uniform(6.0, 60.0, 16)
    points = small + switches + middle + zeros_of(name) + large
    if not positive_only:
        points += [-v for v in small + middle[:8] + (large if "airy" in name else large[:3])]
    cases.append(case("exact_", name, points, None))

# Hankel's forms of J and Y as the CPU's lanes take them, up to 2^20, and the scalar function
# beyond (Note [Special functions in lanes]): mpmath's values on a geometric grid from 5 to 2^21
# and at the doubles either side of 2^20 (libstdc++'s long-double J and Y are 2e-16 of the
# envelope off near 600, too far to check against).
for name in ("special_bessel_j0", "special_bessel_j1", "special_bessel_y0", "special_bessel_y1"):
    points = [5.0 * (2.0**21 / 5.0) ** (i / 299) for i in range(300)]
    points += [2.0**20 * (1 - 2**-53), 2.0**20, 2.0**20 * (1 + 2**-52)]
    if "_j" in name:
        points += [-v for v in points]
    cases.append(case("hankel_", name, points, None))

# Ai's decaying and oscillating forms as the CPU's lanes take them, from -13000 (zeta near 2^20)
# to 2^20, and the scalar function beyond: mpmath's values on geometric grids from -2 to -2^14
# and from 1 to 120 (where Ai underflows), and either side of -13000.
airy_points = [-2.0 * (2.0**13) ** (i / 199) for i in range(200)]
airy_points += [(120.0) ** (i / 99) for i in range(100)]
airy_points += [-13000.0 * (1 - 2**-52), -13000.0, -13000.0 * (1 + 2**-52), 2.0**20]
cases.append(case("wide_", "special_airy_ai", airy_points, None))

if __name__ == "__main__":
    write("bessel.json", "make_bessel.py", cases)
