// The pointwise math of autograd/pointwise_functions.h and the special functions added beside
// lgamma in autograd/special_functions.h (erfc, erfcx, ndtr, log_ndtr, ndtri, the Bessel
// functions I0 and I1, sinc, igamma, xlogy, entr, logit): against PyTorch 1.13 (values and
// gradients, poles, infinities and NaN; tests/data/pointwise_math.json, written by
// make_pointwise_math.py) and mpmath's exact values relative to themselves in the tails; dense
// sweeps against long-double references that share nothing with the kernels (libstdc++'s
// std::cyl_bessel_i, erfcl, bisection on erfcl); identities (P + Q = 1, ndtr of ndtri);
// float32 and 16-bit results bit for bit the double one rounded (erfc of float within its bound);
// the integer rules (gcd's signs, shifts past the width); finite differences, twice; methods and
// in-place forms. Misuse: the Pointwise table of tests/misuse/test_misuse_ops.cpp.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <leangrad/autograd/arithmetic_functions.h>
#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/pointwise_functions.h>
#include <leangrad/autograd/special_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/cpu/float_polynomials.h>
#include <leangrad/kernels/creation.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad::test {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

const std::vector<ReferenceCase>& cases() {
  static const std::vector<ReferenceCase> all = load_reference("pointwise_math.json");
  return all;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

// The function a case's name starts with (after "exact_"), longest name first so that "igammac"
// is not taken for "igamma" nor "special_i1e" for "special_i1".
Tensor run_case(const std::string& case_name, const std::vector<Tensor>& x,
                const nlohmann::json& p) {
  const std::string name = starts_with(case_name, "exact_") ? case_name.substr(6) : case_name;
  struct Entry {
    const char* name;
    Tensor (*fn)(const std::vector<Tensor>&, const nlohmann::json&);
  };
  static const Entry table[] = {
      {"special_xlog1py", [](const auto& v, const auto&) { return special_xlog1py(v[0], v[1]); }},
      {"special_log_ndtr", [](const auto& v, const auto&) { return special_log_ndtr(v[0]); }},
      {"special_erfcx", [](const auto& v, const auto&) { return special_erfcx(v[0]); }},
      {"special_ndtri", [](const auto& v, const auto&) { return special_ndtri(v[0]); }},
      {"special_ndtr", [](const auto& v, const auto&) { return special_ndtr(v[0]); }},
      {"special_entr", [](const auto& v, const auto&) { return special_entr(v[0]); }},
      {"special_i0e", [](const auto& v, const auto&) { return special_i0e(v[0]); }},
      {"special_i1e", [](const auto& v, const auto&) { return special_i1e(v[0]); }},
      {"special_i1", [](const auto& v, const auto&) { return special_i1(v[0]); }},
      {"bitwise_left_shift",
       [](const auto& v, const auto&) { return bitwise_left_shift(v[0], v[1]); }},
      {"bitwise_right_shift",
       [](const auto& v, const auto&) { return v[0].bitwise_right_shift(v[1]); }},
      {"float_power", [](const auto& v, const auto&) { return float_power(v[0], v[1]); }},
      {"logaddexp2", [](const auto& v, const auto&) { return logaddexp2(v[0], v[1]); }},
      {"nextafter", [](const auto& v, const auto&) { return nextafter(v[0], v[1]); }},
      {"heaviside", [](const auto& v, const auto&) { return heaviside(v[0], v[1]); }},
      {"copysign", [](const auto& v, const auto&) { return copysign(v[0], v[1]); }},
      {"igammac", [](const auto& v, const auto&) { return igammac(v[0], v[1]); }},
      {"igamma", [](const auto& v, const auto&) { return v[0].igamma(v[1]); }},
      {"deg2rad", [](const auto& v, const auto&) { return deg2rad(v[0]); }},
      {"rad2deg", [](const auto& v, const auto&) { return v[0].rad2deg(); }},
      {"signbit", [](const auto& v, const auto&) { return signbit(v[0]); }},
      {"hypot", [](const auto& v, const auto&) { return hypot(v[0], v[1]); }},
      {"xlogy", [](const auto& v, const auto&) { return xlogy(v[0], v[1]); }},
      {"ldexp", [](const auto& v, const auto&) { return ldexp(v[0], v[1]); }},
      {"logit",
       [](const auto& v, const auto& params) {
         return params.contains("eps") ? logit(v[0], params.at("eps").template get<double>())
                                       : logit(v[0]);
       }},
      {"erfc", [](const auto& v, const auto&) { return erfc(v[0]); }},
      {"sinc", [](const auto& v, const auto&) { return v[0].sinc(); }},
      {"fmax", [](const auto& v, const auto&) { return fmax(v[0], v[1]); }},
      {"fmin", [](const auto& v, const auto&) { return v[0].fmin(v[1]); }},
      {"frac", [](const auto& v, const auto&) { return frac(v[0]); }},
      {"gcd", [](const auto& v, const auto&) { return gcd(v[0], v[1]); }},
      {"lcm", [](const auto& v, const auto&) { return lcm(v[0], v[1]); }},
      {"i0", [](const auto& v, const auto&) { return i0(v[0]); }},
  };
  for (const Entry& e : table)
    if (starts_with(name, e.name)) return e.fn(x, p);
  ADD_FAILURE() << "no function for case " << name;
  return Tensor();
}

// Results that are exact: integers, bools, the selections (copysign, fmax, nextafter,
// heaviside), the powers of two of ldexp (a times an exact 2^e).
bool is_exact(const std::string& name, DType dtype) {
  if (!is_floating(dtype)) return true;
  for (const char* exact : {"copysign", "fmax", "fmin", "nextafter", "heaviside", "ldexp"})
    if (starts_with(name, exact)) return true;
  return false;
}

// The rounding of the incomplete gamma functions' prefactor exp(a log x - x - lgamma(a)): its
// argument's terms, each a few ulps, scale the result's relative error (Note [Regularized
// incomplete gamma functions]); both sides carry it (PyTorch's series and fractions use the same
// prefactor below a = 20, Temme's expansion above). In units of u.
double prefactor_ulps(const Tensor& a, const Tensor& x) {
  const std::vector<double> av = to_vector(a.expand(broadcast_shapes(a.shape(), x.shape(), "")));
  const std::vector<double> xv = to_vector(x.expand(broadcast_shapes(a.shape(), x.shape(), "")));
  double worst = 0;
  for (std::size_t i = 0; i < av.size(); ++i) {
    if (!(av[i] > 0 && xv[i] > 0) || std::isinf(av[i]) || std::isinf(xv[i])) continue;
    worst =
        std::max(worst, std::fabs(av[i] * std::log(xv[i])) + xv[i] + std::fabs(std::lgamma(av[i])));
  }
  return 4 * worst;
}

// Each side evaluates a closed form or a short series to a few ulps of the largest term on its
// path (matches_within_roundoff's scale max(1, |result|, |x|)); 32 ulps leave room for both.
// PyTorch's float32 kernels compute in float32 (Cephes' Chebyshev series for i0 and i1e, its
// own erfc), a few float ulps: 16.
double value_ulps(const ReferenceCase& c, const std::vector<Tensor>& inputs, DType dtype) {
  if (dtype == kFloat32) return 16;
  if (starts_with(c.name, "igamma")) return 32 + prefactor_ulps(inputs[0], inputs[1]);
  return 32;
}

// The gradients one chain rule deeper than the values (twice their roundings), with upstream
// weights up to 2; and two gradients whose formulas amplify a rounding by z^2: ndtri's
// sqrt(2 pi) exp(z^2 / 2) turns k ulps of the quantile z into k z^2 ulps (both sides: 32 z^2),
// and PyTorch's log_ndtr gradient exp(-(log_ndtr(x) + x^2 / 2)) cancels two terms of size x^2 / 2
// in its exponent, each rounded, and log_ndtr itself carries a few ulps of x^2 / 2: 2 x^2 ulps
// (ours takes erfcx instead and is within an ulp or two of mpmath's phi / Phi there).
double gradient_ulps(const ReferenceCase& c, const std::vector<Tensor>& inputs, DType dtype) {
  const double base = 2 * 2 * value_ulps(c, inputs, dtype);
  const auto largest_square = [](const Tensor& t) {
    double m = 0;
    for (const double v : to_vector(t))
      if (std::isfinite(v)) m = std::max(m, v * v);
    return m;
  };
  if (c.name == "special_ndtri") return base + 32 * largest_square(c.at("out0"));
  if (c.name == "special_log_ndtr") return base + 2 * largest_square(inputs[0]);
  return base;
}

// PyTorch 1.13's i0 and i1 are NaN at +-inf (the asymptotic form's exp(x) times 0); ours are
// the limits, +inf and +-inf (docs/api-notes.md): there the case's want is the limit.
Tensor pytorch_with_our_limits(const ReferenceCase& c) {
  const Tensor want = c.at("out0");
  if (c.name != "i0_specials" && c.name != "special_i1_specials") return want;
  const Tensor x = c.at("x");
  return where(isinf(x), c.name == "i0_specials" ? abs(x) : x, want);
}

TEST(PointwiseMath, MatchPyTorch) {
  int checked = 0;
  for (const ReferenceCase& c : cases()) {
    if (starts_with(c.name, "exact_")) continue;  // PointwiseMath.MatchExactValues
    SCOPED_TRACE(c.name);
    const ReferenceInputs reference = reference_inputs(c);
    const std::vector<Tensor>& inputs = reference.tensors;
    const Tensor out = run_case(c.name, inputs, c.params);
    ASSERT_TRUE(out.defined());
    const Tensor want = pytorch_with_our_limits(c);
    ASSERT_EQ(out.dtype(), want.dtype());
    ASSERT_EQ(out.shape(), want.shape());
    if (is_exact(c.name, out.dtype())) {
      EXPECT_TRUE(matches_within_roundoff(out, want, {}, {.bitwise = true}));
    } else {
      std::vector<NamedInput> operands;
      for (std::size_t k = 0; k < inputs.size(); ++k) {
        if (inputs[k].shape() == out.shape())
          operands.push_back({reference.names[k].c_str(), inputs[k].detach().to(kFloat64)});
      }
      const double ulps = value_ulps(c, inputs, out.dtype());
      EXPECT_TRUE(matches_within_roundoff(out, want, operands, {.ulps = ulps}));
    }
    if (reference.differentiable) {
      sum(mul(out, c.at("w0"))).backward();
      for (std::size_t k = 0; k < inputs.size(); ++k) {
        const auto grad = c.tensors.find("d_" + reference.names[k]);
        if (grad == c.tensors.end()) continue;
        ASSERT_TRUE(inputs[k].grad().defined()) << "d_" << reference.names[k];
        const double ulps = gradient_ulps(c, inputs, out.dtype());
        EXPECT_TRUE(matches_within_roundoff(inputs[k].grad(), grad->second, {}, {.ulps = ulps}))
            << "d_" << reference.names[k];
      }
    }
    ++checked;
  }
  EXPECT_EQ(checked, 65);
}

// |got - want| <= bound elementwise (NaN and infinities must match).
::testing::AssertionResult matches_bounds(const Tensor& got, const Tensor& want, const Tensor& at,
                                          const std::vector<double>& bound) {
  const std::vector<double> g = to_vector(got), w = to_vector(want), x = to_vector(at);
  if (g.size() != w.size() || g.size() != bound.size())
    return ::testing::AssertionFailure() << "sizes differ";
  auto result = ::testing::AssertionSuccess();
  bool ok = true;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const bool same_non_finite =
        !std::isfinite(w[i]) && (std::isnan(w[i]) ? std::isnan(g[i]) : g[i] == w[i]);
    if (same_non_finite || std::fabs(g[i] - w[i]) <= bound[i]) continue;
    if (ok) result = ::testing::AssertionFailure();
    ok = false;
    result << "at " << x[i] << ": got " << g[i] << ", want " << w[i] << " (error "
           << std::fabs(g[i] - w[i]) << ", bound " << bound[i] << ")\n";
  }
  return result;
}

