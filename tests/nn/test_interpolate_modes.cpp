// Tests of interpolate's bicubic, nearest-exact and area modes (kernels/cpu/upsample.cpp, Note
// [Interpolation source indices] in kernels/layers_math.h; area is adaptive_avg_pool2d) and of
// nn::Upsample with them: against
// PyTorch 1.13's values and gradients (tests/data/interpolate_modes.json, written by
// make_interpolate_modes.py), against Keys' cubic convolution written here in float64 from its
// definition, and by finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <leangrad/autograd/nn_functions.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/upsample.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using test::all_close;
using test::to_vector;

// PyTorch's default float32 tolerances (torch.testing.assert_close): both sides sum the same 16
// weighted taps per output (or copy one, or average a window of at most 9), in float32, a few
// roundings apart; the gradients sum those products per input element.
constexpr double kRtolF32 = 1.3e-6;
constexpr double kAtolF32 = 1e-5;

InterpolateMode mode_named(const std::string& name) {
  if (name == "bicubic") return kBicubic;
  if (name == "nearest-exact") return kNearestExact;
  if (name == "area") return kArea;
  ADD_FAILURE() << "unknown mode " << name;
  return kNearest;
}

TEST(InterpolateModesReference, MatchPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& rc : test::load_reference("interpolate_modes.json")) {
    SCOPED_TRACE(rc.name);
    const nlohmann::json& p = rc.params;
    const InterpolateMode mode = mode_named(p["mode"]);
    const std::optional<bool> corners =
        p["align_corners"].is_null() ? std::nullopt : std::optional<bool>(p["align_corners"]);
    const Tensor x = rc.at("x").clone().requires_grad_();
    Tensor y;
    if (rc.name.rfind("module_", 0) == 0) {
      const std::vector<double> factors = p["scale_factor"];
      nn::Upsample up(
          nn::UpsampleOptions().scale_factor(factors).mode(mode).align_corners(corners));
      y = up(x);
    } else if (!p["size"].is_null()) {
      const std::vector<std::int64_t> size = p["size"];
      y = interpolate(x, Size2{size[0], size[1]}, std::nullopt, mode, corners);
    } else {
      const std::vector<double> factors = p["scale_factor"];
      y = interpolate(x, std::nullopt, Scale2{factors[0], factors[1]}, mode, corners);
    }
    ASSERT_EQ(y.shape(), rc.at("y").shape());
    // nearest-exact copies: bit for bit.
    const bool copies = mode == kNearestExact;
    EXPECT_TRUE(all_close(y, to_vector(rc.at("y")), copies ? 0 : kRtolF32, copies ? 0 : kAtolF32));
    y.backward(rc.at("g"));
    EXPECT_TRUE(all_close(x.grad(), to_vector(rc.at("dx")), kRtolF32, kAtolF32)) << "dx";
    ++checked;
  }
  EXPECT_EQ(checked, 16);
}

// Keys' cubic convolution kernel, a = -0.75, from its definition.
double keys(double d) {
  const double a = -0.75;
  d = std::fabs(d);
  if (d <= 1) return (a + 2) * d * d * d - (a + 3) * d * d + 1;
  if (d < 2) return a * d * d * d - 5 * a * d * d + 8 * a * d - 4 * a;
  return 0;
}

// Bicubic resize of one (h, w) plane to (oh, ow) in float64: each output at source position s
// (per axis: (o + 0.5) in / out - 0.5, or o (in - 1) / (out - 1) with corners) is the sum over
// the 4 x 4 integer positions around it of keys(distance) times the input at that position
// clamped into the plane.
std::vector<double> reference_bicubic(const std::vector<double>& x, std::int64_t h, std::int64_t w,
                                      std::int64_t oh, std::int64_t ow, bool corners) {
  const auto source = [corners](std::int64_t o, std::int64_t in, std::int64_t out) {
    if (corners)
      return out > 1 ? o * static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
    return (o + 0.5) * static_cast<double>(in) / static_cast<double>(out) - 0.5;
  };
  const auto clamp = [](std::int64_t i, std::int64_t n) {
    return i < 0 ? 0 : (i >= n ? n - 1 : i);
  };
  std::vector<double> out;
  for (std::int64_t r = 0; r < oh; ++r) {
    const double sy = source(r, h, oh);
    const auto fy = static_cast<std::int64_t>(std::floor(sy));
    for (std::int64_t c = 0; c < ow; ++c) {
      const double sx = source(c, w, ow);
      const auto fx = static_cast<std::int64_t>(std::floor(sx));
      double v = 0;
      for (std::int64_t i = fy - 1; i <= fy + 2; ++i) {
        for (std::int64_t j = fx - 1; j <= fx + 2; ++j) {
          v += keys(sy - static_cast<double>(i)) * keys(sx - static_cast<double>(j)) *
               x[static_cast<std::size_t>(clamp(i, h) * w + clamp(j, w))];
        }
      }
      out.push_back(v);
    }
  }
  return out;
}

