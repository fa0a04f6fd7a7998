// interpolate's antialias and recompute_scale_factor (autograd/nn_functions.h): against PyTorch
// 1.13 (tests/data/interpolate_antialias.json, written by make_interpolate_antialias.py: values
// and gradients, float64 and float32), a constant image staying constant (the weights are
// normalised), and finite differences. Bad arguments: the Interpolate table of
// tests/misuse/test_misuse_nn_layers.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

InterpolateMode mode_named(const std::string& name) {
  if (name == "bilinear") return kBilinear;
  if (name == "bicubic") return kBicubic;
  EXPECT_EQ(name, "nearest");
  return kNearest;
}

// Each output is two weighted sums (one per axis) of at most 2 (2 ceil(support) + 1) <= 42 taps
// here (support <= 2 x 4.6, the largest downscale), so at most 64 roundings of terms whose
// absolute sum is at most (sum |w|)^2 max|x|, sum |w| <= 1.25 for a row of either filter (Keys'
// cubic with a = -0.5 or -0.75 dips below 0 by little). The weights themselves agree with
// PyTorch's within a few roundings. A gradient sums, per input pixel, the weights of every output
// that reaches it: a column of either axis sums to at most 10 in absolute value here (the 2.2x
// upscales reach 4 x 2.2 + 1 outputs of weight <= 1).
double value_tolerance(DType dtype, const Tensor& x) {
  return 64 * test::math_unit_roundoff(dtype) * 1.25 * 1.25 * test::max_abs(x);
}
double grad_tolerance(DType dtype, const Tensor& g) {
  return 64 * test::math_unit_roundoff(dtype) * 10 * 10 * test::max_abs(g);
}

TEST(InterpolateAntialias, MatchesPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& c : test::load_reference("interpolate_antialias.json")) {
    SCOPED_TRACE(c.name);
    const auto& p = c.params;
    const Tensor x = c.at("x").clone().requires_grad_();
    std::optional<std::vector<std::int64_t>> size;
    std::optional<std::vector<double>> scale;
    if (!p.at("size").is_null()) size = p.at("size").get<std::vector<std::int64_t>>();
    if (!p.at("scale_factor").is_null()) scale = p.at("scale_factor").get<std::vector<double>>();
    std::optional<bool> align, recompute;
    if (!p.at("align_corners").is_null()) align = p.at("align_corners").get<bool>();
    if (!p.at("recompute_scale_factor").is_null())
      recompute = p.at("recompute_scale_factor").get<bool>();
    const Tensor y = interpolate(x, size, scale, mode_named(p.at("mode").get<std::string>()), align,
                                 recompute, p.at("antialias").get<bool>());
    ASSERT_EQ(y.shape(), c.at("y").shape());
    EXPECT_EQ(y.dtype(), x.dtype());
    EXPECT_TRUE(
        test::all_close(y, test::to_vector(c.at("y")), 0, value_tolerance(x.dtype(), c.at("x"))));
    ++checked;
    if (p.contains("values_only")) continue;  // torch's bicubic backward there is not its forward's
    y.backward(c.at("g"));
    EXPECT_TRUE(test::all_close(x.grad(), test::to_vector(c.at("dx")), 0,
                                grad_tolerance(x.dtype(), c.at("g"))));
  }
  EXPECT_EQ(checked, 17);
}

TEST(InterpolateAntialias, KeepsAConstantImage) {
  // The weights of each output sum to 1, edges included: a constant stays itself (within the
  // rounding of the weights' sum).
  const Tensor image = full({1, 2, 37, 29}, 3.25, kFloat64);
  for (const InterpolateMode mode : {kBilinear, kBicubic}) {
    for (const bool align : {false, true}) {
      const Tensor y = interpolate(image, Size2{8, 11}, std::nullopt, mode, align, std::nullopt,
                                   /*antialias=*/true);
      EXPECT_TRUE(test::all_close(y, std::vector<double>(2 * 8 * 11, 3.25), 0, 1e-13));
      const Tensor up = interpolate(image, Size2{50, 40}, std::nullopt, mode, align, std::nullopt,
                                    /*antialias=*/true);
      EXPECT_TRUE(test::all_close(up, std::vector<double>(2 * 50 * 40, 3.25), 0, 1e-13));
    }
  }
}

TEST(InterpolateAntialiasGrad, FiniteDifferences) {
  for (const InterpolateMode mode : {kBilinear, kBicubic}) {
    EXPECT_TRUE(test::gradcheck(
        [&](const std::vector<Tensor>& in) {
          return interpolate(in[0], Size2{3, 7}, std::nullopt, mode, std::nullopt, std::nullopt,
                             true)
              .pow(2.0);
        },
        {test::uniform_input({1, 2, 9, 5}, -1, 1, 4720)}));
  }
}

}  // namespace
}  // namespace leangrad
