"""PyTorch 1.13's pointwise math (tests/autograd/test_pointwise_math.cpp).

erfc, special.erfcx, ndtr, log_ndtr, ndtri, i0, special.i0e, i1, i1e, sinc, igamma, igammac,
xlogy, special.xlog1py, special.entr, logit, hypot, copysign, nextafter, fmax, fmin, gcd, lcm,
the shifts, heaviside, logaddexp2, float_power, ldexp, deg2rad, rad2deg, frac and signbit: each
case's inputs (in the order params["inputs"] lists them), its output out0, and for the
differentiable ones the gradient d_<input> of sum(out0 * w0) with respect to every floating input
not listed in params["no_grad"]. The "_specials" cases hold the poles, infinities, NaN and domain
edges, values only. The "exact_" cases are mpmath's values at 60 digits, rounded once, where the
tails are small numbers that the C++ test compares relative to themselves.

Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_pointwise_math.py
"""
import math

import mpmath as mp
import torch

from reference import write
from torch_cases import mpmath_case, weighted_case

generator = torch.Generator().manual_seed(53)
cases = []
inf, nan = float("inf"), float("nan")
f64 = torch.float64


def uniform(low, high, *shape, dtype=f64):
    u = torch.rand(*shape, generator=generator, dtype=f64)
    return (u * (high - low) + low).to(dtype)


def t(values, dtype=f64):
    return torch.tensor(values, dtype=dtype)


def case(*args, **kwargs):
    cases.append(weighted_case(*args, **kwargs))


# ---- Unary special functions: values and gradients --------------------------------------------
real = torch.cat([uniform(-5.0, 5.0, 16), uniform(-30.0, 30.0, 8)])
case("erfc", {"x": uniform(-6.0, 6.0, 24)}, torch.erfc)
case("special_erfcx", {"x": torch.cat([uniform(-5.0, 5.0, 16), uniform(5.0, 60.0, 8)])},
     torch.special.erfcx)
case("special_ndtr", {"x": uniform(-8.0, 8.0, 24)}, torch.special.ndtr)
case("special_log_ndtr", {"x": torch.cat([uniform(-30.0, 6.0, 20), t([-1.0, 0.0, 0.5])])},
     torch.special.log_ndtr)
case("special_ndtri", {"p": torch.cat([uniform(1e-6, 1 - 1e-6, 20), t([1e-12, 0.5, 0.975])])},
     torch.special.ndtri)
case("i0", {"x": real}, torch.i0)
case("special_i0e", {"x": real}, torch.special.i0e)
case("special_i1", {"x": real}, torch.special.i1)
case("special_i1e", {"x": real}, torch.special.i1e)
case("sinc", {"x": torch.cat([uniform(-6.0, 6.0, 20), t([0.5, -1.5, 1e-9])])}, torch.sinc)
case("special_entr", {"x": uniform(0.01, 10.0, 12)}, torch.special.entr)
case("logit", {"x": uniform(0.02, 0.98, 12)}, torch.logit)
case("logit_eps", {"x": torch.cat([uniform(0.02, 0.98, 8), t([0.01, 0.995])])},
     lambda x: torch.logit(x, 0.05), {"eps": 0.05})
case("deg2rad", {"x": uniform(-720.0, 720.0, 8)}, torch.deg2rad)
case("rad2deg", {"x": uniform(-7.0, 7.0, 8)}, torch.rad2deg)
case("frac", {"x": torch.cat([uniform(-50.0, 50.0, 10), t([-2.5, 3.0, 1e17])])}, torch.frac)

# float32: PyTorch's own float32 kernels (ours round the double result once).
case("erfc_float32", {"x": uniform(-4.0, 4.0, 12, dtype=torch.float32)}, torch.erfc)
case("i0_float32", {"x": uniform(-20.0, 20.0, 12, dtype=torch.float32)}, torch.i0)
case("special_i1e_float32", {"x": uniform(-20.0, 20.0, 12, dtype=torch.float32)},
     torch.special.i1e)
case("sinc_float32", {"x": uniform(-3.0, 3.0, 12, dtype=torch.float32)}, torch.sinc)

