// kl_div, poisson_nll_loss and gaussian_nll_loss (autograd/losses.h): values and every operand's
// gradient against PyTorch 1.13 at their special points, with broadcasting and the reductions
// (tests/data/distribution_losses.json, written by make_distribution_losses.py), gradchecks to
// second order, and the modules. Bad arguments are rows of the misuse table
// (tests/misuse/test_misuse_nn_functions.cpp, DistributionLosses).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <leangrad/autograd/autocast.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/losses.h>
#include <leangrad/core/shape.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/nn.h>
#include "testing/gradcheck.h"
#include "testing/loss_reference.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using Operands = std::map<std::string, Tensor>;
using LossFn = std::function<Tensor(const Operands&)>;

using test::reduction_named;

// The loss a case of distribution_losses.json names, with its parameters.
LossFn loss_of(const test::ReferenceCase& c) {
  const nlohmann::json& p = c.params;
  const std::string op = p.at("op").get<std::string>();
  const std::string red = p.at("reduction").get<std::string>();
  if (op == "kl_div") {
    const KLDivReduction r = red == "batchmean" ? KLDivReduction::BatchMean
                             : red == "sum"     ? KLDivReduction::Sum
                             : red == "mean"    ? KLDivReduction::Mean
                                                : KLDivReduction::None;
    const bool log_target = p.at("log_target").get<bool>();
    return [r, log_target](const Operands& in) {
      return kl_div(in.at("x"), in.at("t"), r, log_target);
    };
  }
  const Reduction r = reduction_named(red);
  const double eps = p.at("eps").get<double>();
  const bool full = p.at("full").get<bool>();
  if (op == "poisson_nll_loss") {
    const bool log_input = p.at("log_input").get<bool>();
    return [=](const Operands& in) {
      return poisson_nll_loss(in.at("x"), in.at("t"), log_input, full, eps, r);
    };
  }
  if (op == "gaussian_nll_loss")
    return [=](const Operands& in) {
      return gaussian_nll_loss(in.at("x"), in.at("t"), in.at("var"), full, eps, r);
    };
  ADD_FAILURE() << "distribution_losses.json has an op this test does not know: " << op;
  return [](const Operands& in) { return in.at("x"); };
}

std::int64_t numel_of(const Shape& s) {
  std::int64_t n = 1;
  for (std::int64_t d : s)
    n *= d;
  return n;
}

TEST(DistributionLosses, MatchPyTorch) {
  const std::vector<test::ReferenceCase> cases = test::load_reference("distribution_losses.json");
  ASSERT_EQ(cases.size(), 42u);
  for (const test::ReferenceCase& c : cases) {
    SCOPED_TRACE(c.name);
    const LossFn loss = loss_of(c);
    std::vector<std::string> names = {"x", "t"};
    if (c.tensors.count("var")) names.push_back("var");
    Operands in;
    for (const std::string& name : names)
      in[name] = c.at(name).clone().requires_grad_();
    // The operands as they broadcast: a var without the input's last dim gets it back.
    test::ReferenceCase broadcast = c;
    if (c.tensors.count("var") && c.at("var").dim() < c.at("x").dim())
      broadcast.tensors["var"] = c.at("var").unsqueeze(-1);
    Shape shape;
    for (const std::string& name : names)
      shape = broadcast_shapes(shape, broadcast.at(name).shape(), "test");
    const Tensor y = loss(in);
    ASSERT_EQ(y.dtype(), c.at("x").dtype());
    (y * c.at("w")).sum().backward();
    // Per output element, the terms' magnitude; a reduction adds numel of them, an operand
    // broadcast over k elements gets k of them in each gradient element.
    const std::vector<double> scale = test::loss_term_scale(broadcast, names, shape);
    const double largest = *std::max_element(scale.begin(), scale.end());
    const double n = static_cast<double>(numel_of(shape));
    test::expect_matches_reference(y, c.at("y"), scale, n * largest, 16, "value");
    for (const std::string& name : names) {
      const double k = n / static_cast<double>(c.at(name).numel());
      test::expect_matches_reference(in[name].grad(), c.at("d" + name), scale, k * largest, 32,
                                     "gradient of " + name);
    }
  }
}

