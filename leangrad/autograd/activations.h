// The activation functions beyond relu, sigmoid, tanh (autograd/functions.h) and tanhexp
// (autograd/nn_functions.h), with PyTorch's names, defaults and values: each (softmin, prelu and
// glu aside) is one kernel forward and one backward, and the backward differentiates again, to
// any order. Where PyTorch's gradient at a kink is a convention (leaky_relu and elu at 0,
// hardtanh at its bounds, softplus at its threshold, hardswish at +-3, the shrinks at +-lambda),
// ours takes the same side. Note [Activations in one pass] in activations.cpp.
//   y = leaky_relu(x, 0.2);  y = gelu(x, "tanh");  y = softplus(x, 2.0, 10.0);
#pragma once

#include <string>

#include <leangrad/core/tensor.h>

namespace leangrad {

// x for x > 0, negative_slope * x otherwise (gradient negative_slope at 0).
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);
// x for x > 0, alpha (exp(x) - 1) otherwise (expm1: exact near 0; gradient alpha at 0).
Tensor elu(const Tensor& x, double alpha = 1.0);
// scale * elu(x, alpha) with SELU's fixed alpha = 1.6732632423543772 and scale
// = 1.0507009873554805.
Tensor selu(const Tensor& x);
// x * sigmoid(x) (Swish).
Tensor silu(const Tensor& x);
// x * tanh(softplus(x)).
Tensor mish(const Tensor& x);
// approximate "none": x Phi(x) = x (1 + erf(x / sqrt(2))) / 2; "tanh":
// x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2. Anything else is an Error.
Tensor gelu(const Tensor& x, const std::string& approximate = "none");
// log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (as PyTorch). beta > 0.
Tensor softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0);
// x limited to [min_val, max_val]; the gradient passes strictly inside (0 at the bounds, as
// PyTorch's hardtanh, unlike clamp's). min_val <= max_val.
Tensor hardtanh(const Tensor& x, double min_val = -1.0, double max_val = 1.0);
// hardtanh(x, 0, 6).
Tensor relu6(const Tensor& x);
// softmax(-x, dim): the weights of the smallest values largest.
Tensor softmin(const Tensor& x, std::int64_t dim);
// x relu6(x + 3) / 6 (MobileNetV3's). PyTorch's gradient: 0 below -3, x / 3 + 1/2 on [-3, 3), 1
// from 3 up (its CPU kernel's sides; its CUDA kernel takes 3/2 at 3).
Tensor hardswish(const Tensor& x);
// relu6(x + 3) / 6; gradient 1/6 strictly inside (-3, 3).
Tensor hardsigmoid(const Tensor& x);
// log(sigmoid(x)) = min(x, 0) - log1p(e^-|x|), without overflow (torch::log_sigmoid,
// F::logsigmoid).
Tensor log_sigmoid(const Tensor& x);
// x / (1 + |x|).
Tensor softsign(const Tensor& x);
// x - tanh(x).
Tensor tanhshrink(const Tensor& x);
// x for x > 0, alpha expm1(x / alpha) otherwise; alpha != 0 (PyTorch's ZeroDivisionError).
Tensor celu(const Tensor& x, double alpha = 1.0);
// x - lambda above lambda, x + lambda below -lambda, 0 between (gradient 0 at +-lambda);
// lambda >= 0.
Tensor softshrink(const Tensor& x, double lambda = 0.5);
// 0 for -lambda <= x <= lambda, x elsewhere.
Tensor hardshrink(const Tensor& x, double lambda = 0.5);
// value where x <= threshold, x elsewhere (gradient 0 where x <= threshold). threshold and value
// are rounded to x's dtype, as PyTorch's kernel takes them.
Tensor threshold(const Tensor& x, double threshold, double value);
// x for x > 0, weight x otherwise, with one weight for everything or one per channel (dim 1 of
// x, which weight (C,) is broadcast along): composed of gt, mul and where, so both x and weight
// get gradients (weight's summed over the other dims).
Tensor prelu(const Tensor& x, const Tensor& weight);
// The gated linear unit: a sigmoid(b) for the halves a, b of x along dim (an even size).
Tensor glu(const Tensor& x, std::int64_t dim = -1);

// ---- In place, as PyTorch's leaky_relu_, elu_, selu_, hardtanh_, relu6_ ----------------------
// The value of the function above written into x (floating x only), which is returned. Under
// autograd each is recorded truly in place: its gradient is PyTorch's formula written from the
// output (elu's out + alpha, hardtanh's mask of the output strictly inside the bounds), so the
// graph keeps x's memory alone (Note [In-place ops in the graph] in tensor_methods.cpp). Where
// the output does not tell the input's side of the kink, a recorded call is refused: leaky_relu_
// with negative_slope < 0 and elu_ with alpha < 0 (PyTorch refuses these at backward time).
//   Tensor h = linear(x, w, b);  leaky_relu_(h, 0.2);
Tensor& leaky_relu_(Tensor& x, double negative_slope = 0.01);
Tensor& elu_(Tensor& x, double alpha = 1.0);
Tensor& selu_(Tensor& x);
Tensor& hardtanh_(Tensor& x, double min_val = -1.0, double max_val = 1.0);
Tensor& relu6_(Tensor& x);

}  // namespace leangrad
