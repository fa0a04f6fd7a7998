// The composed activations (autograd/activations.h) and erf, expm1, log1p: values and gradients
// against PyTorch 1.13 at every function's kinks and far out (tests/data/activations.json,
// written by make_activations.py), gradchecks of their first and second derivatives, and the
// modules of nn/activation.h. Bad arguments are rows of the misuse tables
// (tests/misuse/test_misuse_nn_functions.cpp, test_misuse_nn_modules.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <sstream>
#include <string>

#include <leangrad/autograd/activations.h>
#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/nn/functional.h>
#include <leangrad/nn/nn.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

// The function a case of activations.json names, with its parameters.
std::function<Tensor(const Tensor&)> function_of(const test::ReferenceCase& c) {
  const std::string op = c.params.at("op").get<std::string>();
  const nlohmann::json& p = c.params;
  if (op == "leaky_relu") {
    const double slope = p.at("negative_slope").get<double>();
    return [slope](const Tensor& x) { return leaky_relu(x, slope); };
  }
  if (op == "elu") {
    const double alpha = p.at("alpha").get<double>();
    return [alpha](const Tensor& x) { return elu(x, alpha); };
  }
  if (op == "selu") return [](const Tensor& x) { return selu(x); };
  if (op == "silu") return [](const Tensor& x) { return silu(x); };
  if (op == "mish") return [](const Tensor& x) { return mish(x); };
  if (op == "gelu") {
    const std::string approximate = p.at("approximate").get<std::string>();
    return [approximate](const Tensor& x) { return gelu(x, approximate); };
  }
  if (op == "softplus") {
    const double beta = p.at("beta").get<double>(), threshold = p.at("threshold").get<double>();
    return [beta, threshold](const Tensor& x) { return softplus(x, beta, threshold); };
  }
  if (op == "hardtanh") {
    const double lo = p.at("min_val").get<double>(), hi = p.at("max_val").get<double>();
    return [lo, hi](const Tensor& x) { return hardtanh(x, lo, hi); };
  }
  if (op == "relu6") return [](const Tensor& x) { return relu6(x); };
  if (op == "hardswish") return [](const Tensor& x) { return hardswish(x); };
  if (op == "hardsigmoid") return [](const Tensor& x) { return hardsigmoid(x); };
  if (op == "log_sigmoid") return [](const Tensor& x) { return log_sigmoid(x); };
  if (op == "softsign") return [](const Tensor& x) { return softsign(x); };
  if (op == "tanhshrink") return [](const Tensor& x) { return tanhshrink(x); };
  if (op == "celu") {
    const double alpha = p.at("alpha").get<double>();
    return [alpha](const Tensor& x) { return celu(x, alpha); };
  }
  if (op == "softshrink" || op == "hardshrink") {
    const double lambda = p.at("lambd").get<double>();
    if (op == "softshrink") return [lambda](const Tensor& x) { return softshrink(x, lambda); };
    return [lambda](const Tensor& x) { return hardshrink(x, lambda); };
  }
  if (op == "threshold") {
    const double th = p.at("threshold").get<double>(), value = p.at("value").get<double>();
    return [th, value](const Tensor& x) { return threshold(x, th, value); };
  }
  if (op == "erf") return [](const Tensor& x) { return erf(x); };
  if (op == "expm1") return [](const Tensor& x) { return expm1(x); };
  if (op == "log1p_clamped") return [](const Tensor& x) { return log1p(clamp_min(x, -0.999)); };
  ADD_FAILURE() << "activations.json has an op this test does not know: " << op;
  return [](const Tensor& x) { return x; };
}

