// ctc_loss and nn::CTCLoss (autograd/ctc_loss.h, kernels/ctc.cpp): against PyTorch
// 1.13 (tests/data/ctc_loss.json, written by make_ctc_loss.py: losses and the gradients of logits
// through log_softmax, float64), against the definition (the sum over every alignment, enumerated
// by brute force for short inputs), and by finite differences in log_probs. Bad arguments: the
// CTCLoss table of tests/misuse/test_misuse_nn_layers.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <leangrad/autograd/ctc_loss.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/nn/loss.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using test::reduction_named;

// float64 on both sides: PyTorch's log-sum-exps against leangrad's scaled sums (or its own
// log-sum-exps where a sum leaves double's range) over at most 30 steps of 19 states, losses
// below 60 (and one of 803, a few units of roundoff of which stay below the bound): within 2^-40
// of each other, gradients too.
constexpr double kAtol = 0x1p-40;

TEST(CtcLoss, MatchesPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& c : test::load_reference("ctc_loss.json")) {
    SCOPED_TRACE(c.name);
    const auto& p = c.params;
    const Tensor x = c.at("x").clone().requires_grad_();
    const Tensor y = ctc_loss(log_softmax(x, x.dim() - 1), c.at("targets"), c.at("input_lengths"),
                              c.at("target_lengths"), p.at("blank").get<std::int64_t>(),
                              reduction_named(p.at("reduction").get<std::string>()),
                              p.at("zero_infinity").get<bool>());
    ASSERT_EQ(y.shape(), c.at("y").shape());
    EXPECT_TRUE(test::all_close(y, test::to_vector(c.at("y")), 0, kAtol));
    if (c.tensors.count("dx")) {
      sum(mul(y, c.at("w"))).backward();
      EXPECT_TRUE(test::all_close(x.grad(), test::to_vector(c.at("dx")), 0, kAtol));
    }
    ++checked;
  }
  EXPECT_EQ(checked, 8);
}

// The definition: p(target | input) sums, over every path of T symbols (blank included) that
// collapses (repeats merged, then blanks removed) to the target, the product of the path's
// probabilities. Enumerated here for T = 5 and C = 3 (3^5 paths per sample).
TEST(CtcLoss, IsTheSumOverAlignments) {
  const std::int64_t steps = 5, batch = 3, classes = 3;
  const Tensor lp =
      log_softmax(test::uniform_input({steps, batch, classes}, -2, 2, 1000), 2).detach();
  const std::vector<double> lpv = test::to_vector(lp);
  const std::vector<std::vector<std::int64_t>> targets = {{1, 2}, {1, 1}, {2}};
  const std::vector<std::int64_t> input_lengths = {5, 4, 5};
  std::vector<double> expected;
  for (std::int64_t n = 0; n < batch; ++n) {
    const std::int64_t t_len = input_lengths[static_cast<std::size_t>(n)];
    double total = 0;
    std::vector<std::int64_t> path(static_cast<std::size_t>(t_len), 0);
    const std::function<void(std::int64_t)> walk = [&](std::int64_t t) {
      if (t == t_len) {
        std::vector<std::int64_t> collapsed;
        for (std::int64_t i = 0; i < t_len; ++i) {
          const std::int64_t s = path[static_cast<std::size_t>(i)];
          if (s != 0 && (i == 0 || s != path[static_cast<std::size_t>(i - 1)]))
            collapsed.push_back(s);
        }
        if (collapsed != targets[static_cast<std::size_t>(n)]) return;
        double log_p = 0;
        for (std::int64_t i = 0; i < t_len; ++i)
          log_p += lpv[static_cast<std::size_t>((i * batch + n) * classes +
                                                path[static_cast<std::size_t>(i)])];
        total += std::exp(log_p);
        return;
      }
      for (std::int64_t s = 0; s < classes; ++s) {
        path[static_cast<std::size_t>(t)] = s;
        walk(t + 1);
      }
    };
    walk(0);
    expected.push_back(-std::log(total));
  }
  const Tensor y =
      ctc_loss(lp, tensor(std::vector<std::int64_t>{1, 2, 1, 1, 2, 0}, {3, 2}),
               tensor(input_lengths), tensor<std::int64_t>({2, 2, 1}), 0, Reduction::None);
  EXPECT_TRUE(test::all_close(y, expected, 0, 1e-13));
}

// The gradient in log_probs themselves (not normalised: the function of the tensor given).
TEST(CtcLossGrad, FiniteDifferencesInLogProbs) {
  const Tensor lp = test::uniform_input({6, 2, 4}, -3, 0, 1010);
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        return ctc_loss(in[0], tensor(std::vector<std::int64_t>{1, 3, 3, 2, 0, 0}, {2, 3}),
                        tensor<std::int64_t>({6, 5}), tensor<std::int64_t>({3, 1}), 0,
                        Reduction::None);
      },
      {lp}));
}

TEST(CtcLoss, ModuleIsTheFunction) {
  nn::CTCLoss loss(nn::CTCLossOptions().blank(2).zero_infinity(true).reduction(Reduction::Sum));
  EXPECT_EQ(loss->extra_repr(), "blank=2, reduction=sum, zero_infinity=true");
  const Tensor lp = log_softmax(test::uniform_input({5, 2, 3}, -1, 1, 1020), 2).detach();
  const Tensor targets = tensor(std::vector<std::int64_t>{0, 1, 1, 0}, {2, 2});
  const Tensor lengths = tensor<std::int64_t>({5, 5});
  const Tensor target_lengths = tensor<std::int64_t>({2, 1});
  EXPECT_TRUE(test::all_close(
      loss(lp, targets, lengths, target_lengths),
      test::to_vector(ctc_loss(lp, targets, lengths, target_lengths, 2, Reduction::Sum, true)), 0,
      0));
}

}  // namespace
}  // namespace leangrad
