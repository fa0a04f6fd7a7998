// Inputs at the edges of the op entries (kernels/ops_*.cpp, autograd/nn_functions.cpp) that once
// read or wrote outside a buffer, overflowed int64, or gave a wrong result instead of an Error:
// each test names what it guards. Found by a review of the entries (2026-11-25).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/error.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/layers_math.h>
#include <leangrad/kernels/ops.h>
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using test::all_close;
using test::to_vector;

// Bilinear and bicubic taps along an axis of 6147440 inputs scaled by 1.7: the float step 1 / 1.7
// rounds up, and the last output's position rounds to 6147440 itself. Every tap must stay inside
// the input, and the weights sum to 1.
TEST(InterpolateTaps, StayInsideALongAxis) {
  constexpr std::int64_t in = 6147440, out = 10450648;  // floor(in * 1.7)
  const float step = layers_math::resize_step<float>(in, out, 1.7, /*align_corners=*/false);
  for (std::int64_t j = out - 64; j < out; ++j) {
    for (const layers_math::AxisTaps<float>& t :
         {layers_math::linear_taps<float>(j, step, in, out, /*align_corners=*/false),
          layers_math::cubic_taps<float>(j, step, in, /*align_corners=*/false)}) {
      float sum = 0;
      for (int k = 0; k < t.count; ++k) {
        ASSERT_GE(t.index[k], 0) << "output " << j;
        ASSERT_LE(t.index[k], in - 1) << "output " << j;
        sum += t.weight[k];
      }
      EXPECT_NEAR(sum, 1.0f, 4 * 0x1p-24) << "output " << j << ", " << t.count << " taps";
    }
  }
}

TEST(InterpolateErrors, ScaleFactorsArePositiveAndTheirStepFinite) {
  const Tensor x = ones({1, 1, 4, 4});
  for (double scale : {-1.0, 1e-300, std::numeric_limits<double>::infinity(),
                       std::numeric_limits<double>::quiet_NaN()}) {
    EXPECT_THROW(ops::upsample2d(x, {8, 8}, {scale, 2.0}, layers_math::ResizeMode::Bilinear, false),
                 ShapeError)
        << scale;
    EXPECT_THROW(ops::upsample2d(x, {8, 8}, {2.0, scale}, layers_math::ResizeMode::Nearest, false),
                 ShapeError)
        << scale;
  }
  // 0 means "no scale given": the step comes from the sizes.
  EXPECT_TRUE(
      all_close(ops::upsample2d(x, {8, 8}, {0.0, 0.0}, layers_math::ResizeMode::Bilinear, false),
                std::vector<double>(64, 1.0)));
}

// max_pool2d's backward scatters at the indices on the CPU: a caller's index outside the plane
// is an Error, not a write past the gradient. -1 (a window holding no input) is skipped.
TEST(MaxPoolBackwardErrors, IndicesOutsideThePlane) {
  for (std::int64_t bad : {std::int64_t{16}, std::int64_t{-2}, std::int64_t{1} << 40}) {
    const Tensor idx = full({1, 1, 2, 2}, static_cast<double>(bad), TensorOptions(kInt64));
    EXPECT_THROW(
        ops::max_pool2d_backward(ones({1, 1, 2, 2}), idx, {1, 1, 4, 4}, {2, 2}, {2, 2}, {0, 0}),
        ShapeError)
        << bad;
  }
  const Tensor none = full({1, 1, 2, 2}, -1.0, TensorOptions(kInt64));
  EXPECT_TRUE(all_close(
      ops::max_pool2d_backward(ones({1, 1, 2, 2}), none, {1, 1, 4, 4}, {2, 2}, {2, 2}, {0, 0}),
      std::vector<double>(16, 0.0), 0, 0));
}

