// Tests of interpolate over (N, C, L) and (N, C, D, H, W) inputs (Note [Interpolation of any rank]
// in autograd/nn_functions.cpp): linear, trilinear, and nearest, nearest-exact and area at both
// ranks, and nn::Upsample with them: against PyTorch 1.13's values and gradients
// (tests/data/interpolate_nd.json, written by make_interpolate_nd.py), against linear and
// trilinear interpolation written here in float64 from their definition (the 8 corners of a
// source position at once, not axis by axis as the code does), and by finite differences.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <leangrad/autograd/nn_functions.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/init.h>
#include <leangrad/nn/upsample.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using test::all_close;
using test::gradcheck;
using Inputs = std::vector<Tensor>;
using test::to_vector;
using test::uniform_input;
using Sizes = std::vector<std::int64_t>;
using Factors = std::vector<double>;

// kLinear is both LibTorch spellings (core/enum_tags.h).
static_assert(InterpolateMode{kLinear} == InterpolateMode::Linear);
static_assert(nn::init::Nonlinearity{kLinear} == nn::init::Nonlinearity::Linear);

// PyTorch's default float32 tolerances (torch.testing.assert_close): both sides weigh the same 8
// corners (or copy one, or average a window of at most 9 x 2 x 2), in float32, with the same
// nesting of per-axis sums; the gradients sum a few dozen such products per input element.
constexpr double kRtolF32 = 1.3e-6;
constexpr double kAtolF32 = 1e-5;

// Equal element for element (NaN to NaN) in the same shape.
::testing::AssertionResult same(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape())
    return ::testing::AssertionFailure() << "shapes " << a.shape() << " and " << b.shape();
  return all_close(a, to_vector(b), 0, 0);
}

InterpolateMode mode_named(const std::string& name) {
  if (name == "linear") return kLinear;
  if (name == "trilinear") return kTrilinear;
  if (name == "nearest") return kNearest;
  if (name == "nearest-exact") return kNearestExact;
  if (name == "area") return kArea;
  ADD_FAILURE() << "unknown mode " << name;
  return kNearest;
}

TEST(InterpolateNdReference, MatchPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& rc : test::load_reference("interpolate_nd.json")) {
    SCOPED_TRACE(rc.name);
    const nlohmann::json& p = rc.params;
    const InterpolateMode mode = mode_named(p["mode"]);
    const std::optional<bool> corners =
        p["align_corners"].is_null() ? std::nullopt : std::optional<bool>(p["align_corners"]);
    std::optional<Sizes> size;
    std::optional<Factors> factors;
    if (!p["size"].is_null()) size = p["size"].get<Sizes>();
    if (!p["scale_factor"].is_null()) factors = p["scale_factor"].get<Factors>();
    const Tensor x = rc.at("x").clone().requires_grad_();
    Tensor y;
    if (rc.name.rfind("module_", 0) == 0) {
      nn::UpsampleOptions options;
      options.mode(mode).align_corners(corners);
      if (size) options.size(*size);
      if (factors) options.scale_factor(*factors);
      y = nn::Upsample(options)(x);
    } else {
      y = interpolate(x, size, factors, mode, corners);
    }
    ASSERT_EQ(y.shape(), rc.at("y").shape());
    // The nearest modes copy: bit for bit.
    const bool copies = mode == kNearest || mode == kNearestExact;
    EXPECT_TRUE(all_close(y, to_vector(rc.at("y")), copies ? 0 : kRtolF32, copies ? 0 : kAtolF32));
    y.backward(rc.at("g"));
    EXPECT_TRUE(all_close(x.grad(), to_vector(rc.at("dx")), kRtolF32, kAtolF32)) << "dx";
    ++checked;
  }
  EXPECT_EQ(checked, 24);
}