// |got - want| <= ulps u |want| (all_close with no absolute part; NaN and infinities must match):
// the tails, where a bound scaled by max(1, |want|) would check nothing.
::testing::AssertionResult matches_relative(const Tensor& got, const Tensor& want, double ulps) {
  return all_close(got, to_vector(want), ulps * math_unit_roundoff(kFloat64), 0.0);
}

// Temme's expansion for P(a, x) and Q(a, x) (Note [Temme's expansion]): a few roundings, and
// the exponent a eta^2 / 2 = a (mu - log(1 + mu)), mu = (x - a) / a, times the few ulps of
// mu - log(1 + mu); mpmath's side is exact. Per element, in units of u relative to the value:
// 32 + 8 a eta^2 / 2 (tools/incomplete_gamma_temme.py measured at most 0.7 of it).
std::vector<double> temme_bounds(const Tensor& a, const Tensor& x, const Tensor& want) {
  const std::vector<double> av = to_vector(a), xv = to_vector(x), w = to_vector(want);
  std::vector<double> bounds;
  for (std::size_t i = 0; i < av.size(); ++i) {
    const double mu = (xv[i] - av[i]) / av[i];
    const double exponent = std::max(0.0, av[i] * (mu - std::log1p(mu)));
    bounds.push_back((32 + 8 * exponent) * math_unit_roundoff(kFloat64) * std::fabs(w[i]));
  }
  return bounds;
}

