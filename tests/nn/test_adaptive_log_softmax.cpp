// nn::AdaptiveLogSoftmaxWithLoss (nn/adaptive.h): against PyTorch 1.13 with its parameters loaded
// by name (tests/data/adaptive_log_softmax.json, written by make_adaptive_log_softmax.py:
// forward's output and loss, log_prob, predict, and the loss's gradients, float64), against the
// definition (the log-probabilities of all classes sum to 1; each target's output is its
// log_prob entry), by finite differences, and its structure (parameter names and shapes,
// PyTorch's). Bad arguments: the AdaptiveLogSoftmax table of
// tests/misuse/test_misuse_nn_layers.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/creation.h>
#include <leangrad/nn/adaptive.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

// float64 on both sides: log-softmaxes over at most 20 entries of magnitude below ~10, a gather
// and a mean of 12; their gradients likewise. 2^-40 is hundreds of ulps of every value here.
constexpr double kAtol = 0x1p-40;

nn::AdaptiveLogSoftmaxWithLoss module_of(const test::ReferenceCase& c) {
  const auto& p = c.params;
  nn::AdaptiveLogSoftmaxWithLoss asm_(
      nn::AdaptiveLogSoftmaxWithLossOptions(p.at("in_features").get<std::int64_t>(),
                                            p.at("n_classes").get<std::int64_t>(),
                                            p.at("cutoffs").get<std::vector<std::int64_t>>())
          .div_value(p.at("div_value").get<double>())
          .head_bias(p.at("head_bias").get<bool>()));
  asm_->to(kFloat64);
  const NoGradGuard no_grad;
  const auto names = p.at("parameters").get<std::vector<std::string>>();
  const auto params = asm_->named_parameters();
  EXPECT_EQ(params.size(), names.size());
  for (const std::string& name : names) {
    const Tensor* mine = params.find(name);
    EXPECT_NE(mine, nullptr) << name;
    if (mine == nullptr) continue;
    EXPECT_EQ(mine->shape(), c.at(name).shape()) << name;
    Tensor(*mine).copy_(c.at(name));
  }
  return asm_;
}

