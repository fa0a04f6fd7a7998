// binary_cross_entropy, binary_cross_entropy_with_logits, smooth_l1_loss and huber_loss
// (autograd/losses.h).
#include <leangrad/autograd/losses.h>

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
using autograd::check_elementwise_loss;
using autograd::record_op;
using autograd::reduce_losses;

namespace {

// A weight beside a loss's input: undefined, or floating, on the input's device, and
// broadcastable to the input's shape (the loss keeps the input's shape).
void check_loss_weight(const char* op, const char* name, const Tensor& weight,
                       const Tensor& input) {
  if (!weight.defined()) return;
  LG_CHECK_DTYPE(is_floating(weight.dtype()), op, ": expected a floating ", name, ", got ",
                 weight.dtype());
  LG_CHECK_DEVICE(weight.device() == input.device(), op, ": expected ", name,
                  " on the input's device ", input.device(), ", got ", weight.device());
  LG_CHECK_SHAPE(broadcasts_to(weight.shape(), input.shape()), op, ": ", name, " of shape ",
                 weight.shape(), " does not broadcast to the input's shape ", input.shape());
}

// softplus(-x) = log(1 + exp(-x)), as log1p(exp(-|x|)) + max(-x, 0) so that exp never
// overflows, recorded with its derivative -sigmoid(-x) = sigmoid(x) - 1: the composed form's
// abs and clamp would both have a kink at 0, where the true derivative is -1/2.
Tensor softplus_of_negated(const Tensor& x) {
  Tensor out;
  {
    NoGradGuard no_grad;
    out = add(log1p(exp(neg(abs(x)))), clamp_min(neg(x), 0.0));
  }
  return record_op("softplus_of_negated", out, {x}, {x},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     return {c.grad * (sigmoid(c.saved[0]) - 1.0)};
                   });
}

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

Tensor smooth_l1_loss(const Tensor& input_in, const Tensor& target_in, Reduction reduction,
                      double beta) {
  LG_PROFILE_OP(input_in, target_in);
  const char* op = "smooth_l1_loss";
  LG_CHECK(beta >= 0.0, op, ": beta must be >= 0, got ", beta);
  const Tensor input = amp::autocast_operand(input_in, amp::CastPolicy::Float32);
  const Tensor target = amp::autocast_operand(target_in, amp::CastPolicy::Float32);
  check_elementwise_loss(op, input, target);
  const Tensor d = sub(input, target);
  const Tensor a = abs(d);
  // beta == 0 is l1: the quadratic branch is never taken, and its d / beta would be 0 / 0.
  if (beta == 0.0) return reduce_losses(a, reduction);
  return reduce_losses(where(lt(a, beta), div(mul(mul(d, d), 0.5), beta), sub(a, 0.5 * beta)),
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
  const Tensor d = sub(input, target);
  const Tensor a = abs(d);
  return reduce_losses(where(lt(a, delta), mul(mul(d, d), 0.5), mul(sub(a, 0.5 * delta), delta)),
                       reduction);
}

}  // namespace leangrad
