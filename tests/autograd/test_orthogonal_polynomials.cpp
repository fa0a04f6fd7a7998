// torch.special's orthogonal polynomials (autograd/orthogonal_polynomials.h): against mpmath's
// values at 60 digits and PyTorch 1.13's (tests/data/orthogonal_polynomials.json, written by
// make_orthogonal_polynomials.py) from degree 1 to 10^12, inside, at and beyond the interval of
// orthogonality; the gradient against the exact derivatives and by finite differences, with
// broadcasting; PyTorch's edges (negative, zero and fractional degrees, x at +-1 and 0, NaN,
// overflow) and where ours differ (the infinities); the dtypes; the degree limit.
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/orthogonal_polynomials.h>
#include <leangrad/autograd/special.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad::test {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

using Polynomial = Tensor (*)(const Tensor&, const Tensor&);

struct Function {
  const char* name;
  Polynomial fn;
  bool sign_known_beyond_one;  // Chebyshev and Legendre: every term's sign is known for |y| > 1
};

const std::vector<Function>& functions() {
  static const std::vector<Function> all = {
      {"special_chebyshev_polynomial_t", special_chebyshev_polynomial_t, true},
      {"special_chebyshev_polynomial_u", special_chebyshev_polynomial_u, true},
      {"special_chebyshev_polynomial_v", special_chebyshev_polynomial_v, true},
      {"special_chebyshev_polynomial_w", special_chebyshev_polynomial_w, true},
      {"special_shifted_chebyshev_polynomial_t", special_shifted_chebyshev_polynomial_t, true},
      {"special_shifted_chebyshev_polynomial_u", special_shifted_chebyshev_polynomial_u, true},
      {"special_shifted_chebyshev_polynomial_v", special_shifted_chebyshev_polynomial_v, true},
      {"special_shifted_chebyshev_polynomial_w", special_shifted_chebyshev_polynomial_w, true},
      {"special_hermite_polynomial_h", special_hermite_polynomial_h, false},
      {"special_hermite_polynomial_he", special_hermite_polynomial_he, false},
      {"special_laguerre_polynomial_l", special_laguerre_polynomial_l, false},
      {"special_legendre_polynomial_p", special_legendre_polynomial_p, true},
  };
  return all;
}

const Function* function_named(const std::string& name) {
  for (const Function& f : functions())
    if (name == f.name) return &f;
  return nullptr;
}

bool is_shifted(const std::string& name) {
  return name.find("shifted") != std::string::npos;
}

const std::vector<ReferenceCase>& cases() {
  static const std::vector<ReferenceCase> all = load_reference("orthogonal_polynomials.json");
  return all;
}

// Runs check(c, f) for each case whose name is prefix + the name of a function f; returns how
// many ran.
int for_each_case(const std::string& prefix,
                  const std::function<void(const ReferenceCase&, const Function&)>& check) {
  int checked = 0;
  for (const ReferenceCase& c : cases()) {
    if (c.name.rfind(prefix, 0) != 0) continue;
    SCOPED_TRACE(c.name);
    const Function* f = function_named(c.name.substr(prefix.size()));
    EXPECT_NE(f, nullptr);
    if (f == nullptr) continue;
    check(c, *f);
    ++checked;
  }
  return checked;
}

// |got - exact| <= max(ulps u scale, |peer - exact|) elementwise (peer: PyTorch's values or
// none); NaN and infinities must match.
::testing::AssertionResult within(const std::vector<double>& g, const std::vector<double>& w,
                                  const std::vector<double>& scale, const std::vector<double>& x,
                                  const std::vector<double>& n, const std::vector<double>* peer,
                                  double ulps) {
  const double u = math_unit_roundoff(kFloat64);
  auto result = ::testing::AssertionSuccess();
  bool ok = true;
  if (g.size() != w.size()) return ::testing::AssertionFailure() << "size " << g.size();
  for (std::size_t i = 0; i < g.size(); ++i) {
    const bool same_non_finite =
        !std::isfinite(w[i]) && (std::isnan(w[i]) ? std::isnan(g[i]) : g[i] == w[i]);
    const double bound =
        std::max(ulps * u * scale[i], peer != nullptr ? std::fabs((*peer)[i] - w[i]) : 0.0);
    if (same_non_finite || std::fabs(g[i] - w[i]) <= bound) continue;
    if (ok) result = ::testing::AssertionFailure();
    ok = false;
    result << "at x = " << x[i] << ", n = " << n[i] << ": got " << g[i] << ", want " << w[i]
           << " (error " << std::fabs(g[i] - w[i]) << ", bound " << bound << ")\n";
  }
  return result;
}

