// cross_map_lrn2d (autograd/composed_layers.h) and nn::CrossMapLRN2d: against PyTorch 1.13's
// forward (tests/data/cross_map_lrn2d.json, written by make_cross_map_lrn2d.py, float64), against
// a loop of the window Note [Cross-map windows] derives from PyTorch's running sum, and the
// gradient by finite differences (PyTorch's backward of this layer is not its forward's
// derivative, so it is no reference). Bad arguments: the ComposedLayers table of
// tests/misuse/test_misuse_nn_layers.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <leangrad/autograd/composed_layers.h>
#include <leangrad/nn/composed_layers.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

// float64: a sum of at most 11 squares (an average times its width, against PyTorch's running
// sum, whose additions and subtractions round at most 2 C times), then a power; the inputs are
// below 5 in magnitude, so 2^-40 covers it.
constexpr double kAtol = 0x1p-40;

TEST(CrossMapLRN2d, MatchesPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& c : test::load_reference("cross_map_lrn2d.json")) {
    SCOPED_TRACE(c.name);
    const auto& p = c.params;
    nn::CrossMapLRN2d layer(nn::CrossMapLRN2dOptions(p.at("size").get<std::int64_t>())
                                .alpha(p.at("alpha").get<double>())
                                .beta(p.at("beta").get<double>())
                                .k(p.at("k").get<double>()));
    const Tensor y = layer(c.at("x"));
    ASSERT_EQ(y.shape(), c.at("y").shape());
    EXPECT_TRUE(test::all_close(y, test::to_vector(c.at("y")), 0, kAtol));
    ++checked;
  }
  EXPECT_EQ(checked, 5);
}

TEST(CrossMapLRN2d, IsItsWindowAsALoop) {
  const std::int64_t n = 2, channels = 10, cells = 6;
  const Tensor x = test::uniform_input({n, channels, 2, 3}, -2, 2, 4730).detach();
  const std::vector<double> xv = test::to_vector(x);
  for (const std::int64_t size : {1, 2, 3, 4, 5, 7, 12}) {
    SCOPED_TRACE(size);
    const double alpha = 0.3, beta = 0.7, k = 1.5;
    const std::vector<double> y = test::to_vector(cross_map_lrn2d(x, size, alpha, beta, k));
    const std::int64_t reach = (size - 1) / 2 + 1;
    for (std::int64_t b = 0; b < n; ++b)
      for (std::int64_t c = 0; c < channels; ++c)
        for (std::int64_t e = 0; e < cells; ++e) {
          const auto at = [&](std::int64_t ch) { return xv[(b * channels + ch) * cells + e]; };
          double s = 0;
          for (std::int64_t j = std::max<std::int64_t>(0, c - reach + 1);
               j <= std::min(channels - 1, c + reach - 1); ++j)
            s += at(j) * at(j);
          if (c >= reach) s += at(0) * at(0);  // the square PyTorch's running sum keeps
          const double want = at(c) * std::pow(k + alpha / static_cast<double>(size) * s, -beta);
          ASSERT_NEAR(y[(b * channels + c) * cells + e], want, kAtol) << "channel " << c;
        }
  }
}

TEST(CrossMapLRN2dGrad, FiniteDifferences) {
  for (const std::int64_t size : {3, 4}) {
    EXPECT_TRUE(test::gradcheck(
        [&](const std::vector<Tensor>& in) { return cross_map_lrn2d(in[0], size, 0.5, 0.75, 1.0); },
        {test::uniform_input({2, 7, 2, 2}, -1, 1, 4731)}));
  }
  EXPECT_TRUE(test::gradgradcheck(
      [](const std::vector<Tensor>& in) { return cross_map_lrn2d(in[0], 5, 0.5, 0.75, 1.0); },
      {test::uniform_input({1, 7, 1, 2}, -1, 1, 4732)}));
  nn::CrossMapLRN2d layer(3);
  EXPECT_EQ(layer->extra_repr(), "3, alpha=0.0001, beta=0.75, k=1");
}

}  // namespace
}  // namespace leangrad
