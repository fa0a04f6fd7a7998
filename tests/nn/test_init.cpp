// nn::init (nn/init.h): gains and fans equal PyTorch's (values printed by torch.nn.init 1.13:
// calculate_gain and _calculate_fan_in_and_fan_out); the random initialisers fill the range their
// formula gives with the spread it gives (bounds exact, the sample standard deviation within six
// of its own standard errors: a test that a wrong gain or fan fails and a right one passes with
// certainty for practical purposes, and reproducibly, from a fixed seed); nn::Linear's default
// equals kaiming_uniform_(a = sqrt(5)); parameters stay autograd leaves. Misuse: the misuse
// suite's NnInit table (tests/misuse/test_misuse_nn_modules.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/init.h>
#include <leangrad/nn/linear.h>
#include "testing/gradcheck.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

struct Moments {
  double mean = 0, std = 0, min = 0, max = 0;
  std::int64_t n = 0;
};

Moments moments(const Tensor& t) {
  const std::vector<double> v = test::to_vector(t);
  Moments m;
  m.n = static_cast<std::int64_t>(v.size());
  for (double x : v)
    m.mean += x;
  m.mean /= static_cast<double>(m.n);
  for (double x : v)
    m.std += (x - m.mean) * (x - m.mean);
  m.std = std::sqrt(m.std / static_cast<double>(m.n - 1));
  m.min = *std::min_element(v.begin(), v.end());
  m.max = *std::max_element(v.begin(), v.end());
  return m;
}

// U(-b, b): every value inside, the extremes near both ends (65536 draws leave no gap of 1%
// except with probability 2 * 0.995^65536), and the sample std within six standard errors of
// b / sqrt(3): the sample variance of a uniform has relative standard error sqrt(4/5 / n), half
// of that for the std.
void expect_uniform(const Tensor& t, double bound) {
  const Moments m = moments(t);
  ASSERT_GE(m.n, 65536);
  EXPECT_GE(m.min, -bound);
  EXPECT_LT(m.max, bound);
  EXPECT_LT(m.min, -0.99 * bound);
  EXPECT_GT(m.max, 0.99 * bound);
  const double std = bound / std::sqrt(3.0);
  EXPECT_NEAR(m.std, std, 6 * 0.5 * std::sqrt(0.8 / static_cast<double>(m.n)) * std);
  EXPECT_NEAR(m.mean, 0.0, 6 * std / std::sqrt(static_cast<double>(m.n)));
}

// N(0, std^2): the sample std's relative standard error is 1 / sqrt(2n); the mean's std/sqrt(n).
void expect_normal(const Tensor& t, double std) {
  const Moments m = moments(t);
  ASSERT_GE(m.n, 65536);
  EXPECT_NEAR(m.std, std, 6 * std / std::sqrt(2.0 * static_cast<double>(m.n)));
  EXPECT_NEAR(m.mean, 0.0, 6 * std / std::sqrt(static_cast<double>(m.n)));
}

TEST(NnInit, GainsArePyTorchs) {
  using nn::init::calculate_gain;
  EXPECT_EQ(calculate_gain(kLinear), 1.0);
  EXPECT_EQ(calculate_gain(kConv2D), 1.0);
  EXPECT_EQ(calculate_gain(kSigmoid), 1.0);
  EXPECT_DOUBLE_EQ(calculate_gain(kTanh), 1.6666666666666667);
  EXPECT_DOUBLE_EQ(calculate_gain(kReLU), 1.4142135623730951);
  EXPECT_DOUBLE_EQ(calculate_gain(kSELU), 0.75);
  EXPECT_DOUBLE_EQ(calculate_gain(kLeakyReLU), 1.4141428569978354);
  EXPECT_DOUBLE_EQ(calculate_gain(kLeakyReLU, 0.2), 1.3867504905630728);
}

TEST(NnInit, FansArePyTorchs) {
  EXPECT_EQ(nn::init::calculate_fan_in_and_fan_out(empty({64, 32, 3, 5})),
            (std::pair<std::int64_t, std::int64_t>{480, 960}));
  EXPECT_EQ(nn::init::calculate_fan_in_and_fan_out(empty({10, 7})),
            (std::pair<std::int64_t, std::int64_t>{7, 10}));
}

// A tensor of no elements is left as it is by the fan-based initialisers, as PyTorch's (one of
// its fans is 0: they refused it), and the generator does not move; fewer than 2 dims are still
// refused.
TEST(NnInit, ZeroElementTensorsAreLeftAsTheyAre) {
  for (const Shape& shape : {Shape{5, 0}, Shape{0, 5}, Shape{0, 3, 2, 2}}) {
    SCOPED_TRACE(shape_str(shape));
    manual_seed(4);
    EXPECT_EQ(nn::init::kaiming_uniform_(empty(shape)).shape(), shape);
    EXPECT_EQ(nn::init::kaiming_normal_(empty(shape), 0.0, kFanOut).shape(), shape);
    EXPECT_EQ(nn::init::xavier_uniform_(empty(shape)).shape(), shape);
    EXPECT_EQ(nn::init::xavier_normal_(empty(shape)).shape(), shape);
    const Tensor after = rand({4});
    manual_seed(4);
    EXPECT_TRUE(equal(after, rand({4})));
  }
  EXPECT_THROW(nn::init::xavier_uniform_(empty({0})), Error);
}