// mpmath's values, rounded once: one side's roundings. erfc is libm's (a few ulps), erfcx that
// times exp_of_square's; log_ndtr, ndtri and sinc a handful of operations and libm calls; the
// Bessel functions and ndtri a fitted series (1 to 5 units of 2^-53, tools/fit_special_math.py)
// and an exp or a log and sqrt; igamma the prefactor's rounding above, or Temme's bound.
TEST(PointwiseMath, MatchExactValues) {
  int checked = 0;
  for (const ReferenceCase& c : cases()) {
    if (!starts_with(c.name, "exact_")) continue;
    SCOPED_TRACE(c.name);
    const ReferenceInputs reference = reference_inputs(c);
    const std::vector<Tensor>& inputs = reference.tensors;
    const Tensor out = run_case(c.name, inputs, c.params);
    const Tensor& want = c.at("out0");
    if (c.name.ends_with("_temme")) {
      EXPECT_TRUE(matches_bounds(out, want, inputs[1], temme_bounds(inputs[0], inputs[1], want)));
    } else {
      double ulps = 16;
      if (starts_with(c.name, "exact_igamma")) ulps = 16 + prefactor_ulps(inputs[0], inputs[1]);
      EXPECT_TRUE(matches_relative(out, want, ulps));
    }
    ++checked;
  }
  EXPECT_EQ(checked, 13);
}

// ---- Dense sweeps against independent long-double references ---------------------------------

Tensor grid(double low, double high, std::int64_t n) {
  return arange(0.0, static_cast<double>(n), 1.0, TensorOptions(kFloat64)) *
             ((high - low) / static_cast<double>(n - 1)) +
         low;
}

Tensor from(const std::vector<double>& v) {
  return make_tensor(v, {static_cast<std::int64_t>(v.size())}, kFloat64);
}

// libstdc++'s std::cyl_bessel_i in long double (its own series and asymptotic forms, 11 more
// bits), against the kernels' double, relative: a fit's few units of 2^-53 and an exp.
TEST(PointwiseMath, BesselFunctionsMatchLibstdcxx) {
  const Tensor x = grid(-60.0, 60.0, 961);  // crosses the fits' switch at 8 from both sides
  std::vector<double> i0_want, i1_want, i0e_want, i1e_want;
  for (const double v : to_vector(x)) {
    const long double a = std::fabs(static_cast<long double>(v));
    const long double i0v = std::cyl_bessel_il(0.0L, a);
    const long double i1v = std::copysign(std::cyl_bessel_il(1.0L, a), static_cast<long double>(v));
    i0_want.push_back(static_cast<double>(i0v));
    i1_want.push_back(static_cast<double>(i1v));
    i0e_want.push_back(static_cast<double>(std::exp(-a) * i0v));
    i1e_want.push_back(static_cast<double>(std::exp(-a) * i1v));
  }
  EXPECT_TRUE(matches_relative(i0(x), from(i0_want), 16)) << "i0";
  EXPECT_TRUE(matches_relative(special_i1(x), from(i1_want), 16)) << "i1";
  EXPECT_TRUE(matches_relative(special_i0e(x), from(i0e_want), 16)) << "i0e";
  EXPECT_TRUE(matches_relative(special_i1e(x), from(i1e_want), 16)) << "i1e";
}

