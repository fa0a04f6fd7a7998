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
  ASSERT_GE(cases.size(), 34u);
  for (const test::ReferenceCase& c : cases) {
    SCOPED_TRACE(c.name);
    const auto f = function_of(c);
    Tensor x = c.at("x").clone().requires_grad_();
    const Tensor y = f(x);
    ASSERT_EQ(y.dtype(), x.dtype());
    (y * c.at("w")).sum().backward();
    // activations.json has no NaN or infinity: every function is finite at its points.
    const test::RoundoffMatch value{.ulps = 16, .non_finite = test::NonFinite::Forbidden};
    const test::RoundoffMatch gradient{.ulps = 32, .non_finite = test::NonFinite::Forbidden};
    EXPECT_TRUE(test::matches_within_roundoff(y, c.at("y"), {{"x", c.at("x")}}, value)) << "value";
    EXPECT_TRUE(test::matches_within_roundoff(x.grad(), c.at("dx"), {{"x", c.at("x")}}, gradient))
        << "gradient";
  }
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
      {"erf", [](const Tensor& x) { return erf(x); }},
      {"expm1", [](const Tensor& x) { return expm1(x); }},
      {"log1p", [](const Tensor& x) { return log1p(x * x); }},
  };
  // No element within 0.05 of a kink (0, +-0.8, 0.9, softplus's 4 / 1.5).
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
                     gelu(x, "tanh") + silu(x);
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

}  // namespace
}  // namespace leangrad
