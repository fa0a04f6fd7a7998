// adaptive_max_pool2d, adaptive_max_pool1d and the modules nn::AdaptiveMaxPool2d and
// nn::AdaptiveMaxPool1d: values, indices and gradients against PyTorch 1.13
// (tests/data/adaptive_max_pool.json, written by make_adaptive_max_pool.py) for windows that
// divide the input, overlap, exceed it, the global 1 x 1 pooling, unbatched input, ties, NaNs and
// windows of -inf; gradchecks to second order; the modules. The kernels against a reference loop
// are in tests/kernels/test_adaptive_max_pool.cpp; bad arguments are rows of the Pooling misuse
// table (tests/misuse/test_misuse_nn_functions.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <vector>

#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/nn.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

// The maximum is one of the inputs and its index the same choice (the first maximum, the last
// NaN): values and indices are exact. An input's gradient is the sum of the weights of the windows
// that picked it, at most k = (ceil(OH / H) + 1) (ceil(OW / W) + 1) of them (the windows that
// contain one element), added in the same order on both sides but in float32 or float64 either
// way: within k u max|w|. bfloat16 cases have no element picked twice: exact.
TEST(AdaptiveMaxPool, MatchesPyTorch) {
  const std::vector<test::ReferenceCase> cases = test::load_reference("adaptive_max_pool.json");
  ASSERT_EQ(cases.size(), 28u);
  for (const test::ReferenceCase& c : cases) {
    SCOPED_TRACE(c.name);
    const auto dims = c.params.at("dims").get<int>();
    const auto size = c.params.at("output_size").get<std::vector<std::int64_t>>();
    Tensor x = c.at("x").clone().requires_grad_();
    auto [y, indices] = dims == 2 ? adaptive_max_pool2d_with_indices(x, {size[0], size[1]})
                                  : adaptive_max_pool1d_with_indices(x, size[0]);
    ASSERT_EQ(y.shape(), c.at("y").shape());
    ASSERT_EQ(y.dtype(), x.dtype());
    ASSERT_EQ(indices.dtype(), kInt64);
    EXPECT_TRUE(test::matches_within_roundoff(y, c.at("y"), {}, {.bitwise = true})) << "value";
    EXPECT_EQ(test::to_vector(indices), test::to_vector(c.at("indices"))) << "indices";
    (y * c.at("w")).sum().backward();
    if (x.dtype() == kBFloat16) {
      EXPECT_TRUE(test::matches_within_roundoff(x.grad(), c.at("dx"), {}, {.bitwise = true}));
      continue;
    }
    const auto ratio = [](std::int64_t out, std::int64_t in) {
      return static_cast<double>((out + in - 1) / in + 1);
    };
    const std::int64_t in_w = x.size(-1), out_w = y.size(-1);
    const std::int64_t in_h = dims == 2 ? x.size(-2) : 1, out_h = dims == 2 ? y.size(-2) : 1;
    const double k = ratio(out_h, in_h) * ratio(out_w, in_w);
    const double bound = k * test::math_unit_roundoff(x.dtype()) * test::max_abs(c.at("w"));
    const std::vector<double> g = test::to_vector(x.grad()), want = test::to_vector(c.at("dx"));
    ASSERT_EQ(g.size(), want.size());
    for (std::size_t i = 0; i < g.size(); ++i)
      EXPECT_LE(std::abs(g[i] - want[i]), bound) << "gradient " << i;
  }
}

// Inputs without ties (distinct values), so the maximum does not jump within a finite-difference
// step: the gradient is exact selection, and the second derivative of y * y is 2 at each pick.
TEST(AdaptiveMaxPool, FirstAndSecondDerivativesMatchFiniteDifferences) {
  for (const Size2 size : {Size2{2, 3}, Size2{1, 1}, Size2{5, 7}}) {
    SCOPED_TRACE(size[1]);
    Tensor x = test::uniform_input({2, 1, 3, 5}, -2.0, 2.0, 5);
    const test::GradcheckFn f = [size](const std::vector<Tensor>& in) {
      const Tensor y = adaptive_max_pool2d(in[0], size);
      return y * y;  // nonlinear, so the second derivative is not 0
    };
    EXPECT_TRUE(test::gradcheck(f, {x}));
    EXPECT_TRUE(test::gradgradcheck(f, {x}));
  }
  Tensor x1 = test::uniform_input({2, 3, 7}, -2.0, 2.0, 6);
  const test::GradcheckFn f1 = [](const std::vector<Tensor>& in) {
    const Tensor y = adaptive_max_pool1d(in[0], 4);
    return y * y;
  };
  EXPECT_TRUE(test::gradcheck(f1, {x1}));
  EXPECT_TRUE(test::gradgradcheck(f1, {x1}));
}

