// Tests of the pooling options (ceil_mode, dilation, count_include_pad, divisor_override,
// max_pool2d_with_indices; Note [Pooling windows] in kernels/layers_math.h): values, indices and
// gradients against PyTorch 1.13 (tests/data/pool_options.json from make_pool_options.py), the
// output size rule against PyTorch's shapes, float64 gradchecks, the CPU's row-at-a-time and
// scatter kernels against the reference loop, and the 16-bit dtypes against float32. The CUDA
// side is compared with the CPU in op_table_layers.cpp; bad options in
// test_misuse_nn_functions.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/error.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/layers_math.h>
#include <leangrad/kernels/ops.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using test::gradcheck;
using Inputs = std::vector<Tensor>;

Size2 size2(const nlohmann::json& j) {
  return {j[0].get<std::int64_t>(), j[1].get<std::int64_t>()};
}

// The tolerance against PyTorch: an output sums at most 9 elements in [-1, 1] and an input
// gradient at most 4 windows' gradients (|g| < 5) over their divisors, each in the dtype's
// arithmetic, in an order that may differ from PyTorch's: at most ~ (9 + 1) u 9 absolute, with u
// the unit roundoff (2^-24 for float32: 5.4e-6; 2^-53 for float64: 1e-14). Maxima and indices
// are selections: exact.
test::Tolerance reference_tolerance(DType dtype) {
  const double u = dtype == kFloat64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
  return {10 * u, 90 * u};
}

// ---- PyTorch reference (tests/data/pool_options.json) ----------------------------------------

TEST(PoolOptionsReference, ValuesIndicesAndGradientsMatchPyTorch) {
  const std::vector<test::ReferenceCase> cases = test::load_reference("pool_options.json");
  ASSERT_EQ(cases.size(), 26u);
  for (const test::ReferenceCase& rc : cases) {
    if (rc.name == "output_sizes") continue;
    SCOPED_TRACE(rc.name);
    const nlohmann::json& p = rc.params;
    const Tensor x = rc.at("x").clone().requires_grad_();
    const test::Tolerance tol = reference_tolerance(x.dtype());
    Tensor y;
    if (p["op"] == "max") {
      auto [out, indices] =
          max_pool2d_with_indices(x, size2(p["kernel"]), size2(p["stride"]), size2(p["padding"]),
                                  size2(p["dilation"]), p["ceil_mode"].get<bool>());
      EXPECT_TRUE(test::all_close(out, test::to_vector(rc.at("y")), 0, 0));
      EXPECT_EQ(indices.dtype(), kInt64);
      EXPECT_TRUE(test::all_close(indices, test::to_vector(rc.at("indices")), 0, 0));
      y = out;
    } else {
      const std::optional<std::int64_t> divisor =
          p["divisor_override"].is_null()
              ? std::nullopt
              : std::optional<std::int64_t>(p["divisor_override"].get<std::int64_t>());
      y = avg_pool2d(x, size2(p["kernel"]), size2(p["stride"]), size2(p["padding"]),
                     p["ceil_mode"].get<bool>(), p["count_include_pad"].get<bool>(), divisor);
      EXPECT_TRUE(test::all_close(y, test::to_vector(rc.at("y")), tol.rtol, tol.atol));
    }
    ASSERT_EQ(y.shape(), rc.at("y").shape());
    y.backward(rc.at("g"));
    EXPECT_TRUE(test::all_close(x.grad(), test::to_vector(rc.at("dx")), tol.rtol, tol.atol));
  }
}

// Every (n, kernel, stride, padding, dilation, ceil_mode) of one axis with n < 10, kernel < 5,
// stride < 4, dilation < 4: the output size PyTorch computed, or a ShapeError where PyTorch
// raised "Output size is too small"; along the other axis (size 1, kernel 1) nothing changes.
TEST(PoolOptionsReference, OutputSizesMatchPyTorch) {
  const std::vector<test::ReferenceCase> cases = test::load_reference("pool_options.json");
  const auto sizes = std::find_if(cases.begin(), cases.end(), [](const test::ReferenceCase& c) {
    return c.name == "output_sizes";
  });
  ASSERT_NE(sizes, cases.end());
  ASSERT_GT(sizes->params["rows"].size(), 1000u);
  std::int64_t refused = 0;
  for (const nlohmann::json& row : sizes->params["rows"]) {
    const std::int64_t n = row[0], k = row[1], s = row[2], p = row[3], d = row[4], size = row[6];
    const bool ceil_mode = row[5];
    SCOPED_TRACE(row.dump());
    const Tensor x = zeros({1, 1, n, 1});
    if (size == 0) {
      ++refused;
      EXPECT_THROW(ops::max_pool2d(x, {k, 1}, {s, 1}, {p, 0}, {d, 1}, ceil_mode), ShapeError);
      if (d == 1) {
        EXPECT_THROW(ops::avg_pool2d(x, {k, 1}, {s, 1}, {p, 0}, ceil_mode), ShapeError);
      }
      continue;
    }
    EXPECT_EQ(ops::max_pool2d(x, {k, 1}, {s, 1}, {p, 0}, {d, 1}, ceil_mode).out.shape(),
              (Shape{1, 1, size, 1}));
    if (d == 1) {
      EXPECT_EQ(ops::avg_pool2d(x, {k, 1}, {s, 1}, {p, 0}, ceil_mode).shape(),
                (Shape{1, 1, size, 1}));
    }
  }
  EXPECT_GT(refused, 0);  // the table reaches the "too small" rule
}