// mpmath's values, rounded once, at every point of each family. The scale is what the kernel's
// arithmetic can lose (make_orthogonal_polynomials.py): where it runs the recurrence, the
// recurrence's running error bound (every operation's rounding carried through the later steps,
// in units of 2^-53; the kernel's errors measure at most 0.8 of it, PyTorch's up to 2.4 of it);
// where it takes a Chebyshev closed form, 4 (n + 1) times the envelope (theta's rounding times
// d/dtheta). 4 units leave room for another machine's libm in the closed forms; where PyTorch's
// own error is larger, ours may be as large.
TEST(OrthogonalPolynomials, MatchExactValues) {
  const int checked = for_each_case("exact_", [](const ReferenceCase& c, const Function& f) {
    const std::vector<double> peer = to_vector(c.at("out0"));
    EXPECT_TRUE(within(to_vector(f.fn(c.at("x"), c.at("n"))), to_vector(c.at("exact")),
                       to_vector(c.at("scale")), to_vector(c.at("x")), to_vector(c.at("n")), &peer,
                       4));
  });
  EXPECT_EQ(checked, 12);
}

// The gradient in x is the recurrence's derivative: against the exact derivative at every point
// to degree 1000, within 4 units of the derivative recurrence's running error bound.
TEST(OrthogonalPolynomials, GradientMatchesExactDerivative) {
  const int checked = for_each_case("exact_", [](const ReferenceCase& c, const Function& f) {
    const Tensor x = c.at("slope_x").detach().clone().requires_grad_(true);
    const Tensor n = c.at("slope_n");
    sum(f.fn(x, n)).backward();
    ASSERT_TRUE(x.grad().defined());
    EXPECT_TRUE(within(to_vector(x.grad()), to_vector(c.at("slope")),
                       to_vector(c.at("slope_scale")), to_vector(x), to_vector(n), nullptr, 4));
  });
  EXPECT_EQ(checked, 12);
}

// Finite differences of the forward, with x and n broadcast together (the gradient summed back
// to x's shape) and n a number; degrees through Chebyshev's closed forms (n > 6) too.
TEST(OrthogonalPolynomials, Gradcheck) {
  const Tensor n = make_tensor({0.0, 1.0, 3.0, 8.0}, {4}, kFloat64);
  for (const Function& f : functions()) {
    SCOPED_TRACE(f.name);
    const bool hermite_or_laguerre = std::string(f.name).find("hermite") != std::string::npos ||
                                     std::string(f.name).find("laguerre") != std::string::npos;
    const double low = is_shifted(f.name) ? 0.05 : -0.9;
    const double high = hermite_or_laguerre ? 2.0 : 0.95;
    const Tensor x = uniform_input({3, 1}, low, high, 7);
    EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& in) { return f.fn(in[0], n); }, {x}));
    const Tensor y = uniform_input({5}, low, high, 8);
    EXPECT_TRUE(gradcheck(
        [&](const std::vector<Tensor>& in) { return f.fn(in[0], full({}, 5.0, kFloat64)); }, {y}));
  }
}