// The taps of output position o along an axis of `in` resized to `out`, from the definition:
// the source position is o (in - 1) / (out - 1) with corners (0 for out == 1), else
// (o + 0.5) / factor - 0.5 with factor the given scale or out / in, at least 0; the taps are its
// floor (at most in - 1) and the next index (at most in - 1), weighted by the distance to them.
struct Taps {
  std::int64_t lo, hi;
  double w_lo, w_hi;
};

Taps linear_taps_of(std::int64_t o, std::int64_t in, std::int64_t out, double factor,
                    bool corners) {
  double s = 0;
  if (corners) {
    s = out > 1
            ? static_cast<double>(o) * static_cast<double>(in - 1) / static_cast<double>(out - 1)
            : 0.0;
  } else {
    const double f = factor > 0 ? factor : static_cast<double>(out) / static_cast<double>(in);
    s = std::max((static_cast<double>(o) + 0.5) / f - 0.5, 0.0);
  }
  const auto lo = std::min(static_cast<std::int64_t>(std::floor(s)), in - 1);
  const double l = std::min(s - static_cast<double>(lo), 1.0);
  return {lo, std::min(lo + 1, in - 1), 1.0 - l, l};
}

// (N C) volumes of (d, h, w) resized to (od, oh, ow): each output sums its 8 corners, the product
// of three axes' weights times the input. A 1-d resize is d = h = od = oh = 1.
std::vector<double> reference_trilinear(const std::vector<double>& x, std::int64_t volumes,
                                        const std::array<std::int64_t, 3>& in,
                                        const std::array<std::int64_t, 3>& out,
                                        const std::array<double, 3>& factors, bool corners) {
  std::vector<double> y;
  for (std::int64_t v = 0; v < volumes; ++v) {
    for (std::int64_t a = 0; a < out[0]; ++a) {
      const Taps td = linear_taps_of(a, in[0], out[0], factors[0], corners);
      for (std::int64_t b = 0; b < out[1]; ++b) {
        const Taps th = linear_taps_of(b, in[1], out[1], factors[1], corners);
        for (std::int64_t c = 0; c < out[2]; ++c) {
          const Taps tw = linear_taps_of(c, in[2], out[2], factors[2], corners);
          double sum = 0;
          for (int i = 0; i < 8; ++i) {
            const std::int64_t d = (i & 4) != 0 ? td.hi : td.lo;
            const std::int64_t h = (i & 2) != 0 ? th.hi : th.lo;
            const std::int64_t w = (i & 1) != 0 ? tw.hi : tw.lo;
            const double weight = ((i & 4) != 0 ? td.w_hi : td.w_lo) *
                                  ((i & 2) != 0 ? th.w_hi : th.w_lo) *
                                  ((i & 1) != 0 ? tw.w_hi : tw.w_lo);
            sum += weight * x[static_cast<std::size_t>(((v * in[0] + d) * in[1] + h) * in[2] + w)];
          }
          y.push_back(sum);
        }
      }
    }
  }
  return y;
}

// float64 on both sides: the code nests per-axis sums (w_d (w_h (w_w a + w_w b) + ...)), the
// reference sums the 8 products of three weights; each weight is within 2 u of the real one
// (a division and a subtraction) and in [0, 1], the weights of an axis sum to 1, so each side is
// within about 24 u of the exact value, times the largest |input| (2 here): 1e-14 covers both.
constexpr double kTrilinearAtolF64 = 1e-14;

