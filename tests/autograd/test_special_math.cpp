// lgamma, digamma, polygamma, mvlgamma, erfinv and special_zeta: against PyTorch 1.13
// (tests/data/special_math.json, written by make_special_math.py) values and gradients, the poles,
// infinities and NaN included; against identities that do not share the kernels' series
// (digamma's recurrence and reflection, lgamma against log|tgamma|, erf of erfinv, zeta's
// recurrence and its closed forms at q = 1, polygamma(1, 1) = pi^2 / 6); float32 and the 16-bit
// dtypes bit for bit the float64 result rounded; finite differences, twice. Misuse: the Special
// table of tests/misuse/test_misuse_ops.cpp.
#include <cmath>
#include <cstdint>
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

constexpr double kPi = 3.14159265358979323846;

const std::vector<ReferenceCase>& cases() {
  static const std::vector<ReferenceCase> all = load_reference("special_math.json");
  return all;
}

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

Tensor run_case(const std::string& case_name, const std::vector<Tensor>& x,
                const nlohmann::json& p) {
  // The mpmath cases name the function after "exact_"; polygamma's order follows it.
  const std::string name = starts_with(case_name, "exact_") ? case_name.substr(6) : case_name;
  if (starts_with(name, "polygamma_") && !p.contains("n"))
    return polygamma(std::stoll(name.substr(10)), x[0]);
  if (starts_with(name, "lgamma")) return lgamma(x[0]);
  if (starts_with(name, "digamma")) return x[0].digamma();
  if (starts_with(name, "polygamma")) return polygamma(p.at("n").get<std::int64_t>(), x[0]);
  if (starts_with(name, "mvlgamma")) return x[0].mvlgamma(p.at("p").get<std::int64_t>());
  if (starts_with(name, "erfinv")) return erfinv(x[0]);
  if (starts_with(name, "special_zeta")) return special_zeta(x[0], x[1]);
  ADD_FAILURE() << "no function for case " << name;
  return Tensor();
}

// PyTorch's trigamma (polygamma(1, .), and so digamma's gradient) stops its asymptotic series
// at x >= 6 after the 1/x^7 term: the first term left out, B_8 / x^9 with |B_8| = 1/30, is up to
// 3.3e-9 (its polygamma(1, 1) is 1.6449340676, pi^2 / 6 is 1.6449340668).
const double kTorchTrigammaTruncation = 1.0 / (30 * std::pow(6.0, 9));

// Each side evaluates a series or libm to a few ulps of the largest term on its path, which
// matches_within_roundoff's scale, max(1, |result|, |x|), bounds: digamma's recurrence adds up to
// ten terms 1/x, zeta up to 21 terms and polygamma's n! scales zeta; 32 ulps leave room for both
// sides, 16 against mpmath's exact values (one side). PyTorch's float32 kernels compute in float32
// (ours in double, rounded once), a few float ulps of the series' terms. `weight` is the upstream
// weight's largest magnitude for a gradient (0 for a value).
double value_ulps(const std::string& name, DType dtype, double weight) {
  if (starts_with(name, "exact_")) return 16;
  if (dtype == kFloat32) return 16;
  const double u = math_unit_roundoff(kFloat64);
  if (name == "polygamma_1" && weight == 0) return 32 + kTorchTrigammaTruncation / u;
  if (name == "digamma" && weight > 0) return 32 + weight * kTorchTrigammaTruncation / u;
  return 32;
}