// PyTorch's values at the edges: degrees below 0 (0), at 0 and fractional below 1 (1, even at
// NaN), truncated ones (1.9 is 1), x at the ends of the interval and at 0, NaN, and the
// overflows. Where PyTorch's recurrence meets inf - inf (NaN) beyond +-1, Chebyshev and Legendre
// give the infinity of the sign every term has there (Note [Orthogonal polynomials]).
TEST(OrthogonalPolynomials, MatchPyTorchAtTheEdges) {
  const int checked = for_each_case("edges_", [](const ReferenceCase& c, const Function& f) {
    const std::vector<double> x = to_vector(c.at("x")), n = to_vector(c.at("n"));
    const std::vector<double> want = to_vector(c.at("out0"));
    const std::vector<double> got = to_vector(f.fn(c.at("x"), c.at("n")));
    ASSERT_EQ(got.size(), want.size());
    int signed_infinities = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      SCOPED_TRACE("x = " + std::to_string(x[i]) + ", n = " + std::to_string(n[i]));
      const double y = is_shifted(f.name) ? x[i] + x[i] - 1.0 : x[i];
      if (std::isnan(want[i]) && std::isinf(got[i])) {
        EXPECT_TRUE(f.sign_known_beyond_one && std::fabs(y) > 1.0);
        const double sign = y > 0 || std::fmod(std::trunc(n[i]), 2.0) == 0 ? 1.0 : -1.0;
        EXPECT_EQ(got[i], sign * kInf);
        ++signed_infinities;
      } else if (!std::isfinite(want[i])) {
        EXPECT_TRUE(std::isnan(want[i]) ? std::isnan(got[i]) : got[i] == want[i]) << got[i];
      } else {
        // One value's rounding either way, in the closed forms n (n + 1) units (MatchExactValues).
        const double degree = std::max(std::trunc(n[i]), 0.0);
        const double bound = 4 * (degree + 1) * (degree + 1) * math_unit_roundoff(kFloat64) *
                             std::max(1.0, std::fabs(want[i]));
        EXPECT_NEAR(got[i], want[i], bound);
      }
    }
    if (f.sign_known_beyond_one) {
      EXPECT_GT(signed_infinities, 0);
    }
  });
  EXPECT_EQ(checked, 12);
}

// At +-inf each is its leading term's limit, as is the slope (PyTorch's give NaN); a NaN or
// infinite degree gives NaN, but +inf where the degree limit applies (Laguerre, Legendre), which
// refuses it; degree 1's slope is its constant.
TEST(OrthogonalPolynomials, InfinitiesAndUndefinedDegrees) {
  const Tensor x = make_tensor({kInf, -kInf}, {2}, kFloat64);
  // T_3, U_3 odd: +inf, -inf; He_2 even: +inf at both; L_3 (lead -1/6): -inf, +inf.
  EXPECT_EQ(to_vector(special_chebyshev_polynomial_t(x, 3.0)), (std::vector<double>{kInf, -kInf}));
  EXPECT_EQ(to_vector(special_chebyshev_polynomial_u(x, 3.0)), (std::vector<double>{kInf, -kInf}));
  EXPECT_EQ(to_vector(special_hermite_polynomial_he(x, 2.0)), (std::vector<double>{kInf, kInf}));
  EXPECT_EQ(to_vector(special_laguerre_polynomial_l(x, 3.0)), (std::vector<double>{-kInf, kInf}));
  EXPECT_EQ(to_vector(special_laguerre_polynomial_l(x, 0.0)), (std::vector<double>{1.0, 1.0}));
  const Tensor xg = x.clone().requires_grad_(true);
  sum(special_legendre_polynomial_p(xg, 2.0)).backward();  // 3x: +inf, -inf
  EXPECT_EQ(to_vector(xg.grad()), (std::vector<double>{kInf, -kInf}));
  const Tensor xl = x.clone().requires_grad_(true);
  sum(special_laguerre_polynomial_l(xl, 1.0)).backward();  // 1 - x: -1 everywhere
  EXPECT_EQ(to_vector(xl.grad()), (std::vector<double>{-1.0, -1.0}));

  // The odd Hermite polynomials vanish at 0 at every degree: PyTorch's recurrence meets 0 * inf
  // (NaN) past its even terms' overflow, n ~ 300.
  const Tensor zero = zeros({1}, kFloat64);
  EXPECT_EQ(to_vector(special_hermite_polynomial_h(zero, 401.0)), (std::vector<double>{0.0}));
  EXPECT_EQ(to_vector(special_hermite_polynomial_he(zero, 1001.0)), (std::vector<double>{0.0}));
  EXPECT_TRUE(std::isnan(to_vector(special_hermite_polynomial_h(zero, 400.0))[0]));  // overflowed

  const Tensor degrees = make_tensor({kNan, -kInf}, {2}, kFloat64);
  const Tensor with_inf = make_tensor({kNan, kInf, -kInf}, {3}, kFloat64);
  for (const Function& f : functions()) {
    for (const double v : to_vector(f.fn(full({2}, 0.25, kFloat64), degrees)))
      EXPECT_TRUE(std::isnan(v)) << f.name;
    const std::string name = f.name;
    if (name.find("laguerre") != std::string::npos || name.find("legendre") != std::string::npos) {
      EXPECT_NE(error_message([&] {
                  f.fn(full({3}, 0.25, kFloat64), with_inf);
                }).find("a degree above 2^20"),
                std::string::npos)
          << name;
    } else {
      for (const double v : to_vector(f.fn(full({3}, 0.25, kFloat64), with_inf)))
        EXPECT_TRUE(std::isnan(v)) << f.name;
    }
  }
}