TEST(InterpolateNd, LinearAndTrilinearAreTheirDefinition) {
  struct Case {
    Sizes in;  // spatial sizes
    std::optional<Sizes> size;
    std::optional<Factors> factors;
    bool corners;
  };
  const std::vector<Case> cases = {
      {{5}, Sizes{9}, std::nullopt, false},
      {{5}, Sizes{9}, std::nullopt, true},
      {{11}, Sizes{4}, std::nullopt, false},
      {{4}, std::nullopt, Factors{2.5}, false},
      {{6}, std::nullopt, Factors{0.6}, true},
      {{3, 4, 5}, Sizes{5, 6, 7}, std::nullopt, false},
      {{3, 4, 5}, Sizes{5, 6, 7}, std::nullopt, true},
      {{7, 6, 8}, Sizes{3, 4, 3}, std::nullopt, false},
      {{2, 3, 4}, std::nullopt, Factors{2.0, 1.5, 2.5}, false},
      {{4, 3, 3}, std::nullopt, Factors{1.5, 2.0, 0.7}, true},
      {{1, 3, 4}, Sizes{3, 5, 6}, std::nullopt, false},
      {{4, 3, 5}, Sizes{4, 1, 2}, std::nullopt, true},
  };
  std::uint64_t seed = 200;
  for (const Case& k : cases) {
    Shape shape{2, 3};
    shape.insert(shape.end(), k.in.begin(), k.in.end());
    SCOPED_TRACE(::testing::Message() << "input " << shape << (k.corners ? " corners" : ""));
    const Tensor x = uniform_input(shape, -2, 2, seed++).detach();
    const bool trilinear = k.in.size() == 3;
    const Tensor y = interpolate(x, k.size, k.factors, trilinear ? kTrilinear : kLinear, k.corners);
    // The reference's volumes: (1, 1, L) for linear.
    std::array<std::int64_t, 3> in{1, 1, k.in.back()}, out{1, 1, 1};
    std::array<double, 3> factors{0, 0, 0};
    const std::size_t first = 3 - k.in.size();
    for (std::size_t d = 0; d < k.in.size(); ++d) {
      in[first + d] = k.in[d];
      if (k.factors) factors[first + d] = (*k.factors)[d];
      out[first + d] = k.size ? (*k.size)[d]
                              : static_cast<std::int64_t>(
                                    std::floor(static_cast<double>(k.in[d]) * (*k.factors)[d]));
    }
    EXPECT_TRUE(all_close(y, reference_trilinear(to_vector(x), 6, in, out, factors, k.corners), 0,
                          kTrilinearAtolF64));
  }
}

// The nearest modes over (N, C, D, H, W) copy input (floor(o step), ...) per axis, the step in
// float (Note [Interpolation source indices]); checked exactly (a NaN among them) in float32.
TEST(InterpolateNd, NearestVolumesCopyTheirSourceElements) {
  std::vector<double> values = to_vector(uniform_input({2, 2, 5, 4, 6}, -1, 1, 300).to(kFloat32));
  values[7] = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = tensor(values, {2, 2, 5, 4, 6}).to(kFloat32);
  for (const bool exact : {false, true}) {
    SCOPED_TRACE(exact ? "nearest-exact" : "nearest");
    const Sizes out{7, 3, 9};
    const Tensor y = interpolate(x, out, std::nullopt, exact ? kNearestExact : kNearest);
    const auto source = [exact](std::int64_t o, std::int64_t in, std::int64_t n) {
      const float step = static_cast<float>(in) / static_cast<float>(n);
      const float at = exact ? (static_cast<float>(o) + 0.5f) * step : static_cast<float>(o) * step;
      return std::min(static_cast<std::int64_t>(std::floor(at)), in - 1);
    };
    std::vector<double> expected;
    for (std::int64_t v = 0; v < 4; ++v)
      for (std::int64_t d = 0; d < out[0]; ++d)
        for (std::int64_t h = 0; h < out[1]; ++h)
          for (std::int64_t w = 0; w < out[2]; ++w)
            expected.push_back(values[static_cast<std::size_t>(
                ((v * 5 + source(d, 5, out[0])) * 4 + source(h, 4, out[1])) * 6 +
                source(w, 6, out[2]))]);
    ASSERT_EQ(y.shape(), Shape({2, 2, 7, 3, 9}));
    EXPECT_TRUE(all_close(y, expected, 0, 0));
  }
}