# ---- Binary: values and gradients ---------------------------------------------------------------
a = torch.cat([uniform(0.1, 12.0, 3, 1), t([[0.5], [30.0]])])
x = torch.cat([uniform(0.05, 25.0, 1, 5), t([[1e-3]])], dim=1)
case("igamma", {"a": a, "x": x}, torch.igamma, no_grad=("a",))
case("igammac", {"a": a, "x": x}, torch.igammac, no_grad=("a",))
case("xlogy", {"x": t([0.0, 0.0, 1.5, -2.0, 3.0, 0.0]), "y": t([0.0, 2.0, 0.25, 3.0, 7.0, -1.0])},
     torch.xlogy)
case("special_xlog1py", {"x": t([0.0, 0.0, 1.5, -2.0, 3.0, 0.0, 0.0]),
                         "y": t([-1.0, 2.0, -0.25, 3.0, 7.0, -2.0, -0.5])}, torch.special.xlog1py)
case("hypot", {"a": uniform(-10.0, 10.0, 4, 1), "b": uniform(-10.0, 10.0, 1, 5)}, torch.hypot)
case("copysign", {"a": t([1.5, -2.0, 0.0, 3.0, -4.0, 0.5]),
                  "b": t([-1.0, 2.0, -3.0, -0.0, 0.0, 7.0])}, torch.copysign)
# The zeros of either sign: fmax and fmin give a of two equal operands (fmax(-0, +0) is -0).
fa = t([1.0, nan, 3.0, 2.0, nan, -1.0, 5.0, 0.0, -0.0, -0.0])
fb = t([2.0, 1.0, nan, 2.0, nan, -1.5, 4.0, -0.0, 0.0, -0.0])
case("fmax", {"a": fa, "b": fb}, torch.fmax)
case("fmin", {"a": fa, "b": fb}, torch.fmin)
case("logaddexp2", {"a": uniform(-40.0, 40.0, 3, 4), "b": uniform(-40.0, 40.0, 4)},
     torch.logaddexp2)
case("float_power", {"a": uniform(0.5, 3.0, 6, dtype=torch.float32),
                     "b": uniform(-2.0, 2.0, 6, dtype=torch.float32)}, torch.float_power)
case("ldexp", {"a": uniform(-3.0, 3.0, 6), "e": t([-3, 0, 5, 10, -60, 100], torch.int64)},
     torch.ldexp)
case("heaviside",
     {"x": t([-1.0, 0.0, 2.0, 0.0, nan, -0.0]), "v": t([0.5, 0.25, 0.5, -3.0, 7.0, 9.0])},
     torch.heaviside, differentiable=False)
case("nextafter", {"a": t([1.0, 1.0, 0.0, -0.0, 1e308, 5e-324]),
                   "b": t([2.0, 0.0, 1.0, -1.0, inf, 0.0])}, torch.nextafter, differentiable=False)
case("nextafter_float32", {"a": t([1.0, 1.0, 0.0, 3.4e38], torch.float32),
                           "b": t([2.0, 0.0, -1.0, inf], torch.float32)},
     torch.nextafter, differentiable=False)
case("signbit", {"x": t([-0.0, 0.0, -1.0, 2.0, -inf, inf])}, torch.signbit, differentiable=False)

# ---- Integers ------------------------------------------------------------------------------------
i64 = torch.int64
ia = t([12, -18, 0, 0, 7, -9, 2**40, 1], i64)
ib = t([18, 12, 5, 0, -13, -6, 2**20 * 3, 1], i64)
case("gcd", {"a": ia, "b": ib}, torch.gcd, differentiable=False)
case("lcm", {"a": ia, "b": ib}, torch.lcm, differentiable=False)
case("gcd_int32", {"a": ia[:6].int(), "b": ib[:6].int()}, torch.gcd, differentiable=False)
case("gcd_uint8", {"a": t([12, 0, 255, 7], torch.uint8), "b": t([18, 5, 85, 0], torch.uint8)},
     torch.gcd, differentiable=False)
