// Fractional max pooling (Graham, 2014), as torch's fractional_max_pool2d / fractional_max_pool3d:
// a kernel-sized max over windows placed at pseudo-random, increasing starts, so that an input of
// size I pools to any output size O with I / O not a whole number. The starts of each (batch,
// channel) plane along each spatial dim come from one sample u in [0, 1):
//   alpha = (I - K) / (O - 1),   start[i] = trunc((i + u) alpha) - trunc(u alpha) for i < O - 1,
//   start[O - 1] = I - K,
// computed in the input's dtype (float for float32, float16 and bfloat16), as PyTorch's. The
// samples, (N, C, dims) with N = 1 for an unbatched input, are drawn from the default generator
// of the input's device (rand) unless given, as PyTorch's _random_samples, which makes the
// windows repeatable. Composed of gather and max(dim) (Note [Fractional windows by gather] in
// fractional_max_pool.cpp), so it runs on every device, in every floating dtype, and
// differentiates to any order; the gradient goes to each window's maximum, summed where windows
// overlap, as PyTorch's.
//   y = fractional_max_pool2d(x, {3, 3}, Size2{14, 14});          // (N, C, 27, 27) -> 14 x 14
//   auto [y, i] = fractional_max_pool2d_with_indices(x, {2, 2}, std::nullopt, Ratio2{0.5, 0.5});
#pragma once

#include <array>
#include <optional>
#include <tuple>

#include <leangrad/autograd/nn_functions.h>
#include <leangrad/autograd/volumetric_functions.h>
#include <leangrad/core/tensor.h>

namespace leangrad {

using Ratio2 = std::array<double, 2>;  // output / input per spatial dim, each in (0, 1)
using Ratio3 = std::array<double, 3>;

// x (N, C, H, W) or (C, H, W); exactly one of output_size and output_ratio (the output is the
// input size times the ratio, rounded down); each output size at least 1 and at most I - K + 1.
// random_samples: floating, (N, C, 2) for (width, height) as PyTorch's, each in [0, 1).
// The indices are int64, h * W + w within each plane, of the first maximum of each window (a NaN
// is a maximum; PyTorch keeps a window's last NaN instead, the value being NaN either way).
Tensor fractional_max_pool2d(const Tensor& x, Size2 kernel_size, std::optional<Size2> output_size,
                             std::optional<Ratio2> output_ratio = std::nullopt,
                             const Tensor& random_samples = Tensor());
std::tuple<Tensor, Tensor> fractional_max_pool2d_with_indices(
    const Tensor& x, Size2 kernel_size, std::optional<Size2> output_size,
    std::optional<Ratio2> output_ratio = std::nullopt, const Tensor& random_samples = Tensor());
// The same over (N, C, T, H, W) or (C, T, H, W); random_samples (N, C, 3) for (T, H, W) as
// PyTorch's; indices t * H * W + h * W + w.
Tensor fractional_max_pool3d(const Tensor& x, Size3 kernel_size, std::optional<Size3> output_size,
                             std::optional<Ratio3> output_ratio = std::nullopt,
                             const Tensor& random_samples = Tensor());
std::tuple<Tensor, Tensor> fractional_max_pool3d_with_indices(
    const Tensor& x, Size3 kernel_size, std::optional<Size3> output_size,
    std::optional<Ratio3> output_ratio = std::nullopt, const Tensor& random_samples = Tensor());

}  // namespace leangrad
