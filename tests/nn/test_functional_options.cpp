// LibTorch's functional options (nn/functional_options.h): each F:: overload with options set to
// values other than the defaults equals the positional function called with those values, in the
// same order (so a field passed to the wrong parameter fails); each default-constructed options
// object equals the positional call with LibTorch's documented defaults written out; and a
// LibTorch-style block of calls compiles and runs as written.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <leangrad/autograd/activations.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/losses.h>
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

Tensor input(const Shape& shape, std::uint64_t seed, double low = -1.0, double high = 1.0) {
  return test::uniform_input(shape, low, high, seed).detach();
}

TEST(FunctionalOptions, ConvolutionsAndPoolings) {
  const Tensor x1 = input({2, 4, 17}, 4750), w1 = input({6, 2, 3}, 4751), b6 = input({6}, 4752);
  EXPECT_TRUE(same(
      F::conv1d(x1, w1, F::Conv1dFuncOptions().bias(b6).stride(2).padding(1).dilation(2).groups(2)),
      conv1d(x1, w1, b6, 2, 1, 2, 2)));
  EXPECT_TRUE(same(F::conv1d(x1, w1, F::Conv1dFuncOptions().groups(2)),
                   conv1d(x1, w1, Tensor(), 1, 0, 1, 2)));
  const Tensor x2 = input({2, 4, 11, 9}, 4753), w2 = input({6, 2, 3, 2}, 4754);
  EXPECT_TRUE(same(F::conv2d(x2, w2,
                             F::Conv2dFuncOptions()
                                 .bias(b6)
                                 .stride(Size2{2, 1})
                                 .padding(Size2{1, 0})
                                 .dilation(Size2{1, 2})
                                 .groups(2)),
                   conv2d(x2, w2, b6, {2, 1}, {1, 0}, {1, 2}, 2)));
  EXPECT_TRUE(same(F::conv2d(x2, w2, F::Conv2dFuncOptions().padding(1).groups(2)),
                   conv2d(x2, w2, Tensor(), {1, 1}, {1, 1}, {1, 1}, 2)));
  const Tensor x3 = input({1, 2, 5, 6, 7}, 4755), w3 = input({3, 2, 2, 3, 2}, 4756);
  EXPECT_TRUE(same(F::conv3d(x3, w3, F::Conv3dFuncOptions().stride(Size3{1, 2, 1}).padding(1)),
                   conv3d(x3, w3, Tensor(), {1, 2, 1}, {1, 1, 1})));

  EXPECT_TRUE(
      same(F::max_pool1d(
               x1, F::MaxPool1dFuncOptions(3).stride(2).padding(1).dilation(2).ceil_mode(true)),
           max_pool1d(x1, 3, 2, 1, 2, true)));
  EXPECT_TRUE(same(F::max_pool2d(x2, F::MaxPool2dFuncOptions(3).stride(Size2{2, 1}).padding(1)),
                   max_pool2d(x2, {3, 3}, {2, 1}, {1, 1})));
  EXPECT_TRUE(same(F::max_pool2d(x2, F::MaxPool2dFuncOptions(2)), max_pool2d(x2, {2, 2})));
  EXPECT_TRUE(same(F::max_pool3d(x3, F::MaxPool3dFuncOptions(2).stride(1).ceil_mode(true)),
                   max_pool3d(x3, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, true)));
  EXPECT_TRUE(same(
      F::avg_pool1d(
          x1,
          F::AvgPool1dFuncOptions(4).stride(3).padding(2).ceil_mode(true).count_include_pad(false)),
      avg_pool1d(x1, 4, 3, 2, true, false)));
  EXPECT_TRUE(same(
      F::avg_pool2d(
          x2,
          F::AvgPool2dFuncOptions(3).stride(2).padding(1).count_include_pad(false).divisor_override(
              5)),
      avg_pool2d(x2, {3, 3}, {2, 2}, {1, 1}, false, false, 5)));
  EXPECT_TRUE(same(F::avg_pool3d(x3, F::AvgPool3dFuncOptions(2).divisor_override(3)),
                   avg_pool3d(x3, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, false, true, 3)));
  EXPECT_TRUE(same(F::adaptive_avg_pool1d(x1, F::AdaptiveAvgPool1dFuncOptions(5)),
                   adaptive_avg_pool1d(x1, 5)));
  EXPECT_TRUE(same(F::adaptive_avg_pool2d(x2, F::AdaptiveAvgPool2dFuncOptions(Size2{3, 4})),
                   adaptive_avg_pool2d(x2, {3, 4})));
  EXPECT_TRUE(same(F::adaptive_avg_pool3d(x3, F::AdaptiveAvgPool3dFuncOptions(Size3{2, 3, 4})),
                   adaptive_avg_pool3d(x3, {2, 3, 4})));
  EXPECT_TRUE(same(F::adaptive_max_pool2d(x2, F::AdaptiveMaxPool2dFuncOptions(2)),
                   adaptive_max_pool2d(x2, {2, 2})));
}