sa = t([1, -8, 5, 255, -1, 3], i64)
sb = t([3, 2, 0, 60, 63, 62], i64)
case("bitwise_left_shift", {"a": sa, "b": sb}, torch.bitwise_left_shift, differentiable=False)
case("bitwise_right_shift", {"a": sa, "b": sb}, torch.bitwise_right_shift, differentiable=False)
case("bitwise_left_shift_int32", {"a": sa.int(), "b": t([3, 2, 0, 20, 31, 30], torch.int32)},
     torch.bitwise_left_shift, differentiable=False)
case("bitwise_right_shift_uint8", {"a": t([200, 255, 1, 128], torch.uint8),
                                   "b": t([1, 7, 0, 3], torch.uint8)},
     torch.bitwise_right_shift, differentiable=False)
case("heaviside_int64", {"x": t([-3, 0, 4], i64), "v": t([7, 9, 11], i64)}, torch.heaviside,
     differentiable=False)
case("deg2rad_int64", {"x": t([0, 90, -180, 360], i64)}, torch.deg2rad, differentiable=False)
case("copysign_int64", {"a": t([1, -2, 3], i64), "b": t([-1, 2, 0], i64)}, torch.copysign,
     differentiable=False)
case("xlogy_int64", {"x": t([0, 2, 3], i64), "y": t([0, 4, 9], i64)}, torch.xlogy,
     differentiable=False)

# ---- Specials: poles, infinities, NaN, domain edges (values only) --------------------------------
edges = t([-inf, -30.0, -1.0, -0.0, 0.0, 1e-300, 1.0, 26.0, 30.0, inf, nan])
for name, fn in [("erfc", torch.erfc), ("special_erfcx", torch.special.erfcx),
                 ("special_ndtr", torch.special.ndtr), ("special_log_ndtr", torch.special.log_ndtr),
                 ("i0", torch.i0), ("special_i0e", torch.special.i0e),
                 ("special_i1", torch.special.i1), ("special_i1e", torch.special.i1e),
                 ("sinc", torch.sinc), ("special_entr", torch.special.entr),
                 ("frac", torch.frac)]:
    case(name + "_specials", {"x": edges}, fn, differentiable=False)
case("special_ndtri_specials", {"p": t([-inf, -0.1, 0.0, 1e-300, 0.5, 1.0, 1.5, inf, nan])},
     torch.special.ndtri, differentiable=False)
case("logit_specials", {"x": t([-0.5, 0.0, 0.5, 1.0, 2.0, nan])}, torch.logit,
     differentiable=False)
ga = t([0.0, 0.0, 1.0, inf, inf, 2.0, -1.0, 1.0, nan, 2.0, 0.5])
gx = t([1.0, 0.0, 0.0, 1.0, inf, inf, 1.0, -1.0, 1.0, nan, 1e-300])
case("igamma_specials", {"a": ga, "x": gx}, torch.igamma, differentiable=False)
case("igammac_specials", {"a": ga, "x": gx}, torch.igammac, differentiable=False)
case("xlogy_specials", {"x": t([0.0, 0.0, 0.0, 1.0, inf, nan]),
                        "y": t([0.0, nan, -1.0, 0.0, 0.0, 1.0])}, torch.xlogy,
     differentiable=False)
case("hypot_specials", {"a": t([inf, nan, 1e300, 0.0, -inf, 3e-320]),
                        "b": t([nan, inf, 1e300, -0.0, 1.0, 4e-320])}, torch.hypot,
     differentiable=False)
case("logaddexp2_specials", {"a": t([inf, -inf, inf, nan, 1e308]),
                             "b": t([inf, -inf, -inf, 1.0, 1e308])}, torch.logaddexp2,
     differentiable=False)

# ---- mpmath at 60 digits, rounded once (values only; compared relative to themselves) ------------
mp.mp.dps = 60


def exact(name, inputs, fn):
    cases.append(mpmath_case(name, inputs, fn))


def ndtr(v):
    return mp.erfc(-v / mp.sqrt(2)) / 2


exact("exact_erfc", {"x": t([-5.0, -0.5, 0.1, 1.0, 3.0, 6.0, 10.0, 20.0, 26.0])}, mp.erfc)
exact("exact_special_erfcx",
      {"x": t([-26.0, -5.0, -0.5, 0.0, 0.3, 2.0, 9.99, 10.0, 12.0, 50.0, 1e3, 1e7, 1e9])},
      lambda v: mp.exp(v * v) * mp.erfc(v))
