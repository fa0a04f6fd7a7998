// Tests of nn::Conv2d (nn/conv.cpp): parameter names and shapes, PyTorch's initialisation bounds,
// extra_repr as PyTorch prints it, forward equal to leangrad::conv2d, and gradients reaching both
// parameters.
#include <gtest/gtest.h>

#include <cmath>
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

}  // namespace
}  // namespace leangrad