// Reduction's three give KLDivReduction's, and batchmean is the sum over the first size.
TEST(DistributionLosses, KLDivReductions) {
  const Tensor x = test::make_tensor({-1.0, -0.3, -2.0, -0.7, -1.5, -0.1}, {3, 2}, kFloat64);
  const Tensor t = test::make_tensor({0.2, 0.8, 0.5, 0.5, 0.0, 1.0}, {3, 2}, kFloat64);
  for (const auto& [r, k] :
       std::vector<std::pair<Reduction, KLDivReduction>>{{Reduction::None, KLDivReduction::None},
                                                         {Reduction::Sum, KLDivReduction::Sum},
                                                         {Reduction::Mean, KLDivReduction::Mean}})
    EXPECT_TRUE(kl_div(x, t, r).equal(kl_div(x, t, k)));
  EXPECT_TRUE(kl_div(x, t).equal(kl_div(x, t, KLDivReduction::Mean)));
  EXPECT_NEAR(kl_div(x, t, KLDivReduction::BatchMean).item<double>(),
              kl_div(x, t, KLDivReduction::Sum).item<double>() / 3.0, 4 * 0x1p-53);
}

// Away from the special points: first and second derivatives in every operand against central
// differences (var above eps, rates above 0, targets above 1 where full adds Stirling's term).
TEST(DistributionLosses, FirstAndSecondDerivativesMatchFiniteDifferences) {
  using Fn = std::function<Tensor(const std::vector<Tensor>&)>;
  const Tensor logp = test::make_tensor({-1.2, -0.4, -2.5, -0.05, -3.0, -0.9}, {2, 3}, kFloat64);
  const Tensor logq = test::make_tensor({-0.7, -1.9, -0.2, -2.2, -0.6, -1.1}, {2, 3}, kFloat64);
  const Tensor p = test::make_tensor({0.3, 0.6, 0.1, 0.9, 0.05, 0.4}, {2, 3}, kFloat64);
  const Tensor rate = test::make_tensor({0.4, 1.7, 2.5, 0.9, 3.1, 0.6}, {2, 3}, kFloat64);
  const Tensor count = test::make_tensor({1.5, 2.0, 4.0, 1.25, 3.0, 7.0}, {2, 3}, kFloat64);
  const Tensor mu = test::make_tensor({0.3, -1.2, 2.0, 0.4, 5.0, -0.5}, {2, 3}, kFloat64);
  const Tensor y = test::make_tensor({0.1, -0.2, 1.4, 0.9, 4.0, 0.5}, {2, 3}, kFloat64);
  const Tensor var = test::make_tensor({0.5, 1.3}, {2, 1}, kFloat64);
  const std::vector<std::tuple<const char*, Fn, std::vector<Tensor>>> cases = {
      {"kl_div",
       [](const std::vector<Tensor>& in) {
         return kl_div(in[0], in[1], KLDivReduction::BatchMean);
       },
       {logp, p}},
      {"kl_div_log_target",
       [](const std::vector<Tensor>& in) {
         return kl_div(in[0], in[1], Reduction::None, /*log_target=*/true);
       },
       {logp, logq}},
      {"poisson_log_input_full",
       [](const std::vector<Tensor>& in) {
         return poisson_nll_loss(in[0], in[1], true, true, 1e-8, Reduction::None);
       },
       {logp, count}},
      {"poisson_rate_full",
       [](const std::vector<Tensor>& in) {
         return poisson_nll_loss(in[0], in[1], false, true, 1e-8, Reduction::Sum);
       },
       {rate, count}},
      {"gaussian",
       [](const std::vector<Tensor>& in) {
         return gaussian_nll_loss(in[0], in[1], in[2], true, 1e-6, Reduction::None);
       },
       {mu, y, var}},
  };
  for (const auto& [name, f, inputs] : cases) {
    SCOPED_TRACE(name);
    std::vector<Tensor> in;
    for (const Tensor& v : inputs)
      in.push_back(v.clone().requires_grad_());
    EXPECT_TRUE(test::gradcheck(f, in));
    EXPECT_TRUE(test::gradgradcheck(f, in));
  }
}