// cross_entropy's backward reads logsumexp as cross_entropy wrote it, and the targets as row
// indices: another dtype or an out-of-range target is an Error.
TEST(CrossEntropyBackwardErrors, LogsumexpDtypeAndTargets) {
  const Tensor targets = full({4}, 1.0, TensorOptions(kInt64));
  EXPECT_THROW(ops::cross_entropy_backward(ones({4}), ones({4, 3}), ones({4}, kFloat16), targets,
                                           Tensor(), -100),
               DTypeError);
  EXPECT_THROW(ops::cross_entropy_backward(ones({4}), ones({4, 3}), ones({4}, kFloat64), targets,
                                           Tensor(), -100),
               DTypeError);
  EXPECT_THROW(ops::cross_entropy_backward(ones({4}), ones({4, 3}), ones({4}),
                                           full({4}, 3.0, TensorOptions(kInt64)), Tensor(), -100),
               Error);
  EXPECT_THROW(
      ops::nll_loss_backward(ones({4}), full({4}, 5.0, TensorOptions(kInt64)), Tensor(), 3, -100),
      Error);
}

// copy_ from a view of the destination's own memory reads every element before writing any.
TEST(CopyOverlapping, ShiftedSliceAndTranspose) {
  Tensor t = arange(8).to(kFloat32);
  t.slice(0, 1, 8).copy_(t.slice(0, 0, 7));
  EXPECT_TRUE(all_close(t, {0, 0, 1, 2, 3, 4, 5, 6}, 0, 0));
  Tensor u = arange(8).to(kFloat32);
  u.slice(0, 0, 7).copy_(u.slice(0, 1, 8));
  EXPECT_TRUE(all_close(u, {1, 2, 3, 4, 5, 6, 7, 7}, 0, 0));
  Tensor a = arange(9).to(kFloat32).reshape({3, 3});
  a.copy_(a.t());
  EXPECT_TRUE(all_close(a, {0, 3, 6, 1, 4, 7, 2, 5, 8}, 0, 0));
  Tensor b = arange(4).to(kFloat32);
  b.copy_(b);  // the same elements: nothing to do, nothing lost
  EXPECT_TRUE(all_close(b, {0, 1, 2, 3}, 0, 0));
}

// A linear layer with no input features maps every row to its bias (zeros here), whatever the
// number of leading dims (as PyTorch).
TEST(LinearEdges, NoInputFeaturesOnThreeDims) {
  const Tensor y = linear(ones({2, 3, 0}), ones({5, 0}));
  EXPECT_EQ(y.shape(), Shape({2, 3, 5}));
  EXPECT_TRUE(all_close(y, std::vector<double>(30, 0.0), 0, 0));
}

// Group and output-size arithmetic of the convolutions stays in int64 or is a ShapeError.
TEST(ConvErrors, SizeArithmeticOverflows) {
  EXPECT_THROW(conv2d(empty({1, 0, 2, 2}), ones({0, 4, 1, 1}), Tensor(), {1, 1}, {0, 0}, {1, 1},
                      std::int64_t{1} << 62),
               ShapeError);
  EXPECT_THROW(conv_transpose2d(empty({0, 1, (std::int64_t{1} << 34) + 1, 1}), ones({1, 1, 3, 1}),
                                Tensor(), {std::int64_t{1} << 30, 1}),
               ShapeError);
  ops::Conv2dParams p;
  EXPECT_THROW(ops::conv2d_weight_grad(ones({1, 1, 2, 2}), ones({1, 1, 2, 2}),
                                       {1, 1, std::numeric_limits<std::int64_t>::min(), 1}, p),
               ShapeError);
}

// Mean cross-entropy counts the samples whose target is not ignore_index, compared as int64:
// 2^53 + 1 is not 2^53.
TEST(CrossEntropyIgnoreIndex, ComparedExactly) {
  const std::int64_t ignore = (std::int64_t{1} << 53) + 1;
  const Tensor loss = cross_entropy(zeros({2, 3}), tensor(std::vector<std::int64_t>{0, ignore}),
                                    Reduction::Mean, ignore);
  EXPECT_NEAR(loss.item<double>(), std::log(3.0), 1e-6);  // one sample counted, loss log 3
}

// batch_norm checks both running buffers before changing either.
TEST(BatchNormErrors, AnUnwritableRunningVarLeavesTheMeanAsItWas) {
  Tensor running_mean = zeros({3});
  const Tensor running_var = ones({1}).expand({3});
  EXPECT_THROW(batch_norm(ones({2, 3}), running_mean, running_var, Tensor(), Tensor(),
                          /*training=*/true),
               Error);
  EXPECT_TRUE(all_close(running_mean, {0, 0, 0}, 0, 0));
}

}  // namespace
}  // namespace leangrad
