// Tests of the layer modules (nn/linear.h, nn/pooling.h, nn/dropout.h, nn/loss.h): parameter
// names, PyTorch's init bounds, forward equal to the function, train/eval, extra_repr.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include <leangrad/autograd/functions.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/dropout.h>
#include <leangrad/nn/linear.h>
#include <leangrad/nn/loss.h>
#include <leangrad/nn/pooling.h>
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

TEST(LinearModule, NamesShapesAndInitBounds) {
  manual_seed(0);
  nn::Linear fc(300, 20);
  const auto params = fc->named_parameters();
  ASSERT_EQ(params.size(), 2u);
  EXPECT_EQ(params[0].first, "weight");
  EXPECT_EQ(params[1].first, "bias");
  EXPECT_EQ(fc->weight.shape(), (Shape{20, 300}));
  EXPECT_EQ(fc->bias.shape(), (Shape{20}));
  const double bound = 1.0 / std::sqrt(300.0);
  for (const Tensor& t : {fc->weight, fc->bias}) {
    double max_abs = 0;
    for (double v : test::to_vector(t))
      max_abs = std::max(max_abs, std::abs(v));
    EXPECT_LE(max_abs, bound);
    EXPECT_GT(max_abs, 0.9 * bound);  // the range is used, not a smaller one
  }
  EXPECT_EQ(fc->extra_repr(), "in_features=300, out_features=20, bias=true");
}

TEST(LinearModule, NoBiasAndForwardEqualsFunction) {
  nn::Linear fc(nn::LinearOptions(5, 3).bias(false));
  EXPECT_EQ(fc->named_parameters().size(), 1u);
  EXPECT_FALSE(fc->bias.defined());
  const Tensor x = rand({2, 4, 5});
  EXPECT_TRUE(test::all_close(fc(x), test::to_vector(linear(x, fc->weight)), 0, 0));
  EXPECT_EQ(fc(x).shape(), (Shape{2, 4, 3}));
}

// No input features: the weight is empty and the bias, which the output then is, 0 (PyTorch's
// bound 0 for a fan_in of 0), not what the allocator's block held before (leftover values).
TEST(LinearModule, NoInputFeaturesGiveAZeroBias) {
  for (int i = 0; i < 4; ++i)
    full({8}, 12345.0);  // a freed block of the bias's size holding non-zero values
  nn::Linear fc(0, 8);
  EXPECT_EQ(fc->weight.shape(), (Shape{8, 0}));
  EXPECT_TRUE(test::all_close(fc->bias, std::vector<double>(8, 0.0), 0, 0));
  const Tensor y = fc(zeros({3, 0}));
  EXPECT_EQ(y.shape(), (Shape{3, 8}));
  EXPECT_TRUE(test::all_close(y, std::vector<double>(24, 0.0), 0, 0));
  EXPECT_TRUE(fc->bias.requires_grad());
}

TEST(PoolModule, ForwardEqualsFunctionAndRepr) {
  const Tensor x = rand({2, 3, 8, 8});
  nn::MaxPool2d pool(2);
  EXPECT_TRUE(test::all_close(pool(x), test::to_vector(max_pool2d(x, {2, 2})), 0, 0));
  EXPECT_EQ(pool->extra_repr(),
            "kernel_size=[2, 2], stride=[2, 2], padding=[0, 0], dilation=[1, 1], ceil_mode=false");
  nn::MaxPool2d pool3(nn::MaxPool2dOptions(3).stride(1).padding(1));
  EXPECT_EQ(pool3(x).shape(), (Shape{2, 3, 8, 8}));
  nn::AvgPool2d avg(nn::AvgPool2dOptions(3).stride(2).padding(1));
  EXPECT_TRUE(
      test::all_close(avg(x), test::to_vector(avg_pool2d(x, {3, 3}, {2, 2}, {1, 1})), 0, 0));
  EXPECT_TRUE(pool->named_parameters().is_empty());
}

