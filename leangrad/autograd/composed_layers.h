// Layers written with other differentiable functions, as torch's: lp_pool1d / lp_pool2d (a
// power average), local_response_norm and cross_map_lrn2d (AlexNet's normalisation across
// channels), bilinear (x1^T A x2 + b), channel_shuffle (ShuffleNet's interleaving of channel
// groups), rrelu (leaky ReLU with random slopes in training) and max_unpool1d/2d/3d (a max pool's
// inverse, from its indices). Each is PyTorch's own composition, so it runs on every device, in
// every floating dtype, and differentiates to any order.
//   y = lp_pool2d(x, 2.0, {2, 2});                 // sqrt of the sum of squares per window
//   y = local_response_norm(features, 5);          // across 5 neighbouring channels
//   y = bilinear(a, b, weight, bias);              // (*, in1), (*, in2) -> (*, out)
#pragma once

#include <cstdint>
#include <optional>

#include <leangrad/autograd/nn_functions.h>
#include <leangrad/autograd/volumetric_functions.h>
#include <leangrad/core/tensor.h>

namespace leangrad {

// (sum over each window of x^p)^(1/p), as PyTorch's: avg_pool of x^p times the window's size,
// then ^(1/p) (a window whose sum is negative, which odd p allows, gives NaN, as PyTorch's; so
// does the gradient of a window of zeros).
// stride 0 means the kernel's; no padding. lp_pool1d over (N, C, L) or (C, L); lp_pool2d over
// (N, C, H, W) or (C, H, W).
Tensor lp_pool1d(const Tensor& x, double norm_type, std::int64_t kernel_size,
                 std::int64_t stride = 0, bool ceil_mode = false);
Tensor lp_pool2d(const Tensor& x, double norm_type, Size2 kernel_size, Size2 stride = {0, 0},
                 bool ceil_mode = false);

// x / (k + alpha / size * sum of x^2 over `size` channels around each one)^beta, as PyTorch's:
// the window runs from channel c - size / 2 to c + (size - 1) / 2, zero past the ends. x (N, C,
// *) with at least one dim after C.
Tensor local_response_norm(const Tensor& x, std::int64_t size, double alpha = 1e-4,
                           double beta = 0.75, double k = 1.0);

// LibTorch's CrossMapLRN2d (the Lua Torch layer): x / (k + alpha / size * s)^beta over (N, C, H,
// W), s the sum of x^2 over channels c - p + 1 .. c + p - 1 with p = (size - 1) / 2 + 1 (so an
// even size sums size - 1 channels), clipped at the ends, plus channel 0 for every c >= p: the
// running sum of PyTorch's loop never takes channel 0 out (Note [Cross-map windows] in
// composed_layers.cpp). local_response_norm is the plain window. The gradient is this forward's
// (PyTorch's hand-written backward differs from it).
Tensor cross_map_lrn2d(const Tensor& x, std::int64_t size, double alpha = 1e-4, double beta = 0.75,
                       double k = 1.0);

// y[..., o] = sum_ij x1[..., i] weight[o, i, j] x2[..., j] + bias[o]: x1 (*, in1), x2 (*, in2) of
// one leading shape, weight (out, in1, in2), bias (out) or undefined.
Tensor bilinear(const Tensor& x1, const Tensor& x2, const Tensor& weight,
                const Tensor& bias = Tensor());

// (N, C, *) with C = groups g: channel i g + j of the output is channel j (C / groups) + i of
// the input (reshape to (N, groups, C / groups, *), swap those two dims, reshape back).
Tensor channel_shuffle(const Tensor& x, std::int64_t groups);

// Randomized leaky ReLU: x for x > 0, a x otherwise, with a drawn uniformly from [lower, upper]
// for each element in training (rand: Philox, the default generator of x's device) and
// (lower + upper) / 2 otherwise. The gradient is 1 or the element's slope (the slope at 0, as
// PyTorch's).
Tensor rrelu(const Tensor& x, double lower = 1.0 / 8.0, double upper = 1.0 / 3.0,
             bool training = false);

// The partial inverse of max_pool*d_with_indices, as torch's max_unpool*d: zeros of the output
// size, with each input element at the index (within its (n, c) plane, as the pool gives it)
// that `indices` (int64, the input's shape) holds for it. The output size is (S - 1) stride - 2
// padding + kernel per dim, or output_size (strictly within one stride of that, as PyTorch's).
// Indices are checked on the host (a CUDA tensor copied back); where two elements are sent to one
// place (overlapping pool windows) the last one stays, as PyTorch's CPU loop, and each element's
// gradient is its place's (Note [Unpooling repeats] in composed_layers.cpp). Input (N, C, *spatial)
// or unbatched (C, *spatial); stride 0 means the kernel.
Tensor max_unpool1d(const Tensor& x, const Tensor& indices, std::int64_t kernel_size,
                    std::int64_t stride = 0, std::int64_t padding = 0,
                    std::optional<std::int64_t> output_size = std::nullopt);
Tensor max_unpool2d(const Tensor& x, const Tensor& indices, Size2 kernel_size,
                    Size2 stride = {0, 0}, Size2 padding = {0, 0},
                    std::optional<Size2> output_size = std::nullopt);
Tensor max_unpool3d(const Tensor& x, const Tensor& indices, Size3 kernel_size,
                    Size3 stride = {0, 0, 0}, Size3 padding = {0, 0, 0},
                    std::optional<Size3> output_size = std::nullopt);

}  // namespace leangrad
