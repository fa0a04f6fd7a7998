// The activation functions (autograd/activations.h).
//
// Note [Activations in one pass]
//   Every activation here but softmin runs as one kernel each way: ops::activation computes y and
//   ops::activation_backward g f'(x) from the saved input, as PyTorch's. gelu (both forms), silu,
//   mish and softplus compute f in float (double for float64) and round once, with PyTorch's
//   formulas (exact gelu's distribution function from erfc, or on the CPU from one exp, where
//   PyTorch's 1 + erf cancels for negative x: kernels/elementwise_math.h); leaky_relu, elu
//   (selu), hardtanh and clamp (fused_clamp, for clamp() in autograd/functions.cpp; integers
//   too) write the bits their in-place forms write, the composition of elementwise ops PyTorch's
//   definition spells out (so elu(x) and elu_(x) agree bit for bit); every gradient is rounded once
//   (kernels/elementwise_math.h). Composed of elementwise ops, gelu took five passes over memory
//   forward and more backward, elu five and softplus six, clamp five (two compares, two selects and
//   the NaN mask), and each rounded a float16 or bfloat16 value at every step. The backward's own
//   derivative, for a gradient of the gradient, is composed: d(g f'(x)) = f'(x) dg + g f''(x) dx,
//   f'' below, each branch computed on an input limited to where it is taken (e^x on min(x, 0)) so
//   that an infinity in the branch not taken never meets the zero gradient sent into it.
//   Values and gradients are PyTorch 1.13's (tests/autograd/test_activations.cpp, against
//   tests/data/activations.json written by tests/data/make_activations.py), each kink taking
//   PyTorch's side.
#include <leangrad/autograd/activations.h>

#include <cmath>

#include <leangrad/autograd/autocast.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/nn_internal.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