TEST(SpecialMath, MatchPyTorch) {
  int checked = 0;
  for (const ReferenceCase& c : cases()) {
    SCOPED_TRACE(c.name);
    const ReferenceInputs reference = reference_inputs(c);
    const std::vector<std::string>& order = reference.names;
    const std::vector<Tensor>& inputs = reference.tensors;
    const bool differentiable = reference.differentiable;
    const Tensor out = run_case(c.name, inputs, c.params);
    ASSERT_TRUE(out.defined());
    Tensor want = c.at("out0");
    ASSERT_EQ(out.dtype(), want.dtype());
    ASSERT_EQ(out.shape(), want.shape());
    if (c.name == "special_zeta_specials") {
      // zeta(2, +inf) is the limit 0 here; PyTorch's Cephes evaluation gives NaN.
      const std::vector<double> got = to_vector(out);
      EXPECT_EQ(got[5], 0.0);
      std::vector<double> w = to_vector(want);
      w[5] = 0.0;
      want = make_tensor(w, want.shape(), want.dtype());
    }
    const double ulps = value_ulps(c.name, out.dtype(), 0.0);
    std::vector<NamedInput> operands;
    if (order.size() == 1) operands.push_back({order[0].c_str(), inputs[0].detach()});
    EXPECT_TRUE(matches_within_roundoff(out, want, operands, {.ulps = ulps}));
    if (differentiable) {
      sum(mul(out, c.at("w0"))).backward();
      for (std::size_t k = 0; k < order.size(); ++k) {
        const auto grad = c.tensors.find("d_" + order[k]);
        if (grad == c.tensors.end()) continue;
        ASSERT_TRUE(inputs[k].grad().defined()) << "d_" << order[k];
        // One chain rule deeper than the values: twice their roundings.
        const double grad_ulps = 2 * value_ulps(c.name, out.dtype(), max_abs(c.at("w0")));
        EXPECT_TRUE(
            matches_within_roundoff(inputs[k].grad(), grad->second, {}, {.ulps = grad_ulps}))
            << "d_" << order[k];
      }
    }
    ++checked;
  }
  EXPECT_EQ(checked, 24);
}

// ---- Identities
// ------------------------------------------------------------------------------------

Tensor grid(double low, double high, std::int64_t n) {
  return arange(0.0, static_cast<double>(n), 1.0, TensorOptions(kFloat64)) *
             ((high - low) / static_cast<double>(n)) +
         low + 1e-3;
}

// psi(x + 1) - psi(x) = 1/x (DLMF 5.5.2) and psi(1 - x) - psi(x) = pi cot(pi x) (5.5.4), for x on
// both sides of 0; to a few ulps of the terms' magnitude. (The kernel reflects with 5.5.4 itself,
// so the second checks its sign and its angle; the mpmath cases check the values.)
TEST(SpecialMath, DigammaRecurrenceAndReflection) {
  const Tensor x = grid(-7.9, 30.0, 400);
  const double u = math_unit_roundoff(kFloat64);
  const auto xv = to_vector(x), now = to_vector(digamma(x)), next = to_vector(digamma(x + 1.0)),
             mirrored = to_vector(digamma(1.0 - x));
  for (std::size_t i = 0; i < xv.size(); ++i) {
    SCOPED_TRACE("x = " + std::to_string(xv[i]));
    const double scale =
        std::max({1.0, std::fabs(now[i]), std::fabs(next[i]), 1 / std::fabs(xv[i])});
    EXPECT_NEAR(next[i] - now[i], 1 / xv[i], 64 * u * scale);
    // pi cot(pi x) from sin and cos of pi r, r the fraction of x (exact), which the kernel's
    // tan of the same angle need not share. Rounding the angle pi r by 2 ulps moves it by
    // pi (1 + cot^2) 2 u pi r, on both sides.
    const double r = xv[i] - std::floor(xv[i]);
    const double cot = std::cos(kPi * r) / std::sin(kPi * r);
    const double angle_error = kPi * (1 + cot * cot) * 4 * u * kPi * r;
    EXPECT_NEAR(
        mirrored[i] - now[i], kPi * cot,
        64 * u * std::max({scale, std::fabs(mirrored[i]), std::fabs(kPi * cot)}) + angle_error);
  }
}