// Identities between the families, computed apart: T*_n(x) = T_n(2x - 1) and the same for U, V
// and W; the derivatives T_n' = n U_{n-1}, H_n' = 2n H_{n-1}, He_n' = n He_{n-1}; and
// V_n(-x) = (-1)^n W_n(x).
TEST(OrthogonalPolynomials, Identities) {
  const Tensor x = make_tensor({0.0, 0.125, 0.375, 0.5, 0.75, 1.0}, {6}, kFloat64);
  const Tensor y = x * 2.0 - 1.0;  // exact
  const double u = math_unit_roundoff(kFloat64);
  for (const double n : {2.0, 7.0, 33.0}) {
    SCOPED_TRACE(n);
    // The values of the closed forms at the same argument: bitwise.
    EXPECT_TRUE(all_close(special_shifted_chebyshev_polynomial_t(x, n),
                          to_vector(special_chebyshev_polynomial_t(y, n)), 0, 0));
    EXPECT_TRUE(all_close(special_shifted_chebyshev_polynomial_w(x, n),
                          to_vector(special_chebyshev_polynomial_w(y, n)), 0, 0));
    // (n + 1)^2 units of 2n + 1 (the envelope of V and W) for the two evaluations.
    const double tol = 4 * (n + 1) * (n + 1) * (2 * n + 1) * u;
    const double sign = std::fmod(n, 2.0) == 0 ? 1.0 : -1.0;
    EXPECT_TRUE(all_close(special_chebyshev_polynomial_v(-y, n),
                          to_vector(special_chebyshev_polynomial_w(y, n) * sign), 0, tol));

    const Tensor t = y.clone().requires_grad_(true);
    sum(special_chebyshev_polynomial_t(t, n)).backward();
    EXPECT_TRUE(
        all_close(t.grad(), to_vector(special_chebyshev_polynomial_u(y, n - 1) * n), 0, tol * n));
    const Tensor h = (y * 3.0).requires_grad_(true);
    sum(special_hermite_polynomial_h(h, n)).backward();
    const Tensor h_prev = special_hermite_polynomial_h(h.detach(), n - 1) * (2 * n);
    EXPECT_TRUE(all_close(h.grad(), to_vector(h_prev), 64 * (n + 1) * u, 0));
    const Tensor he = (y * 3.0).requires_grad_(true);
    sum(special_hermite_polynomial_he(he, n)).backward();
    const Tensor he_prev = special_hermite_polynomial_he(he.detach(), n - 1) * n;
    EXPECT_TRUE(all_close(he.grad(), to_vector(he_prev), 64 * (n + 1) * u, 1e-300));
  }
}