namespace leangrad {

namespace {

using autograd::BackwardContext;
using autograd::record_op;

// SELU's fixed constants (Klambauer et al., 2017), as PyTorch's.
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

// An activation and its two parameters (ops::activation's p0 and p1).
struct Activation {
  ActivationOp op;
  double p0 = 0.0;
  double p1 = 0.0;
};

const char* backward_name(ActivationOp op) {
  switch (op) {
    case ActivationOp::LeakyRelu:
      return "leaky_relu_backward";
    case ActivationOp::Elu:
    case ActivationOp::EluResult:
      return "elu_backward";
    case ActivationOp::Hardtanh:
      return "hardtanh_backward";
    case ActivationOp::Gelu:
    case ActivationOp::GeluTanh:
      return "gelu_backward";
    case ActivationOp::Silu:
      return "silu_backward";
    case ActivationOp::Mish:
      return "mish_backward";
    case ActivationOp::Softplus:
      return "softplus_backward";
    case ActivationOp::Clamp:
      return "clamp_backward";
    case ActivationOp::SmoothL1:
      return "smooth_l1_loss_backward";
    case ActivationOp::Huber:
      return "huber_loss_backward";
    case ActivationOp::Hardswish:
      return "hardswish_backward";
    case ActivationOp::Hardsigmoid:
      return "hardsigmoid_backward";
    case ActivationOp::LogSigmoid:
      return "log_sigmoid_backward";
    case ActivationOp::Softsign:
      return "softsign_backward";
    case ActivationOp::Tanhshrink:
      return "tanhshrink_backward";
    case ActivationOp::Celu:
      return "celu_backward";
    case ActivationOp::Softshrink:
      return "softshrink_backward";
    case ActivationOp::Hardshrink:
      return "hardshrink_backward";
    case ActivationOp::Threshold:
      return "threshold_backward";
  }
  LG_THROW(Error, "no fused backward for ", op_name(op));
}

// f''(x) of each, written with the differentiable functions.
Tensor second_derivative(const Activation& a, const Tensor& x) {
  switch (a.op) {
    case ActivationOp::LeakyRelu:  // piecewise linear
    case ActivationOp::Hardtanh:
    case ActivationOp::Clamp:
    case ActivationOp::Hardsigmoid:
    case ActivationOp::Softshrink:
    case ActivationOp::Hardshrink:
    case ActivationOp::Threshold:
      return zeros_like(x);
    case ActivationOp::Hardswish:  // 1/3 strictly inside (-3, 3), as PyTorch's double backward
      return masked_fill(zeros_like(x), logical_and(gt(x, -3.0), lt(x, 3.0)), 1.0 / 3.0);
    case ActivationOp::LogSigmoid: {  // -s (1 - s), s = sigmoid(x)
      const Tensor s = sigmoid(x);
      return neg(mul(s, rsub(s, 1.0)));
    }
    case ActivationOp::Softsign: {  // -2 sign(x) / (1 + |x|)^3
      const Tensor d = add(abs(x), 1.0);
      return div(mul(sign(x), -2.0), mul(mul(d, d), d));
    }
    case ActivationOp::Tanhshrink: {  // 2 t (1 - t^2), t = tanh(x)
      const Tensor t = tanh(x);
      return mul(mul(t, 2.0), rsub(mul(t, t), 1.0));
    }
    case ActivationOp::Celu: {  // e^(x / alpha) / alpha for x <= 0, 0 above
      const Tensor negative_side = div(exp(div(clamp_max(x, 0.0), a.p0)), a.p0);
      return masked_fill(negative_side, gt(x, 0.0), 0.0);
    }
    // Of the output y (the gradient g (y + scale alpha) for y <= 0, g scale above): 1 for y <= 0.
    case ActivationOp::EluResult:
      return masked_fill(zeros_like(x), le(x, 0.0), 1.0);
    case ActivationOp::Elu: {  // scale alpha e^x for x <= 0, 0 above
      const Tensor negative_side = mul(exp(clamp_max(x, 0.0)), a.p1 * a.p0);
      return masked_fill(negative_side, gt(x, 0.0), 0.0);
    }
    case ActivationOp::Gelu: {  // phi(x) (2 - x^2), phi(x) = e^(-x^2/2) / sqrt(2 pi)
      constexpr double kInvSqrt2Pi = 0.39894228040143267794;
      const Tensor x_sq = mul(x, x);
      return mul(mul(exp(mul(x_sq, -0.5)), kInvSqrt2Pi), rsub(x_sq, 2.0));
    }
    case ActivationOp::GeluTanh: {  // (1 - t^2) (u' + x/2 (u'' - 2 t u'^2)), t = tanh(u)
      constexpr double kBeta = 0.79788456080286535588;  // sqrt(2 / pi)
      constexpr double kKappa = 0.044715;
      const Tensor x_sq = mul(x, x);
      const Tensor t = tanh(mul(add(x, mul(mul(x_sq, x), kKappa)), kBeta));
      const Tensor du = mul(add(mul(x_sq, 3 * kKappa), 1.0), kBeta);  // u'
      const Tensor d2u = mul(x, 6 * kBeta * kKappa);                  // u''
      const Tensor bracket = add(du, mul(mul(x, 0.5), sub(d2u, mul(mul(t, mul(du, du)), 2.0))));
      return mul(rsub(mul(t, t), 1.0), bracket);
    }
    case ActivationOp::Silu: {  // s (1 - s) (2 + x (1 - 2 s)), s = sigmoid(x)
      const Tensor s = sigmoid(x);
      return mul(mul(s, rsub(s, 1.0)), add(mul(x, rsub(mul(s, 2.0), 1.0)), 2.0));
    }
    case ActivationOp::Mish: {  // (1 - t^2) s (2 + x (1 - s) - 2 x t s), t = tanh(softplus(x))
      const Tensor s = sigmoid(x);
      const Tensor t = tanh(softplus(x));
      const Tensor bracket = sub(add(mul(x, rsub(s, 1.0)), 2.0), mul(mul(mul(x, t), s), 2.0));
      return mul(mul(rsub(mul(t, t), 1.0), s), bracket);
    }
    case ActivationOp::Softplus: {  // beta s (1 - s), s = sigmoid(beta x); 0 above the threshold
      const Tensor z = mul(x, a.p0);
      const Tensor s = sigmoid(z);
      return masked_fill(mul(mul(s, rsub(s, 1.0)), a.p0), gt(z, a.p1), 0.0);
    }
    case ActivationOp::SmoothL1:  // 1 / beta where |d| < beta, 0 on the linear sides
      return masked_fill(zeros_like(x), lt(abs(x), a.p0), 1.0 / a.p0);
    case ActivationOp::Huber:  // 1 where |d| < delta, 0 on the linear sides
      return masked_fill(zeros_like(x), lt(abs(x), a.p0), 1.0);
  }
  LG_THROW(Error, "no second derivative for ", op_name(a.op));
}

// g f'(x), recorded under `name` (the op's backward_name unless given).
Tensor activation_backward_fn(const Activation& a, const Tensor& g, const Tensor& x,
                              const char* name = nullptr) {
  return record_op(name != nullptr ? name : backward_name(a.op),
                   ops::activation_backward(a.op, g, x, a.p0, a.p1), {g, x}, {g, x},
                   [a, name](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& g_saved = c.saved[0];
                     const Tensor& x_saved = c.saved[1];
                     std::vector<Tensor> grads(2);
                     if (c.needs(0)) grads[0] = activation_backward_fn(a, c.grad, x_saved, name);
                     if (c.needs(1))
                       grads[1] = mul(mul(c.grad, g_saved), second_derivative(a, x_saved));
                     return grads;
                   });
}

Tensor fused_activation(const char* name, const Tensor& x, const Activation& a) {
  autograd::check_floating_input(name, x);
  return record_op(name, ops::activation(a.op, x, a.p0, a.p1), {x}, {x},
                   [a](const BackwardContext& c) -> std::vector<Tensor> {
                     return {activation_backward_fn(a, c.grad, c.saved[0])};
                   });
}

}  // namespace

namespace autograd {

Tensor fused_clamp(const Tensor& x, double min, double max) {
  const Activation a{ActivationOp::Clamp, min, max};
  return record_op("clamp", ops::activation(a.op, x, min, max), {x}, {x},
                   [a](const BackwardContext& c) -> std::vector<Tensor> {
                     return {activation_backward_fn(a, c.grad, c.saved[0])};
                   });
}

Tensor one_pass_activation(const char* name, const Tensor& x, ActivationOp op, double p0,
                           double p1) {
  return fused_activation(name, x, {op, p0, p1});
}

Tensor clamp_backward(const Tensor& grad, const Tensor& x, double min, double max) {
  return activation_backward_fn({ActivationOp::Clamp, min, max}, grad, x);
}

// PyTorch's threshold_backward(grad, output, 0): 0 where the output is <= 0, grad elsewhere (a
// NaN output, and +Inf, included). That is hardtanh's gradient kernel with min 0 and no max (a NaN
// bound compares false), taken at the output, in one pass.
Tensor relu_backward(const Tensor& grad, const Tensor& output) {
  return activation_backward_fn({ActivationOp::Hardtanh, 0.0, std::nan("")}, grad, output,
                                "threshold_backward");
}

}  // namespace autograd

namespace {

void check_hardtanh_bounds(const char* op, double min_val, double max_val) {
  LG_CHECK(min_val <= max_val, op, ": expected min_val <= max_val, got min_val ", min_val,
           " and max_val ", max_val);
}

}  // namespace

Tensor leaky_relu(const Tensor& x, double negative_slope) {
  LG_PROFILE_OP(x);
  return fused_activation("leaky_relu", x, {ActivationOp::LeakyRelu, negative_slope});
}

Tensor elu(const Tensor& x, double alpha) {
  LG_PROFILE_OP(x);
  return fused_activation("elu", x, {ActivationOp::Elu, alpha, 1.0});
}

Tensor selu(const Tensor& x) {
  LG_PROFILE_OP(x);
  return fused_activation("selu", x, {ActivationOp::Elu, kSeluAlpha, kSeluScale});
}

Tensor silu(const Tensor& x) {
  LG_PROFILE_OP(x);
  return fused_activation("silu", x, {ActivationOp::Silu});
}

Tensor mish(const Tensor& x) {
  LG_PROFILE_OP(x);
  return fused_activation("mish", x, {ActivationOp::Mish});
}

Tensor gelu(const Tensor& x, const std::string& approximate) {
  LG_PROFILE_OP(x);
  LG_CHECK(approximate == "none" || approximate == "tanh",
           "gelu: approximate must be 'none' or 'tanh', got '", approximate, "'");
  return fused_activation("gelu", x,
                          {approximate == "none" ? ActivationOp::Gelu : ActivationOp::GeluTanh});
}

Tensor softplus(const Tensor& x_in, double beta, double threshold) {
  LG_PROFILE_OP(x_in);
  // In PyTorch's float32 list of autocast; the other activations keep their input's dtype.
  // fused_activation checks the dtype, ops::activation beta.
  const Tensor x = amp::autocast_operand(x_in, amp::CastPolicy::Float32);
  return fused_activation("softplus", x, {ActivationOp::Softplus, beta, threshold});
}

Tensor hardtanh(const Tensor& x, double min_val, double max_val) {
  LG_PROFILE_OP(x);
  autograd::check_floating_input("hardtanh", x);
  check_hardtanh_bounds("hardtanh", min_val, max_val);
  return fused_activation("hardtanh", x, {ActivationOp::Hardtanh, min_val, max_val});
}

Tensor relu6(const Tensor& x) {
  LG_PROFILE_OP(x);
  return hardtanh(x, 0.0, 6.0);
}

Tensor hardswish(const Tensor& x) {
  LG_PROFILE_OP(x);
  return fused_activation("hardswish", x, {ActivationOp::Hardswish});
}

Tensor hardsigmoid(const Tensor& x) {
  LG_PROFILE_OP(x);
  return fused_activation("hardsigmoid", x, {ActivationOp::Hardsigmoid});
}

Tensor log_sigmoid(const Tensor& x) {
  LG_PROFILE_OP(x);
  return fused_activation("log_sigmoid", x, {ActivationOp::LogSigmoid});
}

Tensor softsign(const Tensor& x) {
  LG_PROFILE_OP(x);
  return fused_activation("softsign", x, {ActivationOp::Softsign});
}

Tensor tanhshrink(const Tensor& x) {
  LG_PROFILE_OP(x);
  return fused_activation("tanhshrink", x, {ActivationOp::Tanhshrink});
}

Tensor celu(const Tensor& x, double alpha) {
  LG_PROFILE_OP(x);
  return fused_activation("celu", x, {ActivationOp::Celu, alpha});
}

Tensor softshrink(const Tensor& x, double lambda) {
  LG_PROFILE_OP(x);
  return fused_activation("softshrink", x, {ActivationOp::Softshrink, lambda});
}

Tensor hardshrink(const Tensor& x, double lambda) {
  LG_PROFILE_OP(x);
  return fused_activation("hardshrink", x, {ActivationOp::Hardshrink, lambda});
}

Tensor threshold(const Tensor& x, double threshold, double value) {
  LG_PROFILE_OP(x);
  return fused_activation("threshold", x, {ActivationOp::Threshold, threshold, value});
}

Tensor prelu(const Tensor& x, const Tensor& weight) {
  LG_PROFILE_OP(x);
  const char* op = "prelu";
  autograd::check_floating_input(op, x);
  LG_CHECK(weight.defined(), op, ": expected a defined weight, got an undefined Tensor()");
  LG_CHECK_DTYPE(weight.dtype() == x.dtype(), op, ": the weight is ", weight.dtype(),
                 " and the input ", x.dtype(), "; expected one dtype");
  LG_CHECK_DEVICE(weight.device() == x.device(), op, ": the weight is on ", weight.device(),
                  " and the input on ", x.device());
  const std::int64_t channels = x.dim() >= 2 ? x.size(1) : 1;
  LG_CHECK_SHAPE(weight.dim() <= 1 && (weight.numel() == 1 || weight.numel() == channels), op,
                 ": expected a weight of 1 element or one per channel (dim 1 of the input, ",
                 channels, "), got shape ", weight.shape(), " for an input of shape ", x.shape());
  // The weight along dim 1, broadcast over the others (a single weight over everything).
  Shape shape(static_cast<std::size_t>(std::max<std::int64_t>(x.dim() - 1, 0)), 1);
  if (weight.numel() > 1) shape[0] = channels;
  const Tensor w = weight.numel() > 1 ? weight.reshape(shape) : weight.reshape({});
  return where(gt(x, 0.0), x, mul(w, x));
}

Tensor glu(const Tensor& x, std::int64_t dim) {
  LG_PROFILE_OP(x);
  const char* op = "glu";
  autograd::check_floating_input(op, x);
  LG_CHECK_SHAPE(x.dim() > 0, op, ": expected an input with at least one dim, got a 0-d tensor");
  const std::int64_t d = wrap_dim(dim, x.dim(), op);
  const std::int64_t n = x.size(d);
  LG_CHECK_SHAPE(n % 2 == 0, op, ": the halved dim ", d, " must have an even size, got ", n,
                 " (input of shape ", x.shape(), ")");
  return mul(narrow(x, d, 0, n / 2), sigmoid(narrow(x, d, n / 2, n / 2)));
}

Tensor softmin(const Tensor& x, std::int64_t dim) {
  LG_PROFILE_OP(x);
  autograd::check_floating_input("softmin", x);
  return softmax(neg(x), dim);
}

// ---- In place -----------------------------------------------------------------------------
// Each writes the out-of-place function's value into x in one pass, with no temporary
// (ops::activation_: the bits of ops::activation, which the out-of-place function writes), and
// records a backward from the output: PyTorch's formulas for these ops with is_result
// (leaky_relu_backward, elu_backward, hardtanh_backward). Where the output falls on the same side
// of every kink as the input (leaky_relu_ with a slope >= 0, hardtanh_ and relu6_: y > 0 exactly
// where x > 0, y <= min exactly where x <= min, the bounds rounded to the dtype in both passes),
// the out-of-place op's own gradient kernel taken at y is that formula, in one pass: the same bits
// as the out-of-place backward at x.

namespace {

// A slope (leaky_relu_'s, elu_'s alpha) under which the output's sign is not the input's: refused
// when autograd records the op, since the gradient could not be told from the output.
void check_slope_for_grad(const char* op, const char* out_of_place, const char* what, double slope,
                          const Tensor& x) {
  LG_CHECK(slope >= 0.0 || !autograd::records_inplace(op, x), op, ": ", what, " ", slope,
           " is not >= 0, on a tensor (shape ", x.shape(),
           ") autograd records: the in-place op's gradient is written from its output, whose sign "
           "no longer tells the input's; use the out-of-place ",
           out_of_place, " (PyTorch refuses this too, at backward time)");
}

// elu_ and selu_: scale * elu(x, alpha). From the output y: the gradient is scale where y > 0 and
// y + scale alpha where y <= 0 (d/dx scale alpha (e^x - 1) = y + scale alpha), PyTorch's
// elu_backward with is_result, in one pass (ActivationOp::EluResult). y <= 0 exactly where x <= 0
// for alpha >= 0 (gradient scale alpha at 0, as the out-of-place elu).
Tensor& elu_scaled_(const char* op, Tensor& x, double alpha, double scale) {
  autograd::check_floating_input(op, x);
  check_slope_for_grad(op, "elu", "alpha", alpha, x);
  return autograd::unary_in_place(
      op, x,
      [alpha, scale](const Tensor& v) { ops::activation_(ActivationOp::Elu, v, alpha, scale); },
      [alpha, scale](const BackwardContext& c) -> std::vector<Tensor> {
        return {
            activation_backward_fn({ActivationOp::EluResult, alpha, scale}, c.grad, c.saved[0])};
      });
}

// hardtanh_ and relu6_: the gradient passes where the output is strictly inside the bounds,
// which is where the input is (PyTorch's hardtanh_backward on the result: 0 at the bounds).
Tensor& hardtanh_named(const char* op, Tensor& x, double min_val, double max_val) {
  autograd::check_floating_input(op, x);
  check_hardtanh_bounds(op, min_val, max_val);
  return autograd::unary_in_place(
      op, x,
      [min_val, max_val](const Tensor& v) {
        ops::activation_(ActivationOp::Hardtanh, v, min_val, max_val);
      },
      [min_val, max_val](const BackwardContext& c) -> std::vector<Tensor> {
        return {
            activation_backward_fn({ActivationOp::Hardtanh, min_val, max_val}, c.grad, c.saved[0])};
      });
}

}  // namespace

Tensor& leaky_relu_(Tensor& x, double negative_slope) {
  LG_PROFILE_OP(x);
  autograd::check_floating_input("leaky_relu_", x);
  check_slope_for_grad("leaky_relu_", "leaky_relu", "negative_slope", negative_slope, x);
  // y > 0 exactly where x > 0 for a slope >= 0: the out-of-place op's sides, 0 included.
  return autograd::unary_in_place(
      "leaky_relu_", x,
      [negative_slope](const Tensor& v) {
        ops::activation_(ActivationOp::LeakyRelu, v, negative_slope);
      },
      [negative_slope](const BackwardContext& c) -> std::vector<Tensor> {
        return {
            activation_backward_fn({ActivationOp::LeakyRelu, negative_slope}, c.grad, c.saved[0])};
      });
}

Tensor& elu_(Tensor& x, double alpha) {
  LG_PROFILE_OP(x);
  return elu_scaled_("elu_", x, alpha, 1.0);
}

Tensor& selu_(Tensor& x) {
  LG_PROFILE_OP(x);
  return elu_scaled_("selu_", x, kSeluAlpha, kSeluScale);
}

Tensor& hardtanh_(Tensor& x, double min_val, double max_val) {
  LG_PROFILE_OP(x);
  return hardtanh_named("hardtanh_", x, min_val, max_val);
}

Tensor& relu6_(Tensor& x) {
  LG_PROFILE_OP(x);
  return hardtanh_named("relu6_", x, 0.0, 6.0);
}

}  // namespace leangrad
