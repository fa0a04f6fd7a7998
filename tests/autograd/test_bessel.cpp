// torch.special's Bessel functions (autograd/special_functions.h: J0, J1, Y0, Y1, K0, K1, their
// scaled forms, the spherical j0 and the I0 / I1 aliases) and the Airy function Ai: against
// mpmath's values at 40 digits (tests/data/bessel.json, written by make_bessel.py) through the
// tails, the zeros and the switches between the kernel's fits; against PyTorch 1.13's values; dense
// sweeps against libstdc++'s long-double std::cyl_bessel_j, cyl_neumann and cyl_bessel_k, which
// share nothing with the kernels; identities (the Wronskians); the edges (0, negative, infinite,
// NaN); the narrow dtypes bit for bit the double result rounded; finite differences, twice, and the
// gradient's limits at 0. The kernels' fits are special_math_fits.h (Note [Chebyshev fits]);
// I0 and I1 themselves are tested in test_pointwise_math.cpp.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/special_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad::test {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = 3.14159265358979323846;

using Unary = Tensor (*)(const Tensor&);

struct Function {
  const char* name;
  Unary fn;
};

const std::vector<Function>& functions() {
  static const std::vector<Function> all = {
      {"special_bessel_j0", special_bessel_j0},
      {"special_bessel_j1", special_bessel_j1},
      {"special_bessel_y0", special_bessel_y0},
      {"special_bessel_y1", special_bessel_y1},
      {"special_modified_bessel_k0", special_modified_bessel_k0},
      {"special_modified_bessel_k1", special_modified_bessel_k1},
      {"special_scaled_modified_bessel_k0", special_scaled_modified_bessel_k0},
      {"special_scaled_modified_bessel_k1", special_scaled_modified_bessel_k1},
      {"special_spherical_bessel_j0", special_spherical_bessel_j0},
      {"special_airy_ai", special_airy_ai},
  };
  return all;
}

Unary function_named(const std::string& name) {
  for (const Function& f : functions())
    if (name == f.name) return f.fn;
  return nullptr;
}

const std::vector<ReferenceCase>& cases() {
  static const std::vector<ReferenceCase> all = load_reference("bessel.json");
  return all;
}

// |got - exact| <= max(ulps u scale, |peer - exact|) elementwise, the peer's values being out0
// (mpmath's own for the exact cases, so the bound is ulps u scale there); NaN and infinities
// must match.
::testing::AssertionResult within(const Tensor& got, const ReferenceCase& c, double ulps) {
  const std::vector<double> g = to_vector(got), w = to_vector(c.at("exact"));
  const std::vector<double> peer = to_vector(c.at("out0")), x = to_vector(c.at("x"));
  const std::vector<double> scale = to_vector(c.at("scale")), slope = to_vector(c.at("slope"));
  const double u = math_unit_roundoff(kFloat64);
  auto result = ::testing::AssertionSuccess();
  bool ok = true;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const bool same_non_finite =
        !std::isfinite(w[i]) && (std::isnan(w[i]) ? std::isnan(g[i]) : g[i] == w[i]);
    const double bound = std::max(ulps * u * scale[i], std::fabs(peer[i] - w[i]));
    if (same_non_finite || std::fabs(g[i] - w[i]) <= bound) continue;
    if (ok) result = ::testing::AssertionFailure();
    ok = false;
    result << "at " << x[i] << ": got " << g[i] << ", want " << w[i] << " (error "
           << std::fabs(g[i] - w[i]) << ", bound " << bound << ", |x f'| u " << slope[i] * u
           << ")\n";
  }
  return result;
}

// Runs each case whose name starts with prefix through its function and checks it with
// within(..., 16); returns how many cases ran.
int check_cases(const std::string& prefix) {
  int checked = 0;
  for (const ReferenceCase& c : cases()) {
    if (c.name.rfind(prefix, 0) != 0) continue;
    SCOPED_TRACE(c.name);
    const Unary f = function_named(c.name.substr(prefix.size()));
    EXPECT_NE(f, nullptr);
    if (f == nullptr) continue;
    EXPECT_TRUE(within(f(c.at("x")), c, 16));
    ++checked;
  }
  return checked;
}