TEST(InterpolateNdGrad, EveryModeAtBothRanks) {
  const Tensor line = uniform_input({2, 2, 5}, -1, 1, 310);
  const Tensor volume = uniform_input({1, 2, 3, 4, 3}, -1, 1, 311);
  struct Case {
    const char* name;
    Tensor x;
    std::optional<Sizes> size;
    std::optional<Factors> factors;
    InterpolateMode mode;
    std::optional<bool> corners;
  };
  const std::vector<Case> cases = {
      {"linear", line, Sizes{8}, std::nullopt, kLinear, std::nullopt},
      {"linear_corners_down", line, Sizes{3}, std::nullopt, kLinear, true},
      {"linear_factor", line, std::nullopt, Factors{1.7}, kLinear, std::nullopt},
      {"nearest_1d", line, Sizes{7}, std::nullopt, kNearest, std::nullopt},
      {"area_1d", line, Sizes{3}, std::nullopt, kArea, std::nullopt},
      {"trilinear", volume, Sizes{5, 3, 6}, std::nullopt, kTrilinear, std::nullopt},
      {"trilinear_corners", volume, Sizes{4, 6, 2}, std::nullopt, kTrilinear, true},
      {"trilinear_factor", volume, std::nullopt, Factors{1.5, 0.8, 2.0}, kTrilinear, false},
      {"nearest_3d", volume, Sizes{5, 3, 6}, std::nullopt, kNearest, std::nullopt},
      {"nearest_exact_3d", volume, std::nullopt, Factors{0.7, 1.5, 2.0}, kNearestExact,
       std::nullopt},
      {"area_3d", volume, Sizes{2, 3, 2}, std::nullopt, kArea, std::nullopt},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    EXPECT_TRUE(gradcheck(
        [&](const Inputs& in) { return interpolate(in[0], k.size, k.factors, k.mode, k.corners); },
        {k.x}));
  }
  // Second order through both stages of the separable trilinear resize.
  EXPECT_TRUE(test::gradgradcheck(
      [](const Inputs& in) {
        return interpolate(in[0], Sizes{4, 5, 2}, std::nullopt, kTrilinear).pow(2.0);
      },
      {volume}));
}

TEST(InterpolateNd, FourDimsThroughTheVectorFormAreTheTwoDimFunction) {
  const Tensor x = uniform_input({2, 3, 4, 5}, -1, 1, 320).detach().to(kFloat32);
  EXPECT_TRUE(same(interpolate(x, Sizes{7, 3}, std::nullopt, kBicubic),
                   interpolate(x, Size2{7, 3}, std::nullopt, kBicubic)));
  EXPECT_TRUE(same(interpolate(x, std::nullopt, Factors{1.5, 2.0}, kBilinear, true),
                   interpolate(x, std::nullopt, Scale2{1.5, 2.0}, kBilinear, true)));
}

TEST(UpsampleModule, OneValueServesEverySpatialDim) {
  nn::Upsample up(nn::UpsampleOptions()
                      .scale_factor(std::vector<double>{2})
                      .mode(kTrilinear)
                      .align_corners(false));
  EXPECT_EQ(up->extra_repr(), "scale_factor=[2], mode=trilinear, align_corners=false");
  const Tensor volume = uniform_input({1, 2, 2, 3, 4}, -1, 1, 330).detach().to(kFloat32);
  EXPECT_TRUE(
      same(up(volume), interpolate(volume, std::nullopt, Factors{2, 2, 2}, kTrilinear, false)));
  nn::Upsample line(nn::UpsampleOptions().size(std::vector<std::int64_t>{9}).mode(kLinear));
  EXPECT_EQ(line->extra_repr(), "size=[9], mode=linear");
  const Tensor x = uniform_input({2, 3, 5}, -1, 1, 331).detach().to(kFloat32);
  EXPECT_TRUE(same(line(x), interpolate(x, Sizes{9}, std::nullopt, kLinear)));
}

}  // namespace
}  // namespace leangrad