TEST(FunctionalOptions, DropoutSoftmaxAndActivations) {
  const Tensor x = input({4, 6, 5}, 4760, -3, 3);
  // LibTorch's defaults: p 0.5, training true. The same seed draws the same mask.
  manual_seed(4761);
  const Tensor a = F::dropout(x, F::DropoutFuncOptions());
  manual_seed(4761);
  EXPECT_TRUE(same(a, dropout(x, 0.5, true)));
  manual_seed(4762);
  const Tensor b = F::dropout(x, F::DropoutFuncOptions().p(0.2));
  manual_seed(4762);
  EXPECT_TRUE(same(b, dropout(x, 0.2, true)));
  EXPECT_TRUE(same(F::dropout(x, F::DropoutFuncOptions().p(0.9).training(false)), x));
  const std::string refused =
      test::error_message([&] { F::dropout(x, F::DropoutFuncOptions().inplace(true)); });
  EXPECT_NE(refused.find("dropout: inplace is not supported"), std::string::npos) << refused;

  EXPECT_TRUE(same(F::softmax(x, F::SoftmaxFuncOptions(1)), softmax(x, 1)));
  EXPECT_TRUE(same(F::log_softmax(x, F::LogSoftmaxFuncOptions(-1)), log_softmax(x, -1)));
  EXPECT_TRUE(same(F::softmin(x, F::SoftminFuncOptions(0)), softmin(x, 0)));

  EXPECT_TRUE(same(F::leaky_relu(x, F::LeakyReLUFuncOptions()), leaky_relu(x, 0.01)));
  EXPECT_TRUE(
      same(F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(0.3)), leaky_relu(x, 0.3)));
  EXPECT_TRUE(same(F::gelu(x, F::GELUFuncOptions().approximate("tanh")), gelu(x, "tanh")));
  EXPECT_TRUE(same(F::elu(x, F::ELUFuncOptions().alpha(0.7)), elu(x, 0.7)));
  EXPECT_TRUE(same(F::hardtanh(x, F::HardtanhFuncOptions().min_val(-0.5).max_val(2.0)),
                   hardtanh(x, -0.5, 2.0)));
  EXPECT_TRUE(same(F::softplus(x, F::SoftplusFuncOptions().beta(2.0).threshold(1.5)),
                   softplus(x, 2.0, 1.5)));
  EXPECT_TRUE(same(F::celu(x, F::CELUFuncOptions().alpha(1.5)), celu(x, 1.5)));
  // inplace writes the input and returns it, as LibTorch's.
  Tensor written = x.clone();
  const Tensor returned =
      F::leaky_relu(written, F::LeakyReLUFuncOptions().negative_slope(0.3).inplace(true));
  EXPECT_TRUE(returned.is_same(written));
  EXPECT_TRUE(same(written, leaky_relu(x, 0.3)));
  Tensor clipped = x.clone();
  EXPECT_TRUE(F::hardtanh(clipped, F::HardtanhFuncOptions().inplace(true)).is_same(clipped));
  EXPECT_TRUE(same(clipped, hardtanh(x, -1.0, 1.0)));
  Tensor smoothed = x.clone();
  EXPECT_TRUE(F::elu(smoothed, F::ELUFuncOptions().alpha(0.4).inplace(true)).is_same(smoothed));
  EXPECT_TRUE(same(smoothed, elu(x, 0.4)));
}