// mpmath's values, rounded once. The kernel's error is a few units of 2^-53 of the scale (the
// value, or near a zero the envelope; make_bessel.py): each fit's own rounding (1 to 5 units,
// tools/fit_special_math.py) and a few libm calls (log, exp, sqrt, sin and cos) and products.
// 16 leaves room for both and for another machine's libm.
TEST(Bessel, MatchExactValues) {
  EXPECT_EQ(check_cases("exact_"), 10);
}

// PyTorch 1.13's float64 kernels (Cephes' rational approximations) are within a few ulps of
// mpmath for K and sin(x)/x, but its J and Y lose up to 1e-7 between 5 and 8 and about 1e-11
// elsewhere on (0, 30) (make_bessel.py): at every point ours are within 16 ulps of the scale
// or at least as close to mpmath as PyTorch's.
TEST(Bessel, AtLeastAsAccurateAsPyTorch) {
  EXPECT_EQ(check_cases("torch_"), 10);
}

Tensor grid(double low, double high, std::int64_t n) {
  return arange(0.0, static_cast<double>(n), 1.0, TensorOptions(kFloat64)) *
             ((high - low) / static_cast<double>(n - 1)) +
         low;
}

// libstdc++'s long-double Bessel functions (its own series, continued fractions and asymptotic
// forms, 11 bits more) on a grid that crosses the fits' switches at 2 and 5 and reaches 60; the
// bound is the one of MatchExactValues, in the same scale.
TEST(Bessel, MatchLibstdcxx) {
  const Tensor x = grid(0.01, 60.0, 1200);
  const std::vector<double> xs = to_vector(x);
  const auto sweep = [&](const char* what, Unary f, auto reference, bool oscillates) {
    SCOPED_TRACE(what);
    const std::vector<double> got = to_vector(f(x));
    const double u = math_unit_roundoff(kFloat64);
    int bad = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const long double want = reference(static_cast<long double>(xs[i]));
      const double envelope = xs[i] <= 5 ? 1.0 : std::sqrt(2 / (kPi * xs[i]));
      const double scale =
          std::max(std::fabs(static_cast<double>(want)), oscillates ? envelope : 0);
      if (std::fabs(got[i] - static_cast<double>(want)) > 16 * u * scale && ++bad <= 5)
        ADD_FAILURE() << "at " << xs[i] << ": got " << got[i] << ", want "
                      << static_cast<double>(want);
    }
    EXPECT_EQ(bad, 0);
  };
  sweep(
      "j0", special_bessel_j0, [](long double v) { return std::cyl_bessel_jl(0.0L, v); }, true);
  sweep(
      "j1", special_bessel_j1, [](long double v) { return std::cyl_bessel_jl(1.0L, v); }, true);
  sweep(
      "y0", special_bessel_y0, [](long double v) { return std::cyl_neumannl(0.0L, v); }, true);
  sweep(
      "y1", special_bessel_y1, [](long double v) { return std::cyl_neumannl(1.0L, v); }, true);
  sweep(
      "k0", special_modified_bessel_k0, [](long double v) { return std::cyl_bessel_kl(0.0L, v); },
      false);
  sweep(
      "k1", special_modified_bessel_k1, [](long double v) { return std::cyl_bessel_kl(1.0L, v); },
      false);
  sweep(
      "k0e", special_scaled_modified_bessel_k0,
      [](long double v) { return std::exp(v) * std::cyl_bessel_kl(0.0L, v); }, false);
  sweep(
      "k1e", special_scaled_modified_bessel_k1,
      [](long double v) { return std::exp(v) * std::cyl_bessel_kl(1.0L, v); }, false);
}

