// float16 dropout, scans, pooling and index_select's gradient in float lanes (Note [float16
// dropout in float lanes] and Note [float16 pooling in float lanes] in kernels/cpu/layers.cpp,
// Note [float16 scans in float lanes] in kernels/cpu/scan.cpp, Note [float16 gradients of
// index_select] in kernels/cpu/indexing.cpp): each result bit for bit against a loop over the
// elements written here with core/half.h's one-value conversions, or against the float32 op of
// the widened operands rounded once where the two compute the same float values.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <leangrad/core/creation.h>
#include <leangrad/core/generator.h>
#include <leangrad/core/half.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/reduce_math.h>
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using detail::float_to_half_bits;
using detail::half_bits_to_float;

// A contiguous float16 tensor of `shape` holding `bits`.
Tensor half_of_bits(const std::vector<std::uint16_t>& bits, const Shape& shape) {
  Tensor t = empty(shape, kFloat16);
  std::memcpy(t.data_ptr(), bits.data(), bits.size() * sizeof(std::uint16_t));
  return t;
}

// float16 values with random signs and biased exponents in [low, low + count), with, where
// `specials`, ties (1), both zeros, NaNs and infinities sprinkled in (one value in 16 each).
std::vector<std::uint16_t> sample_bits(std::size_t n, std::uint32_t seed, std::uint32_t low,
                                       std::uint32_t count, bool specials) {
  std::mt19937 rng(seed);
  std::vector<std::uint16_t> bits(n);
  for (std::uint16_t& b : bits) {
    const std::uint32_t kind = specials ? rng() % 64 : 63;
    if (kind == 0) {
      b = 0x7e00;  // NaN
    } else if (kind == 1) {
      b = 0xfc00;  // -inf
    } else if (kind == 2) {
      b = 0x8000;  // -0
    } else if (kind == 3) {
      b = 0x3c00;  // 1, often tied
    } else {
      b = static_cast<std::uint16_t>((rng() % 2) << 15 | (low + rng() % count) << 10 |
                                     rng() % 1024);
    }
  }
  return bits;
}

// got and want bit for bit, but where both are NaN: then either NaN. An operation on two NaNs
// returns one of them, and which one x86 returns depends on the order the compiler gives the
// operands, in either loop (Note [float16 elementwise in float lanes]).
::testing::AssertionResult same_bits_or_both_nan(const std::vector<std::uint16_t>& got,
                                                 const std::vector<std::uint16_t>& want) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << got.size() << " values, expected " << want.size();
  const auto is_nan = [](std::uint16_t b) { return (b & 0x7c00) == 0x7c00 && (b & 0x03ff) != 0; };
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i] && !(is_nan(got[i]) && is_nan(want[i])))
      return ::testing::AssertionFailure()
             << "element " << i << ": bits 0x" << std::hex << got[i] << ", expected 0x" << want[i];
  return ::testing::AssertionSuccess();
}

TEST(Float16Lanes, DropoutBothWaysIsTheOneValueLoop) {
  const Tensor every = test::every_sixteen_bit_value(kFloat16).reshape({256, 256});
  const std::vector<std::uint16_t> in = test::sixteen_bit_patterns(every);
  for (double p : {0.0, 0.3, 1.0}) {
    SCOPED_TRACE("p " + std::to_string(p));
    Generator gen(17);
    const ops::DropoutResult r = ops::dropout(every, p, gen);
    const std::vector<double> kept = test::to_vector(r.mask);
    const auto scale = static_cast<float>(p < 1.0 ? 1.0 / (1.0 - p) : 0.0);
    std::vector<std::uint16_t> expected(in.size());
    for (std::size_t i = 0; i < in.size(); ++i)
      expected[i] = kept[i] != 0 ? float_to_half_bits(half_bits_to_float(in[i]) * scale) : 0;
    EXPECT_EQ(test::sixteen_bit_patterns(r.out), expected);
    EXPECT_EQ(test::sixteen_bit_patterns(ops::dropout_backward(every, r.mask, p)), expected);
    if (p == 0.3) {  // the mask is the float32 run's, and not all or nothing
      Generator same(17);
      EXPECT_TRUE(ops::dropout(every.to(kFloat32), p, same).mask.equal(r.mask));
      const double share = test::to_vector(r.mask.to(kFloat32).mean())[0];
      EXPECT_GT(share, 0.6);
      EXPECT_LT(share, 0.8);
    }
  }
}

