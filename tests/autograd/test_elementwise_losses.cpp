// binary_cross_entropy, binary_cross_entropy_with_logits, smooth_l1_loss and huber_loss
// (autograd/losses.h): values and input and target gradients against PyTorch 1.13 at their
// special points (tests/data/elementwise_losses.json, written by make_elementwise_losses.py), the
// reductions, gradchecks to second order, and the modules. Bad arguments are rows of the misuse
// tables (tests/misuse/test_misuse_nn_functions.cpp, test_misuse_nn_modules.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/losses.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/nn.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using LossFn = std::function<Tensor(const Tensor&, const Tensor&, Reduction)>;

// The loss a case of elementwise_losses.json names, with its weights and parameters.
LossFn loss_of(const test::ReferenceCase& c) {
  const std::string op = c.params.at("op").get<std::string>();
  const Tensor weight = c.tensors.count("weight") ? c.at("weight") : Tensor();
  const Tensor pos_weight = c.tensors.count("pos_weight") ? c.at("pos_weight") : Tensor();
  if (op == "bce")
    return [weight](const Tensor& x, const Tensor& t, Reduction r) {
      return binary_cross_entropy(x, t, r, weight);
    };
  if (op == "bce_with_logits")
    return [weight, pos_weight](const Tensor& x, const Tensor& t, Reduction r) {
      return binary_cross_entropy_with_logits(x, t, r, weight, pos_weight);
    };
  if (op == "smooth_l1") {
    const double beta = c.params.at("beta").get<double>();
    return [beta](const Tensor& x, const Tensor& t, Reduction r) {
      return smooth_l1_loss(x, t, r, beta);
    };
  }
  if (op == "huber") {
    const double delta = c.params.at("delta").get<double>();
    return [delta](const Tensor& x, const Tensor& t, Reduction r) {
      return huber_loss(x, t, r, delta);
    };
  }
  ADD_FAILURE() << "elementwise_losses.json has an op this test does not know: " << op;
  return [](const Tensor& x, const Tensor&, Reduction) { return x; };
}

// Each value and gradient against PyTorch's (test::matches_within_roundoff): non-finite ones
// exactly (an infinite target gradient at a probability of 0 or 1), finite ones within 16 u
// (values) or 32 u (gradients) of max(1, |x|, |t|, |result|). Both sides evaluate the same few
// correctly rounded operations and libm logs and exps, in their own order (PyTorch's softplus as
// max + log(exp + exp), ours as log1p(exp(-|x|)) + max): a few u of that magnitude apart. A wrong
// formula, clamp or branch is off by O(1).
TEST(ElementwiseLosses, MatchPyTorch) {
  const std::vector<test::ReferenceCase> cases = test::load_reference("elementwise_losses.json");
  ASSERT_EQ(cases.size(), 18u);
  for (const test::ReferenceCase& c : cases) {
    SCOPED_TRACE(c.name);
    const LossFn loss = loss_of(c);
    Tensor x = c.at("x").clone().requires_grad_();
    Tensor t = c.at("t").clone().requires_grad_();
    const Tensor y = loss(x, t, Reduction::None);
    ASSERT_EQ(y.shape(), c.at("y").shape());
    ASSERT_EQ(y.dtype(), x.dtype());
    (y * c.at("w")).sum().backward();
    const std::vector<test::NamedInput> at = {{"x", c.at("x")}, {"t", c.at("t")}};
    const test::RoundoffMatch value{.ulps = 16, .non_finite = test::NonFinite::MustMatch};
    const test::RoundoffMatch gradient{.ulps = 32, .non_finite = test::NonFinite::MustMatch};
    EXPECT_TRUE(test::matches_within_roundoff(y, c.at("y"), at, value)) << "value";
    EXPECT_TRUE(test::matches_within_roundoff(x.grad(), c.at("dx"), at, gradient))
        << "input gradient";
    EXPECT_TRUE(test::matches_within_roundoff(t.grad(), c.at("dt"), at, gradient))
        << "target gradient";
  }
}

// Sum adds the per-element losses and Mean averages them (no weight normalisation, unlike the
// class losses'), with the gradient spread accordingly.
TEST(ElementwiseLosses, ReductionsSumAndAverageTheElements) {
  for (const test::ReferenceCase& c : test::load_reference("elementwise_losses.json")) {
    if (c.at("x").dtype() != kFloat64) continue;
    SCOPED_TRACE(c.name);
    const LossFn loss = loss_of(c);
    const std::vector<double> none = test::to_vector(loss(c.at("x"), c.at("t"), Reduction::None));
    double total = 0;
    for (double v : none)
      total += v;
    const double n = static_cast<double>(none.size());
    // n additions in another order: at most n u of the sum of magnitudes apart.
    double magnitude = 0;
    for (double v : none)
      magnitude += std::abs(v);
    const double bound = n * 0x1p-53 * std::max(1.0, magnitude);
    if (!std::isfinite(total)) continue;
    EXPECT_NEAR(loss(c.at("x"), c.at("t"), Reduction::Sum).item<double>(), total, bound);
    EXPECT_NEAR(loss(c.at("x"), c.at("t"), Reduction::Mean).item<double>(), total / n, bound / n);
    Tensor x = c.at("x").clone().requires_grad_();
    loss(x, c.at("t"), Reduction::Mean).backward();
    Tensor x_none = c.at("x").clone().requires_grad_();
    (loss(x_none, c.at("t"), Reduction::None).sum() / n).backward();
    const std::vector<double> g = test::to_vector(x.grad()),
                              g_none = test::to_vector(x_none.grad());
    for (std::size_t i = 0; i < g.size(); ++i)
      EXPECT_NEAR(g[i], g_none[i], 4 * 0x1p-53 * std::max(1.0, std::abs(g_none[i])));
  }
}