// ---- Gradients by finite differences (float64) -----------------------------------------------

// Distinct values 0.01 apart in a seeded random order: no two elements of a window within the
// finite-difference step of each other (max pooling's kink), and no ties.
Tensor distinct_input(const Shape& shape, std::uint64_t seed) {
  std::vector<double> values(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = 0.01 * static_cast<double>(i) - 0.005 * static_cast<double>(values.size());
  std::mt19937_64 rng(seed);
  std::shuffle(values.begin(), values.end(), rng);
  Tensor x = test::make_tensor(values, shape, kFloat64);
  x.requires_grad_();
  return x;
}

TEST(PoolOptionsGrad, MaxPoolDilationAndCeilMode) {
  struct Geometry {
    Size2 kernel, stride, padding, dilation;
    bool ceil_mode;
  };
  for (const Geometry& c : {Geometry{{3, 3}, {2, 2}, {1, 1}, {2, 2}, true},
                            Geometry{{2, 3}, {1, 2}, {0, 0}, {2, 2}, false},    // inside
                            Geometry{{2, 2}, {3, 4}, {0, 0}, {2, 3}, true},     // non-overlapping
                            Geometry{{3, 2}, {2, 3}, {1, 1}, {1, 1}, true},     // ceil, padded
                            Geometry{{2, 2}, {3, 3}, {1, 1}, {1, 1}, true}}) {  // right padding
    SCOPED_TRACE(testing::Message() << "kernel " << shape_str({c.kernel[0], c.kernel[1]})
                                    << " dilation " << shape_str({c.dilation[0], c.dilation[1]}));
    EXPECT_TRUE(gradcheck(
        [&](const Inputs& in) {
          return max_pool2d(in[0], c.kernel, c.stride, c.padding, c.dilation, c.ceil_mode);
        },
        {distinct_input({2, 2, 8, 9}, 21)}));
  }
}

TEST(PoolOptionsGrad, AvgPoolCeilModeCountIncludePadAndDivisor) {
  struct Geometry {
    Size2 kernel, stride, padding;
    bool ceil_mode, count_include_pad;
    std::optional<std::int64_t> divisor;
  };
  for (const Geometry& c : {Geometry{{3, 3}, {2, 2}, {1, 1}, true, true, std::nullopt},
                            Geometry{{3, 3}, {2, 2}, {1, 1}, true, false, std::nullopt},
                            Geometry{{2, 3}, {1, 2}, {1, 1}, false, false, std::nullopt},
                            Geometry{{3, 2}, {2, 3}, {1, 1}, true, false, 5},
                            Geometry{{2, 2}, {3, 3}, {1, 1}, true, true, -3}}) {
    SCOPED_TRACE(testing::Message() << "kernel " << shape_str({c.kernel[0], c.kernel[1]})
                                    << " count_include_pad " << c.count_include_pad);
    EXPECT_TRUE(gradcheck(
        [&](const Inputs& in) {
          return avg_pool2d(in[0], c.kernel, c.stride, c.padding, c.ceil_mode, c.count_include_pad,
                            c.divisor);
        },
        {test::uniform_input({2, 2, 7, 8}, -1, 1, 22)}));
  }
}

// ---- The CPU kernels against the reference loop ----------------------------------------------

// The per-output and per-input functions of layers_math.h, looped over every plane: the spec
// that kernels/cpu/layers.cpp's row-at-a-time forward and scatter backward must reproduce bit
// for bit (ties and NaNs included).
template <typename T>
void expect_max_pool_kernels_match_reference(DType dtype, std::int64_t H, std::int64_t W) {
  SCOPED_TRACE(testing::Message() << "planes of " << H << " x " << W);
  const std::int64_t N = 2, C = 3;
  std::vector<double> values(static_cast<std::size_t>(N * C * H * W));
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<double>((i * 7) % 5) - 2.0;  // many ties
  values[17] = values[18] = values[200] = std::nan("");
  const Tensor x = test::make_tensor(values, {N, C, H, W}, dtype);
  struct Geometry {
    std::int64_t kh, kw, sh, sw, ph, pw, dh, dw;
    bool ceil_mode;
  };
  for (const Geometry& c : {
           Geometry{2, 2, 2, 2, 0, 0, 1, 1, false},  // the usual 2 x 2: its own loop
           Geometry{2, 3, 2, 3, 0, 0, 1, 1, false},  // inside, non-overlapping
           Geometry{3, 2, 1, 2, 0, 0, 2, 3, false},  // inside, dilated, overlapping
           Geometry{2, 2, 3, 4, 0, 0, 2, 3, true},   // dilated, non-overlapping: scatter
           Geometry{2, 2, 2, 2, 0, 0, 1, 1, true},   // ceil: the last window leaves the input
           Geometry{3, 3, 2, 2, 1, 1, 2, 1, true},   // padded, dilated, ceil
           Geometry{2, 2, 3, 3, 1, 1, 1, 1, true},   // non-overlapping with padding
       }) {
    SCOPED_TRACE(testing::Message() << "kernel " << c.kh << "x" << c.kw << " stride " << c.sh << "x"
                                    << c.sw << " padding " << c.ph << "x" << c.pw << " dilation "
                                    << c.dh << "x" << c.dw << " ceil " << c.ceil_mode);
    const ops::MaxPool2dResult r =
        ops::max_pool2d(x, {c.kh, c.kw}, {c.sh, c.sw}, {c.ph, c.pw}, {c.dh, c.dw}, c.ceil_mode);
    layers_math::Pool2dShape g;
    g.planes = N * C, g.H = H, g.W = W, g.OH = r.out.size(2), g.OW = r.out.size(3);
    g.kh = c.kh, g.kw = c.kw, g.sh = c.sh, g.sw = c.sw, g.ph = c.ph, g.pw = c.pw;
    g.dh = c.dh, g.dw = c.dw;
    const T* in = x.data_ptr<T>();
    std::vector<double> out, indices;
    for (std::int64_t p = 0; p < g.planes; ++p) {
      for (std::int64_t oh = 0; oh < g.OH; ++oh) {
        for (std::int64_t ow = 0; ow < g.OW; ++ow) {
          T v;
          std::int64_t index;
          layers_math::max_pool2d_at(in + p * H * W, g, oh, ow, &v, &index);
          out.push_back(static_cast<double>(v));
          indices.push_back(static_cast<double>(index));
        }
      }
    }
    EXPECT_TRUE(test::all_close(r.out, out, 0, 0));
    EXPECT_TRUE(test::all_close(r.indices, indices, 0, 0));

    std::vector<double> grad_values(static_cast<std::size_t>(r.out.numel()));
    for (std::size_t i = 0; i < grad_values.size(); ++i)
      grad_values[i] = 0.25 * static_cast<double>(i % 7 + 1);  // exact in every dtype
    const Tensor gy = test::make_tensor(grad_values, r.out.shape(), dtype);
    const Tensor gx = ops::max_pool2d_backward(gy, r.indices, x.shape(), {c.kh, c.kw}, {c.sh, c.sw},
                                               {c.ph, c.pw}, {c.dh, c.dw}, c.ceil_mode);
    std::vector<double> expected;
    for (std::int64_t p = 0; p < g.planes; ++p) {
      for (std::int64_t h = 0; h < H; ++h) {
        for (std::int64_t w = 0; w < W; ++w) {
          const std::int64_t plane_out = g.OH * g.OW;
          expected.push_back(static_cast<double>(layers_math::max_pool2d_grad_at(
              gy.data_ptr<T>() + p * plane_out, r.indices.data_ptr<std::int64_t>() + p * plane_out,
              g, h, w)));
        }
      }
    }
    EXPECT_TRUE(test::all_close(gx, expected, 0, 0));
  }
}

// Widths 13, 21, 16 and 5 give the 2 x 2 window's rows of 6, 10, 8 and 2 outputs: its loop's
// blocks of 4 (the last overlapping), of 8 and a last 8 overlapping, of 8 exactly, and none.
TEST(PoolOptionsKernels, MaxPoolCpuKernelsMatchTheReferenceLoop) {
  for (const std::int64_t W : {13, 21, 16, 5}) {
    expect_max_pool_kernels_match_reference<float>(kFloat32, 11, W);
    expect_max_pool_kernels_match_reference<double>(kFloat64, 11, W);
  }
}

// Average pooling's row-at-a-time forward and backward (kernels/cpu/layers.cpp) against
// layers_math's avg_pool2d_at and avg_pool2d_grad_at looped over every output and input, bit for
// bit: the kernels take each sum's terms in the reference's order. Values that are not dyadic, so
// that another order would change the last bits; windows overlapping, apart, clipped by padding
// and by ceil_mode, with and without the padding counted, and a divisor override.
template <typename T>
void expect_avg_pool_kernels_match_reference(DType dtype) {
  const std::int64_t N = 2, C = 3, H = 11, W = 13;
  const Tensor x = test::uniform_input({N, C, H, W}, -1, 1, 31).to(dtype);
  struct Geometry {
    std::int64_t kh, kw, sh, sw, ph, pw;
    bool ceil_mode, count_include_pad;
    std::int64_t divisor_override;  // 0: none
  };
  for (const Geometry& c : {
           Geometry{2, 2, 2, 2, 0, 0, false, true, 0},   // apart (the usual 2 x 2)
           Geometry{3, 3, 1, 1, 1, 1, false, true, 0},   // overlapping, padded
           Geometry{3, 2, 2, 1, 1, 1, true, false, 0},   // overlapping, padding not counted, ceil
           Geometry{2, 3, 3, 2, 0, 1, true, true, 0},    // a gap between window rows, ceil
           Geometry{3, 3, 2, 2, 1, 1, true, false, 5},   // divisor override
           Geometry{5, 4, 3, 3, 2, 2, true, true, 0},    // half-window padding, ceil
           Geometry{1, 1, 1, 1, 0, 0, false, true, 0},   // one element
           Geometry{5, 1, 1, 1, 2, 0, false, true, 0},   // 5 rows at stride 1 (local_response_norm)
           Geometry{11, 1, 1, 1, 0, 0, false, true, 0},  // one row of windows a plane
       }) {
    SCOPED_TRACE(testing::Message() << "kernel " << c.kh << "x" << c.kw << " stride " << c.sh << "x"
                                    << c.sw << " padding " << c.ph << "x" << c.pw << " ceil "
                                    << c.ceil_mode << " count_include_pad " << c.count_include_pad
                                    << " divisor " << c.divisor_override);
    const std::optional<std::int64_t> divisor =
        c.divisor_override != 0 ? std::optional<std::int64_t>(c.divisor_override) : std::nullopt;
    const Tensor y = ops::avg_pool2d(x, {c.kh, c.kw}, {c.sh, c.sw}, {c.ph, c.pw}, c.ceil_mode,
                                     c.count_include_pad, divisor);
    layers_math::Pool2dShape g;
    g.planes = N * C, g.H = H, g.W = W, g.OH = y.size(2), g.OW = y.size(3);
    g.kh = c.kh, g.kw = c.kw, g.sh = c.sh, g.sw = c.sw, g.ph = c.ph, g.pw = c.pw;
    g.count_include_pad = c.count_include_pad, g.divisor_override = c.divisor_override;
    std::vector<double> expected;
    for (std::int64_t p = 0; p < g.planes; ++p)
      for (std::int64_t oh = 0; oh < g.OH; ++oh)
        for (std::int64_t ow = 0; ow < g.OW; ++ow)
          expected.push_back(static_cast<double>(
              layers_math::avg_pool2d_at(x.data_ptr<T>() + p * H * W, g, oh, ow)));
    EXPECT_TRUE(test::all_close(y, expected, 0, 0));

    const Tensor gy = test::uniform_input(y.shape(), -2, 2, 32).to(dtype);
    const Tensor gx =
        ops::avg_pool2d_backward(gy, x.shape(), {c.kh, c.kw}, {c.sh, c.sw}, {c.ph, c.pw},
                                 c.ceil_mode, c.count_include_pad, divisor);
    std::vector<double> expected_grad;
    for (std::int64_t p = 0; p < g.planes; ++p)
      for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t w = 0; w < W; ++w)
          expected_grad.push_back(static_cast<double>(
              layers_math::avg_pool2d_grad_at(gy.data_ptr<T>() + p * g.OH * g.OW, g, h, w)));
    EXPECT_TRUE(test::all_close(gx, expected_grad, 0, 0));
  }
}

