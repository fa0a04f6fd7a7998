// The 3-d (volumetric) layers' functions, as torch's: conv3d, conv_transpose3d, max_pool3d,
// avg_pool3d, adaptive_avg_pool3d and adaptive_max_pool3d over (N, C, D, H, W) or unbatched (C, D,
// H, W), arguments in at::'s order with PyTorch's defaults. Each is composed of the 2-d functions
// of autograd/nn_functions.h (Note [Volumes by planes] in volumetric_functions.cpp), so it runs on
// every device, in every floating dtype, and differentiates to any order, with every kernel of
// conv2d and the 2-d poolings behind it.
//   y = conv3d(x, w, b, {1, 2, 2}, {1, 1, 1});  // stride (depth, height, width), padding
//   y = max_pool3d(x, {2, 2, 2});
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <tuple>

#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/tensor.h>

namespace leangrad {

// (depth, height, width) sizes for 3-d ops.
using Size3 = std::array<std::int64_t, 3>;

// x (N, C_in, D, H, W) or (C_in, D, H, W); weight (C_out, C_in / groups, kD, kH, kW); bias
// (C_out,) or undefined -> (N, C_out, D_out, H_out, W_out), each size (S + 2 padding - dilation
// (k - 1) - 1) / stride + 1.
Tensor conv3d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
              Size3 stride = {1, 1, 1}, Size3 padding = {0, 0, 0}, Size3 dilation = {1, 1, 1},
              std::int64_t groups = 1);
// The same with kValid or kSame padding (autograd/nn_functions.h's ConvPadding).
Tensor conv3d(const Tensor& x, const Tensor& weight, const Tensor& bias, Size3 stride,
              ConvPadding padding, Size3 dilation = {1, 1, 1}, std::int64_t groups = 1);

// The transposed 3-d convolution (conv3d's gradient with respect to its input), arguments in
// torch's order: x (N, C_in, D, H, W) or (C_in, D, H, W); weight (C_in, C_out / groups, kD, kH,
// kW); bias (C_out,) or undefined -> (N, C_out, D_out, H_out, W_out), each size (S - 1) stride -
// 2 padding + dilation (k - 1) + output_padding + 1, with 0 <= output_padding < stride.
Tensor conv_transpose3d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
                        Size3 stride = {1, 1, 1}, Size3 padding = {0, 0, 0},
                        Size3 output_padding = {0, 0, 0}, std::int64_t groups = 1,
                        Size3 dilation = {1, 1, 1});

// The 3-d poolings: the rules of max_pool2d and avg_pool2d per dim (stride {0, 0, 0} means the
// kernel; padding at most half the kernel; -inf padding for max, 0 for average, divided by the
// window's size in the padded input or its count of input elements, or by divisor_override).
// max_pool3d_with_indices also returns the int64 index d * H * W + h * W + w of each maximum
// within its volume: the first maximum in (d, h, w) order, the last NaN, -1 for a window without
// input, as the 2-d function.
Tensor max_pool3d(const Tensor& x, Size3 kernel, Size3 stride = {0, 0, 0},
                  Size3 padding = {0, 0, 0}, Size3 dilation = {1, 1, 1}, bool ceil_mode = false);
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& x, Size3 kernel,
                                                   Size3 stride = {0, 0, 0},
                                                   Size3 padding = {0, 0, 0},
                                                   Size3 dilation = {1, 1, 1},
                                                   bool ceil_mode = false);
Tensor avg_pool3d(const Tensor& x, Size3 kernel, Size3 stride = {0, 0, 0},
                  Size3 padding = {0, 0, 0}, bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<std::int64_t> divisor_override = std::nullopt);
// The adaptive windows of adaptive_avg_pool2d / adaptive_max_pool2d along each of D, H and W.
Tensor adaptive_avg_pool3d(const Tensor& x, Size3 output_size);
Tensor adaptive_max_pool3d(const Tensor& x, Size3 output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(const Tensor& x, Size3 output_size);

}  // namespace leangrad