// The running sum, product and log-sum-exp along rows longer than a chunk (512), along columns of
// blocks of 256 and a narrower block, and along a middle dim, each way.
TEST(Float16Lanes, ScansAreTheOneValueLoop) {
  struct Case {
    Shape shape;
    std::int64_t dim;
  };
  for (const Case& c : {Case{{3, 1500}, 1}, Case{{40, 300}, 0}, Case{{2, 50, 3}, 1}}) {
    std::int64_t n = 1;
    for (std::int64_t s : c.shape)
      n *= s;
    // Magnitudes in [1/4, 4) and no specials, so that a row stays finite long enough to test
    // each step's rounding (a NaN would make the rest of its row NaN, which either loop gives).
    std::vector<std::uint16_t> bits = sample_bits(static_cast<std::size_t>(n), 3, 13, 4, false);
    bits[bits.size() - 2] = 0x7e00;  // one NaN and one infinity, at the very end
    bits[bits.size() / 2] = 0x7c00;
    const Tensor x = half_of_bits(bits, c.shape);
    std::int64_t inner = 1;
    for (std::size_t d = static_cast<std::size_t>(c.dim) + 1; d < c.shape.size(); ++d)
      inner *= c.shape[d];
    const std::int64_t size = c.shape[static_cast<std::size_t>(c.dim)];
    const std::int64_t outer = n / (size * inner);
    for (ScanOp op : {ScanOp::Sum, ScanOp::Prod, ScanOp::LogSumExp}) {
      for (bool reverse : {false, true}) {
        SCOPED_TRACE(shape_str(c.shape) + " dim " + std::to_string(c.dim) + " op " +
                     std::to_string(static_cast<int>(op)) + (reverse ? " reverse" : ""));
        std::vector<std::uint16_t> expected(bits.size());
        for (std::int64_t o = 0; o < outer; ++o)
          for (std::int64_t k = 0; k < inner; ++k) {
            float acc = op == ScanOp::Sum    ? 0.0f
                        : op == ScanOp::Prod ? 1.0f
                                             : -std::numeric_limits<float>::infinity();
            for (std::int64_t j = 0; j < size; ++j) {
              const std::int64_t at = (o * size + (reverse ? size - 1 - j : j)) * inner + k;
              const float v = half_bits_to_float(bits[static_cast<std::size_t>(at)]);
              acc = op == ScanOp::Sum    ? acc + v
                    : op == ScanOp::Prod ? acc * v
                                         : reduce_math::log_add_exp(acc, v);
              expected[static_cast<std::size_t>(at)] = float_to_half_bits(acc);
            }
          }
        EXPECT_TRUE(same_bits_or_both_nan(
            test::sixteen_bit_patterns(ops::scan(op, x, c.dim, reverse)), expected));
      }
    }
  }
}

// Every window inside the plane, 2 x 2 at stride 2 (its own loop) and 3 x 3 at stride 2 with and
// without dilation: the maxima and indices of the float32 pooling of the widened input (every
// float16 is exact in float32), the maxima rounded back.
TEST(Float16Lanes, MaxPoolingIsTheFloat32PoolingOfTheWidenedInput) {
  const Shape shape = {2, 3, 13, 22};
  const std::vector<std::uint16_t> bits = sample_bits(2 * 3 * 13 * 22, 4, 9, 10, true);
  const Tensor x = half_of_bits(bits, shape);
  const Tensor wide = x.to(kFloat32);
  struct Window {
    ops::Pool2dSize kernel, stride, dilation;
  };
  for (const Window& w : {Window{{2, 2}, {2, 2}, {1, 1}}, Window{{3, 3}, {2, 2}, {1, 1}},
                          Window{{3, 2}, {1, 2}, {2, 3}}}) {
    SCOPED_TRACE("kernel " + std::to_string(w.kernel[0]) + "x" + std::to_string(w.kernel[1]));
    const ops::MaxPool2dResult half = ops::max_pool2d(x, w.kernel, w.stride, {0, 0}, w.dilation);
    const ops::MaxPool2dResult full = ops::max_pool2d(wide, w.kernel, w.stride, {0, 0}, w.dilation);
    std::vector<std::uint16_t> expected;
    for (double v : test::to_vector(full.out))
      expected.push_back(float_to_half_bits(static_cast<float>(v)));
    EXPECT_EQ(test::sixteen_bit_patterns(half.out), expected);
    EXPECT_TRUE(half.indices.equal(full.indices));
  }
}

