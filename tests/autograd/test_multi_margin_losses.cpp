// multi_margin_loss, multilabel_margin_loss and triplet_margin_with_distance_loss
// (autograd/margin_losses.h) and their modules: against PyTorch 1.13
// (tests/data/multi_margin_losses.json, written by make_multi_margin_losses.py: values and
// gradients in float64), the multi-label loss against its definition as a loop, and by finite
// differences. Bad arguments: the MultiMarginLosses table of
// tests/misuse/test_misuse_nn_layers.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/margin_losses.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/loss.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using test::reduction_named;

// Each loss sums at most C K <= 25 terms of magnitude below 10 here (and the mean divides once),
// in another order than PyTorch's: within 32 u of 25 * 10, so 2^-40 covers values and gradients.
constexpr double kAtol = 0x1p-40;

TEST(MultiMarginLosses, MatchPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& c : test::load_reference("multi_margin_losses.json")) {
    SCOPED_TRACE(c.name);
    const auto& p = c.params;
    const std::string op = p.at("op").get<std::string>();
    const Reduction reduction = reduction_named(p.at("reduction").get<std::string>());
    std::vector<Tensor> leaves;
    Tensor y;
    if (op == "multi_margin_loss") {
      const Tensor x = c.at("x").clone().requires_grad_();
      leaves = {x};
      const Tensor weight = c.tensors.count("weight") ? c.at("weight") : Tensor();
      y = multi_margin_loss(x, c.at("target"), p.at("p").get<std::int64_t>(),
                            p.at("margin").get<double>(), weight, reduction);
    } else if (op == "multilabel_margin_loss") {
      const Tensor x = c.at("x").clone().requires_grad_();
      leaves = {x};
      y = multilabel_margin_loss(x, c.at("target"), reduction);
    } else {
      const Tensor a = c.at("a").clone().requires_grad_();
      const Tensor pos = c.at("p").clone().requires_grad_();
      const Tensor neg = c.at("n").clone().requires_grad_();
      leaves = {a, pos, neg};
      DistanceFunction distance;
      if (p.at("distance").get<std::string>() == "cosine")
        distance = [](const Tensor& u, const Tensor& v) {
          return rsub(cosine_similarity(u, v), 1.0);
        };
      y = triplet_margin_with_distance_loss(a, pos, neg, distance, p.at("margin").get<double>(),
                                            p.at("swap").get<bool>(), reduction);
    }
    ASSERT_EQ(y.shape(), c.at("y").shape());
    EXPECT_TRUE(test::all_close(y, test::to_vector(c.at("y")), 0, kAtol));
    sum(mul(y, c.at("w"))).backward();
    const std::vector<std::string> names = op == "triplet_margin_with_distance_loss"
                                               ? std::vector<std::string>{"a", "p", "n"}
                                               : std::vector<std::string>{"x"};
    for (std::size_t i = 0; i < names.size(); ++i)
      EXPECT_TRUE(
          test::all_close(leaves[i].grad(), test::to_vector(c.at("d" + names[i])), 0, kAtol))
          << "gradient of " << names[i];
    ++checked;
  }
  EXPECT_EQ(checked, 11);
}

// The multi-label loss from its definition: per sample, its indices are the row up to the first
// -1; the loss is the sum over those indices j and the classes i not among them of
// max(0, 1 - x[j] + x[i]), over C. Random rows, each ending at a random place.
TEST(MultiMarginLosses, MultiLabelIsItsDefinition) {
  const std::int64_t n = 6, classes = 7;
  const Tensor x = test::uniform_input({n, classes}, -2, 2, 800).detach();
  const std::vector<double> xv = test::to_vector(x);
  std::vector<std::int64_t> target;
  for (std::int64_t s = 0; s < n; ++s) {
    const std::int64_t count = s % classes;  // 0 to 5 indices, then -1
    for (std::int64_t i = 0; i < classes; ++i)
      target.push_back(i < count ? (s * 3 + i * 5) % classes : -1);
  }
  std::vector<double> expected;
  for (std::int64_t s = 0; s < n; ++s) {
    std::vector<std::int64_t> named;
    for (std::int64_t i = 0; i < classes && target[s * classes + i] != -1; ++i)
      named.push_back(target[s * classes + i]);
    double loss = 0;
    for (const std::int64_t j : named)
      for (std::int64_t i = 0; i < classes; ++i)
        if (std::find(named.begin(), named.end(), i) == named.end())
          loss += std::max(0.0, 1.0 - xv[s * classes + j] + xv[s * classes + i]);
    expected.push_back(loss / classes);
  }
  EXPECT_TRUE(
      test::all_close(multilabel_margin_loss(x, tensor(target, {n, classes}), Reduction::None),
                      expected, 0, kAtol));
}

