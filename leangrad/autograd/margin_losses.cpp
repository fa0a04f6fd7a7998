// margin_ranking_loss, hinge_embedding_loss, soft_margin_loss, multilabel_soft_margin_loss
// (autograd/margin_losses.h), composed of the differentiable functions as PyTorch 1.13 composes
// them, so their values, kinks and broadcasting are PyTorch's.
#include <leangrad/autograd/margin_losses.h>

#include <leangrad/autograd/autocast.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/nn_internal.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/core/shape.h>

namespace leangrad {

using autograd::check_broadcast_loss;
using autograd::check_floating_input;
using autograd::check_loss_weight;
using autograd::reduce_losses;
using autograd::softplus_of_negated;

namespace {

// A target of +1 / -1 labels or multi-hot rows: floating, or integral (converted to the input's
// dtype, as PyTorch's type promotion does); a bool one is refused.
Tensor label_target(const char* op, const Tensor& target, const Tensor& input) {
  LG_CHECK(target.defined(), op, ": expected a defined target");
  LG_CHECK_DTYPE(target.dtype() != DType::Bool, op,
                 ": expected a floating or integral target, got bool (shape ", target.shape(), ")");
  return is_floating(target.dtype()) ? target : target.to(input.dtype());
}

}  // namespace

Tensor margin_ranking_loss(const Tensor& input1_in, const Tensor& input2_in,
                           const Tensor& target_in, double margin, Reduction reduction) {
  LG_PROFILE_OP(input1_in, input2_in, target_in);
  const char* op = "margin_ranking_loss";
  const Tensor input1 = amp::autocast_operand(input1_in, amp::CastPolicy::Float32);
  const Tensor input2 = amp::autocast_operand(input2_in, amp::CastPolicy::Float32);
  check_floating_input(op, input1);
  const Tensor target =
      amp::autocast_operand(label_target(op, target_in, input1), amp::CastPolicy::Float32);
  LG_CHECK_SHAPE(input1.dim() == input2.dim() && input1.dim() == target.dim(), op,
                 ": expected input1, input2 and target of one number of dims, got shapes ",
                 input1.shape(), ", ", input2.shape(), " and ", target.shape());
  // Pairwise broadcastable sizes are broadcastable together.
  check_broadcast_loss(op, "input1", input1, "input2", input2);
  check_broadcast_loss(op, "input1", input1, "target", target);
  check_broadcast_loss(op, "input2", input2, "target", target);
  return reduce_losses(clamp_min(add(mul(neg(target), sub(input1, input2)), margin), 0.0),
                       reduction);
}

Tensor hinge_embedding_loss(const Tensor& input_in, const Tensor& target_in, double margin,
                            Reduction reduction) {
  LG_PROFILE_OP(input_in, target_in);
  const char* op = "hinge_embedding_loss";
  const Tensor input = amp::autocast_operand(input_in, amp::CastPolicy::Float32);
  check_floating_input(op, input);
  const Tensor target = label_target(op, target_in, input);
  check_broadcast_loss(op, "input", input, "target", target);
  // PyTorch's where(target != 1, clamp_min(margin - input, 0), 0) +
  // where(target != -1, input, 0).
  const Tensor margin_term = masked_fill(clamp_min(rsub(input, margin), 0.0), eq(target, 1.0), 0.0);
  const Tensor input_term = masked_fill(input, eq(target, -1.0), 0.0);
  return reduce_losses(add(margin_term, input_term), reduction);
}

Tensor soft_margin_loss(const Tensor& input_in, const Tensor& target_in, Reduction reduction) {
  LG_PROFILE_OP(input_in, target_in);
  const char* op = "soft_margin_loss";
  const Tensor input = amp::autocast_operand(input_in, amp::CastPolicy::Float32);
  check_floating_input(op, input);
  const Tensor target =
      amp::autocast_operand(label_target(op, target_in, input), amp::CastPolicy::Float32);
  check_broadcast_loss(op, "input", input, "target", target);
  LG_CHECK_SHAPE(broadcasts_to(target.shape(), input.shape()), op, ": target of shape ",
                 target.shape(), " does not broadcast to the input's shape ", input.shape());
  return reduce_losses(softplus_of_negated(mul(input, target)), reduction);
}

Tensor multilabel_soft_margin_loss(const Tensor& input_in, const Tensor& target_in,
                                   const Tensor& weight_in, Reduction reduction) {
  LG_PROFILE_OP(input_in, target_in, weight_in);
  const char* op = "multilabel_soft_margin_loss";
  const Tensor input = amp::autocast_operand(input_in, amp::CastPolicy::Float32);
  check_floating_input(op, input);
  LG_CHECK_SHAPE(input.dim() >= 1, op,
                 ": expected input with a class dim, (C) or (N, C), got a 0-d "
                 "tensor");
  const Tensor target =
      amp::autocast_operand(label_target(op, target_in, input), amp::CastPolicy::Float32);
  const Tensor weight = amp::autocast_operand(weight_in, amp::CastPolicy::Float32);
  check_broadcast_loss(op, "input", input, "target", target);
  LG_CHECK_SHAPE(broadcasts_to(target.shape(), input.shape()), op, ": target of shape ",
                 target.shape(), " does not broadcast to the input's shape ", input.shape());
  check_loss_weight(op, "weight", weight, input);
  // -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input)), as PyTorch writes it.
  Tensor losses = add(mul(target, softplus_of_negated(input)),
                      mul(rsub(target, 1.0), softplus_of_negated(neg(input))));
  if (weight.defined()) losses = mul(losses, weight);
  const double classes = static_cast<double>(input.shape().back());
  return reduce_losses(div(sum(losses, {-1}), classes), reduction);
}

}  // namespace leangrad