// erfcx = exp(x^2) erfc(x) in long double (x^2 rounded to 64 bits: x^2 2^-64 relative, a third
// of a double ulp at 26), and ndtri by bisection on erfcl.
TEST(PointwiseMath, ErfcxAndNdtriMatchLongDouble) {
  const Tensor x = grid(-6.0, 26.0, 641);
  std::vector<double> want;
  for (const double v : to_vector(x)) {
    const long double l = v;
    want.push_back(static_cast<double>(std::exp(l * l) * std::erfc(l)));
  }
  EXPECT_TRUE(matches_relative(special_erfcx(x), from(want), 16));
  std::vector<double> ps;
  for (int k = 1; k <= 300; ++k)
    ps.push_back(std::pow(10.0, -k));  // deep into the lower tail
  for (int k = 1; k < 200; ++k)
    ps.push_back(k / 200.0);
  std::vector<double> quantiles, bounds;
  const double u = math_unit_roundoff(kFloat64);
  for (const double p : ps) {
    // Phi(z) = erfc(-z / sqrt 2) / 2 rises with z: bisect on [-40, 40].
    long double lo = -40, hi = 40;
    for (int i = 0; i < 200; ++i) {
      const long double mid = (lo + hi) / 2;
      (std::erfc(-mid / std::sqrt(2.0L)) / 2 < p ? lo : hi) = mid;
    }
    const double z = static_cast<double>((lo + hi) / 2);
    quantiles.push_back(z);
    // A few ulps of z, and the rounding of min(p, 1 - p) (erfc's few ulps of it) through the
    // slope 1 / phi(z): where z nears 0 the relative error is the problem's, not the kernel's.
    const double density = std::exp(-z * z / 2) / std::sqrt(2 * 3.14159265358979323846);
    bounds.push_back(16 * u * (std::fabs(z) + std::min(p, 1 - p) / density));
  }
  const Tensor p = from(ps);
  EXPECT_TRUE(matches_bounds(special_ndtri(p), from(quantiles), p, bounds));
}

// ---- Identities
// ----------------------------------------------------------------------------------

TEST(PointwiseMath, IncompleteGammaIdentities) {
  const Tensor a = grid(0.05, 60.0, 40).reshape({40, 1});
  const Tensor x = grid(0.01, 80.0, 50).reshape({1, 50});
  // P + Q = 1: one of the two is computed, the other is 1 minus it, so the sum is 1 to a rounding.
  EXPECT_TRUE(matches_within_roundoff(igamma(a, x) + igammac(a, x), full({40, 50}, 1.0, kFloat64),
                                      {}, {.ulps = 4}));
  // P(1, x) = 1 - e^-x and P(a + 1, x) = P(a, x) - x^a e^-x / Gamma(a + 1) (DLMF 8.8.5), the
  // second through the same prefactor's rounding.
  const Tensor xs = grid(0.01, 30.0, 60);
  EXPECT_TRUE(
      matches_within_roundoff(igamma(full({}, 1.0, kFloat64), xs), -expm1(-xs), {}, {.ulps = 16}));
  const Tensor as = full({}, 2.5, kFloat64);
  const Tensor term = exp(2.5 * log(xs) - xs - std::lgamma(3.5));
  const double ulps = 16 + 4 * (2.5 * std::log(30.0) + 30 + 2);
  EXPECT_TRUE(
      matches_within_roundoff(igamma(as + 1.0, xs), igamma(as, xs) - term, {}, {.ulps = ulps}));
}

TEST(PointwiseMath, NormalDistributionIdentities) {
  // ndtr(ndtri(p)) = p relative, in both tails.
  std::vector<double> ps;
  for (int k = 1; k <= 30; ++k) {
    ps.push_back(std::pow(10.0, -k));
    ps.push_back(1 - std::pow(2.0, -k));
  }
  // ndtri within 16 ulps of z moves Phi by 16 u z^2 relative (Phi'/Phi is about |z| in the
  // lower tail), z = -11.3 at p = 1e-30.
  const Tensor p = from(ps);
  EXPECT_TRUE(matches_relative(special_ndtr(special_ndtri(p)), p, 16 + 16 * 11.3 * 11.3));
  // log_ndtr = log(ndtr) where ndtr is normal (the logarithm of a correctly rounded number is
  // within an ulp of its own), and exp(log_ndtr) = ndtr.
  const Tensor x = grid(-37.0, 8.0, 451);
  EXPECT_TRUE(
      matches_within_roundoff(special_log_ndtr(x), log(special_ndtr(x)), {{"x", x}}, {.ulps = 32}));
  // erfcx(x) exp(-x^2) = erfc(x) where neither underflows.
  const Tensor y = grid(-5.0, 9.0, 141);
  EXPECT_TRUE(matches_relative(special_erfcx(y) * exp(-y * y), erfc(y), 16 + 2 * 81));
}

TEST(PointwiseMath, SincIsExactlyZeroAtIntegersAndOneAtZero) {
  const Tensor n = from({-3.0, -2.0, -1.0, 1.0, 2.0, 7.0, 1e6, 4503599627370496.0});
  EXPECT_TRUE(matches_within_roundoff(abs(sinc(n)), zeros({8}, kFloat64), {}, {.bitwise = true}));
  EXPECT_EQ(sinc(from({0.0})).item<double>(), 1.0);
  EXPECT_EQ(sinc(from({-0.0})).item<double>(), 1.0);
}

// ---- Narrow dtypes
// --------------------------------------------------------------------------------

// erfc of float32 is within kErfcPolynomialMaxUlps of float64's (Note [Float polynomials],
// "erfc"), and of the 16-bit dtypes exactly float32's erfc rounded once to the dtype.
TEST(PointwiseMath, ErfcOfNarrowDTypesIsFloatsWithinItsBound) {
  const Tensor x = grid(-11.0, 11.0, 2001);
  const std::vector<double> xs = to_vector(x.to(kFloat32));
  const std::vector<double> got = to_vector(erfc(x.to(kFloat32)));
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double exact = std::erfc(xs[i]);
    const double ulp = std::max(0x1p-149, std::ldexp(1.0, std::ilogb(exact) - 23));
    EXPECT_LE(std::fabs(got[i] - exact) / ulp, kernels::cpu::kErfcPolynomialMaxUlps) << xs[i];
  }
  for (const DType dtype : {kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor xn = x.to(dtype);
    EXPECT_TRUE(
        matches_within_roundoff(erfc(xn), erfc(xn.to(kFloat32)).to(dtype), {}, {.bitwise = true}));
  }
}