// Each value and gradient against PyTorch's. Both sides evaluate the same closed form in a few
// correctly rounded operations and libm functions good to a few ulps, in their own order (ours
// composed, PyTorch's fused; PyTorch's elu takes exp(x) - 1 where we take expm1), and no
// intermediate is larger than max(1, |x|, |result|): they differ by at most a few tens of units
// of roundoff u of that magnitude. 16 u for values and 32 u for gradients (one chain rule
// deeper) leave room for that and still catch any wrong formula or kink, which is off by O(1)
// (test::matches_within_roundoff).
TEST(Activations, MatchPyTorch) {
  const std::vector<test::ReferenceCase> cases = test::load_reference("activations.json");
  int checked = 0;
  for (const test::ReferenceCase& c : cases) {
    if (c.params.at("op") == "prelu" || c.params.at("op") == "glu") continue;  // below
    SCOPED_TRACE(c.name);
    ++checked;
    const auto f = function_of(c);
    Tensor x = c.at("x").clone().requires_grad_();
    const Tensor y = f(x);
    ASSERT_EQ(y.dtype(), x.dtype());
    (y * c.at("w")).sum().backward();
    // activations.json has no NaN or infinity: every function is finite at its points.
    const test::RoundoffMatch value{.ulps = 16, .non_finite = test::NonFinite::Forbidden};
    const test::RoundoffMatch gradient{.ulps = 32, .non_finite = test::NonFinite::Forbidden};
    EXPECT_TRUE(test::matches_within_roundoff(y, c.at("y"), {{"x", c.at("x")}}, value)) << "value";
    if (c.name == "hardsigmoid_f64") {
      // PyTorch's float64 hardsigmoid_backward multiplies by 1/6 rounded to float32 (its constant
      // is 1.0f / 6.0f): within float32's unit roundoff of ours, relatively.
      EXPECT_TRUE(test::all_close(x.grad(), test::to_vector(c.at("dx")), 0x1p-24 + 32 * 0x1p-53, 0))
          << "gradient";
    } else {
      EXPECT_TRUE(test::matches_within_roundoff(x.grad(), c.at("dx"), {{"x", c.at("x")}}, gradient))
          << "gradient";
    }
  }
  EXPECT_EQ(checked, 56);
}

// prelu (composed: a compare, a product and a where) and glu (a product with a sigmoid): values
// within a few roundoffs of PyTorch's; the gradients of x too, and prelu's weight gradient sums
// at most 8 products g x per channel in some order on each side: within 2 (8 - 1) u of the sum of
// their magnitudes, which 64 u of max(1, |x|, |want|) covers for |g| < 5 (g ~ N(0, 1)) and
// |x| <= 2 (test::matches_within_roundoff).
TEST(Activations, PreluAndGluMatchPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& c : test::load_reference("activations.json")) {
    const std::string op = c.params.at("op").get<std::string>();
    if (op != "prelu" && op != "glu") continue;
    SCOPED_TRACE(c.name);
    Tensor x = c.at("x").clone().requires_grad_();
    Tensor weight;
    Tensor y;
    if (op == "prelu") {
      weight = c.at("weight").clone().requires_grad_();
      y = prelu(x, weight);
    } else {
      y = glu(x, c.params.at("dim").get<std::int64_t>());
    }
    ASSERT_EQ(y.shape(), c.at("y").shape());
    y.backward(c.at("g"));
    const test::RoundoffMatch value{.ulps = 16, .non_finite = test::NonFinite::Forbidden};
    const test::RoundoffMatch gradient{.ulps = 64, .non_finite = test::NonFinite::Forbidden};
    EXPECT_TRUE(test::matches_within_roundoff(y, c.at("y"), {}, value)) << "value";
    // prelu's dx is g or weight g (|weight| < 1/2), glu's within |g| of the half it came from.
    std::vector<test::NamedInput> scale;
    if (op == "prelu") scale.push_back({"g", c.at("g")});
    EXPECT_TRUE(test::matches_within_roundoff(x.grad(), c.at("dx"), scale, gradient)) << "dx";
    if (weight.defined()) {
      const double g_sum = test::to_vector(c.at("g").abs().sum())[0];
      EXPECT_TRUE(test::all_close(weight.grad(), test::to_vector(c.at("dweight")), 0,
                                  2 * 0x1p-24 * 2 * g_sum * static_cast<double>(x.numel())))
          << "dweight";
    }
    ++checked;
  }
  EXPECT_EQ(checked, 5);
}