// Away from the kinks and the clamps: first and second derivatives, in the input, the target
// and the weights, against central differences.
TEST(ElementwiseLosses, FirstAndSecondDerivativesMatchFiniteDifferences) {
  using Fn = std::function<Tensor(const std::vector<Tensor>&)>;
  const Tensor p = test::make_tensor({0.12, 0.37, 0.5, 0.81, 0.66, 0.23}, {2, 3}, kFloat64);
  const Tensor t = test::make_tensor({0.0, 1.0, 0.3, 0.9, 0.5, 1.0}, {2, 3}, kFloat64);
  const Tensor logits = test::make_tensor({-2.3, -0.4, 0.0, 0.7, 1.9, 4.1}, {2, 3}, kFloat64);
  const Tensor w = test::make_tensor({0.5, 1.5, 2.0}, {3}, kFloat64);
  const Tensor d = test::make_tensor({-2.6, -0.8, 0.1, 0.45, 1.3, 3.2}, {2, 3}, kFloat64);
  const Tensor zero = zeros({2, 3}, kFloat64);
  const std::vector<std::tuple<const char*, Fn, std::vector<Tensor>>> cases = {
      {"bce",
       [w](const std::vector<Tensor>& in) {
         return binary_cross_entropy(in[0], in[1], Reduction::None, w);
       },
       {p, t}},
      {"bce_with_logits",
       [](const std::vector<Tensor>& in) {
         return binary_cross_entropy_with_logits(in[0], in[1], Reduction::Mean, in[2], in[3]);
       },
       {logits, t, w, test::make_tensor({1.5, 0.25, 3.0}, {3}, kFloat64)}},
      {"smooth_l1",
       [](const std::vector<Tensor>& in) {
         return smooth_l1_loss(in[0], in[1], Reduction::Sum, 0.7);
       },
       {d, zero}},
      {"huber",
       [](const std::vector<Tensor>& in) { return huber_loss(in[0], in[1], Reduction::None, 1.1); },
       {d, zero + 0.05}},
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

// Far out the logits' exp would overflow; the loss and its gradient stay finite.
TEST(ElementwiseLosses, WithLogitsStaysFiniteFarOut) {
  for (const DType dtype : {kFloat32, kFloat64}) {
    SCOPED_TRACE(dtype_name(dtype));
    Tensor x = test::make_tensor({-1e4, -800.0, 800.0, 1e4}, {4}, dtype).requires_grad_();
    const Tensor t = test::make_tensor({1.0, 0.0, 0.5, 1.0}, {4}, dtype);
    const Tensor y = binary_cross_entropy_with_logits(x, t, Reduction::Sum);
    EXPECT_TRUE(std::isfinite(y.item<double>()));
    y.backward();
    EXPECT_TRUE(test::all_close(x.grad(), {-1.0, 0.0, 0.5, 0.0}));
  }
}

// The modules call the functions with their options; weights are buffers.
TEST(ElementwiseLosses, ModulesCallTheFunctionsWithTheirOptions) {
  const Tensor x = test::make_tensor({0.2, 0.7, 0.4, 0.9}, {2, 2}, kFloat64);
  const Tensor t = test::make_tensor({0.0, 1.0, 1.0, 0.5}, {2, 2}, kFloat64);
  const Tensor w = test::make_tensor({2.0, 0.5}, {2}, kFloat64);
  auto same = [](const Tensor& a, const Tensor& b) { return a.equal(b); };
  nn::BCELoss bce(nn::BCELossOptions().weight(w).reduction(Reduction::Sum));
  EXPECT_TRUE(same(bce(x, t), binary_cross_entropy(x, t, Reduction::Sum, w)));
  EXPECT_EQ(bce->named_buffers().size(), 1u);
  nn::BCEWithLogitsLoss logits_loss(nn::BCEWithLogitsLossOptions().pos_weight(w));
  EXPECT_TRUE(same(logits_loss(x, t),
                   binary_cross_entropy_with_logits(x, t, Reduction::Mean, Tensor(), w)));
  EXPECT_EQ(logits_loss->named_buffers().size(), 1u);
  nn::SmoothL1Loss smooth(nn::SmoothL1LossOptions().beta(0.3).reduction(Reduction::None));
  EXPECT_TRUE(same(smooth(x, t), smooth_l1_loss(x, t, Reduction::None, 0.3)));
  nn::HuberLoss huber(nn::HuberLossOptions().delta(0.4));
  EXPECT_TRUE(same(huber(x, t), huber_loss(x, t, Reduction::Mean, 0.4)));
  EXPECT_EQ(bce->extra_repr(), "reduction=sum, weight=[2]");
  EXPECT_EQ(logits_loss->extra_repr(), "reduction=mean, pos_weight=[2]");
  EXPECT_EQ(smooth->extra_repr(), "reduction=none, beta=0.3");
  EXPECT_EQ(huber->extra_repr(), "reduction=mean, delta=0.4");
}

}  // namespace
}  // namespace leangrad