TEST(FunctionalOptions, Losses) {
  const Tensor logits = input({6, 5}, 4770, -2, 2);
  const Tensor labels = tensor(std::vector<std::int64_t>{0, 4, 2, 2, 1, 3}, {6});
  const Tensor weight = input({5}, 4771, 0.5, 1.5);
  EXPECT_TRUE(same(F::cross_entropy(logits, labels,
                                    F::CrossEntropyFuncOptions()
                                        .weight(weight)
                                        .ignore_index(2)
                                        .reduction(Reduction::Sum)
                                        .label_smoothing(0.1)),
                   cross_entropy(logits, labels, Reduction::Sum, 2, weight, 0.1)));
  EXPECT_TRUE(same(F::cross_entropy(logits, labels, F::CrossEntropyFuncOptions()),
                   cross_entropy(logits, labels, Reduction::Mean, -100, Tensor(), 0.0)));
  const Tensor logp = log_softmax(logits, 1);
  EXPECT_TRUE(same(F::nll_loss(logp, labels,
                               F::NLLLossFuncOptions().weight(weight).ignore_index(4).reduction(
                                   Reduction::None)),
                   nll_loss(logp, labels, Reduction::None, 4, weight)));
  const Tensor a = input({4, 7}, 4772), b = input({4, 7}, 4773);
  EXPECT_TRUE(same(F::mse_loss(a, b, F::MSELossFuncOptions().reduction(Reduction::Sum)),
                   mse_loss(a, b, Reduction::Sum)));
  EXPECT_TRUE(same(F::l1_loss(a, b, F::L1LossFuncOptions()), l1_loss(a, b, Reduction::Mean)));
  EXPECT_TRUE(same(F::smooth_l1_loss(a, b, F::SmoothL1LossFuncOptions().beta(0.3)),
                   smooth_l1_loss(a, b, Reduction::Mean, 0.3)));
  EXPECT_TRUE(
      same(F::huber_loss(a, b, F::HuberLossFuncOptions().delta(0.4).reduction(Reduction::None)),
           huber_loss(a, b, Reduction::None, 0.4)));
  const Tensor p = input({4, 7}, 4774, 0.05, 0.95), t = input({4, 7}, 4775, 0.0, 1.0);
  const Tensor bce_weight = input({7}, 4776, 0.5, 1.5);
  EXPECT_TRUE(same(
      F::binary_cross_entropy(
          p, t, F::BinaryCrossEntropyFuncOptions().weight(bce_weight).reduction(Reduction::Sum)),
      binary_cross_entropy(p, t, Reduction::Sum, bce_weight)));
  const Tensor pos_weight = input({7}, 4777, 0.5, 3.0);
  EXPECT_TRUE(
      same(F::binary_cross_entropy_with_logits(a, t,
                                               F::BinaryCrossEntropyWithLogitsFuncOptions()
                                                   .weight(bce_weight)
                                                   .pos_weight(pos_weight)
                                                   .reduction(Reduction::None)),
           binary_cross_entropy_with_logits(a, t, Reduction::None, bce_weight, pos_weight)));
  const Tensor target_logp = log_softmax(input({6, 5}, 4778), 1);
  EXPECT_TRUE(
      same(F::kl_div(logp, target_logp,
                     F::KLDivFuncOptions().reduction(KLDivReduction::BatchMean).log_target(true)),
           kl_div(logp, target_logp, KLDivReduction::BatchMean, true)));
}