TEST(NnInit, KaimingUniformFillsGainOverSqrtFanTimesSqrt3) {
  manual_seed(1);
  const Tensor w = empty({256, 256});
  nn::init::kaiming_uniform_(w, 0.0, kFanIn, kReLU);
  expect_uniform(w, std::sqrt(3.0) * std::sqrt(2.0) / 16.0);
}

TEST(NnInit, KaimingNormalFanOutOfAConvWeight) {
  manual_seed(2);
  const Tensor w = empty({128, 64, 3, 3});  // fan_out = 128 * 9
  nn::init::kaiming_normal_(w, 0.0, kFanOut, kReLU);
  expect_normal(w, std::sqrt(2.0) / std::sqrt(1152.0));
}

TEST(NnInit, KaimingDefaultsAreLeakyReluOfSlopeA) {
  manual_seed(3);
  const Tensor w = empty({512, 200});
  nn::init::kaiming_normal_(w, 0.5);  // gain sqrt(2 / 1.25), fan_in 200
  expect_normal(w, std::sqrt(2.0 / 1.25) / std::sqrt(200.0));
}

TEST(NnInit, XavierUsesBothFans) {
  manual_seed(4);
  const Tensor a = empty({300, 100, 3});  // fan_in 300, fan_out 900
  nn::init::xavier_uniform_(a, 2.0);
  expect_uniform(a, 2.0 * std::sqrt(6.0 / 1200.0));
  const Tensor b = empty({300, 100, 3}, kFloat64);
  nn::init::xavier_normal_(b);
  expect_normal(b, std::sqrt(2.0 / 1200.0));
}

TEST(NnInit, UniformAndNormalTakeTheirArguments) {
  manual_seed(5);
  const Tensor u = empty({65536});
  nn::init::uniform_(u, 2.0, 4.0);
  expect_uniform(u - 3.0, 1.0);
  const Tensor n = empty({65536});
  nn::init::normal_(n, -1.0, 0.5);
  expect_normal(n + 1.0, 0.5);
}

// Linear draws its weight first, from the CPU generator, with PyTorch's kaiming_uniform_(a =
// sqrt(5)): the same numbers as the initialiser on a tensor of its shape.
TEST(NnInit, LinearsDefaultIsKaimingUniformOfSqrt5) {
  manual_seed(6);
  const nn::Linear linear(100, 50);
  manual_seed(6);
  const Tensor w = empty({50, 100});
  nn::init::kaiming_uniform_(w, std::sqrt(5.0));
  EXPECT_TRUE(test::all_close(linear->weight, test::to_vector(w), 0, 0));
}

TEST(NnInit, ConstantsAndEye) {
  const Tensor t = empty({2, 3}, kBFloat16);
  nn::init::constant_(t, 0.5);
  EXPECT_TRUE(test::all_close(t, std::vector<double>(6, 0.5), 0, 0));
  nn::init::ones_(t);
  EXPECT_TRUE(test::all_close(t, std::vector<double>(6, 1.0), 0, 0));
  nn::init::zeros_(t);
  EXPECT_TRUE(test::all_close(t, std::vector<double>(6, 0.0), 0, 0));
  const Tensor e = empty({3, 4}, kFloat64);
  nn::init::eye_(e);
  EXPECT_TRUE(test::all_close(e, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}, 0, 0));
}

// A parameter initialised in place stays a leaf that trains: no graph recorded, its version
// counter moved (autograd sees the change), and backward reaches it.
// orthogonal_: the matrix (size(0), the rest flattened) has orthonormal rows or columns,
// whichever are fewer, times gain, to the round-off of a QR of that size (16 n u); the same seed
// gives the same matrix, another seed another; the 16-bit dtypes get the float32 matrix rounded.
TEST(NnInit, OrthogonalHasOrthonormalRowsOrColumns) {
  for (const Shape& shape : {Shape{7, 3}, Shape{3, 7}, Shape{4, 2, 3}, Shape{5, 5}}) {
    for (const DType dtype : {kFloat64, kFloat32}) {
      SCOPED_TRACE(shape_str(shape) + " " + dtype_name(dtype));
      manual_seed(5);
      Tensor w = empty(shape, TensorOptions(dtype));
      nn::init::orthogonal_(w, 2.0);
      const Tensor m = w.reshape({shape[0], -1}).to(kFloat64);
      const bool wide = m.size(0) < m.size(1);
      const Tensor gram = wide ? m.matmul(m.t()) : m.t().matmul(m);
      const std::int64_t k = gram.size(0);
      const Tensor expected = eye(k, TensorOptions(kFloat64)) * 4.0;
      const double n = static_cast<double>(std::max(m.size(0), m.size(1)));
      EXPECT_LE(test::max_abs(gram - expected), 4.0 * 16 * n * test::math_unit_roundoff(dtype));
      manual_seed(5);
      Tensor again = empty(shape, TensorOptions(dtype));
      nn::init::orthogonal_(again, 2.0);
      EXPECT_EQ(test::to_vector(again), test::to_vector(w));
      manual_seed(6);
      nn::init::orthogonal_(again, 2.0);
      EXPECT_NE(test::to_vector(again), test::to_vector(w));
    }
  }
  manual_seed(5);
  Tensor half = empty({6, 4}, TensorOptions(kBFloat16));
  nn::init::orthogonal_(half);
  manual_seed(5);
  Tensor single = empty({6, 4}, TensorOptions(kFloat32));
  nn::init::orthogonal_(single);
  EXPECT_EQ(test::to_vector(half), test::to_vector(single.to(kBFloat16)));
}