// The CPU's lanes take J0, J1, Y0 and Y1 by Hankel's form with their own sine and cosine from 5 to
// 2^20, and the scalar function (libm's) beyond (Note [Special functions in lanes] in
// kernels/cpu/elementwise_range_limited.cpp): mpmath's values on a geometric grid from 5 to 2^21
// and either side of 2^20, both signs for J, within MatchExactValues' bound. (libstdc++'s
// long-double J and Y, MatchLibstdcxx's reference, are 2e-16 of the envelope off near 600.)
TEST(Bessel, HankelFormsMatchExactValuesToTwoToThe21) {
  EXPECT_EQ(check_cases("hankel_"), 4);
}

// Likewise Ai's decaying form (with the lanes' own exp) and oscillating one (their own sine and
// cosine of zeta, up to 2^20 at x = -13000): mpmath's values from -2^14 to 120 and either side
// of -13000.
TEST(Bessel, AiryFormsMatchExactValuesFarOut) {
  EXPECT_EQ(check_cases("wide_"), 1);
}

// Ai and its derivative (the gradient) against libstdc++'s long-double Bessel functions of order
// 1/3 and 2/3 (DLMF 9.6.1-9.6.7: K for x > 0, J and Y for x < 0), on a grid across the fits'
// ends at -2 and 1 from -60 to 30, within 16 units of 2^-53 of the value or, below 0, the
// amplitude |x|^(-1/4) / sqrt(pi) (|x|^(1/4) / sqrt(pi) for Ai'); Ai'(-inf) is NaN (its
// amplitude grows), Ai'(+inf) 0.
TEST(Bessel, AiryMatchesLibstdcxx) {
  const Tensor x = grid(-60.0, 30.0, 1801).requires_grad_();
  const Tensor y = special_airy_ai(x);
  sum(y).backward();
  const std::vector<double> xs = to_vector(x), ai = to_vector(y), dai = to_vector(x.grad());
  const double u = math_unit_roundoff(kFloat64);
  const long double sqrt3 = std::sqrt(3.0L), pi = kPi;
  int bad = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const long double t = std::fabs(static_cast<long double>(xs[i]));
    const long double zeta = 2 * t * std::sqrt(t) / 3;
    long double want = 0, want_prime = 0;
    if (xs[i] > 0) {
      want = std::sqrt(t / 3) * std::cyl_bessel_kl(1 / 3.0L, zeta) / pi;
      want_prime = -t * std::cyl_bessel_kl(2 / 3.0L, zeta) / (pi * sqrt3);
    } else if (xs[i] < 0) {
      want = std::sqrt(t) *
             (std::cyl_bessel_jl(1 / 3.0L, zeta) - std::cyl_neumannl(1 / 3.0L, zeta) / sqrt3) / 2;
      want_prime =
          t * (std::cyl_bessel_jl(2 / 3.0L, zeta) + std::cyl_neumannl(2 / 3.0L, zeta) / sqrt3) / 2;
    } else {
      want = 0.35502805388781723926L;
      want_prime = -0.25881940379280679840L;
    }
    // Ai' has its first zero at -1.02, Ai at -2.34.
    const double amplitude = xs[i] < 0 ? static_cast<double>(1 / std::sqrt(pi * std::sqrt(t))) : 0;
    const double amplitude_prime =
        xs[i] < 0 ? static_cast<double>(std::sqrt(std::sqrt(t) / pi)) : 0;
    const double bound = 16 * u * std::max(std::fabs(static_cast<double>(want)), amplitude);
    const double bound_prime =
        16 * u * std::max(std::fabs(static_cast<double>(want_prime)), amplitude_prime);
    if ((std::fabs(ai[i] - static_cast<double>(want)) > bound ||
         std::fabs(dai[i] - static_cast<double>(want_prime)) > bound_prime) &&
        ++bad <= 5)
      ADD_FAILURE() << "at " << xs[i] << ": Ai " << ai[i] << ", want " << static_cast<double>(want)
                    << "; Ai' " << dai[i] << ", want " << static_cast<double>(want_prime);
  }
  EXPECT_EQ(bad, 0);
  const Tensor ends = make_tensor({-kInf, kInf}, {2}, kFloat64).requires_grad_();
  sum(special_airy_ai(ends)).backward();
  const std::vector<double> g = to_vector(ends.grad());
  EXPECT_TRUE(std::isnan(g[0]));
  EXPECT_EQ(g[1], 0.0);
}