TEST(FunctionalOptions, NormalizationPaddingAndTheRest) {
  const Tensor x = input({3, 4, 5, 6}, 4780, -2, 2);
  EXPECT_TRUE(same(F::normalize(x, F::NormalizeFuncOptions()), normalize(x, 2.0, 1, 1e-12)));
  EXPECT_TRUE(same(F::normalize(x, F::NormalizeFuncOptions().p(1.0).dim(-1).eps(1e-3)),
                   normalize(x, 1.0, -1, 1e-3)));
  const Tensor w = input({5, 6}, 4781, 0.5, 1.5), b = input({5, 6}, 4782);
  EXPECT_TRUE(same(F::layer_norm(x, F::LayerNormFuncOptions({5, 6}).weight(w).bias(b).eps(1e-3)),
                   layer_norm(x, {5, 6}, w, b, 1e-3)));
  EXPECT_TRUE(same(F::layer_norm(x, F::LayerNormFuncOptions({6})), layer_norm(x, {6})));
  const Tensor gw = input({4}, 4783, 0.5, 1.5), gb = input({4}, 4784);
  EXPECT_TRUE(same(F::group_norm(x, F::GroupNormFuncOptions(2).weight(gw).bias(gb).eps(1e-2)),
                   group_norm(x, 2, gw, gb, 1e-2)));
  const Tensor mean = input({4}, 4785), var = input({4}, 4786, 0.5, 2.0);
  EXPECT_TRUE(
      same(F::batch_norm(x, mean, var, F::BatchNormFuncOptions().weight(gw).bias(gb).eps(1e-3)),
           batch_norm(x, mean, var, gw, gb, false, 0.1, 1e-3)));
  // Training updates the running statistics in place: the same from equal copies.
  const Tensor m1 = mean.clone(), v1 = var.clone(), m2 = mean.clone(), v2 = var.clone();
  EXPECT_TRUE(same(F::batch_norm(x, m1, v1, F::BatchNormFuncOptions().training(true).momentum(0.3)),
                   batch_norm(x, m2, v2, Tensor(), Tensor(), true, 0.3, 1e-5)));
  EXPECT_TRUE(same(m1, m2));
  EXPECT_TRUE(same(v1, v2));

  EXPECT_TRUE(same(F::pad(x, F::PadFuncOptions({1, 2, 0, 3})), pad(x, {1, 2, 0, 3}, 0.0)));
  EXPECT_TRUE(same(F::pad(x, F::PadFuncOptions({1, 2, 2, 1}).mode(kReflect)),
                   pad(x, {1, 2, 2, 1}, kReflect)));
  EXPECT_TRUE(same(F::pad(x, F::PadFuncOptions({2, 0}).value(-4.0)), pad(x, {2, 0}, -4.0)));

  const Tensor table = input({7, 3}, 4787);
  const Tensor ids = tensor(std::vector<std::int64_t>{0, 6, 2, 2}, {2, 2});
  EXPECT_TRUE(same(F::embedding(ids, table, F::EmbeddingFuncOptions()), embedding(ids, table)));
  EXPECT_TRUE(same(F::embedding(ids, table, F::EmbeddingFuncOptions().padding_idx(2)),
                   embedding(ids, table, 2)));

  EXPECT_TRUE(same(F::interpolate(x, F::InterpolateFuncOptions()
                                         .size(std::vector<std::int64_t>{7, 4})
                                         .mode(kBilinear)
                                         .align_corners(true)),
                   interpolate(x, Size2{7, 4}, std::nullopt, kBilinear, true)));
  EXPECT_TRUE(
      same(F::interpolate(x, F::InterpolateFuncOptions()
                                 .scale_factor(std::vector<double>{0.5, 0.5})
                                 .mode(kBicubic)
                                 .recompute_scale_factor(true)
                                 .antialias(true)),
           interpolate(x, std::nullopt, Scale2{0.5, 0.5}, kBicubic, std::nullopt, true, true)));
  EXPECT_TRUE(same(
      F::interpolate(x, F::InterpolateFuncOptions().scale_factor(std::vector<double>{2.0, 1.5})),
      interpolate(x, std::nullopt, Scale2{2.0, 1.5}, kNearest)));

  const Tensor y = input({3, 4, 5, 6}, 4788);
  EXPECT_TRUE(same(F::cosine_similarity(x, y, F::CosineSimilarityFuncOptions().dim(2).eps(1e-3)),
                   cosine_similarity(x, y, 2, 1e-3)));
  const Tensor u = input({5, 8}, 4789), v = input({5, 8}, 4790);
  EXPECT_TRUE(same(
      F::pairwise_distance(u, v, F::PairwiseDistanceFuncOptions().p(1.5).eps(1e-3).keepdim(true)),
      pairwise_distance(u, v, 1.5, 1e-3, true)));
  const Tensor image = input({2, 8, 3, 3}, 4791);
  EXPECT_TRUE(
      same(F::pixel_shuffle(image, F::PixelShuffleFuncOptions(2)), pixel_shuffle(image, 2)));
  EXPECT_TRUE(
      same(F::pixel_unshuffle(pixel_shuffle(image, 2), F::PixelUnshuffleFuncOptions(2)), image));
}

// A LibTorch program's forward, as it is written there (names as leangrad spells the enums).
TEST(FunctionalOptions, ALibTorchForwardCompilesAsWritten) {
  manual_seed(4795);
  const Tensor images = input({2, 3, 16, 16}, 4796);
  const Tensor w1 = input({8, 3, 3, 3}, 4797), b1 = input({8}, 4798);
  const Tensor fc = input({10, 8 * 4 * 4}, 4799);
  Tensor x = F::conv2d(images, w1, F::Conv2dFuncOptions().bias(b1).padding(1));
  x = F::max_pool2d(F::relu(x), F::MaxPool2dFuncOptions(2));
  x = F::dropout(x, F::DropoutFuncOptions().p(0.25).training(false));
  x = F::interpolate(x, F::InterpolateFuncOptions()
                            .size(std::vector<std::int64_t>{4, 4})
                            .mode(kBilinear)
                            .align_corners(false));
  x = F::linear(x.flatten(1), fc);
  const Tensor loss = F::cross_entropy(x, tensor(std::vector<std::int64_t>{3, 7}, {2}),
                                       F::CrossEntropyFuncOptions().label_smoothing(0.1));
  const Tensor probs = F::softmax(x, F::SoftmaxFuncOptions(1));
  EXPECT_EQ(loss.dim(), 0);
  EXPECT_TRUE(test::all_close(probs.sum({1}), std::vector<double>{1.0, 1.0}, 0, 1e-12));
}

}  // namespace
}  // namespace leangrad
