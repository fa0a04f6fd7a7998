// What the autograd-level functions share (activations.cpp, losses.cpp, margin_losses.cpp,
// nn_functions.cpp, tensor_methods.cpp): the input checks a composed function makes before it
// reaches a kernel, so the Error names the function the user called rather than the first op
// inside it, the losses' reduction and their overflow-free softplus, the undoing of broadcasting
// in a gradient, and the in-place machinery of Note [In-place ops in the graph]. Internal: no
// public header includes it.
#pragma once

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/error.h>
#include <leangrad/core/shape.h>
#include <leangrad/core/tensor.h>
#include <leangrad/kernels/ops.h>

namespace leangrad::autograd {

// A defined tensor of a floating dtype; the Error names `op`, the dtype and the shape.
inline void check_floating_input(const char* op, const Tensor& x) {
  LG_CHECK(x.defined(), op, ": expected a defined input, got an undefined Tensor()");
  LG_CHECK_DTYPE(is_floating(x.dtype()), op,
                 ": expected a floating input (float32, float64, float16, bfloat16), got ",
                 x.dtype(), " (shape ", x.shape(), ")");
}

// x itself when floating, else x in float32: the operand of the functions that compute integral
// input in float32, as PyTorch promotes it.
inline Tensor floating_or_float32(const Tensor& x) {
  return is_floating(x.dtype()) ? x : x.to(kFloat32);
}

// f(a), computed in float32 for float16 and bfloat16 input and rounded once (through
// differentiable casts), as PyTorch's kernels compute in float: var, std and nanmean, where
// rounding each mean, deviation, square or count to 16 bits would miss by many ulps (a count past
// 65504 is inf in float16). The result keeps the input's dtype, under autocast too.
template <typename F>
Tensor in_working_precision(const Tensor& a, const F& f) {
  if (!is_reduced_precision(a.dtype())) return f(a);
  return f(a.to(kFloat32)).to(a.dtype());
}

// f(a, b) so, for operands of one dtype (logaddexp and logaddexp2: each step rounded to bfloat16
// made logaddexp2(0, 0) 0.996).
template <typename F>
Tensor in_working_precision(const Tensor& a, const Tensor& b, const F& f) {
  if (!is_reduced_precision(a.dtype())) return f(a, b);
  return f(a.to(kFloat32), b.to(kFloat32)).to(a.dtype());
}

// The dtype a and b promote to, or float32 where that is integral or bool.
inline DType floating_result_type(const Tensor& a, const Tensor& b) {
  const DType promoted = promote_types(a.dtype(), b.dtype());
  return is_floating(promoted) ? promoted : kFloat32;
}

// a op b for an op of integral operands with no gradient (the bitwise ops, gcd, lcm, the
// shifts), b a number that must hold an integer; ops::binary checks the dtypes.
inline Tensor integral_binary(BinaryOp op, const Tensor& a, double b) {
  LG_CHECK(a.defined(), op_name(op), ": expected a defined tensor");
  LG_CHECK(std::isfinite(b) && b == std::nearbyint(b), op_name(op), ": expected an integer, got ",
           b, " (with ", a.dtype(), " of shape ", a.shape(), ")");
  return ops::binary(op, a, b);
}

// The operands of a function composed over several tensors (einsum, lerp, addmm, ...): each
// defined, all of operand 0's dtype and device, and of a floating dtype where `floating`; the
// Error names `op` and the operand's position.
inline void check_operands(const char* op, const std::vector<Tensor>& operands,
                           bool floating = false) {
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const Tensor& t = operands[i];
    LG_CHECK(t.defined(), op, ": operand ", i, " is an undefined Tensor()");
    LG_CHECK_DTYPE(t.dtype() == operands[0].dtype(), op, ": expected operands of one dtype, got ",
                   operands[0].dtype(), " (operand 0) and ", t.dtype(), " (operand ", i, ")");
    LG_CHECK_DEVICE(t.device() == operands[0].device(), op,
                    ": expected operands on one device, got ", operands[0].device(),
                    " (operand 0) and ", t.device(), " (operand ", i, ")");
  }
  LG_CHECK_DTYPE(!floating || operands.empty() || is_floating(operands[0].dtype()), op,
                 ": expected floating operands (float32, float64, float16, bfloat16), got ",
                 operands[0].dtype());
}

// An elementwise loss's input and target: defined, of one shape, floating (PyTorch's losses are
// not defined on integers either) and on one device.
inline void check_elementwise_loss(const char* op, const Tensor& input, const Tensor& target) {
  LG_CHECK(input.defined() && target.defined(), op, ": expected defined input and target");
  LG_CHECK_SHAPE(input.shape() == target.shape(), op,
                 ": expected input and target of one shape, got ", input.shape(), " and ",
                 target.shape());
  LG_CHECK_DTYPE(is_floating(input.dtype()) && is_floating(target.dtype()), op,
                 ": expected floating input and target, got ", input.dtype(), " and ",
                 target.dtype());
  LG_CHECK_DEVICE(input.device() == target.device(), op,
                  ": expected input and target on one device, got ", input.device(), " and ",
                  target.device());
}

