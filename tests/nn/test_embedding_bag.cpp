// embedding_bag and nn::EmbeddingBag against PyTorch 1.13 (tests/data/embedding_bag.json, written
// by make_embedding_bag.py): outputs and the gradients of the weight and the per-sample weights
// in the modes sum, mean and max, for 2-D input, offsets with empty bags, include_last_offset,
// padding_idx and repeated indices; gradchecks to second order; the module. Bad arguments: the
// EmbeddingBag misuse table (tests/misuse/test_misuse_embedding_bag.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/nn/embedding.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"
#include "testing/within_bound.h"

namespace leangrad {
namespace {

EmbeddingBagMode mode_of(const std::string& name) {
  if (name == "sum") return kSum;
  return name == "mean" ? EmbeddingBagMode::Mean : EmbeddingBagMode::Max;
}

// A bag's sum adds at most n rows (n the input's length), each scaled at most once, and a mean
// divides it once: within (n + 2) u of the largest magnitude. A gradient sums at most n weights
// for a row of the weight, a per-sample weight's gradient is one dot product of dim terms.
void expect_within(const Tensor& got, const Tensor& want, double units, double scale,
                   const char* what) {
  EXPECT_TRUE(test::within_bound(
      got, want, units * test::math_unit_roundoff(want.dtype()) * std::max(1.0, scale)))
      << what;
}

TEST(EmbeddingBag, MatchesPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& c : test::load_reference("embedding_bag.json")) {
    SCOPED_TRACE(c.name);
    ++checked;
    const auto& p = c.params;
    Tensor weight = c.at("weight").clone().requires_grad_();
    const Tensor input = c.at("input");
    const Tensor offsets = c.tensors.count("offsets") ? c.at("offsets") : Tensor();
    Tensor per_sample = c.tensors.count("per_sample_weights")
                            ? c.at("per_sample_weights").clone().requires_grad_()
                            : Tensor();
    std::optional<std::int64_t> padding_idx;
    if (!p.at("padding_idx").is_null()) padding_idx = p.at("padding_idx").get<std::int64_t>();
    const Tensor y =
        embedding_bag(input, weight, offsets, mode_of(p.at("mode").get<std::string>()), per_sample,
                      p.at("include_last_offset").get<bool>(), padding_idx);
    const double n = static_cast<double>(input.numel() + 2);
    const double scale =
        test::max_abs(c.at("weight")) * (per_sample.defined() ? test::max_abs(per_sample) : 1.0);
    expect_within(y, c.at("y"), n, scale, "output");
    sum(mul(y, c.at("w"))).backward();
    expect_within(weight.grad(), c.at("dweight"), n, test::max_abs(c.at("w")), "weight gradient");
    if (per_sample.defined()) {
      expect_within(
          per_sample.grad(), c.at("dper_sample_weights"), static_cast<double>(weight.size(1) + 2),
          test::max_abs(c.at("w")) * test::max_abs(c.at("weight")), "per-sample weights' gradient");
    }
  }
  EXPECT_EQ(checked, 8);
}

// Distinct weights (no tie moves within a finite-difference step): first and second derivatives
// of y * y in each mode, with offsets, an empty bag and (sum) per-sample weights.
TEST(EmbeddingBag, FirstAndSecondDerivativesMatchFiniteDifferences) {
  const Tensor input = tensor(std::vector<std::int64_t>{3, 1, 4, 1, 5, 2, 6}, {7});
  const Tensor offsets = tensor(std::vector<std::int64_t>{0, 2, 2, 5}, {4});
  const Tensor weight = test::uniform_input({7, 3}, -2.0, 2.0, 11);
  const Tensor per_sample = test::uniform_input({7}, 0.5, 1.5, 12);
  for (EmbeddingBagMode mode :
       {EmbeddingBagMode::Sum, EmbeddingBagMode::Mean, EmbeddingBagMode::Max}) {
    SCOPED_TRACE(embedding_bag_mode_name(mode));
    const test::GradcheckFn f = [&](const std::vector<Tensor>& in) {
      const Tensor y = embedding_bag(input, in[0], offsets, mode);
      return y * y;
    };
    EXPECT_TRUE(test::gradcheck(f, {weight}));
    EXPECT_TRUE(test::gradgradcheck(f, {weight}));
  }
  const test::GradcheckFn weighted = [&](const std::vector<Tensor>& in) {
    const Tensor y = embedding_bag(input, in[0], offsets, kSum, in[1]);
    return y * y;
  };
  EXPECT_TRUE(test::gradcheck(weighted, {weight, per_sample}));
  EXPECT_TRUE(test::gradgradcheck(weighted, {weight, per_sample}));
}

TEST(EmbeddingBag, ModuleIsTheFunction) {
  manual_seed(2);
  nn::EmbeddingBag bag(nn::EmbeddingBagOptions(6, 4).mode(kMax).padding_idx(-2));
  EXPECT_EQ(bag->options().padding_idx(), 4);
  EXPECT_EQ(test::to_vector(bag->weight.select(0, 4)), std::vector<double>(4, 0.0));
  EXPECT_EQ(bag->extra_repr(), "6, 4, mode=max, padding_idx=4");
  const Tensor input = tensor(std::vector<std::int64_t>{0, 4, 5, 1, 2, 4}, {2, 3});
  EXPECT_TRUE(
      equal(bag(input), embedding_bag(input, bag->weight, Tensor(), kMax, Tensor(), false, 4)));
  const Tensor flat = input.reshape({6});
  const Tensor offsets = tensor(std::vector<std::int64_t>{0, 1, 6}, {3});
  nn::EmbeddingBag summed(nn::EmbeddingBagOptions(6, 4).mode(kSum).include_last_offset(true));
  EXPECT_TRUE(equal(summed(flat, offsets),
                    embedding_bag(flat, summed->weight, offsets, kSum, Tensor(), true)));
  EXPECT_EQ(summed(flat, offsets).shape(), (Shape{2, 4}));
}

// No offsets: no bags, an empty (0, D) result and a zero weight gradient, as PyTorch 1.13's (the
// check of offsets[0] had read the input's length pushed after them).
TEST(EmbeddingBag, NoOffsetsAreNoBags) {
  const Tensor weight = test::uniform_input({5, 3}, -1, 1, 4);
  const Tensor input = tensor(std::vector<std::int64_t>{1, 2, 3}, {3});
  for (const EmbeddingBagMode mode :
       {EmbeddingBagMode(kSum), EmbeddingBagMode(kMean), EmbeddingBagMode(kMax)}) {
    const Tensor out = embedding_bag(input, weight, zeros({0}, kInt64), mode);
    EXPECT_EQ(out.shape(), (Shape{0, 3}));
    out.sum().backward();
    EXPECT_EQ(test::max_abs(weight.grad()), 0.0);
    weight.mutable_grad() = Tensor();
  }
}

}  // namespace
}  // namespace leangrad
