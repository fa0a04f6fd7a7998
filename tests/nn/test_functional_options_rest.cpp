// The rest of LibTorch's functional options (nn/functional_options.h, session 48): transposed
// convolutions, the max, fractional, LP and unpooling options, the feature and alpha dropouts,
// the activations whose modules' options LibTorch reuses, the margin, embedding, Poisson and CTC
// losses, instance norm, local response norm, embedding_bag, fold and unfold. As in
// test_functional_options.cpp: each overload with every field set away from its default equals
// the positional function given those values in order (a field passed to the wrong parameter
// fails), and default options equal the positional call with LibTorch's defaults written out.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include <leangrad/autograd/activations.h>
#include <leangrad/autograd/composed_layers.h>
#include <leangrad/autograd/ctc_loss.h>
#include <leangrad/autograd/dropout_functions.h>
#include <leangrad/autograd/fold_functions.h>
#include <leangrad/autograd/fractional_max_pool.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/losses.h>
#include <leangrad/autograd/margin_losses.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/functional_options.h>
#include "testing/gradcheck.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

namespace F = nn::functional;

// The same function on the same arguments: bit for bit.
::testing::AssertionResult same(const Tensor& got, const Tensor& want) {
  if (got.shape() != want.shape())
    return ::testing::AssertionFailure() << "shape " << got.shape() << " vs " << want.shape();
  return test::all_close(got, test::to_vector(want), 0, 0);
}

::testing::AssertionResult same(const std::tuple<Tensor, Tensor>& got,
                                const std::tuple<Tensor, Tensor>& want) {
  auto values = same(std::get<0>(got), std::get<0>(want));
  if (!values) return values << " (values)";
  auto indices = same(std::get<1>(got), std::get<1>(want));
  if (!indices) return indices << " (indices)";
  return ::testing::AssertionSuccess();
}

Tensor input(const Shape& shape, std::uint64_t seed, double low = -1.0, double high = 1.0) {
  return test::uniform_input(shape, low, high, seed).detach();
}

Tensor ints(std::vector<std::int64_t> values, const Shape& shape) {
  return tensor(std::move(values), shape);
}

