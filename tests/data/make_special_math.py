"""PyTorch 1.13's special functions (tests/autograd/test_special_math.cpp).

lgamma, digamma, polygamma (n = 1, 2, 3), mvlgamma, erfinv and special.zeta: each case's inputs
(in the order params["inputs"] lists them), its output out0, and for the differentiable ones
the gradient d_<input> of sum(out0 * w0) with respect to every floating input not listed in
params["no_grad"] (zeta's x: PyTorch has no derivative for it). The "specials" cases hold the
poles, the infinities, NaN and the domain edges, values only. The "exact_" cases are mpmath's
values at 40 digits (python3-mpmath, which python3-torch pulls in through sympy), rounded once.

Run with Debian's python3-torch: /usr/bin/python3 tests/data/make_special_math.py
"""
import mpmath as mp
import torch

from reference import write
from torch_cases import mpmath_case, weighted_case

generator = torch.Generator().manual_seed(29)
cases = []
inf, nan = float("inf"), float("nan")


def uniform(low, high, *shape, dtype=torch.float64):
    u = torch.rand(*shape, generator=generator, dtype=torch.float64)
    return (u * (high - low) + low).to(dtype)


def case(*args, **kwargs):
    cases.append(weighted_case(*args, **kwargs))


# Positive arguments from tiny to large, and negative ones between the poles (reflected).
positive = torch.cat([uniform(1e-3, 1.0, 12), uniform(1.0, 30.0, 12), uniform(30.0, 1e4, 6)])
negative = -uniform(0.05, 0.95, 12) - torch.randint(0, 6, (12,), generator=generator).double()
grid = torch.cat([positive, negative])
case("lgamma", {"x": grid}, lambda x: torch.lgamma(x))
case("digamma", {"x": grid}, lambda x: torch.digamma(x))
# PyTorch's trigamma (n = 1) is its own series; its negative arguments lose digits to the
# reflection's pi^2 / sin^2, so those are left to the identities of the C++ test.
for n in [1, 2, 3]:
    case(f"polygamma_{n}", {"x": positive if n == 1 else grid},
         lambda x, n=n: torch.polygamma(n, x), {"n": n})
case("mvlgamma_3", {"x": uniform(1.01, 20.0, 4, 5)}, lambda x: torch.mvlgamma(x, 3), {"p": 3})
case("mvlgamma_1", {"x": uniform(0.01, 20.0, 7)}, lambda x: torch.mvlgamma(x, 1), {"p": 1})
# PyTorch's erfinv refines with erf itself, which cancels toward |y| = 1: its tails lose digits
# (erfinv(1 - 1e-15) is off in the fourth), so they are left to the mpmath cases below.
case("erfinv", {"y": torch.cat([uniform(-0.999, 0.999, 30),
                                torch.tensor([1e-300, -1e-20, 0.5], dtype=torch.float64)])},
     lambda y: torch.erfinv(y))
case("special_zeta", {"x": uniform(1.1, 8.0, 5, 1), "q": uniform(0.05, 50.0, 1, 6)},
     lambda x, q: torch.special.zeta(x, q), no_grad=("x",))
case("special_zeta_integral_negative_q",
     {"x": torch.tensor([2.0, 3.0, 4.0, 2.0], dtype=torch.float64),
      "q": torch.tensor([-2.5, -0.5, -7.25, 1e9], dtype=torch.float64)},
     lambda x, q: torch.special.zeta(x, q), no_grad=("x",))
# float32: PyTorch computes in float32 (its reflection's pi x too), so only positive arguments.
case("lgamma_float32", {"x": positive.float()}, lambda x: torch.lgamma(x))
case("digamma_float32", {"x": positive.float()}, lambda x: torch.digamma(x))
case("erfinv_float32", {"y": uniform(-0.99, 0.99, 20, dtype=torch.float32)},
     lambda y: torch.erfinv(y))

# ---- specials: poles, infinities, NaN, domain edges (values only) -------------------------------
specials = torch.tensor([-inf, -3.0, -1.0, -0.0, 0.0, 1e-300, 1.0, 2.0, 1e300, inf, nan],
                        dtype=torch.float64)
case("lgamma_specials", {"x": specials}, lambda x: torch.lgamma(x), differentiable=False)
case("digamma_specials", {"x": specials}, lambda x: torch.digamma(x), differentiable=False)
case("erfinv_specials",
     {"y": torch.tensor([-inf, -1.5, -1.0, -0.0, 0.0, 1.0, 1.5, inf, nan], dtype=torch.float64)},
     lambda y: torch.erfinv(y), differentiable=False)
case("special_zeta_specials",
     {"x": torch.tensor([1.0, 0.5, 2.0, 2.0, 2.5, 2.0, nan, 2.0, 3.0], dtype=torch.float64),
      "q": torch.tensor([1.0, 1.0, 0.0, -3.0, -0.5, inf, 1.0, nan, 1e300], dtype=torch.float64)},
     lambda x, q: torch.special.zeta(x, q), differentiable=False)
case("lgamma_int64", {"x": torch.tensor([-2, 0, 1, 3, 10])}, lambda x: torch.lgamma(x),
     differentiable=False)

# ---- mpmath at 40 digits, rounded once: the true values, where PyTorch's own are not -------------
# (its trigamma truncates its series at about 3e-9, its erfinv tails lose digits). Values only.
mp.mp.dps = 40


def exact(name, inputs, fn):
    cases.append(mpmath_case(name, inputs, fn))


exact("exact_digamma", {"x": grid}, mp.digamma)
# Just left and right of poles: the reflection's tan(pi x) must keep x's own digits.
exact("exact_digamma_near_poles",
      {"x": torch.tensor([-1e-15, -1e-12, -1e-10, -1e-300, -2.9999999, -3.0000001, -0.5, -7.999999999],
                         dtype=torch.float64)}, mp.digamma)
exact("exact_polygamma_1", {"x": grid}, lambda x: mp.polygamma(1, x))
exact("exact_polygamma_3", {"x": positive}, lambda x: mp.polygamma(3, x))
tails = torch.tensor([0.5, 0.9, 0.999, 1 - 1e-6, 1 - 1e-10, 1 - 2e-15, -(1 - 1e-12), 1e-5,
                      -0.25], dtype=torch.float64)
exact("exact_erfinv", {"y": tails}, mp.erfinv)
exact("exact_special_zeta", {"x": torch.tensor([1.5, 2.0, 3.0, 7.5, 2.0, 4.0], dtype=torch.float64),
                             "q": torch.tensor([0.3, 1.0, 12.0, 2.5, -2.5, 1e6],
                                               dtype=torch.float64)},
      mp.zeta)

write("special_math.json", "make_special_math.py", cases)