TEST(MultiMarginLossesGrad, FiniteDifferences) {
  const Tensor x = test::uniform_input({3, 4}, -1, 1, 810);
  const Tensor weight = test::uniform_input({4}, 0.5, 1.5, 811);
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        return multi_margin_loss(in[0], tensor<std::int64_t>({1, 3, 0}), 2, 0.7, in[1],
                                 Reduction::None);
      },
      {x, weight}));
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        return multilabel_margin_loss(
            in[0], tensor(std::vector<std::int64_t>{1, 2, -1, 0, 3, -1, 0, 0, 0, 1, 2, 3}, {3, 4}),
            Reduction::None);
      },
      {x}));
  const Tensor a = test::uniform_input({3, 2}, -1, 1, 812);
  const Tensor p = test::uniform_input({3, 2}, -1, 1, 813);
  const Tensor n = test::uniform_input({3, 2}, -1, 1, 814);
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        return triplet_margin_with_distance_loss(in[0], in[1], in[2], {}, 1.5, true,
                                                 Reduction::None);
      },
      {a, p, n}));
}

TEST(MultiMarginLosses, ModulesCallTheFunctions) {
  const Tensor x = test::uniform_input({3, 4}, -1, 1, 820).detach();
  const Tensor y = tensor<std::int64_t>({2, 0, 3});
  nn::MultiMarginLoss loss(
      nn::MultiMarginLossOptions().p(2).margin(0.5).weight(ones({4}, kFloat64)));
  EXPECT_EQ(loss->extra_repr(), "p=2, margin=0.5, reduction=mean, weight=[4]");
  EXPECT_TRUE(test::all_close(
      loss(x, y), test::to_vector(multi_margin_loss(x, y, 2, 0.5, ones({4}, kFloat64))), 0, 0));
  EXPECT_EQ(loss->named_buffers().size(), 1u);
  nn::MultiLabelMarginLoss multilabel(nn::MultiLabelMarginLossOptions().reduction(Reduction::Sum));
  const Tensor labels =
      tensor(std::vector<std::int64_t>{1, -1, 0, 0, 2, 3, -1, 0, 0, 1, 2, 3}, {3, 4});
  EXPECT_TRUE(test::all_close(multilabel(x, labels),
                              test::to_vector(multilabel_margin_loss(x, labels, Reduction::Sum)), 0,
                              0));
  nn::TripletMarginWithDistanceLoss triplet(
      nn::TripletMarginWithDistanceLossOptions().margin(0.3).swap(true).distance_function(
          [](const Tensor& u, const Tensor& v) { return sum(abs(sub(u, v)), {-1}); }));
  EXPECT_EQ(triplet->extra_repr(), "margin=0.3, swap=true, reduction=mean");
  const Tensor a = test::uniform_input({3, 4}, -1, 1, 821).detach();
  const Tensor b = test::uniform_input({3, 4}, -1, 1, 822).detach();
  const auto l1 = [](const Tensor& u, const Tensor& v) { return sum(abs(sub(u, v)), {-1}); };
  EXPECT_TRUE(test::all_close(
      triplet(x, a, b), test::to_vector(triplet_margin_with_distance_loss(x, a, b, l1, 0.3, true)),
      0, 0));
}

}  // namespace
}  // namespace leangrad