TEST(PoolOptionsKernels, AvgPoolCpuKernelsMatchTheReferenceLoop) {
  expect_avg_pool_kernels_match_reference<float>(kFloat32);
  expect_avg_pool_kernels_match_reference<double>(kFloat64);
}

// ---- Windows holding no input; 16-bit dtypes -------------------------------------------------

// Kernel 2 with dilation 3 and padding 1 over a height of 2: the taps of the first row of windows
// are -1 and 2, both outside. The maximum of nothing is -inf (PyTorch's value); its index is -1
// and it sends no gradient (PyTorch's index points past the window, Note [Pooling windows]).
TEST(PoolOptionsEmptyWindow, MinusInfinityIndexMinusOneAndNoGradient) {
  const Tensor x = test::make_tensor({1, 2, 3, 4, 5, 6}, {1, 1, 2, 3}, kFloat64).requires_grad_();
  auto [y, indices] = max_pool2d_with_indices(x, {2, 1}, {1, 1}, {1, 0}, {3, 1});
  ASSERT_EQ(y.shape(), (Shape{1, 1, 1, 3}));
  const double inf = INFINITY;
  EXPECT_TRUE(test::all_close(y, {-inf, -inf, -inf}, 0, 0));
  EXPECT_TRUE(test::all_close(indices, {-1, -1, -1}, 0, 0));
  y.backward(ones({1, 1, 1, 3}, kFloat64));
  EXPECT_TRUE(test::all_close(x.grad(), std::vector<double>(6, 0.0), 0, 0));
  // The same taps along a width of 3 reach element 2: windows (-1, 2) and (0, 3) each hold one
  // element, which is their maximum.
  auto [y2, indices2] = max_pool2d_with_indices(x.detach(), {1, 2}, {1, 1}, {0, 1}, {1, 3});
  EXPECT_TRUE(test::all_close(y2, {3, 1, 6, 4}, 0, 0));
  EXPECT_TRUE(test::all_close(indices2, {2, 0, 5, 3}, 0, 0));
}