// Away from the kinks: first derivatives against central differences, and second derivatives
// (each activation is composed, so it differentiates again).
TEST(Activations, FirstAndSecondDerivativesMatchFiniteDifferences) {
  const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> cases = {
      {"leaky_relu", [](const Tensor& x) { return leaky_relu(x, 0.2) * x; }},
      {"elu", [](const Tensor& x) { return elu(x, 0.7) * x; }},
      {"selu", [](const Tensor& x) { return selu(x) * x; }},
      {"silu", [](const Tensor& x) { return silu(x); }},
      {"mish", [](const Tensor& x) { return mish(x); }},
      {"gelu", [](const Tensor& x) { return gelu(x); }},
      {"gelu tanh", [](const Tensor& x) { return gelu(x, "tanh"); }},
      {"softplus", [](const Tensor& x) { return softplus(x, 1.5, 4.0); }},
      {"hardtanh", [](const Tensor& x) { return hardtanh(x, -0.8, 0.9) * x; }},
      {"hardswish", [](const Tensor& x) { return hardswish(x * 2.0); }},
      {"hardsigmoid", [](const Tensor& x) { return hardsigmoid(x * 2.0) * x; }},
      {"log_sigmoid", [](const Tensor& x) { return log_sigmoid(x); }},
      {"softsign", [](const Tensor& x) { return softsign(x); }},
      {"tanhshrink", [](const Tensor& x) { return tanhshrink(x); }},
      {"celu", [](const Tensor& x) { return celu(x, 0.6); }},
      {"softshrink", [](const Tensor& x) { return softshrink(x, 0.2) * x; }},
      {"hardshrink", [](const Tensor& x) { return hardshrink(x, 0.2) * x; }},
      {"threshold", [](const Tensor& x) { return threshold(x, 0.2, -0.5) * x; }},
      {"erf", [](const Tensor& x) { return erf(x); }},
      {"expm1", [](const Tensor& x) { return expm1(x); }},
      {"log1p", [](const Tensor& x) { return log1p(x * x); }},
  };
  // No element within 0.05 of a kink (0, +-0.8, 0.9, softplus's 4 / 1.5, +-0.2, hardswish's and
  // hardsigmoid's +-3 / 2).
  const Tensor values = test::make_tensor(
      {-2.9, -1.3, -0.61, -0.3, -0.12, 0.07, 0.33, 0.52, 1.4, 2.2, 3.1}, {11}, kFloat64);
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

// Far out the unselected branch of a where would be infinite; its zero gradient must not turn
// into NaN (Note [Activations in one pass] in autograd/activations.cpp).
TEST(Activations, GradientsStayFiniteFarOut) {
  for (const DType dtype : {kFloat32, kFloat64}) {
    SCOPED_TRACE(dtype_name(dtype));
    Tensor x = test::make_tensor({-1e4, -800.0, 800.0, 1e4}, {4}, dtype).requires_grad_();
    const Tensor y = elu(x) + softplus(x) + softplus(x, 3.0, 5.0) + mish(x) + selu(x) + gelu(x) +
                     gelu(x, "tanh") + silu(x) + log_sigmoid(x) + celu(x, 0.5) + softsign(x) +
                     tanhshrink(x);
    y.sum().backward();
    for (double g : test::to_vector(x.grad()))
      EXPECT_TRUE(std::isfinite(g)) << g;
  }
}

TEST(Activations, ModulesCallTheFunctionsWithTheirOptions) {
  const Tensor x = test::make_tensor({-2.0, -0.5, 0.0, 0.5, 3.0, 7.0}, {6}, kFloat64);
  auto same = [](const Tensor& a, const Tensor& b) { return a.equal(b); };
  EXPECT_TRUE(
      same(nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2))(x), leaky_relu(x, 0.2)));
  EXPECT_TRUE(same(nn::LeakyReLU()(x), leaky_relu(x)));
  EXPECT_TRUE(same(nn::ELU(nn::ELUOptions().alpha(0.5))(x), elu(x, 0.5)));
  EXPECT_TRUE(same(nn::SELU()(x), selu(x)));
  EXPECT_TRUE(same(nn::SiLU()(x), silu(x)));
  EXPECT_TRUE(same(nn::Mish()(x), mish(x)));
  EXPECT_TRUE(same(nn::GELU(nn::GELUOptions().approximate("tanh"))(x), gelu(x, "tanh")));
  EXPECT_TRUE(
      same(nn::Softplus(nn::SoftplusOptions().beta(2.0).threshold(3.0))(x), softplus(x, 2.0, 3.0)));
  EXPECT_TRUE(same(nn::Hardtanh(nn::HardtanhOptions().min_val(0.0).max_val(2.0))(x),
                   hardtanh(x, 0.0, 2.0)));
  EXPECT_TRUE(same(nn::ReLU6()(x), relu6(x)));
  EXPECT_TRUE(same(nn::functional::gelu(x), gelu(x)));
  // Values by hand where PyTorch's definition is plain: relu6 and hardtanh clip.
  EXPECT_EQ(test::to_vector(relu6(x)), (std::vector<double>{0, 0, 0, 0.5, 3, 6}));
  std::ostringstream printed;
  nn::Sequential net(nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)),
                     nn::GELU(nn::GELUOptions().approximate("tanh")),
                     nn::Softplus(nn::SoftplusOptions().beta(2.0)), nn::Hardtanh(), nn::ReLU6());
  printed << *net;
  const std::string text = printed.str();
  EXPECT_NE(text.find("LeakyReLU(negative_slope=0.2)"), std::string::npos) << text;
  EXPECT_NE(text.find("GELU(approximate='tanh')"), std::string::npos) << text;
  EXPECT_NE(text.find("Softplus(beta=2, threshold=20)"), std::string::npos) << text;
  EXPECT_NE(text.find("Hardtanh(min_val=-1, max_val=1)"), std::string::npos) << text;
  EXPECT_NE(text.find("ReLU6()"), std::string::npos) << text;
}

