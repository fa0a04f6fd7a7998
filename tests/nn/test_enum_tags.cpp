// LibTorch's shared constants (core/enum_tags.h): kSum, kMean, kNone, kMax and kBatchMean each
// stand for the enumerator of their name in every enum that has one, so a LibTorch program's
// reduction and mode arguments compile as written. Each use is checked against the value it
// must give, computed here by a loop or by the enum spelled out.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grid_sample.h>
#include <leangrad/autograd/losses.h>
#include <leangrad/distributed/reduce_op.h>
#include <leangrad/nn/nn.h>
#include "testing/gradcheck.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

namespace F = nn::functional;

static_assert(Reduction{kSum} == Reduction::Sum && Reduction{kMean} == Reduction::Mean &&
              Reduction{kNone} == Reduction::None);
static_assert(KLDivReduction{kSum} == KLDivReduction::Sum &&
              KLDivReduction{kMean} == KLDivReduction::Mean &&
              KLDivReduction{kNone} == KLDivReduction::None &&
              KLDivReduction{kBatchMean} == KLDivReduction::BatchMean);
static_assert(EmbeddingBagMode{kSum} == EmbeddingBagMode::Sum &&
              EmbeddingBagMode{kMean} == EmbeddingBagMode::Mean &&
              EmbeddingBagMode{kMax} == EmbeddingBagMode::Max);
static_assert(distributed::ReduceOp{kSum} == distributed::ReduceOp::Sum &&
              distributed::ReduceOp{kMax} == distributed::ReduceOp::Max);
// A tag converts only to an enum with its enumerator: no reduction is kBatchMean or kMax.
static_assert(!std::is_convertible_v<BatchMeanTag, Reduction>);
static_assert(!std::is_convertible_v<MaxTag, Reduction>);
static_assert(!std::is_convertible_v<NoneTag, EmbeddingBagMode>);

TEST(EnumTags, LossReductions) {
  const Tensor a = test::uniform_input({3, 4}, -2, 2, 301).detach();
  const Tensor b = test::uniform_input({3, 4}, -2, 2, 302).detach();
  const std::vector<double> av = test::to_vector(a), bv = test::to_vector(b);
  double squares = 0;
  std::vector<double> each;
  for (std::size_t i = 0; i < av.size(); ++i) {
    each.push_back((av[i] - bv[i]) * (av[i] - bv[i]));
    squares += each.back();
  }
  // 12 squares below 16 summed in float64: within 12 u 192.
  const double tol = 12 * 192 * test::math_unit_roundoff(kFloat64);
  EXPECT_TRUE(test::all_close(mse_loss(a, b, kSum), {squares}, 0, tol));
  EXPECT_TRUE(test::all_close(mse_loss(a, b, kMean), {squares / 12}, 0, tol));
  EXPECT_TRUE(test::all_close(mse_loss(a, b, kNone), each, 0, tol));
  nn::MSELoss loss(nn::MSELossOptions().reduction(kSum));
  EXPECT_TRUE(test::all_close(loss(a, b), {squares}, 0, tol));
  EXPECT_TRUE(
      test::all_close(F::mse_loss(a, b, F::MSELossFuncOptions().reduction(kNone)), each, 0, tol));

  // cross_entropy's per-sample losses, by kNone, against log-sum-exp written out.
  const Tensor target = tensor(std::vector<std::int64_t>{3, 0, 2}, {3});
  std::vector<double> per_sample;
  for (std::int64_t n = 0; n < 3; ++n) {
    double total = 0;
    for (std::int64_t c = 0; c < 4; ++c)
      total += std::exp(av[n * 4 + c]);
    const std::int64_t t = n == 0 ? 3 : n == 1 ? 0 : 2;
    per_sample.push_back(std::log(total) - av[n * 4 + t]);
  }
  EXPECT_TRUE(
      test::all_close(F::cross_entropy(a, target, F::CrossEntropyFuncOptions().reduction(kNone)),
                      per_sample, 0, 64 * test::math_unit_roundoff(kFloat64) * 8));
}