// A 16-bit input widened to float32 gives the float32 results, rounded once: both accumulate in
// float32 in the same order (opmath_t), so the 16-bit results are exactly the rounded float32
// ones, forward and backward.
TEST(PoolOptions16Bit, EqualTheFloat32ResultsRounded) {
  const Tensor base = test::uniform_input({2, 3, 9, 10}, -2, 2, 23).detach();
  for (DType dtype : {kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor x16 = base.to(dtype);
    const Tensor x32 = x16.to(kFloat32);
    const ops::MaxPool2dResult m16 = ops::max_pool2d(x16, {3, 2}, {2, 3}, {1, 1}, {2, 2}, true);
    const ops::MaxPool2dResult m32 = ops::max_pool2d(x32, {3, 2}, {2, 3}, {1, 1}, {2, 2}, true);
    EXPECT_TRUE(test::all_close(m16.out, test::to_vector(m32.out), 0, 0));
    EXPECT_TRUE(test::all_close(m16.indices, test::to_vector(m32.indices), 0, 0));
    const Tensor g16 = ones(m16.out.shape(), dtype);
    EXPECT_TRUE(test::all_close(
        ops::max_pool2d_backward(g16, m16.indices, x16.shape(), {3, 2}, {2, 3}, {1, 1}, {2, 2},
                                 true),
        test::to_vector(ops::max_pool2d_backward(g16.to(kFloat32), m32.indices, x32.shape(), {3, 2},
                                                 {2, 3}, {1, 1}, {2, 2}, true)
                            .to(dtype)),
        0, 0));
    for (const bool count_include_pad : {true, false}) {
      const Tensor a16 = ops::avg_pool2d(x16, {3, 3}, {2, 2}, {1, 1}, true, count_include_pad, 7);
      const Tensor a32 = ops::avg_pool2d(x32, {3, 3}, {2, 2}, {1, 1}, true, count_include_pad, 7);
      EXPECT_TRUE(test::all_close(a16, test::to_vector(a32.to(dtype)), 0, 0));
      const Tensor c16 = ops::avg_pool2d(x16, {2, 3}, {1, 2}, {1, 1}, true, count_include_pad);
      const Tensor c32 = ops::avg_pool2d(x32, {2, 3}, {1, 2}, {1, 1}, true, count_include_pad);
      EXPECT_TRUE(test::all_close(c16, test::to_vector(c32.to(dtype)), 0, 0));
      const Tensor gc = ones(c16.shape(), dtype);
      EXPECT_TRUE(test::all_close(
          ops::avg_pool2d_backward(gc, x16.shape(), {2, 3}, {1, 2}, {1, 1}, true,
                                   count_include_pad),
          test::to_vector(ops::avg_pool2d_backward(gc.to(kFloat32), x32.shape(), {2, 3}, {1, 2},
                                                   {1, 1}, true, count_include_pad)
                              .to(dtype)),
          0, 0));
    }
  }
}

}  // namespace
}  // namespace leangrad
