// The adaptive max pooling kernels (ops::adaptive_max_pool2d and its backward; Note [Adaptive
// pooling windows] in kernels/layers_math.h) against a plain reference loop written from
// PyTorch's definition (windows [floor(i n / m), ceil((i + 1) n / m)) computed in floating point,
// the first maximum, the last NaN; the backward a scatter-add of each output's gradient at its
// index), over every floating dtype, shapes whose windows divide the input, overlap and exceed
// it, strided input, and a plane large enough to be split across threads. The CUDA kernels are
// compared with these in op_table_layers.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include <leangrad/core/creation.h>
#include <leangrad/core/error.h>
#include <leangrad/core/shape.h>
#include <leangrad/kernels/ops.h>
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

struct PoolCase {
  Shape input;
  std::int64_t oh, ow;
};

struct Reference {
  std::vector<double> out, grad_in;
  std::vector<std::int64_t> indices;
};

// Values k / 4 for small integers k (exact in every floating dtype; many ties), a NaN now and
// then; gradients likewise, so the sums of a few of them are exact in every dtype.
std::vector<double> quarter_values(std::int64_t n, int seed, bool with_nans) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t k = (i * 7 + seed * 11) % 13 - 6;
    v[static_cast<std::size_t>(i)] =
        with_nans && i % 17 == 5 ? std::nan("") : static_cast<double>(k) / 4.0;
  }
  return v;
}

Reference reference(const std::vector<double>& x, const std::vector<double>& gy,
                    const PoolCase& c) {
  const std::int64_t H = c.input[c.input.size() - 2], W = c.input[c.input.size() - 1];
  std::int64_t planes = 1;
  for (std::size_t d = 0; d + 2 < c.input.size(); ++d)
    planes *= c.input[d];
  Reference r;
  r.grad_in.assign(x.size(), 0.0);
  for (std::int64_t p = 0; p < planes; ++p) {
    for (std::int64_t i = 0; i < c.oh; ++i) {
      const auto h0 = static_cast<std::int64_t>(std::floor(static_cast<double>(i * H) / c.oh));
      const auto h1 = static_cast<std::int64_t>(std::ceil(static_cast<double>((i + 1) * H) / c.oh));
      for (std::int64_t j = 0; j < c.ow; ++j) {
        const auto w0 = static_cast<std::int64_t>(std::floor(static_cast<double>(j * W) / c.ow));
        const auto w1 =
            static_cast<std::int64_t>(std::ceil(static_cast<double>((j + 1) * W) / c.ow));
        double best = -INFINITY;
        std::int64_t best_index = h0 * W + w0;
        for (std::int64_t h = h0; h < h1; ++h) {
          for (std::int64_t w = w0; w < w1; ++w) {
            const double v = x[static_cast<std::size_t>(p * H * W + h * W + w)];
            if (std::isnan(v) || v > best) {
              best = v;
              best_index = h * W + w;
            }
          }
        }
        const std::size_t o = static_cast<std::size_t>((p * c.oh + i) * c.ow + j);
        r.out.push_back(best);
        r.indices.push_back(best_index);
        r.grad_in[static_cast<std::size_t>(p * H * W + best_index)] += gy[o];
      }
    }
  }
  return r;
}

const PoolCase kCases[] = {
    {{2, 3, 5, 7}, 3, 2},    // overlapping windows
    {{1, 2, 8, 6}, 4, 3},    // windows that divide the input
    {{1, 2, 3, 4}, 5, 7},    // more outputs than inputs: inputs repeat
    {{3, 9, 5}, 4, 3},       // unbatched
    {{2, 1, 13, 1}, 4, 1},   // one column
    {{2, 2, 6, 5}, 1, 1},    // global
    {{4, 8, 37, 29}, 7, 5},  // split across threads
};

TEST(AdaptiveMaxPoolKernel, MatchesTheReferenceLoopOnEveryFloatingDType) {
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    for (const PoolCase& c : kCases) {
      for (bool with_nans : {false, true}) {
        SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + shape_str(c.input) + " -> " +
                     shape_str({c.oh, c.ow}) + (with_nans ? " with NaNs" : ""));
        const std::vector<double> xv = quarter_values(shape_numel(c.input), 1, with_nans);
        const Tensor x = test::make_tensor(xv, c.input, dtype);
        const ops::MaxPool2dResult r = ops::adaptive_max_pool2d(x, {c.oh, c.ow});
        Shape out_shape = c.input;
        out_shape[out_shape.size() - 2] = c.oh;
        out_shape[out_shape.size() - 1] = c.ow;
        ASSERT_EQ(r.out.shape(), out_shape);
        ASSERT_EQ(r.out.dtype(), dtype);
        const std::vector<double> gv = quarter_values(shape_numel(out_shape), 2, false);
        const Reference want = reference(xv, gv, c);
        EXPECT_TRUE(test::matches_within_roundoff(r.out, test::make_tensor(want.out, out_shape), {},
                                                  {.bitwise = true}));
        std::vector<double> indices_want(want.indices.begin(), want.indices.end());
        EXPECT_EQ(test::to_vector(r.indices), indices_want);
        const Tensor gx = ops::adaptive_max_pool2d_backward(test::make_tensor(gv, out_shape, dtype),
                                                            r.indices, c.input);
        ASSERT_EQ(gx.dtype(), dtype);
        EXPECT_TRUE(test::matches_within_roundoff(gx, test::make_tensor(want.grad_in, c.input), {},
                                                  {.bitwise = true}));
      }
    }
  }
}

// A transposed (non-contiguous) input pools as its contiguous copy.
TEST(AdaptiveMaxPoolKernel, StridedInput) {
  const Tensor base = test::make_tensor(quarter_values(2 * 3 * 7 * 5, 3, true), {2, 3, 7, 5});
  const Tensor x = base.transpose(2, 3);
  ASSERT_FALSE(x.is_contiguous());
  const ops::MaxPool2dResult strided = ops::adaptive_max_pool2d(x, {3, 4});
  const ops::MaxPool2dResult copied = ops::adaptive_max_pool2d(x.contiguous(), {3, 4});
  EXPECT_TRUE(test::matches_within_roundoff(strided.out, copied.out, {}, {.bitwise = true}));
  EXPECT_EQ(test::to_vector(strided.indices), test::to_vector(copied.indices));
}

}  // namespace
}  // namespace leangrad
