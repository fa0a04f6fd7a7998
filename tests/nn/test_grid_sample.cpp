// grid_sample and affine_grid (autograd/grid_sample.cpp, Note [Sampling by gathers]): against
// PyTorch 1.13 (tests/data/grid_sample.json, written by make_grid_sample.py: every mode, padding
// mode and align_corners, points outside and on pixel centres, volumes; output and the input and
// grid gradients, affine grids and theta's gradient), against bilinear sampling written here as a
// loop in float32, by finite differences to the second order, through F::GridSampleFuncOptions,
// and with NaN coordinates. Bad arguments: the GridSample rows of
// tests/misuse/test_misuse_nn_layers.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grid_sample.h>
#include <leangrad/nn/functional_options.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"
#include "testing/within_bound.h"

namespace leangrad {
namespace {

namespace F = nn::functional;

InterpolateMode mode_named(const std::string& name) {
  if (name == "nearest") return kNearest;
  return name == "bicubic" ? kBicubic : kBilinear;
}

GridSamplePadding padding_named(const std::string& name) {
  if (name == "border") return kBorder;
  if (name == "reflection") return kReflection;
  return kZeros;
}

// Each output is at most 16 taps times weights below 1.25; each weight is a product of
// polynomials of coordinates below 6 size, rounded in another order than PyTorch's (and a
// reflection's fmod as a subtraction): within a few hundred u of the coordinate's size each. The
// grid's gradient scales that by size / 2 and by the upstream gradient. 2^12 u max|x| max|g|
// (1 + size) covers both and is far below any wrong tap or weight.
double bound(const Tensor& x, const Tensor& g) {
  double largest = 1;
  for (int d = 2; d < x.dim(); ++d)
    largest = std::max(largest, static_cast<double>(x.size(d)));
  return 4096 * test::math_unit_roundoff(kFloat64) * std::max(1.0, test::max_abs(x)) *
         std::max(1.0, test::max_abs(g)) * (1 + largest);
}

TEST(GridSample, MatchesPyTorch) {
  int sampled = 0, affine = 0;
  for (const test::ReferenceCase& c : test::load_reference("grid_sample.json")) {
    SCOPED_TRACE(c.name);
    const auto& p = c.params;
    const bool corners = p.at("align_corners").get<bool>();
    if (p.at("op").get<std::string>() == "affine_grid") {
      ++affine;
      Tensor theta = c.at("theta").clone().requires_grad_();
      const Tensor grid =
          affine_grid(theta, p.at("size").get<std::vector<std::int64_t>>(), corners);
      ASSERT_EQ(grid.shape(), c.at("grid").shape());
      const double b = bound(theta, c.at("g")) * 16;
      EXPECT_TRUE(test::within_bound(grid, c.at("grid"), b)) << "grid";
      sum(mul(grid, c.at("g"))).backward();
      EXPECT_TRUE(test::within_bound(theta.grad(), c.at("dtheta"), b * 16)) << "theta gradient";
      continue;
    }
    ++sampled;
    Tensor x = c.at("x").clone().requires_grad_();
    Tensor grid = c.at("grid").clone().requires_grad_();
    const Tensor y = grid_sample(x, grid, mode_named(p.at("mode").get<std::string>()),
                                 padding_named(p.at("padding_mode").get<std::string>()), corners);
    ASSERT_EQ(y.shape(), c.at("y").shape());
    const double b = bound(x, c.at("g"));
    EXPECT_TRUE(test::within_bound(y, c.at("y"), b)) << "output";
    sum(mul(y, c.at("g"))).backward();
    EXPECT_TRUE(test::within_bound(x.grad(), c.at("dx"), b)) << "input gradient";
    // Nearest sampling does not depend on the grid: no gradient reaches it (PyTorch's zeros).
    if (p.at("mode").get<std::string>() == "nearest") {
      EXPECT_FALSE(grid.grad().defined());
      EXPECT_EQ(test::max_abs(c.at("dgrid")), 0.0);
    } else {
      EXPECT_TRUE(test::within_bound(grid.grad(), c.at("dgrid"), b)) << "grid gradient";
    }
  }
  EXPECT_EQ(sampled, 37);
  EXPECT_EQ(affine, 4);
}

// Bilinear sampling with zero padding, written out: the four pixels around each point, each
// weighted by the opposite pixel's distances, in float32 against a float64 loop.
TEST(GridSample, BilinearIsItsDefinitionInFloat32) {
  const std::int64_t n = 2, c = 3, h = 5, w = 4, ho = 3, wo = 6;
  const Tensor x = test::uniform_input({n, c, h, w}, -2, 2, 5201).detach();
  const Tensor grid = test::uniform_input({n, ho, wo, 2}, -1.2, 1.2, 5202).detach();
  const std::vector<double> xv = test::to_vector(x.to(kFloat32).to(kFloat64));
  const std::vector<double> gv = test::to_vector(grid.to(kFloat32).to(kFloat64));
  for (const bool corners : {false, true}) {
    SCOPED_TRACE(corners ? "align_corners" : "edges");
    const std::vector<double> y =
        test::to_vector(grid_sample(x.to(kFloat32), grid.to(kFloat32), kBilinear, kZeros, corners));
    for (std::int64_t b = 0; b < n; ++b)
      for (std::int64_t ch = 0; ch < c; ++ch)
        for (std::int64_t i = 0; i < ho * wo; ++i) {
          const double gx = gv[(b * ho * wo + i) * 2], gy = gv[(b * ho * wo + i) * 2 + 1];
          const double px = corners ? (gx + 1) / 2 * (w - 1) : ((gx + 1) * w - 1) / 2;
          const double py = corners ? (gy + 1) / 2 * (h - 1) : ((gy + 1) * h - 1) / 2;
          const double x0 = std::floor(px), y0 = std::floor(py);
          double want = 0;
          for (int dy = 0; dy < 2; ++dy)
            for (int dx = 0; dx < 2; ++dx) {
              const double tx = x0 + dx, ty = y0 + dy;
              if (tx < 0 || tx > w - 1 || ty < 0 || ty > h - 1) continue;
              const double weight = (dx ? px - x0 : x0 + 1 - px) * (dy ? py - y0 : y0 + 1 - py);
              want += weight * xv[((b * c + ch) * h + static_cast<std::int64_t>(ty)) * w +
                                  static_cast<std::int64_t>(tx)];
            }
          // Four taps below 2 with weights from float32 coordinates below 6: 64 u_f32 * 8.
          ASSERT_NEAR(y[(b * c + ch) * ho * wo + i], want, 512 * 0x1p-24) << "point " << i;
        }
  }
}

TEST(GridSampleGrad, FiniteDifferences) {
  // Points kept off the pixel grid's lines, where the weights have kinks.
  const Tensor x = test::uniform_input({1, 2, 3, 4}, -1, 1, 5203);
  const Tensor grid = test::uniform_input({1, 2, 3, 2}, -0.9, 0.9, 5204);
  for (const InterpolateMode mode : {kBilinear, kBicubic}) {
    for (const GridSamplePadding padding : {GridSamplePadding::Zeros, kBorder, kReflection}) {
      SCOPED_TRACE(std::string(interpolate_mode_name(mode)) + " " +
                   grid_sample_padding_name(padding));
      EXPECT_TRUE(test::gradcheck(
          [&](const std::vector<Tensor>& in) {
            return grid_sample(in[0], in[1], mode, padding, false);
          },
          {x, grid}));
    }
  }
  EXPECT_TRUE(test::gradgradcheck(
      [](const std::vector<Tensor>& in) {
        return grid_sample(in[0], in[1], kBicubic, kReflection, true);
      },
      {x, grid}));
  const Tensor volume = test::uniform_input({1, 1, 2, 3, 2}, -1, 1, 5205);
  const Tensor points = test::uniform_input({1, 1, 2, 2, 3}, -0.9, 0.9, 5206);
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        return grid_sample(in[0], in[1], kBilinear, kBorder, true);
      },
      {volume, points}));
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) {
        return affine_grid(in[0], {1, 1, 3, 2});
      },
      {test::uniform_input({1, 2, 3}, -1, 1, 5207)}));
}