// The options of nn::MaxPool2d / nn::AvgPool2d reach the functions, and print as LibTorch's
// (AvgPool2d adds its divisor options, docs/api-notes.md).
TEST(PoolModule, OptionsReachTheFunctionsAndPrint) {
  const Tensor x = rand({2, 3, 9, 8});
  nn::MaxPool2d pool(
      nn::MaxPool2dOptions({3, 2}).stride({2, 1}).padding({1, 0}).dilation(2).ceil_mode(true));
  EXPECT_TRUE(test::all_close(
      pool(x), test::to_vector(max_pool2d(x, {3, 2}, {2, 1}, {1, 0}, {2, 2}, true)), 0, 0));
  auto [y, indices] = pool->forward_with_indices(x);
  auto [y_f, indices_f] = max_pool2d_with_indices(x, {3, 2}, {2, 1}, {1, 0}, {2, 2}, true);
  EXPECT_TRUE(test::all_close(y, test::to_vector(y_f), 0, 0));
  EXPECT_TRUE(test::all_close(indices, test::to_vector(indices_f), 0, 0));
  EXPECT_EQ(pool->extra_repr(),
            "kernel_size=[3, 2], stride=[2, 1], padding=[1, 0], dilation=[2, 2], ceil_mode=true");
  nn::AvgPool2d avg(
      nn::AvgPool2dOptions(3).stride(2).padding(1).ceil_mode(true).count_include_pad(false));
  EXPECT_TRUE(test::all_close(
      avg(x), test::to_vector(avg_pool2d(x, {3, 3}, {2, 2}, {1, 1}, true, false)), 0, 0));
  EXPECT_EQ(avg->extra_repr(),
            "kernel_size=[3, 3], stride=[2, 2], padding=[1, 1], "
            "ceil_mode=true, count_include_pad=false");
  nn::AvgPool2d divided(nn::AvgPool2dOptions(2).divisor_override(3));
  EXPECT_TRUE(test::all_close(
      divided(x), test::to_vector(avg_pool2d(x, {2, 2}, {2, 2}, {0, 0}, false, true, 3)), 0, 0));
  EXPECT_EQ(divided->extra_repr(),
            "kernel_size=[2, 2], stride=[2, 2], padding=[0, 0], "
            "ceil_mode=false, count_include_pad=true, divisor_override=3");
  EXPECT_EQ(nn::AvgPool2d(2)->extra_repr(),
            "kernel_size=[2, 2], stride=[2, 2], padding=[0, 0], "
            "ceil_mode=false, count_include_pad=true");
}

TEST(PixelShuffleModule, ShuffleUnshuffleFlatten) {
  const Tensor x = rand({2, 8, 3, 3});
  nn::PixelShuffle shuffle(2);
  nn::PixelUnshuffle unshuffle(2);
  EXPECT_EQ(shuffle(x).shape(), (Shape{2, 2, 6, 6}));
  EXPECT_TRUE(test::all_close(unshuffle(shuffle(x)), test::to_vector(x), 0, 0));
  EXPECT_EQ(shuffle->extra_repr(), "upscale_factor=2");
  nn::Flatten flatten;
  EXPECT_EQ(flatten(x).shape(), (Shape{2, 72}));
  EXPECT_EQ(nn::Flatten(0, 1)(x).shape(), (Shape{16, 3, 3}));
  EXPECT_EQ(flatten->extra_repr(), "start_dim=1, end_dim=-1");
}

TEST(DropoutModule, ObeysTrainAndEval) {
  nn::Dropout drop(0.5);
  const Tensor x = ones({100, 100});
  EXPECT_TRUE(drop->is_training());
  manual_seed(3);
  const Tensor y = drop(x);
  manual_seed(3);
  EXPECT_TRUE(test::all_close(y, test::to_vector(dropout(x, 0.5, true)), 0, 0));
  double zero_count = 0;
  for (double v : test::to_vector(y))
    zero_count += v == 0.0;
  EXPECT_NEAR(zero_count / 10000, 0.5, 0.03);
  drop->eval();
  EXPECT_TRUE(test::all_close(drop(x), test::to_vector(x), 0, 0));
  EXPECT_EQ(drop->extra_repr(), "p=0.5");
  EXPECT_THROW(nn::Dropout(2.0), Error);
  // LibTorch's options spelling: the same module.
  nn::Dropout from_options(nn::DropoutOptions().p(0.25));
  EXPECT_EQ(from_options->options.p(), 0.25);
  EXPECT_EQ(from_options->extra_repr(), "p=0.25");
  EXPECT_EQ(nn::Dropout()->options.p(), 0.5);
  EXPECT_THROW(nn::Dropout(nn::DropoutOptions(-0.1)), Error);
}

TEST(LossModule, ForwardEqualsFunction) {
  const Tensor logits = rand({4, 5});
  const Tensor target = test::make_tensor({1, 0, 4, 2}, {4}, kInt64);
  nn::CrossEntropyLoss ce;
  EXPECT_TRUE(
      test::all_close(ce(logits, target), test::to_vector(cross_entropy(logits, target)), 0, 0));
  nn::CrossEntropyLoss ce_sum(
      nn::CrossEntropyLossOptions().reduction(Reduction::Sum).ignore_index(0));
  EXPECT_TRUE(test::all_close(ce_sum(logits, target),
                              test::to_vector(cross_entropy(logits, target, Reduction::Sum, 0)), 0,
                              0));
  EXPECT_EQ(ce_sum->extra_repr(), "reduction=sum, ignore_index=0");
  const Tensor a = rand({3, 4}), b = rand({3, 4});
  EXPECT_TRUE(test::all_close(nn::MSELoss()(a, b), test::to_vector(mse_loss(a, b)), 0, 0));
  EXPECT_TRUE(test::all_close(nn::L1Loss(nn::L1LossOptions().reduction(Reduction::None))(a, b),
                              test::to_vector(l1_loss(a, b, Reduction::None)), 0, 0));
  EXPECT_THROW(ce->forward(logits), Error);  // a loss needs a target
}

