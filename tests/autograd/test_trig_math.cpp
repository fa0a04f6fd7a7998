// The trigonometric and hyperbolic functions (tan, asin, acos, atan, sinh, cosh, asinh, acosh,
// atanh), exp2, atan2 and round(decimals): values and gradients against PyTorch 1.13 at their
// special points (signed zeros, the edges of the domains, overflow, NaN and the infinities;
// tests/data/trig_math.json, written by make_trig_math.py), integral input, gradchecks to second
// order, and the Tensor methods. The kernels' tables over every dtype are in
// tests/kernels/test_elementwise.cpp; bad arguments are rows of tests/misuse.
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
#include <leangrad/kernels/creation.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"
#include "testing/unary_functions.h"

namespace leangrad {
namespace {

using test::UnaryFn;

std::vector<test::ReferenceCase> cases_of(const std::string& op) {
  std::vector<test::ReferenceCase> out;
  for (const test::ReferenceCase& c : test::load_reference("trig_math.json")) {
    if (c.params.at("op").get<std::string>() == op) out.push_back(c);
  }
  return out;
}

// Each side evaluates the function with one libm call (a few ulps; PyTorch's float32 CPU path
// is SLEEF's 1-ulp vector math) and the derivative with two or three more correctly rounded
// operations on the same inputs: 16 u of max(1, |x|, |result|) for values and 32 u for
// gradients (one product deeper) hold both, and a wrong formula or domain edge is off by O(1).
// The non-finite results (poles, NaN outside the domains, overflow) must match exactly.
TEST(TrigMath, UnaryMatchesPyTorch) {
  int floating_cases = 0, integral_cases = 0;
  for (const test::ReferenceCase& c : test::load_reference("trig_math.json")) {
    const std::string op = c.params.at("op").get<std::string>();
    if (op == "atan2" || op == "round") continue;
    SCOPED_TRACE(c.name);
    const UnaryFn f = test::unary_function_named(op);
    if (c.at("x").dtype() == kInt64) {
      ++integral_cases;
      const Tensor y = f(c.at("x"));
      ASSERT_EQ(y.dtype(), kFloat32);  // integral input is computed in float32
      EXPECT_TRUE(test::matches_within_roundoff(y, c.at("y"), {{"x", c.at("x")}}, {.ulps = 16}));
      continue;
    }
    ++floating_cases;
    Tensor x = c.at("x").clone().requires_grad_();
    const Tensor y = f(x);
    ASSERT_EQ(y.dtype(), x.dtype());
    (y * c.at("w")).sum().backward();
    EXPECT_TRUE(test::matches_within_roundoff(y, c.at("y"), {{"x", c.at("x")}}, {.ulps = 16}))
        << "value";
    EXPECT_TRUE(
        test::matches_within_roundoff(x.grad(), c.at("dx"), {{"x", c.at("x")}}, {.ulps = 32}))
        << "gradient";
  }
  EXPECT_EQ(floating_cases, 20);
  EXPECT_EQ(integral_cases, 10);
}

// atan2 and its two gradients b / (a^2 + b^2) and -a / (a^2 + b^2): at every pair of special
// values (the quadrants of the signed zeros and infinities, NaN; gradients NaN at (0, 0) and where
// an infinity meets a zero reciprocal, as PyTorch's), broadcast (the gradients summed over the
// broadcast dim: 4 terms, so 32 + 4 u), and int64 operands (float32).
TEST(TrigMath, Atan2MatchesPyTorch) {
  const std::vector<test::ReferenceCase> cases = cases_of("atan2");
  ASSERT_EQ(cases.size(), 5u);
  for (const test::ReferenceCase& c : cases) {
    SCOPED_TRACE(c.name);
    if (c.at("a").dtype() == kInt64) {
      const Tensor y = atan2(c.at("a"), c.at("b"));
      ASSERT_EQ(y.dtype(), kFloat32);
      EXPECT_TRUE(test::matches_within_roundoff(y, c.at("y"), {}, {.ulps = 16}));
      continue;
    }
    Tensor a = c.at("a").clone().requires_grad_();
    Tensor b = c.at("b").clone().requires_grad_();
    const Tensor y = atan2(a, b);
    ASSERT_EQ(y.shape(), c.at("y").shape());
    (y * c.at("w")).sum().backward();
    const bool broadcast = a.shape() != b.shape();
    const std::vector<test::NamedInput> at =
        broadcast ? std::vector<test::NamedInput>{}
                  : std::vector<test::NamedInput>{{"a", c.at("a")}, {"b", c.at("b")}};
    EXPECT_TRUE(test::matches_within_roundoff(y, c.at("y"), at, {.ulps = 16})) << "value";
    EXPECT_TRUE(test::matches_within_roundoff(a.grad(), c.at("da"), at, {.ulps = 36})) << "d/da";
    EXPECT_TRUE(test::matches_within_roundoff(b.grad(), c.at("db"), at, {.ulps = 36})) << "d/db";
  }
}

// Bit for bit, the sign of a zero included, except that any NaN matches any NaN: inf / inf makes
// the x86 default NaN, whose sign bit is set, where the reference data stores "nan".
::testing::AssertionResult same_bits_or_both_nan(const Tensor& got, const Tensor& want) {
  const std::vector<double> g = test::to_vector(got), w = test::to_vector(want);
  if (g.size() != w.size()) return ::testing::AssertionFailure() << "sizes differ";
  for (std::size_t i = 0; i < g.size(); ++i) {
    const bool ok = std::isnan(w[i])
                        ? std::isnan(g[i])
                        : std::bit_cast<std::uint64_t>(g[i]) == std::bit_cast<std::uint64_t>(w[i]);
    if (!ok) return ::testing::AssertionFailure() << "[" << i << "] " << g[i] << " != " << w[i];
  }
  return ::testing::AssertionSuccess();
}

// round(x, decimals) is PyTorch's three operations, each rounded to the dtype (Note [Rounding to
// decimals]): the results equal PyTorch's bit for bit in float64, float32 and bfloat16, the
// halves (2.5 -> 2 at decimals -1 of 25), the inexact decimals (2.675 -> 2.67 or 2.68 as the
// binary value and the products round) and the NaNs of an infinite 10^decimals included.
TEST(TrigMath, RoundDecimalsMatchesPyTorchBitForBit) {
  const std::vector<test::ReferenceCase> cases = cases_of("round");
  ASSERT_EQ(cases.size(), 27u);
  for (const test::ReferenceCase& c : cases) {
    SCOPED_TRACE(c.name);
    const auto decimals = c.params.at("decimals").get<std::int64_t>();
    const Tensor y = round(c.at("x"), decimals);
    ASSERT_EQ(y.dtype(), c.at("x").dtype());
    EXPECT_TRUE(same_bits_or_both_nan(y, c.at("y")));
    EXPECT_TRUE(same_bits_or_both_nan(c.at("x").round(decimals), c.at("y"))) << "method";
  }
}

// float16, which PyTorch's CPU kernel refuses, goes the same way: values whose products are exact
// in float16, by hand.
TEST(TrigMath, RoundDecimalsInFloat16) {
  const Tensor x = test::make_tensor({1.25, 0.75, 37.0, -2.5}, {4}, kFloat16);
  // 12.5 -> 12, 7.5 -> 8 (halves to even), then / 10 rounded to float16.
  EXPECT_TRUE(test::matches_within_roundoff(
      round(x, 1), test::make_tensor({1.2, 0.8, 37.0, -2.5}, {4}, kFloat16), {},
      {.bitwise = true}));
  const Tensor tens = test::make_tensor({37.0, 25.0, 15.0, -45.0}, {4}, kFloat16);
  EXPECT_TRUE(test::matches_within_roundoff(
      round(tens, -1), test::make_tensor({40.0, 20.0, 20.0, -40.0}, {4}, kFloat16), {},
      {.bitwise = true}));
}

// decimals = 0 is round(); integral input keeps its dtype there, as round's.
TEST(TrigMath, RoundZeroDecimalsIsRound) {
  const Tensor x = test::make_tensor({-2.5, -0.5, 0.5, 1.5, 2.4}, {5}, kFloat32);
  EXPECT_TRUE(test::matches_within_roundoff(round(x, 0), round(x), {}, {.bitwise = true}));
  const Tensor i = test::make_tensor({-3, 4}, {2}, kInt64);
  EXPECT_EQ(round(i, 0).dtype(), kInt64);
  EXPECT_EQ(test::to_vector(round(i, 0)), (std::vector<double>{-3, 4}));
}

// round(decimals) passes a zero gradient on, recorded as round's node.
TEST(TrigMath, RoundDecimalsRecordsAZeroGradient) {
  Tensor x = test::make_tensor({-1.55, 0.21, 2.77}, {3}, kFloat64).requires_grad_();
  const Tensor y = round(x * 3.0, 1);
  ASSERT_TRUE(y.requires_grad());
  EXPECT_EQ(autograd::grad_fn_name(y), "RoundBackward");
  (y + x).sum().backward();
  EXPECT_TRUE(test::all_close(x.grad(), {1, 1, 1}));
}

// The smooth ones inside their domains: first and second derivatives against central differences
// in float64.
TEST(TrigMath, FirstAndSecondDerivativesMatchFiniteDifferences) {
  const std::vector<std::pair<const char*, UnaryFn>> cases = {
      {"tan", [](const Tensor& x) { return tan(x * 0.45); }},
      {"asin", [](const Tensor& x) { return asin(x * 0.3); }},
      {"acos", [](const Tensor& x) { return acos(x * 0.3); }},
      {"atan", [](const Tensor& x) { return atan(x * 1.3); }},
      {"sinh", [](const Tensor& x) { return sinh(x * 0.9); }},
      {"cosh", [](const Tensor& x) { return cosh(x * 0.9); }},
      {"asinh", [](const Tensor& x) { return asinh(x * 1.7); }},
      {"acosh", [](const Tensor& x) { return acosh(x * x + 1.3); }},
      {"atanh", [](const Tensor& x) { return atanh(x * 0.3); }},
      {"exp2", [](const Tensor& x) { return exp2(x * 1.1); }},
  };
  const Tensor values =
      test::make_tensor({-2.9, -1.3, -0.61, -0.12, 0.07, 0.52, 1.4, 3.1}, {8}, kFloat64);
  for (const auto& [name, f] : cases) {
    SCOPED_TRACE(name);
    Tensor x = values.clone().requires_grad_();
    EXPECT_TRUE(test::gradcheck([f = f](const std::vector<Tensor>& in) { return f(in[0]); }, {x}));
    EXPECT_TRUE(
        test::gradgradcheck([f = f](const std::vector<Tensor>& in) { return f(in[0]); }, {x}));
  }
}

TEST(TrigMath, Atan2FirstAndSecondDerivativesMatchFiniteDifferences) {
  Tensor a = test::uniform_input({3, 1}, -2.0, 2.0, 3);
  Tensor b = test::away_from_zero_input({4}, 0.3, 2.0, 4);
  const test::GradcheckFn f = [](const std::vector<Tensor>& in) { return atan2(in[0], in[1]); };
  EXPECT_TRUE(test::gradcheck(f, {a, b}));
  EXPECT_TRUE(test::gradgradcheck(f, {a, b}));
}

// Every method is its free function, bit for bit.
TEST(TrigMath, TensorMethodsAreTheFunctions) {
  const Tensor x = test::make_tensor({-0.9, -0.4, 0.0, 0.3, 0.6, 0.95}, {2, 3}, kFloat64);
  const Tensor big = x * 3.0 + 4.0;  // in acosh's domain
  const std::vector<std::tuple<const char*, Tensor, Tensor>> cases = {
      {"tan", x.tan(), tan(x)},
      {"asin", x.asin(), asin(x)},
      {"acos", x.acos(), acos(x)},
      {"atan", x.atan(), atan(x)},
      {"sinh", x.sinh(), sinh(x)},
      {"cosh", x.cosh(), cosh(x)},
      {"asinh", x.asinh(), asinh(x)},
      {"acosh", big.acosh(), acosh(big)},
      {"atanh", x.atanh(), atanh(x)},
      {"exp2", x.exp2(), exp2(x)},
      {"atan2", x.atan2(big), atan2(x, big)},
      {"round", x.round(1), round(x, 1)},
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