// float32 and the 16-bit dtypes compute in double and round once: bit for bit the float64 result
// rounded to float (then to the 16-bit dtype, as the kernel stores it). erfc of float is computed
// in double lanes but not by float64's formula (Note [Float polynomials], "erfc"): the test above.
TEST(PointwiseMath, NarrowDTypesRoundTheDoubleResult) {
  const Tensor x = grid(-9.0, 25.0, 300);
  const Tensor p = grid(0.001, 0.999, 300);
  for (const DType dtype : {kFloat32, kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor xd = x.to(dtype).to(kFloat64), pd = p.to(dtype).to(kFloat64);
    const auto same = [&](const Tensor& got, const Tensor& wide) {
      return matches_within_roundoff(got, wide.to(kFloat32).to(dtype), {}, {.bitwise = true});
    };
    EXPECT_TRUE(same(special_erfcx(x.to(dtype)), special_erfcx(xd))) << "erfcx";
    EXPECT_TRUE(same(sinc(x.to(dtype)), sinc(xd))) << "sinc";
    EXPECT_TRUE(same(i0(x.to(dtype)), i0(xd))) << "i0";
    EXPECT_TRUE(same(special_i0e(x.to(dtype)), special_i0e(xd))) << "i0e";
    EXPECT_TRUE(same(special_i1(x.to(dtype)), special_i1(xd))) << "i1";
    EXPECT_TRUE(same(special_i1e(x.to(dtype)), special_i1e(xd))) << "i1e";
    EXPECT_TRUE(same(special_ndtri(p.to(dtype)), special_ndtri(pd))) << "ndtri";
    const Tensor a = x.abs().to(dtype) + 0.5;
    const Tensor s = (p * 20.0).to(dtype);  // both sides read the same rounded operands
    EXPECT_TRUE(same(igamma(a, s), igamma(a.to(kFloat64), s.to(kFloat64)))) << "igamma";
  }
  // Integral input is computed in float32, as PyTorch promotes it.
  const Tensor ints = make_tensor({-2, 0, 1, 3, 10}, {5}, kInt64);
  EXPECT_EQ(erfc(ints).dtype(), kFloat32);
  EXPECT_EQ(i0(ints).dtype(), kFloat32);
  EXPECT_EQ(hypot(ints, ints).dtype(), kFloat32);
  EXPECT_EQ(xlogy(ints, ints).dtype(), kFloat32);
  EXPECT_EQ(float_power(ints, 2.0).dtype(), kFloat64);
}

// ---- frexp
// ------------------------------------------------------------------------------------------

// Against ilogb and scalbn (not the kernel's frexp): 1/2 <= |m| < 1 and m 2^e = x exactly, the
// subnormals of each dtype included; zeros keep their sign with exponent 0, an infinity or NaN is
// its own mantissa with exponent 0 (libm's, as PyTorch's). The mantissa has x's dtype, the
// exponent int32.
TEST(PointwiseMath, FrexpSplitsExactly) {
  const std::vector<double> values = {0.0,
                                      -0.0,
                                      1.0,
                                      0.5,
                                      -0.75,
                                      3.0,
                                      1000.5,
                                      -1e-3,
                                      6e-8,
                                      1e-40,
                                      1e-45,
                                      1e-310,
                                      5e-324,
                                      1.7e308,
                                      65504,
                                      3e38,
                                      -kInf,
                                      kInf,
                                      std::numeric_limits<double>::quiet_NaN()};
  for (const DType dtype : {kFloat64, kFloat32, kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor x = make_tensor(values, {static_cast<std::int64_t>(values.size())}, kFloat64)
                         .to(dtype);  // each value rounded to the dtype (a subnormal or 0, inf)
    const auto [m, e] = frexp(x);
    ASSERT_EQ(m.dtype(), dtype);
    ASSERT_EQ(e.dtype(), kInt32);
    const std::vector<double> xv = to_vector(x), mv = to_vector(m), ev = to_vector(e);
    for (std::size_t i = 0; i < xv.size(); ++i) {
      const double v = xv[i];
      if (!std::isfinite(v) || v == 0) {
        EXPECT_TRUE(std::isnan(v) ? std::isnan(mv[i]) : mv[i] == v) << v;
        EXPECT_EQ(std::signbit(mv[i]), std::signbit(v)) << v;
        EXPECT_EQ(ev[i], 0) << v;
        continue;
      }
      const int want_e = std::ilogb(v) + 1;
      EXPECT_EQ(ev[i], want_e) << v;
      EXPECT_EQ(mv[i], std::scalbn(v, -want_e)) << v;
      EXPECT_EQ(std::ldexp(mv[i], static_cast<int>(ev[i])), v) << v;
    }
    const auto [mm, me] = x.frexp();  // the method is the function
    EXPECT_TRUE(matches_within_roundoff(mm, m, {}, {.bitwise = true}));
    EXPECT_TRUE(equal(me, e));
  }
  // The mantissa's gradient is 2^-e, piecewise constant; the exponent has none.
  const Tensor x = make_tensor({-6.0, 0.3, 1.2, 2.5, 1e3}, {5}, kFloat64).requires_grad_();
  EXPECT_TRUE(gradcheck([](const auto& v) { return std::get<0>(frexp(v[0])); }, {x}));
  sum(std::get<0>(frexp(x))).backward();
  EXPECT_EQ(to_vector(x.grad()), (std::vector<double>{0.125, 2.0, 0.5, 0.25, 1.0 / 1024}));
  EXPECT_FALSE(std::get<1>(frexp(x)).requires_grad());
}

// ---- Integer rules
// --------------------------------------------------------------------------------

TEST(PointwiseMath, ShiftsAreDefinedForEveryCount) {
  const Tensor a = make_tensor({1, -8, 5, -1, 3, 7}, {6}, kInt64);
  const Tensor b = make_tensor({64, 65, -1, 200, 63, -64}, {6}, kInt64);
  // Past the width or negative: 0 to the left, the sign's fill to the right (PyTorch 2's rule).
  // (3 << 63 keeps 3's lowest bit, the sign bit: in range.)
  const double min = static_cast<double>(std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(to_vector(bitwise_left_shift(a, b)), (std::vector<double>{0, 0, 0, 0, min, 0}));
  EXPECT_EQ(to_vector(bitwise_right_shift(a, b)), (std::vector<double>{0, -1, 0, -1, 0, 0}));
  // In range: the two's-complement bits (1 << 63 is the most negative value).
  const Tensor one = make_tensor({1}, {1}, kInt64);
  EXPECT_EQ(bitwise_left_shift(one, 63.0).item<std::int64_t>(),
            std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(bitwise_right_shift(make_tensor({-16}, {1}, kInt32), 2.0).item<std::int32_t>(), -4);
  const Tensor bytes = make_tensor({200, 1}, {2}, kUInt8);
  EXPECT_EQ(to_vector(bitwise_left_shift(bytes, 1.0)), (std::vector<double>{144, 2}));
  EXPECT_EQ(to_vector(bitwise_right_shift(bytes, 8.0)), (std::vector<double>{0, 0}));
}

TEST(PointwiseMath, GcdAndLcmSignsAndEdges) {
  const std::int64_t min = std::numeric_limits<std::int64_t>::min();
  const Tensor a = make_tensor({-12, 12, -12, 0, 0, 0, 6}, {7}, kInt64);
  const Tensor b = make_tensor({18, -18, -18, 0, 5, -5, 0}, {7}, kInt64);
  EXPECT_EQ(to_vector(gcd(a, b)), (std::vector<double>{6, 6, 6, 0, 5, 5, 6}));
  EXPECT_EQ(to_vector(lcm(a, b)), (std::vector<double>{36, 36, 36, 0, 0, 0, 0}));
  // The most negative value's magnitude wraps back to itself (Note [Defined integer semantics]).
  const Tensor m = full({1}, static_cast<double>(min), kInt64);
  EXPECT_EQ(gcd(m, zeros({1}, kInt64)).item<std::int64_t>(), min);
  EXPECT_EQ(gcd(m, full({1}, 6.0, kInt64)).item<std::int64_t>(), 2);
}

// ---- Gradients
// --------------------------------------------------------------------------------------

TEST(PointwiseMath, GradientsAreFiniteDifferences) {
  const auto check = [](const char* what, const GradcheckFn& f, const std::vector<Tensor>& in,
                        bool twice = true) {
    SCOPED_TRACE(what);
    EXPECT_TRUE(gradcheck(f, in));
    if (twice) {
      EXPECT_TRUE(gradgradcheck(f, in));
    }
  };
  // Values of one order of magnitude: gradcheck differentiates the weighted sum of all outputs,
  // whose rounding would hide a small element's change beside I0(25) = 5.7e9. The large-x fits
  // (|x| > 8) get inputs of their own.
  const Tensor x = make_tensor({-2.5, -0.7, 0.4, 1.9, 3.3, 5.6}, {6}, kFloat64).requires_grad_();
  const Tensor far = make_tensor({-10.5, 8.5, 9.5}, {3}, kFloat64).requires_grad_();
  check("i0 beyond 8", [](const auto& v) { return i0(v[0]); }, {far});
  check("i0e beyond 8", [](const auto& v) { return special_i0e(v[0]); }, {far});
  check("i1 beyond 8", [](const auto& v) { return special_i1(v[0]); }, {far});
  check("i1e beyond 8", [](const auto& v) { return special_i1e(v[0]); }, {far});
  const Tensor tail = make_tensor({-30.0, -12.5, -6.0}, {3}, kFloat64).requires_grad_();
  check("log_ndtr's lower tail", [](const auto& v) { return special_log_ndtr(v[0]); }, {tail});
  check("erfcx beyond 10", [](const auto& v) { return special_erfcx(v[0] * -1.0); }, {tail});
  check("erfc", [](const auto& v) { return erfc(v[0]); }, {x});
  check("erfcx", [](const auto& v) { return special_erfcx(v[0]); }, {x});
  check("ndtr", [](const auto& v) { return special_ndtr(v[0]); }, {x});
  check("log_ndtr", [](const auto& v) { return special_log_ndtr(v[0]); }, {x});
  check("i0", [](const auto& v) { return i0(v[0]); }, {x});
  check("i0e", [](const auto& v) { return special_i0e(v[0]); }, {x});
  check("i1", [](const auto& v) { return special_i1(v[0]); }, {x});
  check("i1e", [](const auto& v) { return special_i1e(v[0]); }, {x});
  check("sinc", [](const auto& v) { return sinc(v[0]); }, {x});
  check(
      "deg2rad", [](const auto& v) { return deg2rad(v[0]); }, {x}, false);
  check(
      "frac", [](const auto& v) { return frac(v[0]); }, {x}, false);
  const Tensor p = make_tensor({1e-4, 0.03, 0.5, 0.8, 0.999}, {5}, kFloat64).requires_grad_();
  check("ndtri", [](const auto& v) { return special_ndtri(v[0]); }, {p});
  check("logit", [](const auto& v) { return logit(v[0]); }, {p});
  check("logit eps", [](const auto& v) { return logit(v[0], 0.01); }, {p});
  check("entr", [](const auto& v) { return special_entr(v[0]); }, {p});
  const Tensor a = make_tensor({0.5, 3.0, 12.0}, {3, 1}, kFloat64);
  const Tensor y = make_tensor({0.2, 2.5, 9.0, 20.0}, {1, 4}, kFloat64).requires_grad_();
  check("igamma in x", [&](const auto& v) { return igamma(a, v[0]); }, {y});
  check("igammac in x", [&](const auto& v) { return igammac(a, v[0]); }, {y});
  const Tensor u = make_tensor({-1.5, 0.7, 2.0}, {3, 1}, kFloat64).requires_grad_();
  const Tensor w = make_tensor({0.3, 1.1, 4.0, 0.9}, {1, 4}, kFloat64).requires_grad_();
  check("hypot", [](const auto& v) { return hypot(v[0], v[1]); }, {u, w});
  check("xlogy", [](const auto& v) { return xlogy(v[0], v[1]); }, {u, w});
  check("xlog1py", [](const auto& v) { return special_xlog1py(v[0], v[1]); }, {u, w});
  check("logaddexp2", [](const auto& v) { return logaddexp2(v[0], v[1]); }, {u, w});
  check(
      "fmax", [](const auto& v) { return fmax(v[0], v[1]); }, {u, w}, false);
  check(
      "fmin", [](const auto& v) { return fmin(v[0], v[1]); }, {u, w}, false);
  check("float_power", [](const auto& v) { return float_power(v[1], v[0]); }, {u, w});
  check(
      "copysign", [](const auto& v) { return copysign(v[0], v[1]); }, {u, w}, false);
  const Tensor e = make_tensor({-2, 0, 3}, {3, 1}, kInt64);
  check(
      "ldexp", [&](const auto& v) { return ldexp(v[0], e); }, {w}, false);
  const Tensor s = make_tensor({-1.0, 0.0, 2.0, 0.0}, {1, 4}, kFloat64);
  check(
      "heaviside in values", [&](const auto& v) { return heaviside(s, v[0]); }, {u}, false);
}

// At 0 the formulas divide by x: their limits, from the series I1(x) = x/2 + x^3/16 + ... and
// sinc(x) = 1 - (pi x)^2 / 6 + ...: I1'(0) = I1e'(0) = 1/2, sinc'(0) = I0'(0) = 0, and I0e'(0) = 0
// (PyTorch's sgn(0) = 0 between the one-sided -1 and 1).
TEST(PointwiseMath, GradientsAtZeroAreTheLimits) {
  const auto gradient_at_zero = [](Tensor (*f)(const Tensor&)) {
    const Tensor x = zeros({1}, kFloat64).requires_grad_();
    sum(f(x)).backward();
    return x.grad().item<double>();
  };
  EXPECT_EQ(gradient_at_zero(special_i1), 0.5);
  EXPECT_EQ(gradient_at_zero(special_i1e), 0.5);
  EXPECT_EQ(gradient_at_zero(i0), 0.0);
  EXPECT_EQ(gradient_at_zero(special_i0e), 0.0);
  EXPECT_EQ(gradient_at_zero(sinc), 0.0);
}

TEST(PointwiseMath, UndefinedDerivativesRaise) {
  const Tensor a = make_tensor({1.0, 2.0}, {2}, kFloat64).requires_grad_();
  const Tensor b = make_tensor({2.0, 1.0}, {2}, kFloat64).requires_grad_();
  EXPECT_THROW(sum(nextafter(a, b)).backward(), Error);
  EXPECT_THROW(sum(igamma(a, b.detach())).backward(), Error);
  // Only x requiring grad: igamma differentiates.
  sum(igammac(a.detach(), b)).backward();
  EXPECT_TRUE(b.grad().defined());
}

// ---- Methods and in-place forms
// --------------------------------------------------------------------

TEST(PointwiseMath, MethodsAndInPlaceFormsEqualTheFunctions) {
  const auto same = [](const Tensor& got, const Tensor& want) {
    return matches_within_roundoff(got, want, {}, {.bitwise = true});
  };
  const Tensor x = grid(-4.0, 4.0, 33);
  const Tensor y = grid(0.5, 9.0, 33);
  Tensor t = x.clone();
  EXPECT_TRUE(same(t.erfc_(), erfc(x)));
  t = x.clone();
  EXPECT_TRUE(same(t.i0_(), i0(x)));
  t = x.clone();
  EXPECT_TRUE(same(t.sinc_(), sinc(x)));
  t = x.clone();
  EXPECT_TRUE(same(t.frac_(), frac(x)));
  t = x.clone();
  EXPECT_TRUE(same(t.deg2rad_(), deg2rad(x)));
  t = x.clone();
  EXPECT_TRUE(same(t.rad2deg_(), rad2deg(x)));
  t = x.clone();
  EXPECT_TRUE(same(t.sgn_(), sign(x)));
  t = x.clone();
  EXPECT_TRUE(same(t.fix_(), trunc(x)));
  t = x.clone();
  EXPECT_TRUE(same(t.hypot_(y), hypot(x, y)));
  t = x.clone();
  EXPECT_TRUE(same(t.copysign_(-1.0), copysign(x, -1.0)));
  t = y.clone();
  EXPECT_TRUE(same(t.igamma_(x.abs()), igamma(y, x.abs())));
  t = x.clone();
  EXPECT_TRUE(same(t.xlogy_(y), xlogy(x, y)));
  t = y.clone() / 10.0;
  EXPECT_TRUE(same(t.logit_(0.1), logit(y / 10.0, 0.1)));
  t = y.clone();
  EXPECT_TRUE(same(t.float_power_(1.5), float_power(y, 1.5)));
  EXPECT_TRUE(same(x.fmax(y), fmax(x, y)));
  EXPECT_TRUE(same(x.logaddexp2(y), logaddexp2(x, y)));
  EXPECT_TRUE(same(x.signbit(), signbit(x)));
  EXPECT_TRUE(same(x.positive(), x));
  EXPECT_TRUE(same(x.isreal(), full({33}, 1.0, kBool)));
  Tensor ints = make_tensor({12, -18, 7}, {3}, kInt64);
  const Tensor other = make_tensor({18, 12, 3}, {3}, kInt64);
  EXPECT_TRUE(same(ints.clone().gcd_(other), gcd(ints, other)));
  EXPECT_TRUE(same(ints.clone().lcm_(other), lcm(ints, other)));
  EXPECT_TRUE(same(ints.clone().bitwise_left_shift_(2.0), bitwise_left_shift(ints, 2.0)));
  EXPECT_TRUE(same(ints.clone().bitwise_right_shift_(other), bitwise_right_shift(ints, other)));
  // In-place results self cannot hold are refused, as PyTorch's.
  EXPECT_THROW(ints.erfc_(), DTypeError);
  Tensor single = y.to(kFloat32);
  EXPECT_THROW(single.float_power_(2.0), DTypeError);
  // signbit sees -0.0 and a NaN's sign bit.
  const Tensor zeros_and_nans = from({-0.0, 0.0, -std::numeric_limits<double>::quiet_NaN(),
                                      std::numeric_limits<double>::quiet_NaN(), -kInf});
  EXPECT_EQ(to_vector(signbit(zeros_and_nans)), (std::vector<double>{1, 0, 1, 0, 1}));
  // Recorded in place: the gradient flows through the written tensor.
  const Tensor leaf = grid(0.5, 3.0, 5).requires_grad_();
  Tensor b = leaf * 1.0;
  b.erfc_();
  sum(b).backward();
  const Tensor want = exp(-(leaf.detach() * leaf.detach())) * -1.1283791670955126;
  EXPECT_TRUE(matches_within_roundoff(leaf.grad(), want, {}, {.ulps = 8}));
}

// Edge points from a helper's report, each value against the exact one (mpmath) and PyTorch 1.13:
// - fmod and remainder of float16 by a number divide by the number rounded to float16 (0.1 is
//   0.0999755859375): fmod(+-65504, 0.1) = +-0.0960693359375, remainder(-65504, 0.1) = 0.00390625
//   (they gave 0.099, as float's 0.1 would);
// - i1's and i1e's derivatives at subnormal x are 1/2 (i1e's was -inf, i1's 1 at 4.9e-324);
// - hypot's gradient where the result is subnormal: (1, 0) at (1e-310, 0) (inf and NaN before);
// - logaddexp2 and logaddexp of bfloat16 round once: logaddexp2(0, 0) = 1, logaddexp2(-1, -1) =
//   0 (0.996 and -0.0039 before);
// - logit's gradient at -0 is +inf, as at +0.
TEST(PointwiseMath, EdgePointsOfNarrowDTypesAndSubnormals) {
  const Tensor h = make_tensor({65504.0, -65504.0}, {2}, kFloat16);
  EXPECT_EQ(to_vector(fmod(h, 0.1)), (std::vector<double>{0.0960693359375, -0.0960693359375}));
  EXPECT_EQ(to_vector(remainder(h, 0.1))[1], 0.00390625);
  EXPECT_TRUE(equal(fmod(h, 0.1), fmod(h, full({2}, 0.1, kFloat16))));
  EXPECT_EQ(to_vector(fmod(make_tensor({9007199254740992.0}, {1}, kBFloat16), 0.1))[0], 0.0078125);

  const Tensor x = make_tensor({1e-310, 4.9e-324, 0.0}, {3}, kFloat64).requires_grad_();
  special_i1e(x).sum().backward();
  EXPECT_EQ(to_vector(x.grad()), (std::vector<double>{0.5, 0.5, 0.5}));
  const Tensor x1 = make_tensor({4.9e-324, 1e-200}, {2}, kFloat64).requires_grad_();
  special_i1(x1).sum().backward();
  EXPECT_EQ(to_vector(x1.grad()), (std::vector<double>{0.5, 0.5}));

  const Tensor a = make_tensor({1e-310}, {1}, kFloat64).requires_grad_();
  const Tensor b = make_tensor({0.0}, {1}, kFloat64).requires_grad_();
  hypot(a, b).sum().backward();
  EXPECT_EQ(to_vector(a.grad())[0], 1.0);
  EXPECT_EQ(to_vector(b.grad())[0], 0.0);

  const Tensor p = make_tensor({0.0, -1.0, -1.0}, {3}, kBFloat16);
  const Tensor q = make_tensor({0.0, -1.0, -1.5}, {3}, kBFloat16);
  const std::vector<double> two = to_vector(logaddexp2(p, q));
  EXPECT_EQ(two[0], 1.0);
  EXPECT_EQ(two[1], 0.0);
  // -0.228447... rounded to bfloat16 (8 significant bits): -0.228515625.
  EXPECT_EQ(two[2], -0.228515625);
  const std::vector<double> e = to_vector(
      logaddexp(make_tensor({-2.5}, {1}, kBFloat16), make_tensor({-0.0888671875}, {1}, kBFloat16)));
  // -2.9523e-3 rounded to bfloat16: -0.0029449462890625.
  EXPECT_EQ(e[0], -0.0029449462890625);

  const Tensor z = make_tensor({-0.0, 0.0}, {2}, kFloat64).requires_grad_();
  logit(z).sum().backward();
  EXPECT_EQ(to_vector(z.grad()), (std::vector<double>{std::numeric_limits<double>::infinity(),
                                                      std::numeric_limits<double>::infinity()}));
}

}  // namespace
}  // namespace leangrad::test
