// binary_cross_entropy, binary_cross_entropy_with_logits, smooth_l1_loss, huber_loss, kl_div,
// poisson_nll_loss and gaussian_nll_loss (autograd/losses.h).
#include <leangrad/autograd/losses.h>

#include <cmath>
#include <numbers>

#include <leangrad/autograd/autocast.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/nn_internal.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/core/shape.h>

namespace leangrad {

using autograd::BackwardContext;
using autograd::check_broadcast_loss;
using autograd::check_elementwise_loss;
using autograd::check_loss_weight;
using autograd::clamp_min_straight_through;
using autograd::record_op;
using autograd::reduce_losses;
using autograd::softplus_of_negated;

namespace {

// The floor of binary_cross_entropy's gradient denominator: PyTorch's float 1e-12.
constexpr double kBceEpsilon = static_cast<double>(1e-12f);

}  // namespace

// Note [Binary cross entropy's clamps]
// PyTorch clamps each log at -100, so a probability of exactly 0 or 1 gives a finite loss, and
// its input gradient is (input - target) / max(input * (1 - input), 1e-12), finite there too;
// its 1e-12 is a float, 9.99999996e-13, in float64 too (kBceEpsilon), which a float64 gradient
// below the floor shows in its ninth digit.
// Neither is the derivative of the clamped formula (which is 0 past the clamp, and 0 * inf = NaN
// where a log is infinite), so the loss is recorded with PyTorch's gradients written with
// differentiable functions: they match PyTorch's everywhere and differentiate again. The
// target's gradient, log(1 - input) - log(input), is unclamped, as PyTorch's (infinite at 0
// and 1).
Tensor binary_cross_entropy(const Tensor& input_in, const Tensor& target_in, Reduction reduction,
                            const Tensor& weight_in) {
  LG_PROFILE_OP(input_in, target_in, weight_in);
  const char* op = "binary_cross_entropy";
  const Tensor input = amp::autocast_operand(input_in, amp::CastPolicy::Float32);
  const Tensor target = amp::autocast_operand(target_in, amp::CastPolicy::Float32);
  const Tensor weight = amp::autocast_operand(weight_in, amp::CastPolicy::Float32);
  check_elementwise_loss(op, input, target);
  check_loss_weight(op, "weight", weight, input);
  // One dtype: the gradients below are the operands' own (the composed losses promote instead).
  LG_CHECK_DTYPE(
      target.dtype() == input.dtype() && (!weight.defined() || weight.dtype() == input.dtype()), op,
      ": expected input, target and weight of one dtype, got ", input.dtype(), ", ", target.dtype(),
      " and ", weight.defined() ? dtype_name(weight.dtype()) : "no weight");
  LG_CHECK(!(autograd::grad_mode_enabled() && weight.defined() && weight.requires_grad()), op,
           ": the weight requires grad, but binary_cross_entropy has no derivative for it (as "
           "PyTorch's); detach() it, or use binary_cross_entropy_with_logits");
  Tensor losses;
  {
    NoGradGuard no_grad;
    const Tensor log_p = clamp_min(log(input), -100.0);
    const Tensor log_q = clamp_min(log(rsub(input, 1.0)), -100.0);
    losses = neg(add(mul(target, log_p), mul(rsub(target, 1.0), log_q)));
    if (weight.defined()) losses = mul(losses, weight);
  }
  losses = record_op(op, losses, {input, target}, {input, target, weight},
                     [](const BackwardContext& c) -> std::vector<Tensor> {
                       const Tensor& x = c.saved[0];
                       const Tensor& t = c.saved[1];
                       const Tensor& w = c.saved[2];
                       const Tensor g = w.defined() ? c.grad * w : c.grad;
                       Tensor gx, gt;
                       if (c.needs(0)) gx = g * (x - t) / clamp_min(x * rsub(x, 1.0), kBceEpsilon);
                       if (c.needs(1)) gt = g * (log(rsub(x, 1.0)) - log(x));
                       return {gx, gt};
                     });
  return reduce_losses(losses, reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input_in, const Tensor& target_in,
                                        Reduction reduction, const Tensor& weight_in,
                                        const Tensor& pos_weight_in) {
  LG_PROFILE_OP(input_in, target_in, weight_in, pos_weight_in);
  const char* op = "binary_cross_entropy_with_logits";
  const Tensor input = amp::autocast_operand(input_in, amp::CastPolicy::Float32);
  const Tensor target = amp::autocast_operand(target_in, amp::CastPolicy::Float32);
  const Tensor weight = amp::autocast_operand(weight_in, amp::CastPolicy::Float32);
  const Tensor pos_weight = amp::autocast_operand(pos_weight_in, amp::CastPolicy::Float32);
  check_elementwise_loss(op, input, target);
  check_loss_weight(op, "weight", weight, input);
  check_loss_weight(op, "pos_weight", pos_weight, input);
  const Tensor softplus_neg = softplus_of_negated(input);
  // The positive term's weight, 1 + (pos_weight - 1) * target (PyTorch's log_weight).
  const Tensor positive =
      pos_weight.defined() ? add(mul(sub(pos_weight, 1.0), target), 1.0) : Tensor();
  Tensor losses = add(mul(rsub(target, 1.0), input),
                      positive.defined() ? mul(positive, softplus_neg) : softplus_neg);
  if (weight.defined()) losses = mul(losses, weight);
  return reduce_losses(losses, reduction);
}

// Note [Smooth L1 and Huber in one pass]
// Each is a function of the difference d = input - target: after the subtraction, one kernel
// each way (ops::activation's SmoothL1 and Huber, kernels/elementwise_math.h), PyTorch's
// formulas computed in float (double for float64) and rounded once, where the composition of
// abs, lt, mul, div, sub and where took eight passes forward and as many back. The target's
// gradient is the subtraction's, -dx.
Tensor smooth_l1_loss(const Tensor& input_in, const Tensor& target_in, Reduction reduction,
                      double beta) {
  LG_PROFILE_OP(input_in, target_in);
  const char* op = "smooth_l1_loss";
  LG_CHECK(beta >= 0.0, op, ": beta must be >= 0, got ", beta);
  const Tensor input = amp::autocast_operand(input_in, amp::CastPolicy::Float32);
  const Tensor target = amp::autocast_operand(target_in, amp::CastPolicy::Float32);
  check_elementwise_loss(op, input, target);
  const Tensor d = sub(input, target);
  // beta == 0 is l1 (as PyTorch's): the quadratic branch is never taken, and its d / beta would be
  // 0 / 0.
  if (beta == 0.0) return reduce_losses(abs(d), reduction);
  return reduce_losses(autograd::one_pass_activation(op, d, ActivationOp::SmoothL1, beta),
                       reduction);
}

Tensor huber_loss(const Tensor& input_in, const Tensor& target_in, Reduction reduction,
                  double delta) {
  LG_PROFILE_OP(input_in, target_in);
  const char* op = "huber_loss";
  LG_CHECK(delta > 0.0, op, ": delta must be > 0, got ", delta);
  const Tensor input = amp::autocast_operand(input_in, amp::CastPolicy::Float32);
  const Tensor target = amp::autocast_operand(target_in, amp::CastPolicy::Float32);
  check_elementwise_loss(op, input, target);
  return reduce_losses(
      autograd::one_pass_activation(op, sub(input, target), ActivationOp::Huber, delta), reduction);
}

// Note [KL divergence at 0]
// PyTorch writes target * log(target) as xlogy(target, target): 0 where the target is 0, so a
// class of probability 0 adds nothing. Its target gradient is xlogy's two derivatives added,
// xlogy(target != 0, target) + target / target: 0 / 0 = NaN at 0 (the true one is -infinity).
// Here target * log(target) is composed and masked to 0 where the target is 0: the mask's
// backward hands 0 to the product, whose derivative is then 0 * log(0) + 0 * target / target,
// NaN at 0 as PyTorch's, and log(target) + 1 elsewhere. The input's gradient, -target, is 0 there.
Tensor kl_div(const Tensor& input_in, const Tensor& target_in, KLDivReduction reduction,
              bool log_target) {
  LG_PROFILE_OP(input_in, target_in);
  const char* op = "kl_div";
  const Tensor input = amp::autocast_operand(input_in, amp::CastPolicy::Float32);
  const Tensor target = amp::autocast_operand(target_in, amp::CastPolicy::Float32);
  check_broadcast_loss(op, "input", input, "target", target);
  const Tensor losses =
      log_target
          ? mul(exp(target), sub(target, input))
          : sub(masked_fill(mul(target, log(target)), eq(target, 0.0), 0.0), mul(target, input));
  switch (reduction) {
    case KLDivReduction::None:
      return losses;
    case KLDivReduction::Sum:
      return sum(losses);
    case KLDivReduction::Mean:
      return mean(losses);
    case KLDivReduction::BatchMean:
      return input.dim() == 0 ? sum(losses)
                              : div(sum(losses), static_cast<double>(input.shape()[0]));
  }
  return losses;
}

Tensor poisson_nll_loss(const Tensor& input_in, const Tensor& target_in, bool log_input, bool full,
                        double eps, Reduction reduction) {
  LG_PROFILE_OP(input_in, target_in);
  const char* op = "poisson_nll_loss";
  const Tensor input = amp::autocast_operand(input_in, amp::CastPolicy::Float32);
  const Tensor target = amp::autocast_operand(target_in, amp::CastPolicy::Float32);
  check_broadcast_loss(op, "input", input, "target", target);
  Tensor losses = log_input ? sub(exp(input), mul(target, input))
                            : sub(input, mul(target, log(add(input, eps))));
  if (full) {
    // Stirling's log(target!) less log(target^target e^-target), PyTorch's term; 0 where
    // target <= 1 (where its target gradient is NaN at 0, as PyTorch's: 0 * log(0)).
    const Tensor stirling = add(sub(mul(target, log(target)), target),
                                mul(log(mul(target, 2.0 * std::numbers::pi)), 0.5));
    losses = add(losses, masked_fill(stirling, le(target, 1.0), 0.0));
  }
  return reduce_losses(losses, reduction);
}

namespace {

// Shape without its last dim (a 0-d shape stays itself, as Python's size()[:-1]).
Shape without_last_dim(const Shape& s) {
  return s.empty() ? s : Shape(s.begin(), s.end() - 1);
}

}  // namespace

Tensor gaussian_nll_loss(const Tensor& input_in, const Tensor& target_in, const Tensor& var_in,
                         bool full, double eps, Reduction reduction) {
  LG_PROFILE_OP(input_in, target_in, var_in);
  const char* op = "gaussian_nll_loss";
  const Tensor input = amp::autocast_operand(input_in, amp::CastPolicy::Float32);
  const Tensor target = amp::autocast_operand(target_in, amp::CastPolicy::Float32);
  Tensor var = amp::autocast_operand(var_in, amp::CastPolicy::Float32);
  check_broadcast_loss(op, "input", input, "target", target);
  LG_CHECK(var.defined(), op, ": expected a defined var");
  LG_CHECK_DTYPE(is_floating(var.dtype()), op, ": expected a floating var, got ", var.dtype());
  LG_CHECK_DEVICE(var.device() == input.device(), op, ": expected var on the input's device ",
                  input.device(), ", got ", var.device());
  // PyTorch 1.13's rule: the input's shape; or it without the last dim (one variance per
  // sample, unsqueezed); or it with the last dim 1 (heteroscedastic).
  if (var.shape() != input.shape()) {
    const Shape prefix = without_last_dim(input.shape());
    if (var.shape() == prefix) {
      var = unsqueeze(var, -1);
    } else {
      LG_CHECK_SHAPE(!var.shape().empty() && without_last_dim(var.shape()) == prefix &&
                         var.shape().back() == 1,
                     op, ": var of shape ", var.shape(), " is neither the input's shape ",
                     input.shape(), ", nor it with the last dim 1, nor it without the last dim");
    }
  }
  {
    NoGradGuard no_grad;
    LG_CHECK(sum(lt(var, 0.0).to(kInt64)).item<std::int64_t>() == 0, op, ": var (shape ",
             var.shape(), ") has negative entries");
  }
  var = clamp_min_straight_through(var, eps);
  const Tensor d = sub(input, target);
  Tensor losses = mul(add(log(var), div(mul(d, d), var)), 0.5);
  if (full) losses = add(losses, 0.5 * std::log(2.0 * std::numbers::pi));
  return reduce_losses(losses, reduction);
}

}  // namespace leangrad
