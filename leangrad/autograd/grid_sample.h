// grid_sample and affine_grid, as torch.nn.functional's (spatial transformers, warping by a flow
// field):
//   const Tensor grid = affine_grid(theta, {n, c, h, w});   // theta (N, 2, 3)
//   const Tensor warped = grid_sample(image, grid, kBilinear, kBorder, /*align_corners=*/false);
// Both are composed of differentiable functions (Note [Sampling by gathers] in grid_sample.cpp),
// so they differentiate with respect to the input, the grid and theta, to any order.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/enum_tags.h>
#include <leangrad/core/tensor.h>

namespace leangrad {

// Where grid_sample reads outside the input, as LibTorch's torch::kZeros (core/enum_tags.h, the
// name shared with PadMode), kBorder and kReflection: zeros, the nearest edge, or the input
// reflected at its edges (at the outer pixels' edges, or at their centres with align_corners).
enum class GridSamplePadding : std::uint8_t { Zeros, Border, Reflection };
inline constexpr GridSamplePadding kBorder = GridSamplePadding::Border;
inline constexpr GridSamplePadding kReflection = GridSamplePadding::Reflection;
// "zeros", "border", "reflection": PyTorch's spelling.
const char* grid_sample_padding_name(GridSamplePadding padding);

// Samples input (N, C, H, W) at grid (N, H_out, W_out, 2) -> (N, C, H_out, W_out), or input
// (N, C, D, H, W) at grid (N, D_out, H_out, W_out, 3) -> (N, C, D_out, H_out, W_out), as
// torch.nn.functional.grid_sample. grid[..., 0] is x (along W), [..., 1] y (along H), [..., 2] z
// (along D), each in [-1, 1] from one edge of the input to the other: the outer pixels' edges, or
// with align_corners their centres. mode kBilinear (trilinear for 5-D input, as PyTorch's
// "bilinear"), kNearest (halves to even) or kBicubic (4-D only; Keys' cubic with a = -0.75, which
// can overshoot the input's range). padding_mode as above. align_corners defaults to false, as
// PyTorch's. The gradient reaches the input and the grid (zero for kNearest, and where border
// or reflection padding clips a coordinate, as PyTorch's).
Tensor grid_sample(const Tensor& input, const Tensor& grid, InterpolateMode mode = kBilinear,
                   GridSamplePadding padding_mode = kZeros,
                   std::optional<bool> align_corners = std::nullopt);

// The sampling grid of an affine map, as torch.nn.functional.affine_grid: theta (N, 2, 3) and
// size (N, C, H, W) give (N, H, W, 2); theta (N, 3, 4) and size (N, C, D, H, W) give (N, D, H, W,
// 3). Each output point is theta times (x, y[, z], 1) over the output's normalized coordinates
// (pixel centres, or with align_corners the corners at -1 and 1). Differentiable in theta.
Tensor affine_grid(const Tensor& theta, const std::vector<std::int64_t>& size,
                   bool align_corners = false);

}  // namespace leangrad