TEST(FunctionalOptionsRest, TransposedConvolutions) {
  const Tensor x1 = input({2, 4, 9}, 4800), w1 = input({4, 3, 3}, 4801), b6 = input({6}, 4802);
  EXPECT_TRUE(same(F::conv_transpose1d(x1, w1,
                                       F::ConvTranspose1dFuncOptions()
                                           .bias(b6)
                                           .stride(3)
                                           .padding(1)
                                           .output_padding(2)
                                           .groups(2)
                                           .dilation(2)),
                   conv_transpose1d(x1, w1, b6, 3, 1, 2, 2, 2)));
  const Tensor w1g1 = input({4, 5, 2}, 4803);
  EXPECT_TRUE(same(F::conv_transpose1d(x1, w1g1, F::ConvTranspose1dFuncOptions()),
                   conv_transpose1d(x1, w1g1, Tensor(), 1, 0, 0, 1, 1)));
  const Tensor x2 = input({2, 4, 5, 6}, 4804), w2 = input({4, 3, 3, 2}, 4805);
  EXPECT_TRUE(same(F::conv_transpose2d(x2, w2,
                                       F::ConvTranspose2dFuncOptions()
                                           .bias(b6)
                                           .stride(Size2{2, 3})
                                           .padding(Size2{1, 0})
                                           .output_padding(Size2{1, 2})
                                           .groups(2)
                                           .dilation(Size2{2, 1})),
                   conv_transpose2d(x2, w2, b6, {2, 3}, {1, 0}, {1, 2}, 2, {2, 1})));
  EXPECT_TRUE(same(F::conv_transpose2d(x2, w2, F::ConvTranspose2dFuncOptions().stride(2).groups(2)),
                   conv_transpose2d(x2, w2, Tensor(), {2, 2}, {0, 0}, {0, 0}, 2, {1, 1})));
  const Tensor x3 = input({1, 2, 3, 4, 3}, 4806), w3 = input({2, 3, 2, 2, 3}, 4807);
  EXPECT_TRUE(
      same(F::conv_transpose3d(
               x3, w3, F::ConvTranspose3dFuncOptions().stride(2).padding(1).output_padding(1)),
           conv_transpose3d(x3, w3, Tensor(), {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, 1, {1, 1, 1})));
}

TEST(FunctionalOptionsRest, Poolings) {
  const Tensor x1 = input({2, 3, 17}, 4810), x2 = input({2, 3, 11, 9}, 4811);
  const Tensor x3 = input({1, 2, 6, 7, 5}, 4812);
  EXPECT_TRUE(same(F::adaptive_max_pool1d(x1, F::AdaptiveMaxPool1dFuncOptions(5)),
                   adaptive_max_pool1d(x1, 5)));
  EXPECT_TRUE(same(F::adaptive_max_pool3d(x3, F::AdaptiveMaxPool3dFuncOptions(Size3{2, 3, 4})),
                   adaptive_max_pool3d(x3, {2, 3, 4})));
  EXPECT_TRUE(same(F::adaptive_max_pool1d_with_indices(x1, F::AdaptiveMaxPool1dFuncOptions(4)),
                   adaptive_max_pool1d_with_indices(x1, 4)));
  EXPECT_TRUE(
      same(F::adaptive_max_pool2d_with_indices(x2, F::AdaptiveMaxPool2dFuncOptions(Size2{3, 2})),
           adaptive_max_pool2d_with_indices(x2, {3, 2})));
  EXPECT_TRUE(same(F::adaptive_max_pool3d_with_indices(x3, F::AdaptiveMaxPool3dFuncOptions(2)),
                   adaptive_max_pool3d_with_indices(x3, {2, 2, 2})));
  EXPECT_TRUE(
      same(F::max_pool1d_with_indices(
               x1, F::MaxPool1dFuncOptions(3).stride(2).padding(1).dilation(2).ceil_mode(true)),
           max_pool1d_with_indices(x1, 3, 2, 1, 2, true)));
  EXPECT_TRUE(same(F::max_pool2d_with_indices(
                       x2, F::MaxPool2dFuncOptions(Size2{3, 2}).stride(Size2{2, 1}).padding(1)),
                   max_pool2d_with_indices(x2, {3, 2}, {2, 1}, {1, 1})));
  EXPECT_TRUE(same(F::max_pool3d_with_indices(x3, F::MaxPool3dFuncOptions(2).ceil_mode(true)),
                   max_pool3d_with_indices(x3, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}, true)));

  // Fractional pooling with its samples given, so both calls place the same windows.
  const Tensor samples2 = input({2, 3, 2}, 4813, 0.0, 0.99);
  EXPECT_TRUE(same(F::fractional_max_pool2d(x2, F::FractionalMaxPool2dFuncOptions(Size2{2, 3})
                                                    .output_size(Size2{5, 4})
                                                    ._random_samples(samples2)),
                   fractional_max_pool2d(x2, {2, 3}, Size2{5, 4}, std::nullopt, samples2)));
  EXPECT_TRUE(same(
      F::fractional_max_pool2d_with_indices(
          x2, F::FractionalMaxPool2dFuncOptions(2).output_ratio(0.5)._random_samples(samples2)),
      fractional_max_pool2d_with_indices(x2, {2, 2}, std::nullopt, Ratio2{0.5, 0.5}, samples2)));
  const Tensor samples3 = input({1, 2, 3}, 4814, 0.0, 0.99);
  EXPECT_TRUE(
      same(F::fractional_max_pool3d(
               x3, F::FractionalMaxPool3dFuncOptions(2).output_size(3)._random_samples(samples3)),
           fractional_max_pool3d(x3, {2, 2, 2}, Size3{3, 3, 3}, std::nullopt, samples3)));
  EXPECT_TRUE(same(
      F::fractional_max_pool3d_with_indices(x3, F::FractionalMaxPool3dFuncOptions(Size3{1, 2, 2})
                                                    .output_ratio(Ratio3{0.5, 0.6, 0.7})
                                                    ._random_samples(samples3)),
      fractional_max_pool3d_with_indices(x3, {1, 2, 2}, std::nullopt, Ratio3{0.5, 0.6, 0.7},
                                         samples3)));

  const Tensor positive2 = input({2, 3, 11, 9}, 4815, 0.1, 2.0);
  EXPECT_TRUE(same(F::lp_pool1d(x1, F::LPPool1dFuncOptions(3.0, 4).stride(3).ceil_mode(true)),
                   lp_pool1d(x1, 3.0, 4, 3, true)));
  EXPECT_TRUE(same(F::lp_pool2d(positive2, F::LPPool2dFuncOptions(1.5, Size2{2, 3})),
                   lp_pool2d(positive2, 1.5, {2, 3}, {2, 3}, false)));
}