TEST(LossModule, ClassWeightIsABufferAndEveryOptionReachesTheFunction) {
  const Tensor logits = rand({4, 5});
  const Tensor target = test::make_tensor({1, 0, 4, 2}, {4}, kInt64);
  const Tensor weight = test::make_tensor({0.5, 2.0, 1.0, 3.0, 0.25}, {5});
  nn::CrossEntropyLoss ce(nn::CrossEntropyLossOptions()
                              .weight(weight)
                              .ignore_index(2)
                              .reduction(Reduction::Sum)
                              .label_smoothing(0.1));
  EXPECT_TRUE(test::all_close(
      ce(logits, target),
      test::to_vector(cross_entropy(logits, target, Reduction::Sum, 2, weight, 0.1)), 0, 0));
  // The weight changes the value (a module that dropped it would give the unweighted loss).
  EXPECT_FALSE(test::all_close(
      ce(logits, target),
      test::to_vector(cross_entropy(logits, target, Reduction::Sum, 2, Tensor(), 0.1)), 0, 0));
  EXPECT_EQ(ce->extra_repr(), "reduction=sum, ignore_index=2, weight=[5], label_smoothing=0.1");
  const auto state = ce->state_dict();
  ASSERT_EQ(state.size(), 1u);
  EXPECT_EQ(state[0].first, "weight");
  EXPECT_TRUE(ce->parameters().empty());
  EXPECT_TRUE(nn::CrossEntropyLoss()->state_dict().empty());  // no weight, no buffer

  nn::NLLLoss nll(nn::NLLLossOptions().weight(weight).reduction(Reduction::Mean));
  const Tensor logp = log_softmax(logits, 1);
  EXPECT_TRUE(test::all_close(
      nll(logp, target), test::to_vector(nll_loss(logp, target, Reduction::Mean, -100, weight)), 0,
      0));
  EXPECT_EQ(nll->extra_repr(), "reduction=mean, ignore_index=-100, weight=[5]");
  EXPECT_EQ(nll->state_dict().size(), 1u);
  EXPECT_EQ(nn::NLLLoss()->extra_repr(), "reduction=mean, ignore_index=-100");
  // Class probabilities through the module.
  const Tensor p = softmax(rand({4, 5}), 1);
  EXPECT_TRUE(test::all_close(nn::CrossEntropyLoss()(logits, p),
                              test::to_vector(cross_entropy(logits, p)), 0, 0));
}

// A segmentation loss through the module: logits (N, C, H, W), class indices (N, H, W). Each
// pixel's loss under None is the (N, C) loss of that pixel's logits, taken here with select
// instead of the permute the function uses; Mean is their sum over the summed class weights of
// the pixels not ignored (PyTorch's K-d definition). float64: the same per-row arithmetic, summed
// in another order at most over the 2 * 3 * 2 = 12 pixels, so 1e-14 relative is ample.
TEST(LossModule, SegmentationLossIsThePerPixelLoss) {
  const Tensor logits = rand({2, 4, 3, 2}, TensorOptions(kFloat64));
  const Tensor target =
      test::make_tensor({1, 3, -100, 0, 2, 2, 0, 1, 3, -100, 1, 0}, {2, 3, 2}, kInt64);
  const Tensor weight = test::make_tensor({0.5, 2.0, 1.25, 3.0}, {4}, kFloat64);
  nn::CrossEntropyLoss per_pixel(
      nn::CrossEntropyLossOptions().weight(weight).reduction(Reduction::None));
  const Tensor losses = per_pixel(logits, target);
  ASSERT_EQ(losses.shape(), Shape({2, 3, 2}));
  double loss_sum = 0.0, weight_sum = 0.0;
  for (std::int64_t h = 0; h < 3; ++h) {
    for (std::int64_t w = 0; w < 2; ++w) {
      const Tensor pixel_logits = logits.select(3, w).select(2, h);  // (N, C)
      const Tensor pixel_target = target.select(2, w).select(1, h);  // (N,)
      const Tensor expected =
          cross_entropy(pixel_logits, pixel_target, Reduction::None, -100, weight);
      EXPECT_TRUE(
          test::all_close(losses.select(2, w).select(1, h), test::to_vector(expected), 1e-14, 0));
      loss_sum += expected.sum().item<double>();
      for (double t : test::to_vector(pixel_target))
        if (t != -100) weight_sum += test::to_vector(weight)[static_cast<std::size_t>(t)];
    }
  }
  nn::CrossEntropyLoss mean(nn::CrossEntropyLossOptions().weight(weight));
  EXPECT_NEAR(mean(logits, target).item<double>(), loss_sum / weight_sum,
              1e-14 * loss_sum / weight_sum);
}

}  // namespace
}  // namespace leangrad