// float64 on both sides: the weights from the same polynomials in another form, 16 products
// summed in another order: within 64 u of the largest |input| (the weights' magnitudes sum to at
// most 1.375 per axis).
TEST(InterpolateModes, BicubicMatchesKeysConvolutionInFloat64) {
  const std::vector<std::vector<std::int64_t>> shapes = {
      {4, 5, 7, 9}, {9, 8, 4, 3}, {3, 3, 8, 5}, {6, 1, 6, 4}, {2, 7, 5, 7}};
  for (const bool corners : {false, true}) {
    for (const auto& s : shapes) {
      SCOPED_TRACE(::testing::Message() << "(" << s[0] << ", " << s[1] << ") -> (" << s[2] << ", "
                                        << s[3] << ") corners " << corners);
      const Tensor x = test::uniform_input({1, 1, s[0], s[1]}, -2.0, 3.0, 31).detach();
      const Tensor y = interpolate(x, Size2{s[2], s[3]}, std::nullopt, kBicubic, corners);
      EXPECT_TRUE(all_close(y, reference_bicubic(to_vector(x), s[0], s[1], s[2], s[3], corners), 0,
                            64 * 0x1p-53 * 3.0));
    }
  }
}

// nearest-exact picks floor((o + 0.5) in / out): values by hand.
TEST(InterpolateModes, NearestExactPicksTheCentres) {
  const Tensor x = test::make_tensor({0, 1, 2, 3, 4}, {1, 1, 1, 5});
  EXPECT_EQ(to_vector(interpolate(x, Size2{1, 3}, std::nullopt, kNearestExact)),
            (std::vector<double>{0, 2, 4}));  // centres 5/6, 15/6, 25/6
  EXPECT_EQ(to_vector(interpolate(x, Size2{1, 3}, std::nullopt, kNearest)),
            (std::vector<double>{0, 1, 3}));  // floor(o 5 / 3)
  EXPECT_EQ(to_vector(interpolate(x, Size2{1, 8}, std::nullopt, kNearestExact)),
            (std::vector<double>{0, 0, 1, 2, 2, 3, 4, 4}));
}

TEST(InterpolateModes, FirstAndSecondDerivatives) {
  const Tensor x = test::uniform_input({1, 2, 4, 3}, -1.0, 1.0, 41);
  for (const InterpolateMode mode : {kBicubic, kNearestExact}) {
    for (const bool corners : {false, true}) {
      if (mode == kNearestExact && corners) continue;
      SCOPED_TRACE(::testing::Message() << interpolate_mode_name(mode) << " corners " << corners);
      // align_corners is given to bicubic only (nearest-exact refuses it); made in the lambda,
      // where GCC 12 warned that a captured std::optional<bool> might be uninitialized.
      const auto fn = [mode, corners](const std::vector<Tensor>& in) {
        const std::optional<bool> align =
            mode == kBicubic ? std::optional<bool>(corners) : std::nullopt;
        const Tensor y = interpolate(in[0], Size2{7, 5}, std::nullopt, mode, align);
        return y * y;
      };
      EXPECT_TRUE(test::gradcheck(fn, {x}));
      EXPECT_TRUE(test::gradgradcheck(fn, {x}));
    }
  }
}

TEST(InterpolateModes, UpsamplePrintsAndChecksTheModes) {
  std::ostringstream printed;
  printed << nn::Upsample(nn::UpsampleOptions()
                              .scale_factor(std::vector<double>{2, 2})
                              .mode(kBicubic)
                              .align_corners(true));
  EXPECT_EQ(printed.str(), "Upsample(scale_factor=[2, 2], mode=bicubic, align_corners=true)");
  std::ostringstream exact;
  exact << nn::Upsample(
      nn::UpsampleOptions().size(std::vector<std::int64_t>{8}).mode(kNearestExact));
  EXPECT_EQ(exact.str(), "Upsample(size=[8], mode=nearest-exact)");
  EXPECT_THROW(nn::Upsample(nn::UpsampleOptions()
                                .size(std::vector<std::int64_t>{8})
                                .mode(kNearestExact)
                                .align_corners(false)),
               Error);
}

}  // namespace
}  // namespace leangrad
