// The unary math functions sin, cos, rsqrt, reciprocal, log2, log10, sign, floor, ceil, round and
// trunc: values and gradients against PyTorch 1.13 at their special points (0 and -0.0, halves,
// NaN, the infinities, the edges of their domains; tests/data/unary_math.json, written by
// make_unary_math.py), integral input, gradchecks of the smooth ones to second order, and the
// Tensor methods (these and erf, expm1, log1p). The kernels' tables over every dtype are in
// tests/kernels/test_elementwise.cpp.
#include <gtest/gtest.h>

#include <cmath>
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
#include "testing/unary_functions.h"

namespace leangrad {
namespace {

using test::UnaryFn;

// sign and the roundings give exactly representable results: they must equal PyTorch's bit for
// bit, the sign of a zero included (floor(-0.0) is -0.0, sign(-0.0) is +0).
bool is_exact(const std::string& op) {
  return op == "sign" || op == "floor" || op == "ceil" || op == "round" || op == "trunc";
}

// Finite values within 16 u (values) or 32 u (gradients, one product deeper) of max(1, |x|,
// |result|), non-finite ones exactly (NaN for NaN, an infinity of the same sign): each side
// evaluates the function in one or two correctly rounded operations and a libm call good to a few
// ulps, and a wrong formula is off by O(1) (test::matches_within_roundoff).
test::RoundoffMatch match_for(const std::string& op, double ulps) {
  return {.ulps = ulps, .non_finite = test::NonFinite::MustMatch, .bitwise = is_exact(op)};
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
    const UnaryFn f = test::unary_function_named(op);
    Tensor x = c.at("x").clone().requires_grad_();
    const Tensor y = f(x);
    ASSERT_EQ(y.dtype(), x.dtype());
    (y * c.at("w")).sum().backward();
    EXPECT_TRUE(test::matches_within_roundoff(y, c.at("y"), {{"x", c.at("x")}}, match_for(op, 16)))
        << "value";
    // The piecewise-constant functions' gradient is exactly 0.
    EXPECT_TRUE(
        test::matches_within_roundoff(x.grad(), c.at("dx"), {{"x", c.at("x")}}, match_for(op, 32)))
        << "gradient";
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
    const Tensor y = test::unary_function_named(op)(c.at("x"));
    ASSERT_EQ(y.dtype(), c.at("y").dtype());
    EXPECT_TRUE(test::matches_within_roundoff(y, c.at("y"), {{"x", c.at("x")}}, match_for(op, 16)))
        << "value";
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
    EXPECT_TRUE(test::matches_within_roundoff(method, function, {}, {.bitwise = true}));
  }
}

}  // namespace
}  // namespace leangrad
