// The unary math functions sin, cos, rsqrt, reciprocal, log2, log10, sign, floor, ceil, round and
// trunc: values and gradients against PyTorch 1.13 at their special points (0 and -0.0, halves,
// NaN, the infinities, the edges of their domains; tests/data/unary_math.json, written by
// make_unary_math.py), integral input, gradchecks of the smooth ones to second order, and the
// Tensor methods (these and erf, expm1, log1p). The kernels' tables over every dtype are in
// tests/kernels/test_elementwise.cpp.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using UnaryFn = std::function<Tensor(const Tensor&)>;

UnaryFn function_named(const std::string& op) {
  if (op == "sin") return [](const Tensor& x) { return sin(x); };
  if (op == "cos") return [](const Tensor& x) { return cos(x); };
  if (op == "rsqrt") return [](const Tensor& x) { return rsqrt(x); };
  if (op == "reciprocal") return [](const Tensor& x) { return reciprocal(x); };
  if (op == "log2") return [](const Tensor& x) { return log2(x); };
  if (op == "log10") return [](const Tensor& x) { return log10(x); };
  if (op == "sign") return [](const Tensor& x) { return sign(x); };
  if (op == "floor") return [](const Tensor& x) { return floor(x); };
  if (op == "ceil") return [](const Tensor& x) { return ceil(x); };
  if (op == "round") return [](const Tensor& x) { return round(x); };
  if (op == "trunc") return [](const Tensor& x) { return trunc(x); };
  ADD_FAILURE() << "unary_math.json has an op this test does not know: " << op;
  return [](const Tensor& x) { return x; };
}

// sign and the roundings give exactly representable results: they must equal PyTorch's bit for
// bit, the sign of a zero included (floor(-0.0) is -0.0, sign(-0.0) is +0).
bool is_exact(const std::string& op) {
  return op == "sign" || op == "floor" || op == "ceil" || op == "round" || op == "trunc";
}

std::uint64_t bits(double v) {
  return std::bit_cast<std::uint64_t>(v);
}

// `got` against PyTorch's `want`, element by element. Non-finite values must match exactly (NaN
// for NaN, an infinity of the same sign). Finite ones: each side evaluates the function in one
// or two correctly rounded operations and a libm call good to a few ulps, so they differ by a
// few units of roundoff u of max(1, |x|, |result|); 16 u (values) and 32 u (gradients, one
// product deeper) leave room for that and still catch a wrong formula, which is off by O(1).
void expect_matches(const Tensor& got, const Tensor& want, const std::vector<double>& xs,
                    double ulps, bool exact, const char* what) {
  const std::vector<double> g = test::to_vector(got), e = test::to_vector(want);
  ASSERT_EQ(g.size(), e.size());
  const double u = got.dtype() == kFloat64 ? 0x1p-53 : 0x1p-24;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const std::string at = std::string(what) + " at x = " + std::to_string(xs[i]);
    if (exact) {
      EXPECT_EQ(bits(g[i]), bits(e[i])) << at << ": " << g[i] << " against PyTorch's " << e[i];
    } else if (!std::isfinite(e[i])) {
      EXPECT_TRUE(std::isnan(e[i]) ? std::isnan(g[i]) : g[i] == e[i])
          << at << ": " << g[i] << " against PyTorch's " << e[i];
    } else {
      const double scale = std::max({1.0, std::abs(xs[i]), std::abs(e[i])});
      EXPECT_LE(std::abs(g[i] - e[i]), ulps * u * scale)
          << at << ": " << g[i] << " against PyTorch's " << e[i];
    }
  }
}

TEST(UnaryMath, MatchPyTorch) {
  const std::vector<test::ReferenceCase> cases = test::load_reference("unary_math.json");
  ASSERT_EQ(cases.size(), 33u);
  int floating_cases = 0;
  for (const test::ReferenceCase& c : cases) {
    if (c.at("x").dtype() == kInt64) continue;
    ++floating_cases;
    SCOPED_TRACE(c.name);
    const std::string op = c.params.at("op").get<std::string>();
    const UnaryFn f = function_named(op);
    Tensor x = c.at("x").clone().requires_grad_();
    const Tensor y = f(x);
    ASSERT_EQ(y.dtype(), x.dtype());
    (y * c.at("w")).sum().backward();
    const std::vector<double> xs = test::to_vector(c.at("x"));
    expect_matches(y, c.at("y"), xs, 16, is_exact(op), "value");
    // The piecewise-constant functions' gradient is exactly 0.
    expect_matches(x.grad(), c.at("dx"), xs, 32, is_exact(op), "gradient");
  }
  EXPECT_EQ(floating_cases, 22);
}