// The Wronskians J1 Y0 - J0 Y1 = 2 / (pi x) and I0 K1 + I1 K0 = 1 / x (DLMF 10.5.2, 10.28.2):
// each product is a few ulps of its terms' size, which are of the result's (the terms do not
// cancel: J1 Y0 and J0 Y1 have opposite signs on average, I and K are positive).
TEST(Bessel, WronskiansHold) {
  const Tensor x = grid(0.1, 40.0, 400);
  const Tensor w = sub(mul(special_bessel_j1(x), special_bessel_y0(x)),
                       mul(special_bessel_j0(x), special_bessel_y1(x)));
  const Tensor terms = add(abs(mul(special_bessel_j1(x), special_bessel_y0(x))),
                           abs(mul(special_bessel_j0(x), special_bessel_y1(x))));
  const std::vector<double> wv = to_vector(w), tv = to_vector(terms), xv = to_vector(x);
  const double u = math_unit_roundoff(kFloat64);
  for (std::size_t i = 0; i < xv.size(); ++i)
    EXPECT_NEAR(wv[i], 2 / (kPi * xv[i]), 64 * u * tv[i]) << "at " << xv[i];
  const Tensor small = grid(0.05, 30.0, 300);
  const Tensor k = add(mul(special_i0e(small), special_scaled_modified_bessel_k1(small)),
                       mul(special_i1e(small), special_scaled_modified_bessel_k0(small)));
  EXPECT_TRUE(matches_within_roundoff(mul(k, small), ones({300}, kFloat64), {}, {.ulps = 32}));
}

// PyTorch 1.13's values at the edges (probed), but at +-inf, where its J and Y are NaN (Cephes'
// cosine of infinity) and these are the limit 0, as I0 and I1 are their limits +-inf (PyTorch's
// i0 and i1 are NaN at +-inf, its modified_bessel_i0 at -inf). The finite values at -3 are
// mpmath's (PyTorch's J0(-3) and J1(-3) are 5e-12 and 2e-12 off).
TEST(Bessel, Edges) {
  const Tensor x = make_tensor({-kInf, -3.0, -0.0, 0.0, kInf, kNan}, {6}, kFloat64);
  const auto values = [&](Unary f) { return to_vector(f(x)); };
  const auto expect = [](const std::vector<double>& got, const std::vector<double>& want,
                         const char* what) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (std::isnan(want[i])) {
        EXPECT_TRUE(std::isnan(got[i])) << what << " [" << i << "]: " << got[i];
      } else if (std::isfinite(want[i]) && want[i] != 0) {
        EXPECT_NEAR(got[i], want[i], 1e-15 * std::fabs(want[i])) << what << " [" << i << "]";
      } else {
        EXPECT_EQ(got[i], want[i]) << what << " [" << i << "]";
        EXPECT_EQ(std::signbit(got[i]), std::signbit(want[i])) << what << " [" << i << "]";
      }
    }
  };
  expect(values(special_bessel_j0), {0.0, -0.26005195490193344, 1.0, 1.0, 0.0, kNan}, "j0");
  expect(values(special_bessel_j1), {-0.0, -0.33905895852593646, -0.0, 0.0, 0.0, kNan}, "j1");
  expect(values(special_bessel_y0), {kNan, kNan, -kInf, -kInf, 0.0, kNan}, "y0");
  expect(values(special_bessel_y1), {kNan, kNan, -kInf, -kInf, 0.0, kNan}, "y1");
  for (const Unary k : {special_modified_bessel_k0, special_modified_bessel_k1,
                        special_scaled_modified_bessel_k0, special_scaled_modified_bessel_k1})
    expect(values(k), {kNan, kNan, kInf, kInf, 0.0, kNan}, "k");
  expect(values(special_spherical_bessel_j0), {0.0, 0.0470400026866224, 1.0, 1.0, 0.0, kNan},
         "spherical j0");
  // Ai(-3) is mpmath's (PyTorch's is 5e-9 off); at +-inf the limit 0, where PyTorch's is NaN.
  expect(values(special_airy_ai),
         {0.0, -0.37881429367765806, 0.3550280538878172, 0.3550280538878172, 0.0, kNan}, "airy");
  expect(values(special_modified_bessel_i0), {kInf, 4.8807925858650249, 1.0, 1.0, kInf, kNan},
         "modified i0");
  expect(values(special_modified_bessel_i1), {-kInf, -3.9533702174026093, -0.0, 0.0, kInf, kNan},
         "modified i1");
  EXPECT_TRUE(matches_within_roundoff(special_modified_bessel_i0(x), i0(x), {}, {.bitwise = true}));
  // Integral input is computed in float32, as PyTorch promotes it.
  const Tensor ints = make_tensor({1, 2, 7}, {3}, kInt64);
  for (const Function& f : functions()) {
    SCOPED_TRACE(f.name);
    const Tensor out = f.fn(ints);
    EXPECT_EQ(out.dtype(), kFloat32);
    EXPECT_TRUE(matches_within_roundoff(out, f.fn(ints.to(kFloat32)), {}, {.bitwise = true}));
  }
}