TEST(AdaptiveLogSoftmax, MatchesPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& c : test::load_reference("adaptive_log_softmax.json")) {
    SCOPED_TRACE(c.name);
    nn::AdaptiveLogSoftmaxWithLoss asm_ = module_of(c);
    const Tensor input = c.at("input").clone().requires_grad_();
    const nn::ASMoutput out = asm_(input, c.at("target"));
    ASSERT_EQ(out.output.shape(), c.at("output").shape());
    EXPECT_EQ(out.loss.dim(), 0);
    EXPECT_TRUE(test::all_close(out.output, test::to_vector(c.at("output")), 0, kAtol));
    EXPECT_TRUE(test::all_close(out.loss, test::to_vector(c.at("loss")), 0, kAtol));
    out.loss.backward();
    EXPECT_TRUE(test::all_close(input.grad(), test::to_vector(c.at("dinput")), 0, kAtol));
    for (const auto& [name, param] : asm_->named_parameters()) {
      SCOPED_TRACE(name);
      // A tail no target reached has no gradient (PyTorch's None, zeros in the data).
      const Tensor grad = param.grad().defined() ? param.grad() : zeros_like(param);
      EXPECT_TRUE(test::all_close(grad, test::to_vector(c.at("d" + name)), 0, kAtol));
    }
    const Tensor batch = input.dim() == 1 ? input.detach().unsqueeze(0) : input.detach();
    EXPECT_TRUE(
        test::all_close(asm_->log_prob(batch), test::to_vector(c.at("log_prob")), 0, kAtol));
    const Tensor predicted = asm_->predict(batch);
    EXPECT_EQ(predicted.dtype(), kInt64);
    EXPECT_TRUE(test::all_close(predicted, test::to_vector(c.at("predict")), 0, 0));
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

TEST(AdaptiveLogSoftmax, IsADistributionOverTheClasses) {
  manual_seed(4711);
  nn::AdaptiveLogSoftmaxWithLoss asm_(
      nn::AdaptiveLogSoftmaxWithLossOptions(12, 30, {5, 12, 20}).div_value(2.0).head_bias(true));
  asm_->to(kFloat64);
  const Tensor input = test::uniform_input({9, 12}, -2, 2, 4712).detach();
  const Tensor log_prob = asm_->log_prob(input);
  ASSERT_EQ(log_prob.shape(), (Shape{9, 30}));
  // Each row's probabilities sum to 1 (within a few ulps of 30 terms).
  EXPECT_TRUE(test::all_close(exp(log_prob).sum({1}), std::vector<double>(9, 1.0), 0, 1e-13));
  // forward's output is each target's entry of log_prob, one target in every cluster.
  const std::vector<std::int64_t> targets{0, 4, 5, 11, 12, 19, 20, 29, 7};
  const nn::ASMoutput out = asm_(input, tensor(targets, {9}));
  const std::vector<double> lp = test::to_vector(log_prob), o = test::to_vector(out.output);
  double total = 0;
  for (std::size_t r = 0; r < targets.size(); ++r) {
    EXPECT_NEAR(o[r], lp[r * 30 + static_cast<std::size_t>(targets[r])], 1e-13) << "row " << r;
    total += o[r];
  }
  EXPECT_NEAR(out.loss.item<double>(), -total / 9.0, 1e-13);
  // predict is the argmax of log_prob.
  const std::vector<double> best = test::to_vector(argmax(log_prob, 1));
  EXPECT_TRUE(test::all_close(asm_->predict(input), best, 0, 0));
}

TEST(AdaptiveLogSoftmax, HasPyTorchsStructure) {
  nn::AdaptiveLogSoftmaxWithLoss asm_(16, 100, std::vector<std::int64_t>{10, 40});
  std::vector<std::string> names;
  std::vector<Shape> shapes;
  for (const auto& [name, param] : asm_->named_parameters()) {
    names.push_back(name);
    shapes.push_back(param.shape());
  }
  // div_value 4: hidden sizes 16 / 4 = 4 and 16 / 16 = 1; no head bias by default.
  EXPECT_EQ(names, (std::vector<std::string>{"head.weight", "tail.0.0.weight", "tail.0.1.weight",
                                             "tail.1.0.weight", "tail.1.1.weight"}));
  EXPECT_EQ(shapes, (std::vector<Shape>{{12, 16}, {4, 16}, {30, 4}, {1, 16}, {60, 1}}));
  EXPECT_EQ(asm_->cutoffs, (std::vector<std::int64_t>{10, 40, 100}));
  EXPECT_EQ(asm_->shortlist_size, 10);
  EXPECT_EQ(asm_->n_clusters, 2);
  EXPECT_EQ(asm_->head_size, 12);
}

TEST(AdaptiveLogSoftmaxGrad, FiniteDifferences) {
  manual_seed(4713);
  nn::AdaptiveLogSoftmaxWithLoss asm_(
      nn::AdaptiveLogSoftmaxWithLossOptions(6, 11, {3, 7}).div_value(2.0).head_bias(true));
  asm_->to(kFloat64);
  const Tensor target = tensor(std::vector<std::int64_t>{0, 5, 9, 2, 10}, {5});
  EXPECT_TRUE(
      test::gradcheck([&](const std::vector<Tensor>& in) { return asm_(in[0], target).output; },
                      {test::uniform_input({5, 6}, -1, 1, 4714)}));
  EXPECT_TRUE(test::gradcheck([&](const std::vector<Tensor>& in) { return asm_->log_prob(in[0]); },
                              {test::uniform_input({3, 6}, -1, 1, 4715)}));
}

}  // namespace
}  // namespace leangrad
