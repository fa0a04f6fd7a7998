// adaptive_avg_pool2d and nn::AdaptiveAvgPool2d: values and gradients against PyTorch 1.13
// (tests/data/adaptive_pool.json, written by make_adaptive_pool.py) for windows that divide the
// input, overlap, exceed it, the global 1 x 1 pooling and unbatched input; gradchecks to second
// order; the module. Bad arguments are rows of the Pooling misuse table
// (tests/misuse/test_misuse_nn_functions.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/nn/nn.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

// PyTorch sums each window and divides once; we average rows, then columns, each a dot product
// with weights 1/k (Note [Adaptive average pooling]). Each is an average of at most H (W)
// numbers bounded by max|x|, computed with at most H + 1 (W + 1) roundings of relative size u:
// the two differ by at most (H + W + 4) u max|x|. The gradient is the same two products
// transposed, applied to w, bounded by (H + W + 4) u max|w|. A wrong window is off by O(|x|).
TEST(AdaptiveAvgPool2d, MatchesPyTorch) {
  const std::vector<test::ReferenceCase> cases = test::load_reference("adaptive_pool.json");
  ASSERT_EQ(cases.size(), 14u);
  for (const test::ReferenceCase& c : cases) {
    SCOPED_TRACE(c.name);
    const std::vector<std::int64_t> size =
        c.params.at("output_size").get<std::vector<std::int64_t>>();
    Tensor x = c.at("x").clone().requires_grad_();
    const Tensor y = adaptive_avg_pool2d(x, {size[0], size[1]});
    ASSERT_EQ(y.shape(), c.at("y").shape());
    ASSERT_EQ(y.dtype(), x.dtype());
    (y * c.at("w")).sum().backward();
    const double u = test::math_unit_roundoff(x.dtype());
    const double h = static_cast<double>(x.shape()[x.dim() - 2]);
    const double w = static_cast<double>(x.shape()[x.dim() - 1]);
    const double k = h + w + 4;
    const std::vector<double> got = test::to_vector(y), want = test::to_vector(c.at("y"));
    const double x_max = test::max_abs(c.at("x"));
    for (std::size_t i = 0; i < got.size(); ++i)
      EXPECT_LE(std::abs(got[i] - want[i]), k * u * x_max) << "output " << i;
    const std::vector<double> g = test::to_vector(x.grad()), g_want = test::to_vector(c.at("dx"));
    const double w_max = test::max_abs(c.at("w"));
    for (std::size_t i = 0; i < g.size(); ++i)
      EXPECT_LE(std::abs(g[i] - g_want[i]), k * u * w_max) << "gradient " << i;
  }
}

TEST(AdaptiveAvgPool2d, FirstAndSecondDerivativesMatchFiniteDifferences) {
  for (const Size2 size : {Size2{2, 3}, Size2{1, 1}, Size2{5, 4}}) {
    SCOPED_TRACE(size[0]);
    Tensor x = test::make_tensor({0.3, -1.2, 2.0, 0.7, -0.4, 1.1, 0.9, -2.2, 0.05, 1.6, -0.8, 0.2,
                                  1.3, -0.6, 0.4},
                                 {1, 1, 3, 5}, kFloat64)
                   .requires_grad_();
    auto f = [size](const std::vector<Tensor>& in) {
      const Tensor y = adaptive_avg_pool2d(in[0], size);
      return y * y;  // nonlinear, so the second derivative is not 0
    };
    EXPECT_TRUE(test::gradcheck(f, {x}));
    EXPECT_TRUE(test::gradcheck(
        [f](const std::vector<Tensor>& in) {
          AutoGradMode enable(true);
          return autograd::grad({f(in).sum()}, {in[0]}, {}, std::nullopt, true)[0];
        },
        {x}));
  }
}

// An output size of 0 (in either dim, batched or not, of an empty batch): an empty output, as
// PyTorch 1.13 (the values: test_misuse_defined.cpp). No window averages the input, so its
// gradient is 0 everywhere, of the input's shape (PyTorch 1.13 refuses this backward:
// docs/api-notes.md); differentiated again it is 0 too.
TEST(AdaptiveAvgPool2d, AnOutputSizeOfZeroHasAZeroGradient) {
  struct Case {
    Shape input;
    Size2 output;
    Shape want;
  };
  const std::vector<Case> cases = {{{2, 3, 5, 4}, {0, 2}, {2, 3, 0, 2}},
                                   {{2, 3, 5, 4}, {2, 0}, {2, 3, 2, 0}},
                                   {{3, 5, 4}, {0, 0}, {3, 0, 0}},
                                   {{0, 3, 5, 4}, {0, 3}, {0, 3, 0, 3}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(shape_str(c.input));
    const Tensor x = test::uniform_input(c.input, -1.0, 1.0, 52);
    const Tensor y = adaptive_avg_pool2d(x, c.output);
    EXPECT_EQ(y.shape(), c.want);
    const Tensor g =
        autograd::grad({(y * y).sum()}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
    EXPECT_EQ(g.shape(), c.input);
    EXPECT_EQ(test::max_abs(g), 0.0);
    if (x.numel() > 0) {
      const Tensor gg = autograd::grad({(g + x).sum()}, {x})[0];  // d/dx of sum(g) is 0
      test::expect_close(gg, std::vector<double>(x.numel(), 1.0), 0.0, 0.0);
    }
  }
}

TEST(AdaptiveAvgPool2d, ModuleCallsTheFunction) {
  const Tensor x =
      test::make_tensor({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {1, 2, 2, 3}, kFloat64);
  nn::AdaptiveAvgPool2d global(1);
  const Tensor y = global(x);
  // The means of the two planes, by hand.
  EXPECT_EQ(y.shape(), (Shape{1, 2, 1, 1}));
  EXPECT_EQ(test::to_vector(y), (std::vector<double>{3.5, 9.5}));
  nn::AdaptiveAvgPool2d pool(nn::AdaptiveAvgPool2dOptions({2, 2}));
  EXPECT_TRUE(pool(x).equal(adaptive_avg_pool2d(x, {2, 2})));
  EXPECT_EQ(pool->extra_repr(), "output_size=[2, 2]");
  EXPECT_TRUE(nn::functional::adaptive_avg_pool2d(x, {1, 3}).equal(adaptive_avg_pool2d(x, {1, 3})));
}

}  // namespace
}  // namespace leangrad