// float32 and the 16-bit dtypes compute in double and round once: bit for bit the float64
// result rounded to float (then to the 16-bit dtype), where PyTorch 1.13 has no 16-bit kernels.
TEST(Bessel, NarrowDTypesRoundTheDoubleResult) {
  const Tensor x = grid(0.0, 30.0, 301);
  for (const DType dtype : {kFloat32, kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor narrow = x.to(dtype);
    const Tensor wide = narrow.to(kFloat64);  // both sides read the same rounded operand
    for (const Function& f : functions()) {
      EXPECT_TRUE(matches_within_roundoff(f.fn(narrow), f.fn(wide).to(kFloat32).to(dtype), {},
                                          {.bitwise = true}))
          << f.name;
    }
  }
}

// The gradients are the functions' recurrences, written in the functions: finite differences of
// the forward match them, and their own differences the second order. Values of one magnitude
// per check (gradcheck differentiates a weighted sum of the outputs); both sides of each switch
// between fits (2 for K, 5 for J and Y).
TEST(Bessel, GradientsAreFiniteDifferences) {
  const Tensor x = make_tensor({-7.5, -3.1, -0.6, 0.45, 1.7, 4.9, 5.2, 11.0}, {8}, kFloat64);
  const Tensor positive = make_tensor({0.3, 1.1, 1.95, 2.05, 4.8, 5.3, 9.5}, {7}, kFloat64);
  for (const Function& f : functions()) {
    SCOPED_TRACE(f.name);
    const std::string name = f.name;
    const bool positive_only =
        name.find("_y") != std::string::npos || name.find("_k") != std::string::npos;
    const Tensor in = (positive_only ? positive : x).clone().requires_grad_();
    const GradcheckFn fn = [g = f.fn](const std::vector<Tensor>& v) { return g(v[0]); };
    EXPECT_TRUE(gradcheck(fn, {in}));
    EXPECT_TRUE(gradgradcheck(fn, {in}));
  }
}

// At 0, J1'(0) = 1/2 (J1(x) = x/2 - x^3/16 + ...) and j0'(0) = 0 (sin(x)/x = 1 - x^2/6 + ...),
// where the formulas J0 - J1/x and (cos x - j0)/x divide by x; J0'(0) = -J1(0) = 0.
TEST(Bessel, GradientsAtZeroAreTheLimits) {
  const auto gradient_at_zero = [](Unary f) {
    const Tensor x = zeros({1}, kFloat64).requires_grad_();
    sum(f(x)).backward();
    return x.grad().item<double>();
  };
  EXPECT_EQ(gradient_at_zero(special_bessel_j1), 0.5);
  EXPECT_EQ(gradient_at_zero(special_bessel_j0), 0.0);
  EXPECT_EQ(gradient_at_zero(special_spherical_bessel_j0), 0.0);
}

}  // namespace
}  // namespace leangrad::test