// lgamma against log|tgamma| (libm's other function, exact to an ulp where tgamma is finite),
// and lgamma's own recurrence log|Gamma(x + 1)| = log|Gamma(x)| + log|x|.
TEST(SpecialMath, LgammaMatchesLogOfGamma) {
  const Tensor x = grid(-9.7, 40.0, 300);
  const double u = math_unit_roundoff(kFloat64);
  const auto xv = to_vector(x), got = to_vector(lgamma(x));
  for (std::size_t i = 0; i < xv.size(); ++i) {
    SCOPED_TRACE("x = " + std::to_string(xv[i]));
    EXPECT_NEAR(got[i], std::log(std::fabs(std::tgamma(xv[i]))),
                16 * u * std::max(1.0, std::fabs(got[i])));
  }
}

// log|Gamma(x)| for x > 0 (Note [Log-gamma]: the CPU's lanes, with their own log) against long
// double's lgammal (11 more bits), relative to the value: from the subnormals to 2^1000, and
// densely on [1/2, 12) and next to the zeros 1 and 2. The bound, in units u of 2^-53: on [1, 3)
// the fit's 1.25 and the product's rounding; below 1 the fit's term (0.42 of the difference next
// to 1) and log x's 0.81 ulps (1.73 times the difference), 4.6 in all; from 3 the log of the
// recurrence's product or Stirling's (x - 1/2) log x, 1.7 times the value at 10 and less beyond,
// with a few roundings: 5 for every x. float32 rounds that once more.
TEST(SpecialMath, LgammaOfPositiveMatchesLongDouble) {
  std::vector<double> xs;
  for (int k = 0; k <= 20000; ++k)
    xs.push_back(std::exp2(-1022.0 + 2022.0 * k / 20000));  // geometric, to 2^1000
  for (const double subnormal : {0x1p-1074, 1e-310, 0x1.fffffffffffffp-1023})
    xs.push_back(subnormal);  // libm's (the lanes' log takes normals)
  for (int k = 0; k < 20000; ++k)
    xs.push_back(0.5 + 11.5 * (k + 0.37) / 20000);
  for (const double zero : {1.0, 2.0}) {
    for (int j = 1; j <= 52; ++j) {
      xs.push_back(zero + std::ldexp(1.0, -j));
      xs.push_back(zero - std::ldexp(1.0, -j));
    }
    double up = zero, down = zero;
    for (int k = 0; k < 200; ++k) {
      up = std::nextafter(up, 4.0);
      down = std::nextafter(down, 0.0);
      xs.push_back(up);
      xs.push_back(down);
    }
  }
  const Tensor x = make_tensor(xs, {static_cast<std::int64_t>(xs.size())}, kFloat64);
  const std::vector<double> got = to_vector(lgamma(x));
  const Tensor x32 = x.to(kFloat32);
  const std::vector<double> xs32 = to_vector(x32), got32 = to_vector(lgamma(x32));
  const double u = math_unit_roundoff(kFloat64), u32 = math_unit_roundoff(kFloat32);
  int bad = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const auto want = static_cast<double>(std::lgamma(static_cast<long double>(xs[i])));
    if (std::fabs(got[i] - want) > 5 * u * std::fabs(want) && ++bad <= 5)
      ADD_FAILURE() << "float64 at " << xs[i] << ": " << got[i] << ", want " << want;
    if (!(xs32[i] > 0) || std::isinf(xs32[i])) continue;  // float32's underflow and overflow
    const auto want32 = static_cast<double>(std::lgamma(static_cast<long double>(xs32[i])));
    if (std::isinf(static_cast<float>(want32))) {  // beyond float32's largest: inf, or next to it
      if (!(got32[i] >= std::numeric_limits<float>::max()) && ++bad <= 5)
        ADD_FAILURE() << "float32 at " << xs32[i] << ": " << got32[i] << ", want inf";
      continue;
    }
    if (std::fabs(got32[i] - want32) > (u32 + 5 * u) * std::fabs(want32) && ++bad <= 5)
      ADD_FAILURE() << "float32 at " << xs32[i] << ": " << got32[i] << ", want " << want32;
  }
  EXPECT_EQ(bad, 0);
}

