// Sliding blocks, as torch's unfold (im2col) and fold (col2im): unfold lays out every kernel-sized
// block of an image as a column, fold sums columns back into an image (unfold's adjoint; for
// blocks that do not overlap, its inverse). Both are an index_select or index_add over the padded
// image's flattened planes with the blocks' element indices (Note [Blocks by index] in
// fold_functions.cpp), so they run on every device, in every dtype, and differentiate to any
// order: unfold's gradient is fold and fold's is unfold.
//   Tensor columns = unfold(x, {3, 3}, {1, 1}, {1, 1});  // (N, C 9, H W)
//   Tensor image = fold(columns, {H, W}, {3, 3}, {1, 1}, {1, 1});
#pragma once

#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/tensor.h>

namespace leangrad {

// x (N, C, H, W) or unbatched (C, H, W) -> (N, C kH kW, L) or (C kH kW, L): row c kH kW + i kW + j
// holds kernel element (i, j) of channel c, column l = oh W_blocks + ow the block at (oh, ow);
// L = H_blocks W_blocks, H_blocks = (H + 2 padding - dilation (kH - 1) - 1) / stride + 1 (W
// likewise), zero padding.
Tensor unfold(const Tensor& x, Size2 kernel_size, Size2 dilation = {1, 1}, Size2 padding = {0, 0},
              Size2 stride = {1, 1});

// columns (N, C kH kW, L) or (C kH kW, L) -> (N, C, output_size) or (C, output_size): each column
// element added at its place in the image of output_size, as unfold reads it; L must be the
// number of blocks output_size has.
Tensor fold(const Tensor& columns, Size2 output_size, Size2 kernel_size, Size2 dilation = {1, 1},
            Size2 padding = {0, 0}, Size2 stride = {1, 1});

}  // namespace leangrad