TEST(FunctionalOptionsRest, MaxUnpool) {
  const Tensor x2 = input({2, 3, 8, 6}, 4820);
  // Plain names, not a structured binding: clang 14 (the sanitizer build's) cannot capture one
  // in the lambda below.
  const auto pooled_at2 = max_pool2d_with_indices(x2, {2, 2}, {2, 2});
  const Tensor& pooled2 = std::get<0>(pooled_at2);
  const Tensor& at2 = std::get<1>(pooled_at2);
  EXPECT_TRUE(same(F::max_unpool2d(pooled2, at2, F::MaxUnpool2dFuncOptions(2)),
                   max_unpool2d(pooled2, at2, {2, 2}, {2, 2}, {0, 0})));
  // output_size as the spatial sizes or the whole shape, as LibTorch's.
  EXPECT_TRUE(same(
      F::max_unpool2d(pooled2, at2,
                      F::MaxUnpool2dFuncOptions(2).output_size(std::vector<std::int64_t>{8, 7})),
      max_unpool2d(pooled2, at2, {2, 2}, {2, 2}, {0, 0}, Size2{8, 7})));
  EXPECT_TRUE(same(F::max_unpool2d(pooled2, at2,
                                   F::MaxUnpool2dFuncOptions(2).output_size(
                                       std::vector<std::int64_t>{2, 3, 9, 7})),
                   max_unpool2d(pooled2, at2, {2, 2}, {2, 2}, {0, 0}, Size2{9, 7})));
  const std::string refused = test::error_message([&] {
    F::max_unpool2d(pooled2, at2,
                    F::MaxUnpool2dFuncOptions(2).output_size(std::vector<std::int64_t>{3, 9, 7}));
  });
  EXPECT_NE(refused.find("max_unpool2d: output_size must have 2 or 4 elements, got [3, 9, 7]"),
            std::string::npos)
      << refused;

  const Tensor x1 = input({2, 3, 10}, 4821);
  const auto [pooled1, at1] = max_pool1d_with_indices(x1, 3, 2, 1);
  EXPECT_TRUE(same(F::max_unpool1d(pooled1, at1,
                                   F::MaxUnpool1dFuncOptions(3).stride(2).padding(1).output_size(
                                       std::vector<std::int64_t>{10})),
                   max_unpool1d(pooled1, at1, 3, 2, 1, 10)));
  const Tensor x3 = input({1, 2, 4, 6, 5}, 4822);
  const auto [pooled3, at3] = max_pool3d_with_indices(x3, {2, 3, 2}, {2, 3, 2}, {0, 1, 1});
  EXPECT_TRUE(same(F::max_unpool3d(pooled3, at3,
                                   F::MaxUnpool3dFuncOptions(Size3{2, 3, 2})
                                       .padding(Size3{0, 1, 1})
                                       .output_size(std::vector<std::int64_t>{1, 2, 4, 6, 5})),
                   max_unpool3d(pooled3, at3, {2, 3, 2}, {2, 3, 2}, {0, 1, 1}, Size3{4, 6, 5})));
}

TEST(FunctionalOptionsRest, Dropouts) {
  const Tensor x = input({4, 6, 5, 3}, 4830, -3, 3);
  manual_seed(4831);
  const Tensor a = F::dropout2d(x, F::Dropout2dFuncOptions().p(0.3));
  manual_seed(4831);
  EXPECT_TRUE(same(a, dropout2d(x, 0.3, true)));
  const Tensor volume = x.unsqueeze(0);
  manual_seed(4832);
  const Tensor b = F::dropout3d(volume, F::Dropout3dFuncOptions());
  manual_seed(4832);
  EXPECT_TRUE(same(b, dropout3d(volume, 0.5, true)));
  // LibTorch's alpha dropouts do nothing unless asked to train.
  EXPECT_TRUE(same(F::alpha_dropout(x, F::AlphaDropoutFuncOptions()), x));
  EXPECT_TRUE(same(F::feature_alpha_dropout(x, F::FeatureAlphaDropoutFuncOptions()), x));
  manual_seed(4833);
  const Tensor c = F::alpha_dropout(x, F::AlphaDropoutFuncOptions().p(0.2).training(true));
  manual_seed(4833);
  EXPECT_TRUE(same(c, alpha_dropout(x, 0.2, true)));
  manual_seed(4834);
  const Tensor d =
      F::feature_alpha_dropout(x, F::FeatureAlphaDropoutFuncOptions().p(0.4).training(true));
  manual_seed(4834);
  EXPECT_TRUE(same(d, feature_alpha_dropout(x, 0.4, true)));
  for (const std::string op : {"dropout2d", "alpha_dropout", "rrelu"}) {
    const std::string refused = test::error_message([&] {
      if (op == "dropout2d") F::dropout2d(x, F::Dropout2dFuncOptions().inplace(true));
      if (op == "alpha_dropout") F::alpha_dropout(x, F::AlphaDropoutFuncOptions().inplace(true));
      if (op == "rrelu") F::rrelu(x, F::RReLUFuncOptions().inplace(true));
    });
    EXPECT_NE(refused.find(op + ": inplace is not supported"), std::string::npos) << refused;
  }
}