TEST(GridSample, FunctionalOptionsAndNaN) {
  const Tensor x = test::uniform_input({1, 2, 4, 4}, -1, 1, 5208).detach();
  const Tensor grid = test::uniform_input({1, 3, 3, 2}, -1.5, 1.5, 5209).detach();
  EXPECT_TRUE(equal(F::grid_sample(x, grid, F::GridSampleFuncOptions()),
                    grid_sample(x, grid, kBilinear, kZeros, false)));
  EXPECT_TRUE(equal(
      F::grid_sample(
          x, grid,
          F::GridSampleFuncOptions().mode(kBicubic).padding_mode(kReflection).align_corners(true)),
      grid_sample(x, grid, kBicubic, kReflection, true)));
  EXPECT_TRUE(equal(
      F::grid_sample(x, grid, F::GridSampleFuncOptions().mode(kNearest).padding_mode(kBorder)),
      grid_sample(x, grid, kNearest, kBorder, false)));
  // A NaN coordinate, as PyTorch's with zero padding: nearest reads nothing (0), bilinear and
  // bicubic weigh nothing by NaN (NaN).
  const Tensor nan_grid = full({1, 1, 1, 2}, std::nan(""), TensorOptions(kFloat64));
  EXPECT_TRUE(test::all_close(grid_sample(x, nan_grid, kNearest), {0.0, 0.0}, 0, 0));
  for (const InterpolateMode mode : {kBilinear, kBicubic}) {
    const std::vector<double> y = test::to_vector(grid_sample(x, nan_grid, mode));
    EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[1])) << interpolate_mode_name(mode);
  }
}

// No batch or no channels: an empty output of torch's shape (N, C, H_out, W_out[, ...]) and an
// empty gradient, in every mode (reshape could not infer the plane's size from -1 there).
TEST(GridSample, AnEmptyBatchOrNoChannelsGiveAnEmptyOutput) {
  const struct {
    Shape input, grid, out;
  } shapes[] = {{{0, 1, 3, 3}, {0, 2, 2, 2}, {0, 1, 2, 2}},
                {{1, 0, 3, 3}, {1, 2, 2, 2}, {1, 0, 2, 2}},
                {{0, 1, 3, 3, 3}, {0, 2, 2, 2, 3}, {0, 1, 2, 2, 2}}};
  for (const auto& s : shapes) {
    for (const InterpolateMode mode : {kBilinear, kNearest, kBicubic}) {
      if (mode == kBicubic && s.input.size() == 5) continue;
      SCOPED_TRACE(shape_str(s.input) + " " + interpolate_mode_name(mode));
      const Tensor x = zeros(s.input, TensorOptions(kFloat64)).requires_grad_(true);
      const Tensor grid = zeros(s.grid, TensorOptions(kFloat64)).requires_grad_(true);
      const Tensor y = grid_sample(x, grid, mode);
      EXPECT_EQ(y.shape(), s.out);
      sum(y).backward();
      ASSERT_TRUE(x.grad().defined());
      EXPECT_EQ(x.grad().shape(), s.input);
    }
  }
}

}  // namespace
}  // namespace leangrad