// erf(erfinv(y)) = y to an ulp of y (erf's own rounding and erfinv's error times erf's slope),
// and 1 - erf in the tail through erfc, where erfinv keeps its digits.
TEST(SpecialMath, ErfinvInvertsErf) {
  const Tensor y = grid(-0.999, 0.999, 500);
  const double u = math_unit_roundoff(kFloat64);
  const auto yv = to_vector(y), x = to_vector(erfinv(y));
  for (std::size_t i = 0; i < yv.size(); ++i)
    EXPECT_NEAR(std::erf(x[i]), yv[i], 4 * u) << "y = " << yv[i];
  for (const double tail : {1e-3, 1e-8, 1e-12, 1e-15}) {
    const double x_tail = to_vector(erfinv(full({1}, 1.0 - tail, TensorOptions(kFloat64))))[0];
    // 1 - tail is rounded; erfc(x) must give back that rounded tail, within what x's own error
    // moves it: erfc'(x) / erfc(x) is about -2x, so k ulps of x (k u x) move it by 2 k x^2 u
    // relative, k = 4 (the fit and its logarithms, ErfinvMatchesBisection), plus erfc's few ulps.
    const double rounded_tail = 1.0 - (1.0 - tail);
    EXPECT_NEAR(std::erfc(x_tail), rounded_tail, (8 * x_tail * x_tail + 8) * u * rounded_tail)
        << "tail " << tail;
  }
}

// erfinv against bisection on long double's erf and erfc (11 more bits; erfc past 1/2, where
// 1 - y is exact), relative, across the fits' switch at 0.75 and into the tail to 1 - 2^-53: a
// fit's few units of 2^-53 and the tail's log, sqrt and log (Note [Inverse error function]), 4
// ulps at most in a sweep of 10^6 points; 8 leave room.
TEST(SpecialMath, ErfinvMatchesBisection) {
  std::vector<double> ys;
  for (int k = 1; k <= 400; ++k)
    ys.push_back(-1.0 + k / 200.5);  // (-1, 1), crossing +-0.75
  for (int k = 1; k <= 53; ++k)
    ys.push_back(1.0 - std::ldexp(1.0, -k));  // the tail, to the last double below 1
  std::vector<double> want;
  for (const double y : ys) {
    const long double a = std::fabs(static_cast<long double>(y));
    long double lo = 0, hi = 7;
    for (int i = 0; i < 200; ++i) {
      const long double mid = (lo + hi) / 2;
      const bool below = a > 0.5L ? std::erfc(mid) > 1 - a : std::erf(mid) < a;
      (below ? lo : hi) = mid;
    }
    want.push_back(std::copysign(static_cast<double>((lo + hi) / 2), y));
  }
  const Tensor y = make_tensor(ys, {static_cast<std::int64_t>(ys.size())}, kFloat64);
  const std::vector<double> got = to_vector(erfinv(y));
  const double u = math_unit_roundoff(kFloat64);
  for (std::size_t i = 0; i < ys.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 8 * u * std::fabs(want[i])) << "y = " << ys[i];
}