// An empty batch gives an empty output, as PyTorch.
TEST(AdaptiveMaxPool, EmptyBatch) {
  const Tensor x = zeros({0, 3, 4, 4});
  auto [y, indices] = adaptive_max_pool2d_with_indices(x, {2, 2});
  EXPECT_EQ(y.shape(), (Shape{0, 3, 2, 2}));
  EXPECT_EQ(indices.shape(), (Shape{0, 3, 2, 2}));
}

// An output size of 0 (in either dim, batched or not, 1-d too): an empty output and indices, as
// PyTorch 1.13 (the values: test_misuse_defined.cpp). No window reads the input, so its gradient
// is 0 everywhere, of the input's shape; PyTorch 1.13 refuses this backward ("Expected
// grad_output to have non-zero size for non-batch dimensions", docs/api-notes.md). The gradient
// of sum(y * 0) + sum(x) would be 1 everywhere: a nonzero gradient through the pool shows there.
TEST(AdaptiveMaxPool, AnOutputSizeOfZeroHasAZeroGradient) {
  struct Case {
    Shape input;
    std::vector<std::int64_t> output;  // one size: 1-d
    Shape want;
  };
  const std::vector<Case> cases = {{{2, 3, 5, 4}, {0, 2}, {2, 3, 0, 2}},
                                   {{2, 3, 5, 4}, {2, 0}, {2, 3, 2, 0}},
                                   {{3, 5, 4}, {0, 0}, {3, 0, 0}},
                                   {{2, 3, 7}, {0}, {2, 3, 0}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(shape_str(c.input));
    const Tensor x = test::uniform_input(c.input, -1.0, 1.0, 51);
    Tensor y, indices;
    if (c.output.size() == 1) {
      std::tie(y, indices) = adaptive_max_pool1d_with_indices(x, c.output[0]);
    } else {
      std::tie(y, indices) = adaptive_max_pool2d_with_indices(x, {c.output[0], c.output[1]});
    }
    EXPECT_EQ(y.shape(), c.want);
    EXPECT_EQ(indices.shape(), c.want);
    EXPECT_EQ(indices.dtype(), kInt64);
    const Tensor g = autograd::grad({y.sum()}, {x})[0];
    EXPECT_EQ(g.shape(), c.input);
    EXPECT_EQ(test::max_abs(g), 0.0);
  }
}

TEST(AdaptiveMaxPool, ModulesCallTheFunctions) {
  const Tensor x =
      test::make_tensor({1, 5, 3, 4, 2, 6, 9, 8, 7, 10, 12, 11}, {1, 2, 2, 3}, kFloat64);
  nn::AdaptiveMaxPool2d global(1);
  // The maxima of the two planes, by hand.
  EXPECT_EQ(test::to_vector(global(x)), (std::vector<double>{6, 12}));
  nn::AdaptiveMaxPool2d pool(nn::AdaptiveMaxPool2dOptions({1, 2}));
  // Columns [0, 2) and [1, 3) of each plane: windows {1, 5, 4, 2} and {5, 3, 2, 6}, then
  // {9, 8, 10, 12} and {8, 7, 12, 11}, whose maxima are one element (index 4).
  EXPECT_EQ(test::to_vector(pool(x)), (std::vector<double>{5, 6, 12, 12}));
  auto [y, indices] = pool->forward_with_indices(x);
  EXPECT_TRUE(y.equal(pool(x)));
  EXPECT_EQ(test::to_vector(indices), (std::vector<double>{1, 5, 4, 4}));
  EXPECT_EQ(pool->extra_repr(), "output_size=[1, 2]");
  EXPECT_TRUE(nn::functional::adaptive_max_pool2d(x, {2, 1}).equal(adaptive_max_pool2d(x, {2, 1})));

  const Tensor row = test::make_tensor({3, 1, 4, 1, 5, 9, 2}, {1, 1, 7}, kFloat32);
  nn::AdaptiveMaxPool1d pool1d(nn::AdaptiveMaxPool1dOptions(3));
  // Windows [0, 3), [2, 5), [4, 7).
  EXPECT_EQ(test::to_vector(pool1d(row)), (std::vector<double>{4, 5, 9}));
  auto [y1, indices1] = pool1d->forward_with_indices(row);
  EXPECT_EQ(test::to_vector(indices1), (std::vector<double>{2, 4, 5}));
  EXPECT_EQ(pool1d->extra_repr(), "output_size=[3]");
  EXPECT_TRUE(nn::functional::adaptive_max_pool1d(row, 2).equal(adaptive_max_pool1d(row, 2)));
}

}  // namespace
}  // namespace leangrad