// float32, float16 and bfloat16 are the double result rounded (through float, as the other
// special functions); integral operands give float32; the dtypes promote as PyTorch's.
TEST(OrthogonalPolynomials, DTypes) {
  const Tensor x = make_tensor({-0.9, -0.3, 0.0, 0.4, 0.8, 1.5}, {6}, kFloat64);
  const Tensor n = make_tensor({0.0, 1.0, 2.0, 5.0, 9.0, 70.0}, {6}, kFloat64);
  for (const DType dtype : {kFloat32, kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor narrow_x = x.to(dtype), narrow_n = n.to(dtype);
    for (const Function& f : functions()) {
      const Tensor got = f.fn(narrow_x, narrow_n);
      EXPECT_EQ(got.dtype(), dtype);
      const Tensor wide = f.fn(narrow_x.to(kFloat64), narrow_n.to(kFloat64));
      EXPECT_TRUE(matches_within_roundoff(got, wide.to(kFloat32).to(dtype), {}, {.bitwise = true}))
          << f.name;
    }
  }
  const Tensor ints = make_tensor({1.0, 2.0}, {2}, kInt64);
  EXPECT_EQ(special_chebyshev_polynomial_t(ints, ints).dtype(), kFloat32);
  EXPECT_EQ(special_chebyshev_polynomial_t(ints, 2.0).dtype(), kFloat32);
  EXPECT_EQ(special_chebyshev_polynomial_t(0.5, ints).dtype(), kFloat32);
  const Tensor pair = x.narrow(0, 0, 2);
  EXPECT_EQ(special_chebyshev_polynomial_t(pair.to(kFloat32), ints.to(kInt32)).dtype(), kFloat32);
  EXPECT_EQ(special_chebyshev_polynomial_t(pair, ints.to(kInt32)).dtype(), kFloat64);
  EXPECT_EQ(special_chebyshev_polynomial_t(ints.to(kInt32), n.narrow(0, 0, 2)).dtype(), kFloat64);
  // T_2 at the integers 1 and 2 (7 = 2 * 2^2 - 1); the degree 2.7 truncated to 2.
  EXPECT_EQ(to_vector(special_chebyshev_polynomial_t(ints, 2.7)), (std::vector<double>{1, 7}));
  // The number overloads: T_n(0.5) for n = 1, 2 is 0.5, -0.5.
  EXPECT_EQ(to_vector(special_chebyshev_polynomial_t(0.5, ints)), (std::vector<double>{0.5, -0.5}));
}

// A block of elements of one degree, each the recurrence alone, runs the recurrence in SIMD lanes
// (Note [Orthogonal polynomials in lanes] in kernels/cpu/orthogonal_polynomials.cpp): the same
// operations, so each value and gradient is bit for bit the one the element gets one at a time,
// here forced by degrees alternating between d and d + 1/2 (the same truncated degree, but not
// one value). Blocks of 256 and a ragged end; 0 and +-1 (special cases) in some blocks and not
// in others; far out, where terms overflow (to NaN, or the signed infinity beyond +-1) for the
// higher degrees, and the blocks that could must stay out of the lanes; float32 and float64.
TEST(OrthogonalPolynomials, BlocksOfOneDegreeMatchElementsOneAtATime) {
  const std::int64_t count = 1100;
  for (const DType dtype : {kFloat64, kFloat32}) {
    for (const Function& f : functions()) {
      const bool laguerre = std::string(f.name).find("laguerre") != std::string::npos;
      // Inside the interval of orthogonality (x in (0, 1) for the shifted kinds), past its ends
      // in the last block; Hermite and Laguerre on [-3, 3] and [0, 12], with 0 in some blocks;
      // then, from element 768, out to 1e8 geometrically.
      double low = -0.999, high = 0.999;
      if (is_shifted(f.name)) low = 0.0005, high = 0.9995;
      if (!f.sign_known_beyond_one) low = laguerre ? 0.0 : -3.0, high = laguerre ? 12.0 : 3.0;
      std::vector<double> xs;
      for (std::int64_t i = 0; i < 768; ++i)
        xs.push_back(low + (high - low) * static_cast<double>(i) / 767.0);
      for (std::int64_t i = 768; i < count; ++i)
        xs.push_back(high * std::pow(1e8, static_cast<double>(i - 768) / (count - 769.0)));
      xs[700] = is_shifted(f.name) ? 1.0 : 1.0001;  // the third block takes the scalar loop
      for (const double degree : {1.0, 2.0, 6.0, 12.0, 60.0, 100.0}) {
        SCOPED_TRACE(std::string(f.name) + " " + dtype_name(dtype) +
                     " n = " + std::to_string(degree));
        std::vector<double> alternating;
        for (std::int64_t i = 0; i < count; ++i)
          alternating.push_back(degree + 0.5 * (i % 2));
        const Tensor one_degree = full({count}, degree, dtype);
        const Tensor x = make_tensor(xs, {count}, dtype).requires_grad_(true);
        const Tensor x_alone = x.detach().clone().requires_grad_(true);
        const Tensor blocks = f.fn(x, one_degree);
        const Tensor alone = f.fn(x_alone, make_tensor(alternating, {count}, dtype));
        EXPECT_TRUE(matches_within_roundoff(blocks, alone, {}, {.bitwise = true}));
        sum(blocks).backward();
        sum(alone).backward();
        EXPECT_TRUE(matches_within_roundoff(x.grad(), x_alone.grad(), {}, {.bitwise = true}));
      }
    }
  }
}

// Laguerre and Legendre values, and every gradient, run n steps: degrees above 2^20 are refused
// there with the op's name; 2^20 itself runs. Chebyshev and Hermite values take any degree.
TEST(OrthogonalPolynomials, DegreeLimit) {
  const Tensor x = make_tensor({0.25, 0.5}, {2}, kFloat64);
  const Tensor over = make_tensor({3.0, 1048577.0}, {2}, kFloat64);
  EXPECT_NE(error_message([&] {
              special_laguerre_polynomial_l(x, over);
            }).find("special_laguerre_polynomial_l: a degree above 2^20"),
            std::string::npos);
  EXPECT_NE(error_message([&] {
              special_legendre_polynomial_p(x, over);
            }).find("special_legendre_polynomial_p: a degree above 2^20"),
            std::string::npos);
  const Tensor t = special_chebyshev_polynomial_t(x, over);  // closed form
  EXPECT_NEAR(to_vector(t)[1], std::cos(1048577.0 * std::acos(0.5)), 1e-9);
  EXPECT_TRUE(std::isnan(to_vector(special_hermite_polynomial_h(x, over))[1]));  // overflowed
  const Tensor xg = x.clone().requires_grad_(true);
  const Tensor y = special_chebyshev_polynomial_t(xg, over);
  EXPECT_NE(error_message([&] { sum(y).backward(); })
                .find("special_chebyshev_polynomial_t: a degree above 2^20 = 1048576 (in n of "
                      "shape [2]); the gradient runs n steps"),
            std::string::npos);
  // Legendre at 2^20, where |P_n(x)| <= sqrt(2 / (pi n sin(theta))) (Bernstein): small.
  const Tensor at_limit = special_legendre_polynomial_p(x, 1048576.0);
  for (const double v : to_vector(at_limit))
    EXPECT_LT(std::fabs(v), 1e-3);
}

// The gradient is a kernel's, not written in differentiable functions: a second derivative is
// refused by name.
TEST(OrthogonalPolynomials, NoSecondDerivative) {
  const Tensor x = make_tensor({0.25}, {1}, kFloat64).requires_grad_(true);
  const Tensor y = special_legendre_polynomial_p(x, 3.0);
  const std::vector<Tensor> g = autograd::grad({sum(y)}, {x}, {}, std::nullopt, true);
  EXPECT_NE(error_message([&] { sum(g[0]).backward(); }).find("special_legendre_polynomial_p"),
            std::string::npos);
}

// torch::special's names are these functions.
TEST(OrthogonalPolynomials, SpecialNamespace) {
  const Tensor x = make_tensor({-0.5, 0.25, 0.75}, {3}, kFloat64);
  EXPECT_TRUE(all_close(special::chebyshev_polynomial_v(x, 4.0),
                        to_vector(special_chebyshev_polynomial_v(x, 4.0)), 0, 0));
  EXPECT_TRUE(all_close(special::laguerre_polynomial_l(x, x * 8.0),
                        to_vector(special_laguerre_polynomial_l(x, x * 8.0)), 0, 0));
  EXPECT_TRUE(all_close(special::hermite_polynomial_he(0.5, x * 4.0),
                        to_vector(special_hermite_polynomial_he(0.5, x * 4.0)), 0, 0));
}

}  // namespace
}  // namespace leangrad::test