// Two operands of a loss that broadcasts them together (kl_div, poisson_nll_loss, the margin
// losses: PyTorch composes them of elementwise ops): defined, floating, on one device, of shapes
// that broadcast. Returns the broadcast shape.
inline Shape check_broadcast_loss(const char* op, const char* name_a, const Tensor& a,
                                  const char* name_b, const Tensor& b) {
  LG_CHECK(a.defined() && b.defined(), op, ": expected defined ", name_a, " and ", name_b);
  LG_CHECK_DTYPE(is_floating(a.dtype()) && is_floating(b.dtype()), op, ": expected floating ",
                 name_a, " and ", name_b, ", got ", a.dtype(), " and ", b.dtype());
  LG_CHECK_DEVICE(a.device() == b.device(), op, ": expected ", name_a, " and ", name_b,
                  " on one device, got ", a.device(), " and ", b.device());
  const std::string what = ::leangrad::detail::str_cat(op, " (", name_a, " and ", name_b, ")");
  return broadcast_shapes(a.shape(), b.shape(), what.c_str());
}

// A weight beside a loss's input: undefined, or floating, on the input's device, and
// broadcastable to the input's shape (the loss keeps the input's shape).
inline void check_loss_weight(const char* op, const char* name, const Tensor& weight,
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
inline Tensor softplus_of_negated(const Tensor& x) {
  Tensor out;
  {
    leangrad::NoGradGuard no_grad;
    out = add(log1p(exp(neg(abs(x)))), clamp_min(neg(x), 0.0));
  }
  return autograd::record_op("softplus_of_negated", out, {x}, {x},
                             [](const autograd::BackwardContext& c) -> std::vector<Tensor> {
                               return {c.grad * (sigmoid(c.saved[0]) - 1.0)};
                             });
}

// clamp() in one pass each way (activations.cpp, Note [Activations in one pass]): x numeric, its
// bounds checked by the caller, an absent bound NaN. clamp_backward is its gradient, grad where
// min <= x <= max and x is not NaN, 0 elsewhere, recorded so that it has a gradient of its own.
Tensor fused_clamp(const Tensor& x, double min, double max);
Tensor clamp_backward(const Tensor& grad, const Tensor& x, double min, double max);
// ops::activation(op, x, p0, p1) recorded under `name`, its gradient ops::activation_backward
// (itself recorded, with f'' composed, for a gradient of the gradient); x floating (checked).
// smooth_l1_loss and huber_loss run their functions of input - target so (losses.cpp).
Tensor one_pass_activation(const char* name, const Tensor& x, ActivationOp op, double p0,
                           double p1 = 0.0);
// relu's gradient from its output in one pass: 0 where output <= 0, grad elsewhere (NaN too),
// recorded (activations.cpp).
Tensor relu_backward(const Tensor& grad, const Tensor& output);

// max(x, min) with the gradient of identity: the clamps PyTorch makes in place under no_grad
// (gaussian_nll_loss's var, cosine_similarity's norms), whose backward sees the identity.
inline Tensor clamp_min_straight_through(const Tensor& x, double min) {
  Tensor out;
  {
    leangrad::NoGradGuard no_grad;
    out = clamp_min(x, min);
  }
  return autograd::record_op(
      "clamp_min_straight_through", out, {x}, {},
      [](const autograd::BackwardContext& c) -> std::vector<Tensor> { return {c.grad}; });
}

// Per-element losses reduced: None keeps them, Sum adds them, Mean averages them.
inline Tensor reduce_losses(const Tensor& losses, Reduction reduction) {
  switch (reduction) {
    case Reduction::None:
      return losses;
    case Reduction::Sum:
      return sum(losses);
    case Reduction::Mean:
      return mean(losses);
  }
  return losses;
}

// Sums `g` over the dims that broadcasting added or expanded, so it has `shape` again (the
// gradient of an operand that was broadcast; functions.cpp).
Tensor sum_to(const Tensor& g, const Shape& shape);

// 10^|decimals| as PyTorch's round_decimals_kernel holds it: std::pow in double, then rounded to
// the tensor's dtype (10^4 is 9984 in bfloat16). round(x, decimals) and x.round_(decimals)
// (Note [Rounding to decimals] in functions.cpp).
double power_of_ten_in(DType dtype, std::int64_t decimals);

// Whether the in-place op `op` on self (with `other`, if any) is recorded by autograd; throws,
// naming op, where it is refused (Note [In-place ops in the graph] in tensor_methods.cpp).
bool records_inplace(const char* op, const Tensor& self, const Tensor& other = Tensor());

// What the node of an in-place elementwise op saves for its backward: self after the write (the
// gradient is written from the output), a copy of self before it (the gradient needs the value
// the write destroys: PyTorch saves such a clone too), or nothing.
enum class InPlaceSaves { Output, Input, Nothing };

// The in-place form of an elementwise function: `write(self)` writes the value into self's memory
// (an ops:: kernel: ops::unary_, ops::activation_) and, when autograd records the op, a node
// saving what `saves` says (saved[0]) becomes self's history, with `backward`. relu_, sigmoid_,
// tanh_, the other unary methods (exp_, sin_, ...) and the activations of activations.h.
Tensor& unary_in_place(const char* op, Tensor& self,
                       const std::function<void(const Tensor&)>& write,
                       FunctionNode::Backward backward, InPlaceSaves saves = InPlaceSaves::Output);

}  // namespace leangrad::autograd