TEST(Activations, Session42ModulesCallTheFunctionsAndPrintAsPyTorch) {
  const Tensor x = test::make_tensor({-4.0, -2.0, -0.5, 0.0, 0.5, 3.0, 7.0, 1.0}, {2, 4}, kFloat64);
  auto same = [](const Tensor& a, const Tensor& b) { return a.equal(b); };
  EXPECT_TRUE(same(nn::Hardswish()(x), hardswish(x)));
  EXPECT_TRUE(same(nn::Hardsigmoid()(x), hardsigmoid(x)));
  EXPECT_TRUE(same(nn::LogSigmoid()(x), log_sigmoid(x)));
  EXPECT_TRUE(same(nn::Softsign()(x), softsign(x)));
  EXPECT_TRUE(same(nn::Tanhshrink()(x), tanhshrink(x)));
  EXPECT_TRUE(same(nn::CELU(nn::CELUOptions().alpha(0.5))(x), celu(x, 0.5)));
  EXPECT_TRUE(same(nn::Softshrink(0.25)(x), softshrink(x, 0.25)));
  EXPECT_TRUE(same(nn::Hardshrink()(x), hardshrink(x, 0.5)));
  EXPECT_TRUE(same(nn::Threshold(nn::ThresholdOptions(0.1, 20.0))(x), threshold(x, 0.1, 20.0)));
  EXPECT_TRUE(same(nn::GLU(0)(x), glu(x, 0)));
  EXPECT_TRUE(same(nn::functional::logsigmoid(x), log_sigmoid(x)));
  // Values by hand where the definition is plain.
  EXPECT_EQ(test::to_vector(hardshrink(x, 0.5)), (std::vector<double>{-4, -2, 0, 0, 0, 3, 7, 1}));
  EXPECT_EQ(test::to_vector(threshold(x, 0.5, 9.0)), (std::vector<double>{9, 9, 9, 9, 9, 3, 7, 1}));
  EXPECT_EQ(test::to_vector(hardsigmoid(x)),
            (std::vector<double>{0, 1.0 / 6, 2.5 / 6, 0.5, 3.5 / 6, 1, 1, 4.0 / 6}));
  // PReLU: a weight of num_parameters filled with init, learnable, one per channel.
  nn::PReLU prelu_module(nn::PReLUOptions().num_parameters(4).init(0.1));
  ASSERT_EQ(prelu_module->named_parameters().size(), 1u);
  EXPECT_EQ(prelu_module->weight.shape(), Shape({4}));
  EXPECT_TRUE(prelu_module->weight.equal(full({4}, 0.1)));
  const Tensor xf = x.to(kFloat32);
  EXPECT_TRUE(same(prelu_module(xf), prelu(xf, prelu_module->weight)));
  EXPECT_THROW(prelu_module(ones({2, 3})), ShapeError);  // 3 channels, 4 weights
  std::ostringstream printed;
  nn::Sequential net(nn::Hardswish(), nn::CELU(), nn::Softshrink(), nn::Hardshrink(0.25),
                     nn::Threshold(nn::ThresholdOptions(0.1, 20.0)), nn::PReLU(), nn::GLU(),
                     nn::LogSigmoid());
  printed << *net;
  const std::string text = printed.str();
  for (const char* repr : {"Hardswish()", "CELU(alpha=1)", "Softshrink(0.5)", "Hardshrink(0.25)",
                           "Threshold(threshold=0.1, value=20)", "PReLU(num_parameters=1)",
                           "GLU(dim=-1)", "LogSigmoid()"}) {
    EXPECT_NE(text.find(repr), std::string::npos) << repr << " in " << text;
  }
}

// prelu and glu differentiate twice (composed): gradcheck and gradgradcheck, away from prelu's
// kink at 0.
TEST(Activations, PreluAndGluDerivativesMatchFiniteDifferences) {
  const Tensor x = test::away_from_zero_input({2, 3, 4}, 0.1, 1.5, 3);
  const Tensor weight = test::uniform_input({3}, -0.5, 0.5, 4);
  const auto prelu_fn = [](const std::vector<Tensor>& in) { return prelu(in[0], in[1]) * in[0]; };
  EXPECT_TRUE(test::gradcheck(prelu_fn, {x, weight}));
  EXPECT_TRUE(test::gradgradcheck(prelu_fn, {x, weight}));
  const auto glu_fn = [](const std::vector<Tensor>& in) { return glu(in[0], 2); };
  EXPECT_TRUE(test::gradcheck(glu_fn, {x}));
  EXPECT_TRUE(test::gradgradcheck(glu_fn, {x}));
}

}  // namespace
}  // namespace leangrad
