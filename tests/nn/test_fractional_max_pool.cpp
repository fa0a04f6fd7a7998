// fractional_max_pool2d/3d (autograd/fractional_max_pool.h) and nn::FractionalMaxPool2d/3d:
// against PyTorch 1.13 with the samples given (tests/data/fractional_max_pool.json, written by
// make_fractional_max_pool.py: values, indices and gradients; float32 windows that double
// arithmetic would place elsewhere), against a loop of the definition
// (the window starts worked out independently, then each window's maximum), by finite
// differences, and the drawn samples' properties. Bad arguments: the FractionalMaxPool table of
// tests/misuse/test_misuse_nn_layers.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include <leangrad/autograd/fractional_max_pool.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/fractional_max_pool.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

std::vector<std::int64_t> ints(const Tensor& t) {
  std::vector<std::int64_t> v;
  for (const double d : test::to_vector(t))
    v.push_back(static_cast<std::int64_t>(d));
  return v;
}

std::tuple<Tensor, Tensor> run_case(const test::ReferenceCase& c, const Tensor& x) {
  const auto& p = c.params;
  const auto k = p.at("kernel").get<std::vector<std::int64_t>>();
  const bool sized = !p.at("output_size").is_null();
  const Tensor& samples = c.at("samples");
  if (p.at("dims").get<int>() == 2) {
    if (sized) {
      const auto o = p.at("output_size").get<std::vector<std::int64_t>>();
      return fractional_max_pool2d_with_indices(x, {k[0], k[1]}, Size2{o[0], o[1]}, std::nullopt,
                                                samples);
    }
    const auto r = p.at("output_ratio").get<std::vector<double>>();
    return fractional_max_pool2d_with_indices(x, {k[0], k[1]}, std::nullopt, Ratio2{r[0], r[1]},
                                              samples);
  }
  if (sized) {
    const auto o = p.at("output_size").get<std::vector<std::int64_t>>();
    return fractional_max_pool3d_with_indices(x, {k[0], k[1], k[2]}, Size3{o[0], o[1], o[2]},
                                              std::nullopt, samples);
  }
  const auto r = p.at("output_ratio").get<std::vector<double>>();
  return fractional_max_pool3d_with_indices(x, {k[0], k[1], k[2]}, std::nullopt,
                                            Ratio3{r[0], r[1], r[2]}, samples);
}

TEST(FractionalMaxPool, MatchesPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& c : test::load_reference("fractional_max_pool.json")) {
    SCOPED_TRACE(c.name);
    const Tensor x = c.at("x").clone().requires_grad_();
    auto [y, indices] = run_case(c, x);
    ASSERT_EQ(y.shape(), c.at("y").shape());
    ASSERT_EQ(indices.dtype(), kInt64);
    // A maximum is one of the input's elements: values and places are exact.
    EXPECT_TRUE(test::all_close(y, test::to_vector(c.at("y")), 0, 0));
    EXPECT_EQ(ints(indices), ints(c.at("indices")));
    // Each element's gradient sums the upstream gradients of the windows whose maximum it is, in
    // some order: within (m - 1) u sum |g| of PyTorch's, m the most windows sharing a maximum.
    y.backward(c.at("g"));
    const std::vector<std::int64_t> places = ints(c.at("indices"));
    const std::vector<double> g = test::to_vector(c.at("g"));
    const std::int64_t per_plane =
        y.numel() / std::max<std::int64_t>(1, c.at("samples").size(0) * c.at("samples").size(1));
    const std::int64_t in_plane = x.numel() / (c.at("samples").size(0) * c.at("samples").size(1));
    std::vector<double> abs_sum(static_cast<std::size_t>(x.numel()), 0.0);
    std::vector<int> count(abs_sum.size(), 0);
    for (std::size_t o = 0; o < places.size(); ++o) {
      const auto at =
          static_cast<std::size_t>(static_cast<std::int64_t>(o) / per_plane * in_plane + places[o]);
      abs_sum[at] += std::abs(g[o]);
      ++count[at];
    }
    const double u = test::math_unit_roundoff(x.dtype());
    const std::vector<double> dx = test::to_vector(x.grad()), want = test::to_vector(c.at("dx"));
    for (std::size_t i = 0; i < dx.size(); ++i)
      ASSERT_LE(std::abs(dx[i] - want[i]), std::max(0, count[i] - 1) * u * abs_sum[i])
          << "element " << i;
    ++checked;
  }
  EXPECT_EQ(checked, 11);
}

