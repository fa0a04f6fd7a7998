// The losses of binary targets and the robust regression losses, as torch.nn.functional's:
//   Tensor l = binary_cross_entropy_with_logits(logits, targets, Reduction::Mean, Tensor(),
//                                               pos_weight);
//   Tensor r = smooth_l1_loss(prediction, target, Reduction::Mean, /*beta=*/0.5);
// input and target have one shape; Reduction::None keeps it, Mean averages every element, Sum
// adds them. The class losses (cross_entropy, nll_loss) and mse_loss and l1_loss are in
// autograd/nn_functions.h. Each is composed of differentiable functions, or recorded with
// PyTorch's backward formula written with them, so all differentiate again (Note [Binary cross
// entropy's clamps] in losses.cpp).
#pragma once

#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/tensor.h>

namespace leangrad {

// -weight * (target * log(input) + (1 - target) * log(1 - input)) per element, each log clamped
// at -100 as PyTorch's, for probabilities `input` in [0, 1] (outside it the log gives NaN; it is
// not checked, which would wait for the device). weight: undefined, or broadcastable to input;
// one that requires grad is refused (PyTorch has no derivative for it either). The target gets
// a gradient, (log(1 - input) - log(input)) * weight.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            Reduction reduction = Reduction::Mean, const Tensor& weight = Tensor());

// binary_cross_entropy of sigmoid(input), computed from the logits without overflow:
// weight * ((1 - target) * input + (1 + (pos_weight - 1) * target) * softplus(-input)).
// pos_weight (undefined, or broadcastable to input, usually (C,)) weighs the positive term, as
// PyTorch's. weight and pos_weight get gradients when they require them (PyTorch refuses).
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        Reduction reduction = Reduction::Mean,
                                        const Tensor& weight = Tensor(),
                                        const Tensor& pos_weight = Tensor());

// 0.5 * d^2 / beta where |d| < beta, |d| - 0.5 * beta elsewhere, for d = input - target.
// beta >= 0; beta == 0 is l1_loss.
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                      Reduction reduction = Reduction::Mean, double beta = 1.0);

// 0.5 * d^2 where |d| < delta, delta * (|d| - 0.5 * delta) elsewhere; delta > 0. huber_loss is
// delta times smooth_l1_loss with beta = delta.
Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
                  double delta = 1.0);

}  // namespace leangrad