TEST(NnInit, FansInLibTorchsSpelling) {
  const Tensor w = empty({64, 32, 3, 5});
  const auto [fan_in, fan_out] = nn::init::_calculate_fan_in_and_fan_out(w);
  EXPECT_EQ(fan_in, 480);
  EXPECT_EQ(fan_out, 960);
}

// A Dirac weight makes the convolution pass channels through: output channel g * (out / groups)
// + d is input channel g * (in / groups) + d, for d below min(out / groups, in / groups).
TEST(NnInit, DiracPassesChannelsThrough) {
  const Tensor x = test::uniform_input({2, 8, 5, 6}, -1, 1, 40).to(kFloat32);
  const Tensor w = empty({6, 4, 3, 3});  // 2 groups of 3 outputs over 4 of the 8 inputs each
  nn::init::dirac_(w, 2);
  const Tensor y = conv2d(x, w, Tensor(), {1, 1}, Size2{1, 1}, {1, 1}, 2);
  ASSERT_EQ(y.shape(), (Shape{2, 6, 5, 6}));
  const std::vector<std::int64_t> passed{0, 1, 2, 4, 5, 6};
  for (std::int64_t o = 0; o < 6; ++o)
    EXPECT_TRUE(y.select(1, o).equal(x.select(1, passed[static_cast<std::size_t>(o)]))) << o;
  // More inputs than outputs, 1-d and 3-d kernels: one 1 per output channel, at the centre.
  const Tensor w1 = empty({3, 5, 4});
  nn::init::dirac_(w1);
  EXPECT_EQ(sum(w1).item<float>(), 3.0f);
  for (std::int64_t o = 0; o < 3; ++o)
    EXPECT_EQ(w1.index({o, o, 2}).item<float>(), 1.0f);
  const Tensor w3 = empty({4, 2, 3, 3, 3}, kFloat64);
  nn::init::dirac_(w3);
  EXPECT_EQ(sum(w3).item<double>(), 2.0);  // min(4, 2) channels
  EXPECT_EQ(w3.index({1, 1, 1, 1, 1}).item<double>(), 1.0);
  EXPECT_THROW(nn::init::dirac_(empty({6, 4})), ShapeError);
  EXPECT_THROW(nn::init::dirac_(empty({6, 4, 3}), 4), Error);
}

// ceil(sparsity * rows) zeros in each column, at rows that differ from column to column, and the
// other values N(0, std).
TEST(NnInit, SparseZeroesEachColumnsShare) {
  manual_seed(41);
  const Tensor w = empty({1000, 100});
  nn::init::sparse_(w, 0.25, 0.02);
  const Tensor zero = eq(w, 0.0);
  EXPECT_TRUE(sum(zero, {0}).equal(full({100}, 250.0, kInt64)));
  EXPECT_FALSE(zero.select(1, 0).equal(zero.select(1, 1)));
  expect_normal(masked_select(w, logical_not(zero)), 0.02);
  const Tensor odd = empty({7, 3});
  nn::init::sparse_(odd, 0.3);  // ceil(2.1) = 3
  EXPECT_TRUE(sum(eq(odd, 0.0), {0}).equal(full({3}, 3.0, kInt64)));
  EXPECT_THROW(nn::init::sparse_(empty({4, 4}), 1.5), Error);
  EXPECT_THROW(nn::init::sparse_(empty({4, 4, 4}), 0.5), ShapeError);
}

TEST(NnInit, ParametersStayLeaves) {
  nn::Linear linear(4, 3);
  const std::int64_t version = linear->weight.version();
  nn::init::xavier_normal_(linear->weight);
  nn::init::zeros_(linear->bias);
  EXPECT_TRUE(linear->weight.requires_grad());
  EXPECT_TRUE(linear->weight.is_leaf());
  EXPECT_GT(linear->weight.version(), version);
  linear(ones({2, 4})).sum().backward();
  EXPECT_TRUE(linear->weight.grad().defined());
  EXPECT_TRUE(test::all_close(linear->bias.grad(), {2, 2, 2}, 0, 0));
}

}  // namespace
}  // namespace leangrad