TEST(FunctionalOptionsRest, Activations) {
  const Tensor x = input({4, 6, 5}, 4840, -3, 3);
  EXPECT_TRUE(same(F::relu(x, F::ReLUFuncOptions()), relu(x)));
  EXPECT_TRUE(same(F::relu6(x, F::ReLU6FuncOptions()), relu6(x)));
  EXPECT_TRUE(same(F::selu(x, F::SELUFuncOptions()), selu(x)));
  // inplace writes the input and returns it, as LibTorch's.
  for (int which = 0; which < 3; ++which) {
    SCOPED_TRACE(which);
    Tensor written = x.clone();
    const Tensor returned = which == 0   ? F::relu(written, F::ReLUFuncOptions(true))
                            : which == 1 ? F::relu6(written, F::ReLU6FuncOptions().inplace(true))
                                         : F::selu(written, F::SELUFuncOptions(true));
    EXPECT_TRUE(returned.is_same(written));
    EXPECT_TRUE(same(written, which == 0 ? relu(x) : which == 1 ? relu6(x) : selu(x)));
  }
  const Tensor even = input({4, 6, 4}, 4842, -3, 3);
  EXPECT_TRUE(same(F::glu(even, F::GLUFuncOptions()), glu(even, -1)));
  EXPECT_TRUE(same(F::glu(x, F::GLUFuncOptions(1)), glu(x, 1)));
  EXPECT_TRUE(same(F::hardshrink(x, F::HardshrinkFuncOptions()), hardshrink(x, 0.5)));
  EXPECT_TRUE(same(F::hardshrink(x, F::HardshrinkFuncOptions().lambda(1.2)), hardshrink(x, 1.2)));
  EXPECT_TRUE(same(F::softshrink(x, F::SoftshrinkFuncOptions(0.7)), softshrink(x, 0.7)));
  EXPECT_TRUE(same(F::threshold(x, F::ThresholdFuncOptions(0.4, -2.0)), threshold(x, 0.4, -2.0)));
  EXPECT_TRUE(same(F::rrelu(x, F::RReLUFuncOptions()), rrelu(x, 1.0 / 8.0, 1.0 / 3.0, false)));
  EXPECT_TRUE(
      same(F::rrelu(x, F::RReLUFuncOptions().lower(0.2).upper(0.6)), rrelu(x, 0.2, 0.6, false)));
  manual_seed(4841);
  const Tensor drawn = F::rrelu(x, F::RReLUFuncOptions().lower(0.1).upper(0.9).training(true));
  manual_seed(4841);
  EXPECT_TRUE(same(drawn, rrelu(x, 0.1, 0.9, true)));
}