// zeta(s, q) - zeta(s, q + 1) = q^-s (DLMF 25.11.3); zeta(2, 1) = pi^2 / 6, zeta(4, 1) = pi^4 / 90
// (25.6.1); polygamma(1, 1) = pi^2 / 6 and polygamma(2, 1) = -2 zeta(3) (Apery's constant).
TEST(SpecialMath, ZetaRecurrenceAndClosedForms) {
  const double u = math_unit_roundoff(kFloat64);
  const Tensor s = grid(1.2, 9.0, 40).reshape({40, 1});
  const Tensor q = grid(0.05, 40.0, 50).reshape({1, 50});
  const auto a = to_vector(special_zeta(s, q)), b = to_vector(special_zeta(s, q + 1.0));
  const auto sv = to_vector(s), qv = to_vector(q);
  for (std::size_t i = 0; i < sv.size(); ++i) {
    for (std::size_t j = 0; j < qv.size(); ++j) {
      const double d = a[i * 50 + j] - b[i * 50 + j];
      EXPECT_NEAR(d, std::pow(qv[j], -sv[i]), 32 * u * std::max(1.0, a[i * 50 + j]))
          << "s = " << sv[i] << ", q = " << qv[j];
    }
  }
  const Tensor one = ones({1}, TensorOptions(kFloat64));
  EXPECT_NEAR(to_vector(special_zeta(2.0, one))[0], kPi * kPi / 6, 4 * u);
  EXPECT_NEAR(to_vector(special_zeta(4.0, one))[0], kPi * kPi * kPi * kPi / 90, 4 * u);
  EXPECT_NEAR(to_vector(polygamma(1, one))[0], kPi * kPi / 6, 4 * u);
  EXPECT_NEAR(to_vector(polygamma(2, one))[0], -2 * 1.2020569031595942854, 8 * u);
  // mvlgamma of dimension 1 is lgamma.
  const Tensor x = grid(0.5, 30.0, 20);
  EXPECT_TRUE(matches_within_roundoff(mvlgamma(x, 1), lgamma(x), {}, {.bitwise = true}));
}

