// The losses of binary targets, the robust regression losses and the distribution losses
// (kl_div, poisson_nll_loss, gaussian_nll_loss), as torch.nn.functional's:
//   Tensor l = binary_cross_entropy_with_logits(logits, targets, Reduction::Mean, Tensor(),
//                                               pos_weight);
//   Tensor r = smooth_l1_loss(prediction, target, Reduction::Mean, /*beta=*/0.5);
// BCE's and the robust losses' input and target have one shape; the distribution losses
// broadcast them, as PyTorch's. Reduction::None keeps the shape, Mean averages every element, Sum
// adds them. The class losses (cross_entropy, nll_loss) and mse_loss and l1_loss are in
// autograd/nn_functions.h. Each is composed of differentiable functions, or recorded with
// PyTorch's backward formula written with them, so all differentiate again (Note [Binary cross
// entropy's clamps] in losses.cpp).
#pragma once

#include <concepts>

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

// kl_div's reductions: Reduction's three and BatchMean, the sum divided by the input's first size
// (the KL divergence per sample; a 0-d input is not divided). Its own type, as LibTorch's
// KLDivFuncOptions::reduction_t, so that no other loss can be given BatchMean. Mean averages
// every element, as PyTorch's (which warns that it is not the divergence; here it is silent).
enum class KLDivReduction { None, BatchMean, Sum, Mean };

// The pointwise KL divergence of `target` from `input` (log-probabilities):
// target * (log(target) - input), 0 where target is 0 (xlogy); with log_target, target holds
// log-probabilities too: exp(target) * (target - input). input and target broadcast. The target
// gets a gradient; at a target of 0 it is NaN, as PyTorch's (Note [KL divergence at 0]).
Tensor kl_div(const Tensor& input, const Tensor& target,
              KLDivReduction reduction = KLDivReduction::Mean, bool log_target = false);
// Reduction::None, Mean or Sum, as the other losses take them. A template, so that LibTorch's
// kNone, kMean and kSum (core/enum_tags.h), which convert to both reductions, pick the overload
// above rather than being ambiguous.
template <std::same_as<Reduction> R>
Tensor kl_div(const Tensor& input, const Tensor& target, R reduction, bool log_target = false) {
  const KLDivReduction same = reduction == Reduction::None  ? KLDivReduction::None
                              : reduction == Reduction::Sum ? KLDivReduction::Sum
                                                            : KLDivReduction::Mean;
  return kl_div(input, target, same, log_target);
}

// The negative log likelihood of `target` counts under a Poisson distribution of rate
// exp(input) (log_input) or input: exp(input) - target * input, or
// input - target * log(input + eps); full adds Stirling's approximation of log(target!),
// target * log(target) - target + 0.5 * log(2 pi target), where target > 1. input and target
// broadcast.
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input = true,
                        bool full = false, double eps = 1e-8,
                        Reduction reduction = Reduction::Mean);

// The negative log likelihood of `target` under a Gaussian of mean `input` and variance `var`:
// 0.5 * (log(max(var, eps)) + (input - target)^2 / max(var, eps)), plus 0.5 * log(2 pi) when
// full. var has the input's shape, or it with the last dim 1, or it without its last dim (one
// variance per sample); input and target broadcast. A negative var is an Error (checked on the
// host, as PyTorch's: it waits for the device). The clamp at eps passes the gradient straight
// through, as PyTorch's in-place clamp under no_grad.
Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var,
                         bool full = false, double eps = 1e-6,
                         Reduction reduction = Reduction::Mean);

}  // namespace leangrad
