// Tests of nn::Conv2d (nn/conv.cpp): parameter names and shapes, PyTorch's initialisation bounds,
// extra_repr as PyTorch prints it, forward equal to leangrad::conv2d, and gradients reaching both
// parameters.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <sstream>

#include <leangrad/autograd/functions.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/conv.h>
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using test::all_close;
using test::to_vector;

TEST(Conv2dModule, ParametersAreNamedAndShapedAsPyTorch) {
  nn::Conv2d conv(nn::Conv2dOptions(4, 6, 3).groups(2));
  const auto params = conv->named_parameters();
  ASSERT_EQ(params.size(), 2u);
  EXPECT_EQ(params[0].first, "weight");
  EXPECT_EQ(params[0].second.shape(), (Shape{6, 2, 3, 3}));
  EXPECT_EQ(params[1].first, "bias");
  EXPECT_EQ(params[1].second.shape(), (Shape{6}));
  EXPECT_TRUE(params[0].second.requires_grad());

  nn::Conv2d no_bias(nn::Conv2dOptions(3, 2, 5).bias(false));
  ASSERT_EQ(no_bias->named_parameters().size(), 1u);
  EXPECT_FALSE(no_bias->bias.defined());
}

TEST(Conv2dModule, InitialisationIsUniformWithinOneOverSqrtFanIn) {
  nn::Conv2d conv(nn::Conv2dOptions(16, 32, 3));
  const double bound = 1.0 / std::sqrt(16.0 * 9.0);
  for (const Tensor& t : {conv->weight, conv->bias}) {
    double lo = 1e9, hi = -1e9, mean = 0;
    const std::vector<double> v = to_vector(t);
    for (double x : v) {
      lo = std::min(lo, x), hi = std::max(hi, x), mean += x / static_cast<double>(v.size());
    }
    EXPECT_GE(lo, -bound);
    EXPECT_LE(hi, bound);
    if (v.size() > 1000) {  // the weight: spread over the whole range, centred
      EXPECT_LT(lo, -0.9 * bound);
      EXPECT_GT(hi, 0.9 * bound);
      EXPECT_NEAR(mean, 0.0, 0.05 * bound);
    }
  }
}

TEST(Conv2dModule, ExtraReprMatchesPyTorch) {
  EXPECT_EQ(nn::Conv2d(nn::Conv2dOptions(1, 32, 3).stride(1).padding(1))->extra_repr(),
            "1, 32, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1)");
  EXPECT_EQ(
      nn::Conv2d(nn::Conv2dOptions(4, 8, Size2{3, 5}).stride(2).dilation(2).groups(4).bias(false))
          ->extra_repr(),
      "4, 8, kernel_size=(3, 5), stride=(2, 2), dilation=(2, 2), groups=4, bias=False");
  std::ostringstream out;
  out << nn::Conv2d(nn::Conv2dOptions(3, 3, 1));
  EXPECT_NE(out.str().find("Conv2d(3, 3, kernel_size=(1, 1), stride=(1, 1))"), std::string::npos)
      << out.str();
}

TEST(Conv2dModule, ForwardIsConv2dAndGradientsReachTheParameters) {
  nn::Conv2d conv(nn::Conv2dOptions(3, 4, 3).stride(2).padding(1));
  const Tensor x = rand({2, 3, 9, 8});
  const Tensor y = conv->forward(x);
  EXPECT_EQ(y.shape(), (Shape{2, 4, 5, 4}));
  const Tensor expected = conv2d(x, conv->weight, conv->bias, {2, 2}, {1, 1});
  EXPECT_TRUE(all_close(y, to_vector(expected), 0, 0));
  y.sum().backward();
  ASSERT_TRUE(conv->weight.grad().defined());
  ASSERT_TRUE(conv->bias.grad().defined());
  // d(sum y)/d bias[c] = the number of output pixels per channel, over the batch.
  EXPECT_TRUE(all_close(conv->bias.grad(), std::vector<double>(4, 2.0 * 5 * 4), 1e-6, 0));
}

// An unbatched input, (C_in, L) or (C_in, H, W), is a batch of one whose output drops the batch
// dim, as torch's (Note [Unbatched convolutions]): the same bits as the batched call, forward and
// backward, through the functions and the modules (they refused it before).
TEST(ConvModules, UnbatchedInputIsABatchOfOne) {
  const auto expect_as_batch_of_one = [](const char* what, const std::function<Tensor(Tensor)>& f,
                                         const Shape& shape) {
    SCOPED_TRACE(what);
    const Tensor x = rand(shape, TensorOptions(kFloat64)).requires_grad_();
    const Tensor y = f(x);
    const Tensor batched_x = x.detach().unsqueeze(0).requires_grad_();
    const Tensor batched_y = f(batched_x);
    ASSERT_EQ(y.shape(), batched_y.squeeze(0).shape());
    EXPECT_TRUE(y.equal(batched_y.squeeze(0).detach()));
    const Tensor g = rand(y.shape(), TensorOptions(kFloat64));
    (y * g).sum().backward();
    (batched_y * g.unsqueeze(0)).sum().backward();
    EXPECT_TRUE(x.grad().equal(batched_x.grad().squeeze(0)));
  };
  const TensorOptions f64(kFloat64);
  const Tensor w1 = rand({4, 3, 3}, f64), w2 = rand({4, 3, 3, 2}, f64);
  const Tensor t1 = rand({3, 2, 3}, f64), t2 = rand({3, 2, 3, 2}, f64);
  expect_as_batch_of_one("conv1d", [&](Tensor x) { return conv1d(x, w1, Tensor(), 2, 1); }, {3, 9});
  expect_as_batch_of_one("conv2d", [&](Tensor x) { return conv2d(x, w2); }, {3, 7, 6});
  expect_as_batch_of_one("conv1d same",
                         [&](Tensor x) { return conv1d(x, w1, Tensor(), 1, ConvPadding::Same); },
                         {3, 8});
  expect_as_batch_of_one("conv_transpose1d",
                         [&](Tensor x) { return conv_transpose1d(x, t1, Tensor(), 2, 1, 1); },
                         {3, 5});
  expect_as_batch_of_one("conv_transpose2d", [&](Tensor x) { return conv_transpose2d(x, t2); },
                         {3, 4, 5});
  nn::Conv1d c1(nn::Conv1dOptions(3, 4, 3));
  nn::Conv2d c2(nn::Conv2dOptions(3, 4, 3));
  nn::ConvTranspose1d ct1(nn::ConvTranspose1dOptions(3, 4, 3));
  nn::ConvTranspose2d ct2(nn::ConvTranspose2dOptions(3, 4, 3));
  c1->to(kFloat64), c2->to(kFloat64), ct1->to(kFloat64), ct2->to(kFloat64);
  expect_as_batch_of_one("nn::Conv1d", [&](Tensor x) { return c1(x); }, {3, 9});
  expect_as_batch_of_one("nn::Conv2d", [&](Tensor x) { return c2(x); }, {3, 7, 6});
  expect_as_batch_of_one("nn::ConvTranspose1d", [&](Tensor x) { return ct1(x); }, {3, 5});
  expect_as_batch_of_one("nn::ConvTranspose2d", [&](Tensor x) { return ct2(x); }, {3, 4, 5});
}

}  // namespace
}  // namespace leangrad