// zeta(2, q) with a scalar 2, digamma's gradient, runs trigamma_of_positive in the CPU's lanes for
// 0 < q <= 1e8 and zeta element by element for the rest (TrigammaForms in
// kernels/cpu/elementwise_range_limited.cpp): bit for bit zeta(2, q) with 2 as a tensor, which
// takes zeta's element loop, whatever else a chunk holds: the poles, negative q, NaN, inf,
// subnormals and q past 1e8 among positive q, in every floating dtype, the values and digamma's
// gradient.
TEST(SpecialMath, TrigammaOfAScalarTwoIsZetasValue) {
  std::vector<double> qs;
  // (1.5e8 and 3e8: where trigamma_of_positive and zeta's form past 1e8 round apart.)
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const double specials[] = {0.0, -0.0, -3.0,  -2.5, 1e-310, 1e8,   1.5e8,
                             2e8, 3e8,  1e300, -1e9, kInf,   -kInf, std::nan("")};
  for (int i = 0; i < 3000; ++i) {
    qs.push_back(std::ldexp(1.0 + (i % 97) / 97.0, i % 41 - 20));  // 2^-20 to 2^21
    if (i % 331 == 0)
      for (const double v : specials)
        qs.push_back(v);
  }
  const Tensor q = make_tensor(qs, {static_cast<std::int64_t>(qs.size())}, kFloat64);
  for (const DType dtype : {kFloat64, kFloat32, kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor qd = q.to(dtype);
    EXPECT_TRUE(matches_within_roundoff(special_zeta(2.0, qd), special_zeta(full_like(qd, 2.0), qd),
                                        {}, {.bitwise = true}));
  }
  const Tensor x = q.detach().requires_grad_(true);
  sum(digamma(x)).backward();
  EXPECT_TRUE(
      matches_within_roundoff(x.grad(), special_zeta(full_like(q, 2.0), q), {}, {.bitwise = true}));
}

// float32 and the 16-bit dtypes compute in double and round once: bit for bit the float64
// result rounded to float (then to the 16-bit dtype, as the kernel stores it).
TEST(SpecialMath, NarrowDTypesRoundTheDoubleResult) {
  const Tensor x = grid(-6.9, 25.0, 200);
  const Tensor y = grid(-0.99, 0.99, 200);
  for (const DType dtype : {kFloat32, kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor xd = x.to(dtype).to(kFloat64), yd = y.to(dtype).to(kFloat64);
    const auto same = [&](const Tensor& got, const Tensor& wide) {
      return matches_within_roundoff(got, wide.to(kFloat32).to(dtype), {}, {.bitwise = true});
    };
    EXPECT_TRUE(same(lgamma(x.to(dtype)), lgamma(xd)));
    EXPECT_TRUE(same(digamma(x.to(dtype)), digamma(xd)));
    EXPECT_TRUE(same(erfinv(y.to(dtype)), erfinv(yd)));
    const Tensor q = x.abs().to(dtype) + 0.5;  // rounded to the dtype
    EXPECT_TRUE(same(special_zeta(2.5, q), special_zeta(2.5, q.to(kFloat64))));
  }
  // Integral input is computed in float32, as PyTorch promotes it.
  const Tensor ints = make_tensor({-2, 0, 1, 3, 10}, {5}, kInt64);
  EXPECT_EQ(lgamma(ints).dtype(), kFloat32);
  EXPECT_EQ(polygamma(1, ints).dtype(), kFloat32);
}

// ---- Finite differences
// ----------------------------------------------------------------------------

TEST(SpecialMath, GradientsAreFiniteDifferences) {
  // Away from the poles: positive, and negative between them.
  const Tensor x = make_tensor({0.3, 1.7, 4.2, 11.0, -0.4, -2.6}, {6}, kFloat64).requires_grad_();
  const auto check = [&](const char* what, const GradcheckFn& f, const Tensor& in, bool twice) {
    SCOPED_TRACE(what);
    EXPECT_TRUE(gradcheck(f, {in}));
    if (twice) {
      EXPECT_TRUE(gradgradcheck(f, {in}));
    }
  };
  check(
      "lgamma", [](const auto& v) { return lgamma(v[0]); }, x, true);
  check(
      "digamma", [](const auto& v) { return digamma(v[0]); }, x, true);
  check(
      "polygamma 1", [](const auto& v) { return polygamma(1, v[0]); }, x, true);
  check(
      "polygamma 3", [](const auto& v) { return v[0].polygamma(3); }, x, false);
  const Tensor y = make_tensor({-0.95, -0.3, 0.0, 0.2, 0.7, 0.99}, {6}, kFloat64).requires_grad_();
  check(
      "erfinv", [](const auto& v) { return erfinv(v[0]); }, y, true);
  const Tensor big = make_tensor({1.2, 2.5, 7.0}, {3}, kFloat64).requires_grad_();
  check(
      "mvlgamma", [](const auto& v) { return mvlgamma(v[0], 3); }, big, true);
  const Tensor s = make_tensor({1.5, 3.0}, {2, 1}, kFloat64);
  const Tensor q = make_tensor({0.4, 2.0, 9.0}, {1, 3}, kFloat64).requires_grad_();
  check(
      "zeta in q", [&](const auto& v) { return special_zeta(s, v[0]); }, q, true);
}

// In-place forms write the out-of-place result, bit for bit.
TEST(SpecialMath, InPlaceFormsWriteTheFunctionsResult) {
  const Tensor x = grid(0.2, 12.0, 30);
  const auto same = [](const Tensor& a, const Tensor& b) {
    return matches_within_roundoff(a, b, {}, {.bitwise = true});
  };
  Tensor a = x.clone();
  EXPECT_TRUE(same(a.lgamma_(), lgamma(x)));
  a = x.clone();
  EXPECT_TRUE(same(a.digamma_(), digamma(x)));
  a = x.clone();
  EXPECT_TRUE(same(a.polygamma_(2), polygamma(2, x)));
  a = x + 1.0;  // above (p - 1) / 2
  EXPECT_TRUE(same(a.mvlgamma_(2), mvlgamma(x + 1.0, 2)));
  a = x.clone() / 13.0;
  EXPECT_TRUE(same(a.erfinv_(), erfinv(x / 13.0)));
  // Recorded in place: the gradient flows through the written tensor.
  const Tensor leaf = grid(0.5, 3.0, 5).requires_grad_();
  Tensor b = leaf * 1.0;
  b.lgamma_();
  sum(b).backward();
  EXPECT_TRUE(matches_within_roundoff(leaf.grad(), digamma(leaf.detach()), {}, {.bitwise = true}));
}

}  // namespace
}  // namespace leangrad::test