TEST(FunctionalOptionsRest, Losses) {
  const Tensor a = input({6, 5}, 4850, -2, 2), b = input({6, 5}, 4851, -2, 2);
  const Tensor counts = input({6, 5}, 4852, 0.0, 4.0);
  const Tensor rates = input({6, 5}, 4859, 0.1, 3.0);
  EXPECT_TRUE(
      same(F::poisson_nll_loss(
               rates, counts,
               F::PoissonNLLLossFuncOptions().log_input(false).full(true).eps(1e-3).reduction(
                   Reduction::Sum)),
           poisson_nll_loss(rates, counts, false, true, 1e-3, Reduction::Sum)));
  EXPECT_TRUE(same(F::poisson_nll_loss(a, counts, F::PoissonNLLLossFuncOptions()),
                   poisson_nll_loss(a, counts, true, false, 1e-8, Reduction::Mean)));
  const Tensor u = input({6}, 4853), v = input({6}, 4854);
  const Tensor signs = tensor(std::vector<double>{1, -1, -1, 1, 1, -1}, {6});
  EXPECT_TRUE(same(F::margin_ranking_loss(
                       u, v, signs, F::MarginRankingLossFuncOptions().margin(0.3).reduction(kSum)),
                   margin_ranking_loss(u, v, signs, 0.3, Reduction::Sum)));
  EXPECT_TRUE(same(F::hinge_embedding_loss(
                       u, signs, F::HingeEmbeddingLossFuncOptions().margin(0.6).reduction(kNone)),
                   hinge_embedding_loss(u, signs, 0.6, Reduction::None)));
  const Tensor pm = mul(ones({6, 5}, kFloat64), signs.unsqueeze(1));
  EXPECT_TRUE(same(F::soft_margin_loss(a, pm, F::SoftMarginLossFuncOptions().reduction(kSum)),
                   soft_margin_loss(a, pm, Reduction::Sum)));
  const Tensor labels01 = input({6, 5}, 4855, 0.0, 1.0).gt(0.5).to(kFloat64);
  const Tensor class_weight = input({5}, 4856, 0.5, 1.5);
  EXPECT_TRUE(
      same(F::multilabel_soft_margin_loss(
               a, labels01,
               F::MultilabelSoftMarginLossFuncOptions().weight(class_weight).reduction(kNone)),
           multilabel_soft_margin_loss(a, labels01, class_weight, Reduction::None)));
  EXPECT_TRUE(
      same(F::cosine_embedding_loss(
               a, b, signs, F::CosineEmbeddingLossFuncOptions().margin(0.2).reduction(kSum)),
           cosine_embedding_loss(a, b, signs, 0.2, Reduction::Sum)));
  const Tensor c = input({6, 5}, 4857, -2, 2);
  EXPECT_TRUE(
      same(F::triplet_margin_loss(
               a, b, c,
               F::TripletMarginLossFuncOptions().margin(0.7).p(1.5).eps(1e-3).swap(true).reduction(
                   kNone)),
           triplet_margin_loss(a, b, c, 0.7, 1.5, 1e-3, true, Reduction::None)));
  const Tensor classes = ints({0, 4, 2, 2, 1, 3}, {6});
  EXPECT_TRUE(same(
      F::multi_margin_loss(
          a, classes,
          F::MultiMarginLossFuncOptions().p(2).margin(0.8).weight(class_weight).reduction(kSum)),
      multi_margin_loss(a, classes, 2, 0.8, class_weight, Reduction::Sum)));
  const Tensor label_lists = ints({3, 0,  -1, 1, 1, 2, 4, -1, 0, 0, 0, 0,  0, 0, 0,
                                   2, -1, 0,  0, 0, 4, 3, 2,  1, 0, 1, -1, 0, 0, 0},
                                  {6, 5});
  EXPECT_TRUE(same(F::multilabel_margin_loss(a, label_lists,
                                             F::MultilabelMarginLossFuncOptions().reduction(kNone)),
                   multilabel_margin_loss(a, label_lists, Reduction::None)));
  const DistanceFunction l1 = [](const Tensor& p, const Tensor& q) {
    return pairwise_distance(p, q, 1.0);
  };
  EXPECT_TRUE(
      same(F::triplet_margin_with_distance_loss(a, b, c,
                                                F::TripletMarginWithDistanceLossFuncOptions()
                                                    .distance_function(l1)
                                                    .margin(0.4)
                                                    .swap(true)
                                                    .reduction(kSum)),
           triplet_margin_with_distance_loss(a, b, c, l1, 0.4, true, Reduction::Sum)));
  EXPECT_TRUE(same(
      F::triplet_margin_with_distance_loss(a, b, c, F::TripletMarginWithDistanceLossFuncOptions()),
      triplet_margin_with_distance_loss(a, b, c, {}, 1.0, false, Reduction::Mean)));

  // CTC: (T, N, C) log-probabilities, targets without the blank (here class 2).
  const Tensor log_probs = log_softmax(input({7, 2, 4}, 4858, -2, 2), 2);
  const Tensor targets = ints({1, 3, 3, 0, 1, 0}, {2, 3});
  // The second sample cannot be aligned (2 labels in 1 step): an infinite loss unless zeroed.
  const Tensor input_lengths = ints({7, 1}, {2}), target_lengths = ints({3, 2}, {2});
  EXPECT_TRUE(
      same(F::ctc_loss(log_probs, targets, input_lengths, target_lengths,
                       F::CTCLossFuncOptions().blank(2).reduction(kSum).zero_infinity(true)),
           ctc_loss(log_probs, targets, input_lengths, target_lengths, 2, Reduction::Sum, true)));
}