// gaussian_nll_loss's clamp at eps passes the gradient straight through, as PyTorch's in-place
// clamp under no_grad: below eps the var gradient is that of the loss at var = eps,
// 0.5 * (1 / eps - d^2 / eps^2), not 0.
TEST(DistributionLosses, GaussianVarClampPassesTheGradientThrough) {
  Tensor v = test::make_tensor({1e-9, 0.0, 0.25}, {3}, kFloat64).requires_grad_();
  const Tensor x = test::make_tensor({0.5, 0.0, 1.0}, {3}, kFloat64);
  const Tensor t = test::make_tensor({0.0, 0.001, 0.0}, {3}, kFloat64);
  const double eps = 0.01;
  gaussian_nll_loss(x, t, v, false, eps, Reduction::Sum).backward();
  const std::vector<double> g = test::to_vector(v.grad());
  const std::vector<double> want = {0.5 * (1 / eps - 0.25 / (eps * eps)),
                                    0.5 * (1 / eps - 1e-6 / (eps * eps)),
                                    0.5 * (1 / 0.25 - 1.0 / (0.25 * 0.25))};
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_NEAR(g[i], want[i], 8 * 0x1p-53 * std::abs(want[i])) << i;
}

// Under autocast the three run in float32 (Note [Autocast policy]): bfloat16 operands are cast
// first, so the products and differences are not rounded to bfloat16 on the way.
TEST(DistributionLosses, RunInFloat32UnderAutocast) {
  const Tensor x = test::make_tensor({-1.3, -0.2, -2.7, -0.6}, {4}, kBFloat16);
  const Tensor t = test::make_tensor({0.3, 0.1, 1.7, 0.6}, {4}, kBFloat16);
  const Tensor v = test::make_tensor({0.7, 1.9, 0.3, 1.1}, {4}, kBFloat16);
  const Tensor x32 = x.to(kFloat32), t32 = t.to(kFloat32), v32 = v.to(kFloat32);
  const Tensor want_kl = kl_div(x32, t32, Reduction::None);
  const Tensor want_log_kl = kl_div(x32, t32, Reduction::None, true);
  const Tensor want_poisson = poisson_nll_loss(x32, t32, true, true, 1e-8, Reduction::None);
  const Tensor want_gaussian = gaussian_nll_loss(x32, t32, v32, true, 1e-6, Reduction::None);
  amp::AutocastGuard autocast(kBFloat16);
  EXPECT_TRUE(kl_div(x, t, Reduction::None).equal(want_kl));
  EXPECT_TRUE(kl_div(x, t, Reduction::None, true).equal(want_log_kl));
  EXPECT_TRUE(poisson_nll_loss(x, t, true, true, 1e-8, Reduction::None).equal(want_poisson));
  EXPECT_TRUE(gaussian_nll_loss(x, t, v, true, 1e-6, Reduction::None).equal(want_gaussian));
}

// The modules call the functions with their options.
TEST(DistributionLosses, ModulesCallTheFunctionsWithTheirOptions) {
  const Tensor x = test::make_tensor({-0.2, -0.7, -1.4, -0.9}, {2, 2}, kFloat64);
  const Tensor t = test::make_tensor({0.3, 1.0, 2.0, 0.5}, {2, 2}, kFloat64);
  const Tensor v = test::make_tensor({0.5, 2.0}, {2}, kFloat64);
  nn::KLDivLoss kl(nn::KLDivLossOptions().reduction(KLDivReduction::BatchMean).log_target(true));
  EXPECT_TRUE(kl(x, t).equal(kl_div(x, t, KLDivReduction::BatchMean, true)));
  nn::PoissonNLLLoss poisson(
      nn::PoissonNLLLossOptions().log_input(false).full(true).eps(0.5).reduction(Reduction::Sum));
  EXPECT_TRUE(poisson(t, t).equal(poisson_nll_loss(t, t, false, true, 0.5, Reduction::Sum)));
  nn::GaussianNLLLoss gaussian(nn::GaussianNLLLossOptions().full(true).eps(0.25));
  EXPECT_TRUE(gaussian(x, t, v).equal(gaussian_nll_loss(x, t, v, true, 0.25, Reduction::Mean)));
  EXPECT_EQ(kl->extra_repr(), "reduction=batchmean, log_target=true");
  EXPECT_EQ(nn::KLDivLoss()->extra_repr(), "reduction=mean, log_target=false");
  EXPECT_EQ(poisson->extra_repr(), "reduction=sum, log_input=false, full=true, eps=0.5");
  EXPECT_EQ(gaussian->extra_repr(), "reduction=mean, full=true, eps=0.25");
}

}  // namespace
}  // namespace leangrad
