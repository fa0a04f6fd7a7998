// conv1d, conv2d and conv3d with padding by rule: kValid or kSame (autograd/nn_functions.h).
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/autograd/volumetric_functions.h>
#include <leangrad/core/error.h>
#include <leangrad/core/shape.h>

namespace leangrad {

// Note [Same padding]
// kSame pads dim i by dilation_i (k_i - 1) in all: half before, the rest after, as PyTorch's
// convolution with padding="same". When that total is even the convolution's own symmetric zero
// padding is it. When it is odd, the convolution pads the larger half, `after`, on both sides:
// that gives one output more than the input's size, its first one the window that starts a zero
// too early, and the others, in order, the windows padding="same" asks for, each with the same
// taps in the same order. So the result is that output from its second position on, a view
// (narrow), bit for bit what padding the input by one zero after would give, without a padded
// copy of the input, and every error the convolution raises names the caller's shapes. Only
// stride 1 keeps the size, so another stride is an Error, as in PyTorch. A kernel or dilation
// the convolution would refuse is left to it, with no padding.

const char* conv_padding_name(ConvPadding padding) {
  return padding == ConvPadding::Same ? "same" : "valid";
}

namespace {

// conv(input, padding) with the padding kSame or kValid asks for; D spatial dims, the last D of x.
template <std::size_t D, typename Conv>
Tensor conv_by_rule(const char* op, const Tensor& x, const Tensor& weight,
                    const std::array<std::int64_t, D>& stride,
                    const std::array<std::int64_t, D>& dilation, ConvPadding rule,
                    const Conv& conv) {
  const std::array<std::int64_t, D> zero{};
  if (rule == ConvPadding::Valid) return conv(zero);
  bool refused = !weight.defined() || weight.dim() != static_cast<int>(D) + 2;
  for (std::size_t i = 0; i < D && !refused; ++i) {
    refused = dilation[i] < 1 || weight.size(static_cast<int>(i) + 2) < 1;
  }
  if (refused) return conv(zero);  // the convolution's own error
  bool strided = false;
  for (const std::int64_t s : stride)
    strided = strided || s != 1;
  LG_CHECK_SHAPE(!strided, op, ": padding kSame (\"same\") keeps the size only at stride 1, got ",
                 "stride ", Shape(std::vector<std::int64_t>(stride.begin(), stride.end())),
                 " (input ", x.defined() ? x.shape() : Shape(), ", weight ", weight.shape(), ")");
  std::array<std::int64_t, D> after{};
  std::array<bool, D> odd{};
  for (std::size_t i = 0; i < D; ++i) {
    const std::int64_t k = weight.size(static_cast<int>(i) + 2);
    checked_mul(dilation[i], k - 1, op);  // the total fits
    const auto [lo, hi] = same_padding(k, dilation[i]);
    after[i] = hi;
    odd[i] = hi != lo;
  }
  Tensor y = conv(after);
  for (std::size_t i = 0; i < D; ++i) {
    if (!odd[i]) continue;
    const int dim = y.dim() - static_cast<int>(D) + static_cast<int>(i);
    y = narrow(y, dim, 1, y.size(dim) - 1);
  }
  return y;
}

}  // namespace

Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias, std::int64_t stride,
              ConvPadding padding, std::int64_t dilation, std::int64_t groups) {
  return conv_by_rule<1>("conv1d", x, weight, {stride}, {dilation}, padding,
                         [&](const std::array<std::int64_t, 1>& p) {
                           return conv1d(x, weight, bias, stride, p[0], dilation, groups);
                         });
}

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, Size2 stride,
              ConvPadding padding, Size2 dilation, std::int64_t groups) {
  return conv_by_rule<2>("conv2d", x, weight, stride, dilation, padding, [&](const Size2& p) {
    return conv2d(x, weight, bias, stride, p, dilation, groups);
  });
}

Tensor conv3d(const Tensor& x, const Tensor& weight, const Tensor& bias, Size3 stride,
              ConvPadding padding, Size3 dilation, std::int64_t groups) {
  return conv_by_rule<3>("conv3d", x, weight, stride, dilation, padding, [&](const Size3& p) {
    return conv3d(x, weight, bias, stride, p, dilation, groups);
  });
}

}  // namespace leangrad