// Average pooling both ways, with and without padding counted, ceil_mode, and windows wider
// than their stride: the float32 pooling of the widened operands, rounded once (both sum in
// float in the same order and divide once; Note [float16 pooling in float lanes]).
TEST(Float16Lanes, AveragePoolingIsTheFloat32PoolingOfTheWidenedOperands) {
  const Shape shape = {2, 3, 13, 22};
  const Tensor x = half_of_bits(sample_bits(2 * 3 * 13 * 22, 5, 9, 10, false), shape);
  struct Window {
    ops::Pool2dSize kernel, stride, padding;
    bool ceil_mode, count_include_pad;
  };
  for (const Window& w :
       {Window{{2, 2}, {2, 2}, {0, 0}, false, true}, Window{{3, 3}, {2, 2}, {1, 1}, true, false},
        Window{{3, 2}, {1, 2}, {1, 0}, false, true}}) {
    SCOPED_TRACE("kernel " + std::to_string(w.kernel[0]) + "x" + std::to_string(w.kernel[1]));
    const Tensor half =
        ops::avg_pool2d(x, w.kernel, w.stride, w.padding, w.ceil_mode, w.count_include_pad);
    const Tensor full = ops::avg_pool2d(x.to(kFloat32), w.kernel, w.stride, w.padding, w.ceil_mode,
                                        w.count_include_pad);
    EXPECT_EQ(test::sixteen_bit_patterns(half), test::sixteen_bit_patterns(full.to(kFloat16)));
    const Tensor gy = half_of_bits(
        sample_bits(static_cast<std::size_t>(half.numel()), 6, 9, 10, false), half.shape());
    const Tensor gx = ops::avg_pool2d_backward(gy, shape, w.kernel, w.stride, w.padding,
                                               w.ceil_mode, w.count_include_pad);
    const Tensor gx_full = ops::avg_pool2d_backward(gy.to(kFloat32), shape, w.kernel, w.stride,
                                                    w.padding, w.ceil_mode, w.count_include_pad);
    EXPECT_EQ(test::sixteen_bit_patterns(gx), test::sixteen_bit_patterns(gx_full.to(kFloat16)));
  }
}

// index_select's gradient (Embedding's), along a middle dim (rows of 700 elements, past a chunk
// of 512) and along the last dim (single elements, 1200 indices: past a chunk too), repeated
// indices summed: the float32 gradient of the widened upstream gradient, rounded once (Note
// [float16 gradients of index_select]).
TEST(Float16Lanes, IndexSelectGradientIsTheFloat32GradientOfTheWidenedGradient) {
  const Tensor few = test::make_tensor({3, 0, 3, 5, 1, 3, 0}, {7}, kInt64);
  std::vector<double> many_values;
  for (int i = 0; i < 1200; ++i)
    many_values.push_back((i * 7) % 10);
  const Tensor many = test::make_tensor(many_values, {1200}, kInt64);
  struct Case {
    Shape x_shape;
    std::int64_t dim;
    const Tensor* index;
  };
  for (const Case& c : {Case{{2, 6, 700}, 1, &few}, Case{{4, 6}, 1, &few}, Case{{6, 3, 5}, 0, &few},
                        Case{{3, 10}, 1, &many}}) {
    SCOPED_TRACE(shape_str(c.x_shape) + " dim " + std::to_string(c.dim));
    Shape grad_shape = c.x_shape;
    grad_shape[static_cast<std::size_t>(c.dim)] = c.index->numel();
    std::int64_t n = 1;
    for (std::int64_t s : grad_shape)
      n *= s;
    const Tensor grad =
        half_of_bits(sample_bits(static_cast<std::size_t>(n), 7, 9, 10, false), grad_shape);
    const Tensor half = ops::index_select_backward(grad, c.dim, *c.index, c.x_shape);
    const Tensor full = ops::index_select_backward(grad.to(kFloat32), c.dim, *c.index, c.x_shape);
    EXPECT_EQ(test::sixteen_bit_patterns(half), test::sixteen_bit_patterns(full.to(kFloat16)));
  }
}

}  // namespace
}  // namespace leangrad