// The definition, written out: PyTorch's window starts (in T, as its kernel) and each window's
// first maximum, over one (batch, channel) plane of a 2-d input.
template <typename T>
std::vector<std::int64_t> starts_of(T u, std::int64_t in, std::int64_t out, std::int64_t k) {
  std::vector<std::int64_t> s(static_cast<std::size_t>(out));
  const T alpha = out > 1 ? static_cast<T>(in - k) / static_cast<T>(out - 1) : T(0);
  for (std::int64_t i = 0; i < out; ++i)
    s[static_cast<std::size_t>(i)] =
        i == out - 1 ? in - k
                     : static_cast<std::int64_t>((static_cast<T>(i) + u) * alpha) -
                           static_cast<std::int64_t>(u * alpha);
  return s;
}

TEST(FractionalMaxPool, IsItsDefinition) {
  for (const DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const std::int64_t n = 2, c = 3, h = 19, w = 14, kh = 3, kw = 2, oh = 7, ow = 9;
    const Tensor x = test::uniform_input({n, c, h, w}, -1, 1, 4701).detach().to(dtype);
    const Tensor samples = test::uniform_input({n, c, 2}, 0, 1, 4702).detach().to(dtype);
    auto [y, indices] =
        fractional_max_pool2d_with_indices(x, {kh, kw}, Size2{oh, ow}, std::nullopt, samples);
    const std::vector<double> xv = test::to_vector(x), sv = test::to_vector(samples),
                              yv = test::to_vector(y);
    const std::vector<std::int64_t> iv = ints(indices);
    for (std::int64_t p = 0; p < n * c; ++p) {
      // samples[p] = (width's, height's), as PyTorch's.
      std::vector<std::int64_t> rows, cols;
      if (dtype == kFloat64) {
        rows = starts_of<double>(sv[p * 2 + 1], h, oh, kh);
        cols = starts_of<double>(sv[p * 2], w, ow, kw);
      } else {
        rows = starts_of<float>(static_cast<float>(sv[p * 2 + 1]), h, oh, kh);
        cols = starts_of<float>(static_cast<float>(sv[p * 2]), w, ow, kw);
      }
      for (std::int64_t i = 0; i < oh; ++i)
        for (std::int64_t j = 0; j < ow; ++j) {
          double best = -std::numeric_limits<double>::infinity();
          std::int64_t at = -1;
          for (std::int64_t a = 0; a < kh; ++a)
            for (std::int64_t b = 0; b < kw; ++b) {
              const std::int64_t place = (rows[i] + a) * w + cols[j] + b;
              if (xv[p * h * w + place] > best) {
                best = xv[p * h * w + place];
                at = place;
              }
            }
          const std::int64_t o = p * oh * ow + i * ow + j;
          ASSERT_EQ(yv[o], best) << "plane " << p << " output (" << i << ", " << j << ")";
          ASSERT_EQ(iv[o], at) << "plane " << p << " output (" << i << ", " << j << ")";
        }
    }
  }
}