exact("exact_special_log_ndtr", {"x": t([-1e3, -100.0, -38.0, -10.0, -1.0, -0.1, 0.0, 3.0, 9.0])},
      lambda v: mp.log(ndtr(v)))


def ndtri(p):
    """Bisection on Phi over [-40, 40]: 300 halvings, far below a double's ulp of z."""
    if p == mp.mpf(0.5):
        return mp.mpf(0)
    lo, hi = mp.mpf(-40), mp.mpf(40)
    for _ in range(300):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if ndtr(mid) < p else (lo, mid)
    return (lo + hi) / 2


exact("exact_special_ndtri",
      {"p": t([1e-300, 1e-100, 1e-20, 1e-5, 0.01, 0.3, 0.5, 0.7, 0.99, 1 - 1e-10, 1 - 2**-53])},
      ndtri)
bessel_points = t([-700.0, -50.0, -20.5, -19.5, -1e-3, 0.25, 3.0, 15.0, 20.0, 20.001, 35.0, 100.0,
                   700.0])
exact("exact_i0", {"x": bessel_points}, lambda v: mp.besseli(0, v))
exact("exact_special_i0e", {"x": bessel_points}, lambda v: mp.exp(-abs(v)) * mp.besseli(0, v))
exact("exact_special_i1", {"x": bessel_points}, lambda v: mp.besseli(1, v))
exact("exact_special_i1e", {"x": bessel_points}, lambda v: mp.exp(-abs(v)) * mp.besseli(1, v))
exact("exact_sinc", {"x": t([1e-8, 0.5, 0.999999, 1.000001, 2.5, 100.25, 1e6 + 0.5])},
      lambda v: mp.sin(mp.pi * v) / (mp.pi * v))
exact("exact_igamma", {"a": t([0.5, 1.0, 3.0, 10.0, 10.0, 40.0, 100.0, 0.01]),
                       "x": t([0.1, 2.0, 15.0, 3.0, 10.0, 45.0, 90.0, 0.5])},
      lambda s, v: mp.gammainc(s, 0, v, regularized=True))
exact("exact_igammac", {"a": t([0.5, 1.0, 3.0, 10.0, 10.0, 40.0, 100.0, 2.0]),
                        "x": t([0.1, 2.0, 15.0, 3.0, 10.0, 45.0, 90.0, 60.0])},
      lambda s, v: mp.gammainc(s, v, mp.inf, regularized=True))


# Temme's range (a > 20, |x - a| <= 0.3 a; Note [Temme's expansion]): x from 30 sqrt(a) below a
# to 25 sqrt(a) above it, where P or Q is still above 1e-300. mpmath's gammainc gives up on the
# series past a of about 1e5, so P is x^a e^-x / Gamma(a + 1) 1F1(1; a + 1; x) (DLMF 8.5.1,
# 13.6.5), with digits to spare for a log x and for Q = 1 - P's cancellation.
def large_a_p_q(a, x, lower):
    with mp.workdps(60 + int(mp.log10(a)) + int(a * ((x - a) / a - mp.log1p((x - a) / a)) / 2)):
        p = mp.exp(a * mp.log(x) - x - mp.loggamma(a + 1)) * mp.hyp1f1(1, a + 1, x,
                                                                        maxterms=10**8)
        return p if lower else 1 - p


temme_a, temme_x = [], []
for a in [25.0, 150.0, 1e3, 1e5, 1e8, 1e10]:
    for offset in [-30.0, -5.0, -0.01, 0.0, 0.5, 4.0, 25.0]:
        x = a + offset * math.sqrt(a)
        if abs(x - a) <= 0.3 * a:
            temme_a.append(a)
            temme_x.append(x)
exact("exact_igamma_temme", {"a": t(temme_a), "x": t(temme_x)},
      lambda s, v: large_a_p_q(s, v, True))
exact("exact_igammac_temme", {"a": t(temme_a), "x": t(temme_x)},
      lambda s, v: large_a_p_q(s, v, False))

write("pointwise_math.json", "make_pointwise_math.py", cases)
print(len(cases), "cases")
