// Layers written with other differentiable functions, as torch's: lp_pool1d / lp_pool2d (a
// power average), local_response_norm (AlexNet's normalisation across channels), bilinear (x1^T
// A x2 + b), channel_shuffle (ShuffleNet's interleaving of channel groups) and rrelu (leaky ReLU
// with random slopes in training). Each is PyTorch's
// own composition, so it runs on every device, in every floating dtype, and differentiates to any
// order.
//   y = lp_pool2d(x, 2.0, {2, 2});                 // sqrt of the sum of squares per window
//   y = local_response_norm(features, 5);          // across 5 neighbouring channels
//   y = bilinear(a, b, weight, bias);              // (*, in1), (*, in2) -> (*, out)
#pragma once

#include <cstdint>

#include <leangrad/autograd/nn_functions.h>
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

}  // namespace leangrad