TEST(FractionalMaxPool, NaNsAndNearTiesFindTheirPlace) {
  // 7 x 6 with kernel 3 to 3 x 2: windows at rows {0, 2, 4} and columns {0, 3} for samples
  // (width 0.5, height 0.5) (alpha 2 and 3). NaNs at (1, 1) and (2, 2), both in window (0, 0),
  // and (2, 2) also in window (1, 0).
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> v(42);
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<double>(i % 5) - 2.0;
  v[1 * 6 + 1] = nan;
  v[2 * 6 + 2] = nan;
  const Tensor samples = full({1, 1, 2}, 0.5, kFloat64);
  for (const DType dtype : {kFloat32, kFloat64, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor x = tensor(v, {1, 1, 7, 6}).to(dtype).requires_grad_();
    auto [y, indices] =
        fractional_max_pool2d_with_indices(x, {3, 3}, Size2{3, 2}, std::nullopt, samples);
    const std::vector<double> yv = test::to_vector(y);
    const std::vector<std::int64_t> iv = ints(indices);
    // The first NaN in row-major order within each window: (1, 1) for window (0, 0), (2, 2) for
    // window (1, 0); the other windows hold none.
    EXPECT_TRUE(std::isnan(yv[0]));
    EXPECT_EQ(iv[0], 1 * 6 + 1);
    EXPECT_TRUE(std::isnan(yv[2]));
    EXPECT_EQ(iv[2], 2 * 6 + 2);
    for (const std::size_t o : {1, 3, 4, 5})
      EXPECT_FALSE(std::isnan(yv[o])) << "output " << o;
    // The gradient goes to the NaNs' places.
    y.backward(ones_like(y));
    const std::vector<double> g = test::to_vector(x.grad());
    EXPECT_EQ(g[1 * 6 + 1], 1.0);
    EXPECT_EQ(g[2 * 6 + 2], 1.0);
  }
  // Two doubles that round to one float: the second, larger one is window (0, 0)'s maximum.
  std::vector<double> close(42, -5.0);
  close[0] = 1.0;
  close[1] = 1.0 + 0x1p-40;
  auto [yc, ic] = fractional_max_pool2d_with_indices(tensor(close, {1, 1, 7, 6}), {3, 3},
                                                     Size2{3, 2}, std::nullopt, samples);
  EXPECT_EQ(ints(ic)[0], 1);
  EXPECT_EQ(test::to_vector(yc)[0], 1.0 + 0x1p-40);
}

TEST(FractionalMaxPool, DrawsItsSamplesFromTheDefaultGenerator) {
  const Tensor x = test::uniform_input({2, 3, 12, 10}, -1, 1, 4703).detach();
  manual_seed(4704);
  const Tensor a = fractional_max_pool2d(x, {2, 2}, Size2{5, 4});
  manual_seed(4704);
  const Tensor b = fractional_max_pool2d(x, {2, 2}, Size2{5, 4});
  const Tensor other = fractional_max_pool2d(x, {2, 2}, Size2{5, 4});
  EXPECT_TRUE(test::all_close(a, test::to_vector(b), 0, 0));
  // The generator moved on: new windows (for some of the 6 planes at least).
  EXPECT_FALSE(test::all_close(a, test::to_vector(other), 0, 0));
  // The drawn samples are rand's next draw of (N, C, 2), as PyTorch's.
  manual_seed(4704);
  const Tensor samples = rand({2, 3, 2}, x.options());
  EXPECT_TRUE(test::all_close(fractional_max_pool2d(x, {2, 2}, Size2{5, 4}, std::nullopt, samples),
                              test::to_vector(a), 0, 0));
}

TEST(FractionalMaxPoolGrad, FiniteDifferences) {
  const Tensor samples2 = tensor(std::vector<double>{0.3, 0.8, 0.55, 0.1}, {1, 2, 2});
  EXPECT_TRUE(test::gradcheck(
      [&](const std::vector<Tensor>& in) {
        return fractional_max_pool2d(in[0], {2, 2}, Size2{3, 3}, std::nullopt, samples2);
      },
      {test::uniform_input({1, 2, 6, 5}, -1, 1, 4705)}));
  const Tensor samples3 = tensor(std::vector<double>{0.9, 0.2, 0.45}, {1, 3});
  EXPECT_TRUE(test::gradcheck(
      [&](const std::vector<Tensor>& in) {
        return fractional_max_pool3d(in[0], {2, 2, 2}, std::nullopt, Ratio3{0.5, 0.6, 0.5},
                                     samples3.reshape({1, 1, 3}));
      },
      {test::uniform_input({1, 5, 6, 5}, -1, 1, 4706)}));
}

TEST(FractionalMaxPool, ModulesAreTheFunctions) {
  const Tensor x = test::uniform_input({2, 3, 11, 9}, -1, 1, 4707).detach();
  const Tensor samples = test::uniform_input({2, 3, 2}, 0, 1, 4708).detach();
  nn::FractionalMaxPool2d pool(
      nn::FractionalMaxPool2dOptions({3, 2}).output_size(4)._random_samples(samples));
  EXPECT_EQ(pool->extra_repr(), "kernel_size=(3, 2), output_size=(4, 4)");
  auto [y, i] = pool->forward_with_indices(x);
  auto [fy, fi] = fractional_max_pool2d_with_indices(x, {3, 2}, Size2{4, 4}, std::nullopt, samples);
  EXPECT_TRUE(test::all_close(y, test::to_vector(fy), 0, 0));
  EXPECT_EQ(ints(i), ints(fi));
  EXPECT_TRUE(test::all_close(pool(x), test::to_vector(fy), 0, 0));

  const Tensor volume = test::uniform_input({3, 6, 8, 7}, -1, 1, 4709).detach();
  const Tensor samples3 = test::uniform_input({1, 3, 3}, 0, 1, 4710).detach();
  nn::FractionalMaxPool3d pool3(
      nn::FractionalMaxPool3dOptions(2).output_ratio(0.5)._random_samples(samples3));
  EXPECT_EQ(pool3->extra_repr(), "kernel_size=(2, 2, 2), output_ratio=(0.5, 0.5, 0.5)");
  const Tensor y3 = pool3(volume);
  EXPECT_EQ(y3.shape(), (Shape{3, 3, 4, 3}));
  EXPECT_TRUE(
      test::all_close(y3,
                      test::to_vector(fractional_max_pool3d(volume, {2, 2, 2}, std::nullopt,
                                                            Ratio3{0.5, 0.5, 0.5}, samples3)),
                      0, 0));
}

}  // namespace
}  // namespace leangrad