TEST(FunctionalOptionsRest, NormsEmbeddingBagsAndFolds) {
  const Tensor x = input({3, 4, 5, 6}, 4860, -2, 2);
  const Tensor w = input({4}, 4861, 0.5, 1.5), bias = input({4}, 4862);
  const Tensor m1 = input({4}, 4863), v1 = input({4}, 4864, 0.5, 2.0);
  const Tensor m2 = m1.clone(), v2 = v1.clone();
  EXPECT_TRUE(same(F::instance_norm(x, F::InstanceNormFuncOptions()
                                           .running_mean(m1)
                                           .running_var(v1)
                                           .weight(w)
                                           .bias(bias)
                                           .momentum(0.3)
                                           .eps(1e-3)),
                   instance_norm(x, m2, v2, w, bias, true, 0.3, 1e-3)));
  EXPECT_TRUE(same(m1, m2));  // the running statistics moved the same way
  EXPECT_TRUE(same(v1, v2));
  EXPECT_TRUE(same(
      F::instance_norm(
          x, F::InstanceNormFuncOptions().running_mean(m1).running_var(v1).use_input_stats(false)),
      instance_norm(x, m1, v1, Tensor(), Tensor(), false, 0.1, 1e-5)));
  EXPECT_TRUE(same(F::instance_norm(x, F::InstanceNormFuncOptions()), instance_norm(x)));
  EXPECT_TRUE(same(
      F::local_response_norm(x, F::LocalResponseNormFuncOptions(3).alpha(0.2).beta(0.6).k(1.5)),
      local_response_norm(x, 3, 0.2, 0.6, 1.5)));
  EXPECT_TRUE(same(F::local_response_norm(x, F::LocalResponseNormFuncOptions(2)),
                   local_response_norm(x, 2, 1e-4, 0.75, 1.0)));

  const Tensor table = input({7, 3}, 4865);
  const Tensor flat = ints({0, 6, 2, 2, 5, 1, 3}, {7});
  const Tensor offsets = ints({0, 2, 2, 5, 7}, {5});
  const Tensor per_sample = input({7}, 4866, 0.5, 1.5);
  EXPECT_TRUE(
      same(F::embedding_bag(flat, table,
                            F::EmbeddingBagFuncOptions()
                                .offsets(offsets)
                                .mode(kSum)
                                .per_sample_weights(per_sample)
                                .include_last_offset(true)
                                .padding_idx(2)),
           embedding_bag(flat, table, offsets, EmbeddingBagMode::Sum, per_sample, true, 2)));
  const Tensor rows = ints({0, 6, 2, 2, 5, 1}, {2, 3});
  EXPECT_TRUE(same(F::embedding_bag(rows, table, F::EmbeddingBagFuncOptions()),
                   embedding_bag(rows, table, Tensor(), EmbeddingBagMode::Mean)));
  EXPECT_TRUE(same(F::embedding_bag(rows, table, F::EmbeddingBagFuncOptions().mode(kMax)),
                   embedding_bag(rows, table, Tensor(), EmbeddingBagMode::Max)));

  const Tensor columns = F::unfold(
      x, F::UnfoldFuncOptions(Size2{2, 3}).dilation(Size2{2, 1}).padding(1).stride(Size2{1, 2}));
  EXPECT_TRUE(same(columns, unfold(x, {2, 3}, {2, 1}, {1, 1}, {1, 2})));
  EXPECT_TRUE(same(F::unfold(x, F::UnfoldFuncOptions(2)), unfold(x, {2, 2})));
  EXPECT_TRUE(same(F::fold(columns, F::FoldFuncOptions(Size2{5, 6}, Size2{2, 3})
                                        .dilation(Size2{2, 1})
                                        .padding(1)
                                        .stride(Size2{1, 2})),
                   fold(columns, {5, 6}, {2, 3}, {2, 1}, {1, 1}, {1, 2})));
  const Tensor blocks = unfold(x, {2, 2});
  EXPECT_TRUE(
      same(F::fold(blocks, F::FoldFuncOptions(Size2{5, 6}, 2)), fold(blocks, {5, 6}, {2, 2})));
}

}  // namespace
}  // namespace leangrad