// kl_div takes KLDivReduction and Reduction; a tag that converts to both picks KLDivReduction,
// and kBatchMean divides the sum by the batch.
TEST(EnumTags, KlDivReductions) {
  const Tensor input = log(softmax(test::uniform_input({2, 3}, -1, 1, 303).detach(), 1));
  const Tensor target = softmax(test::uniform_input({2, 3}, -1, 1, 304).detach(), 1);
  const std::vector<double> x = test::to_vector(input), t = test::to_vector(target);
  double total = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    total += t[i] * (std::log(t[i]) - x[i]);
  const double tol = 64 * test::math_unit_roundoff(kFloat64);
  EXPECT_TRUE(test::all_close(kl_div(input, target, kSum), {total}, 0, tol));
  EXPECT_TRUE(test::all_close(kl_div(input, target, kBatchMean), {total / 2}, 0, tol));
  EXPECT_TRUE(test::all_close(kl_div(input, target, kMean), {total / 6}, 0, tol));
  EXPECT_EQ(kl_div(input, target, kNone).shape(), Shape({2, 3}));
  EXPECT_TRUE(test::all_close(kl_div(input, target, Reduction::Sum), {total}, 0, tol));
  nn::KLDivLoss loss(nn::KLDivLossOptions().reduction(kBatchMean));
  EXPECT_TRUE(test::all_close(loss(input, target), {total / 2}, 0, tol));
}

// An embedding bag's mode by tag: the bag's sum, mean or maximum of its rows.
TEST(EnumTags, EmbeddingBagModes) {
  const Tensor weight = test::uniform_input({5, 2}, -1, 1, 305).detach();
  const std::vector<double> w = test::to_vector(weight);
  const Tensor bag = tensor(std::vector<std::int64_t>{4, 1, 3}, {1, 3});
  const std::vector<std::int64_t> rows = {4, 1, 3};
  std::vector<double> sum_of(2, 0.0), max_of(2, -1e300);
  for (const std::int64_t r : rows)
    for (int d = 0; d < 2; ++d) {
      sum_of[d] += w[r * 2 + d];
      max_of[d] = std::max(max_of[d], w[r * 2 + d]);
    }
  const double tol = 4 * test::math_unit_roundoff(kFloat64);
  nn::EmbeddingBag sums(nn::EmbeddingBagOptions(5, 2).mode(kSum));
  nn::EmbeddingBag means(nn::EmbeddingBagOptions(5, 2).mode(kMean));
  nn::EmbeddingBag maxima(nn::EmbeddingBagOptions(5, 2).mode(kMax));
  for (nn::EmbeddingBag* m : {&sums, &means, &maxima}) {
    (*m)->to(kFloat64);
    const NoGradGuard no_grad;
    (*m)->weight.copy_(weight);
  }
  EXPECT_TRUE(test::all_close(sums(bag), sum_of, 0, tol));
  EXPECT_TRUE(test::all_close(means(bag), {sum_of[0] / 3, sum_of[1] / 3}, 0, tol));
  EXPECT_TRUE(test::all_close(maxima(bag), max_of, 0, 0));
  EXPECT_TRUE(test::all_close(embedding_bag(bag, weight, Tensor(), kMax), max_of, 0, 0));
}

// A tag compares with every enum it converts to, both ways round, and serves as a case label.
TEST(EnumTags, CompareWithTheirEnums) {
  const EmbeddingBagMode mode = EmbeddingBagMode::Max;
  EXPECT_TRUE(mode == kMax);
  EXPECT_FALSE(mode == kSum);
  EXPECT_TRUE(kSum != mode);
  EXPECT_TRUE(nn::Conv2dOptions(1, 1, 3).padding_mode() == kZeros);
  EXPECT_FALSE(nn::Conv2dOptions(1, 1, 3).padding_mode(kReflect).padding_mode() == kZeros);
  EXPECT_TRUE(PadMode::Constant == kZeros);  // kZeros is kConstant under conv's name
  const GridSamplePadding padding = kZeros;
  EXPECT_EQ(padding, GridSamplePadding::Zeros);
  const auto label = [](Reduction r) {
    switch (r) {
      case kSum:
        return 1;
      case kMean:
        return 2;
      case kNone:
        return 3;
    }
    return 0;
  };
  EXPECT_EQ(label(Reduction::Sum) * 100 + label(Reduction::Mean) * 10 + label(Reduction::None),
            123);
}

}  // namespace
}  // namespace leangrad
