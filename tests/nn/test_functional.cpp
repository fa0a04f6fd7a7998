// nn::functional and nn::utils (LibTorch's namespaces for the free functions): a small network
// written the LibTorch way, namespace F = ...::nn::functional, gives what the same network
// written with the modules gives; F::relu's values by hand; nn::utils::clip_grad_norm_ clips.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/nn.h>
#include <leangrad/optim/clip_grad.h>
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

namespace F = nn::functional;

TEST(NnFunctional, ReluByHand) {
  const Tensor x = full({4}, 0.0);
  x.data_ptr<float>()[0] = -1.5f;
  x.data_ptr<float>()[1] = 2.0f;
  x.data_ptr<float>()[3] = -0.0f;
  EXPECT_TRUE(test::all_close(F::relu(x), {0.0, 2.0, 0.0, 0.0}, 0, 0));
}

TEST(NnFunctional, ANetworkWrittenWithFMatchesTheModules) {
  manual_seed(7);
  nn::Conv2d conv(nn::Conv2dOptions(1, 4, 3).padding(1));
  nn::Linear fc(4 * 3 * 3, 5);
  const Tensor x = randn({2, 1, 6, 6});
  const Tensor target = zeros({2}, kInt64);
  const Tensor with_modules = cross_entropy(
      fc(nn::Flatten()(nn::MaxPool2d(nn::MaxPool2dOptions(2))(nn::ReLU()(conv(x))))), target);
  Tensor h = F::max_pool2d(F::relu(F::conv2d(x, conv->weight, conv->bias, {1, 1}, {1, 1})), {2, 2});
  const Tensor with_f = F::cross_entropy(F::linear(h.flatten(1), fc->weight, fc->bias), target);
  EXPECT_TRUE(test::all_close(with_f, test::to_vector(with_modules), 0, 0));
}

TEST(NnFunctional, UtilsClipGradNormClips) {
  Tensor p = ones({4}).requires_grad_(true);
  (p * 3.0).sum().backward();  // gradient (3, 3, 3, 3): norm 6
  const Tensor norm = nn::utils::clip_grad_norm_({p}, 1.5);
  EXPECT_FLOAT_EQ(norm.item<float>(), 6.0f);
  const double scale = 1.5 / (6.0 + 1e-6);
  EXPECT_TRUE(test::all_close(p.grad(), std::vector<double>(4, 3.0 * scale), 1e-6, 0));
}

}  // namespace
}  // namespace leangrad