// sign and the roundings keep an integral dtype (the roundings return it unchanged); the others
// compute integral input in float32, as PyTorch.
TEST(UnaryMath, IntegralInputMatchesPyTorch) {
  for (const test::ReferenceCase& c : test::load_reference("unary_math.json")) {
    if (c.at("x").dtype() != kInt64) continue;
    SCOPED_TRACE(c.name);
    const std::string op = c.params.at("op").get<std::string>();
    const Tensor y = function_named(op)(c.at("x"));
    ASSERT_EQ(y.dtype(), c.at("y").dtype());
    expect_matches(y, c.at("y"), test::to_vector(c.at("x")), 16, is_exact(op), "value");
  }
}

// The smooth ones, away from their poles: first and second derivatives against central
// differences in float64.
TEST(UnaryMath, FirstAndSecondDerivativesMatchFiniteDifferences) {
  const std::vector<std::pair<const char*, UnaryFn>> cases = {
      {"sin", [](const Tensor& x) { return sin(x * 1.7); }},
      {"cos", [](const Tensor& x) { return cos(x * 1.7); }},
      {"rsqrt", [](const Tensor& x) { return rsqrt(x * x + 0.3); }},
      {"reciprocal", [](const Tensor& x) { return reciprocal(x * x + 0.3); }},
      {"log2", [](const Tensor& x) { return log2(x * x + 0.3); }},
      {"log10", [](const Tensor& x) { return log10(x * x + 0.3); }},
  };
  const Tensor values =
      test::make_tensor({-2.9, -1.3, -0.61, -0.12, 0.07, 0.52, 1.4, 3.1}, {8}, kFloat64);
  for (const auto& [name, f] : cases) {
    SCOPED_TRACE(name);
    Tensor x = values.clone().requires_grad_();
    EXPECT_TRUE(test::gradcheck([f = f](const std::vector<Tensor>& in) { return f(in[0]); }, {x}));
    EXPECT_TRUE(test::gradcheck(
        [f = f](const std::vector<Tensor>& in) {
          AutoGradMode enable(true);
          return autograd::grad({f(in[0]).sum()}, {in[0]}, {}, std::nullopt, true)[0];
        },
        {x}));
  }
}

// A rounding inside a graph passes a zero gradient on, and its grad_fn is named.
TEST(UnaryMath, PiecewiseConstantFunctionsRecordAZeroGradient) {
  for (const auto& [name, f] : std::vector<std::pair<std::string, UnaryFn>>{
           {"SignBackward", [](const Tensor& x) { return sign(x); }},
           {"FloorBackward", [](const Tensor& x) { return floor(x); }},
           {"CeilBackward", [](const Tensor& x) { return ceil(x); }},
           {"RoundBackward", [](const Tensor& x) { return round(x); }},
           {"TruncBackward", [](const Tensor& x) { return trunc(x); }}}) {
    SCOPED_TRACE(name);
    Tensor x = test::make_tensor({-1.5, 0.2, 2.7}, {3}, kFloat32).requires_grad_();
    const Tensor y = f(x * 3.0);
    ASSERT_TRUE(y.requires_grad());
    EXPECT_EQ(autograd::grad_fn_name(y), name);
    (y + x).sum().backward();
    EXPECT_TRUE(test::all_close(x.grad(), {1, 1, 1}));
  }
}

// Every method is its free function, bit for bit.
TEST(UnaryMath, TensorMethodsAreTheFunctions) {
  const Tensor x = test::make_tensor({-2.5, -0.7, 0.0, 0.3, 1.5, 4.0}, {2, 3}, kFloat64);
  const std::vector<std::tuple<const char*, Tensor, Tensor>> cases = {
      {"erf", x.erf(), erf(x)},
      {"expm1", x.expm1(), expm1(x)},
      {"log1p", x.abs().log1p(), log1p(x.abs())},
      {"log2", x.abs().log2(), log2(x.abs())},
      {"log10", x.abs().log10(), log10(x.abs())},
      {"sin", x.sin(), sin(x)},
      {"cos", x.cos(), cos(x)},
      {"rsqrt", x.abs().rsqrt(), rsqrt(x.abs())},
      {"reciprocal", x.reciprocal(), reciprocal(x)},
      {"sign", x.sign(), sign(x)},
      {"floor", x.floor(), floor(x)},
      {"ceil", x.ceil(), ceil(x)},
      {"round", x.round(), round(x)},
      {"trunc", x.trunc(), trunc(x)},
  };
  for (const auto& [name, method, function] : cases) {
    SCOPED_TRACE(name);
    ASSERT_EQ(method.shape(), x.shape());
    ASSERT_EQ(method.dtype(), function.dtype());
    const std::vector<double> m = test::to_vector(method), f = test::to_vector(function);
    for (std::size_t i = 0; i < m.size(); ++i)
      EXPECT_EQ(bits(m[i]), bits(f[i])) << "element " << i;
  }
}

}  // namespace
}  // namespace leangrad
