// The composed activation functions (autograd/activations.h).
//
// Note [Composed activations]
// where(c, a, b) evaluates both branches, and its backward sends a zero gradient into the branch
// not taken; a branch that is infinite there would turn that zero into NaN (0 * inf) on its way
// back to x. So each branch is computed on an input limited to where it is taken: elu's
// exponential on min(x, 0), softplus's on min(beta x, threshold). Values and gradients are
// PyTorch 1.13's (tests/autograd/test_activations.cpp, against tests/data/activations.json
// written by tests/data/make_activations.py), each kink taking PyTorch's side: where's condition
// is the strict comparison PyTorch's kernels use.
#include <leangrad/autograd/activations.h>

#include <cmath>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/nn_internal.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

namespace leangrad {

namespace {
// SELU's fixed constants (Klambauer et al., 2017), as PyTorch's.
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;
}  // namespace

Tensor leaky_relu(const Tensor& x, double negative_slope) {
  LG_PROFILE_OP(x);
  autograd::check_floating_input("leaky_relu", x);
  return where(gt(x, 0.0), x, mul(x, negative_slope));
}

Tensor elu(const Tensor& x, double alpha) {
  LG_PROFILE_OP(x);
  autograd::check_floating_input("elu", x);
  return where(gt(x, 0.0), x, mul(expm1(clamp_max(x, 0.0)), alpha));
}

Tensor selu(const Tensor& x) {
  LG_PROFILE_OP(x);
  autograd::check_floating_input("selu", x);
  return mul(elu(x, kSeluAlpha), kSeluScale);
}

Tensor silu(const Tensor& x) {
  LG_PROFILE_OP(x);
  autograd::check_floating_input("silu", x);
  return mul(x, sigmoid(x));
}

Tensor mish(const Tensor& x) {
  LG_PROFILE_OP(x);
  autograd::check_floating_input("mish", x);
  return mul(x, tanh(softplus(x)));
}

Tensor gelu(const Tensor& x, const std::string& approximate) {
  LG_PROFILE_OP(x);
  autograd::check_floating_input("gelu", x);
  if (approximate == "none") {
    constexpr double kSqrtHalf = 0.70710678118654752440084436210485;
    return mul(mul(x, 0.5), add(erf(mul(x, kSqrtHalf)), 1.0));
  }
  LG_CHECK(approximate == "tanh", "gelu: approximate must be 'none' or 'tanh', got '", approximate,
           "'");
  constexpr double kSqrt2OverPi = 0.79788456080286535587989211986876;
  const Tensor inner = mul(add(x, mul(mul(mul(x, x), x), 0.044715)), kSqrt2OverPi);
  return mul(mul(x, 0.5), add(tanh(inner), 1.0));
}

Tensor softplus(const Tensor& x, double beta, double threshold) {
  LG_PROFILE_OP(x);
  autograd::check_floating_input("softplus", x);
  LG_CHECK(beta > 0.0 && std::isfinite(beta), "softplus: expected a finite beta > 0, got ", beta);
  const Tensor scaled = mul(x, beta);
  const Tensor smooth = div(log1p(exp(clamp_max(scaled, threshold))), beta);
  return where(gt(scaled, threshold), x, smooth);
}

namespace {

void check_hardtanh_bounds(const char* op, double min_val, double max_val) {
  LG_CHECK(min_val <= max_val, op, ": expected min_val <= max_val, got min_val ", min_val,
           " and max_val ", max_val);
}

}  // namespace

Tensor hardtanh(const Tensor& x, double min_val, double max_val) {
  LG_PROFILE_OP(x);
  autograd::check_floating_input("hardtanh", x);
  check_hardtanh_bounds("hardtanh", min_val, max_val);
  // Strict inside, as PyTorch's gradient: a bound itself is filled in, so its gradient is 0. NaN
  // fails both comparisons and stays NaN.
  return masked_fill(masked_fill(x, ge(x, max_val), max_val), le(x, min_val), min_val);
}

Tensor relu6(const Tensor& x) {
  LG_PROFILE_OP(x);
  return hardtanh(x, 0.0, 6.0);
}

Tensor softmin(const Tensor& x, std::int64_t dim) {
  LG_PROFILE_OP(x);
  autograd::check_floating_input("softmin", x);
  return softmax(neg(x), dim);
}

// ---- In place -----------------------------------------------------------------------------
// Each writes the out-of-place function's value into x in one pass, with no temporary
// (ops::activation_: a fused kernel whose bits are the composition's above), and records a
// backward from the output: PyTorch's formulas for these ops with is_result (leaky_relu_backward,
// elu_backward, hardtanh_backward).

namespace {

using autograd::BackwardContext;

Tensor zero_like_scalar(const Tensor& g) {
  return zeros({}, g.options());
}

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
// elu_backward with is_result. y <= 0 exactly where x <= 0 for alpha >= 0 (gradient scale alpha
// at 0, as the out-of-place elu).
Tensor& elu_scaled_(const char* op, Tensor& x, double alpha, double scale) {
  autograd::check_floating_input(op, x);
  check_slope_for_grad(op, "elu", "alpha", alpha, x);
  return autograd::unary_in_place(
      op, x,
      [alpha, scale](const Tensor& v) { ops::activation_(ActivationOp::Elu, v, alpha, scale); },
      [alpha, scale](const BackwardContext& c) -> std::vector<Tensor> {
        const Tensor& y = c.saved[0];
        const Tensor outside = scale == 1.0 ? c.grad : c.grad * scale;
        return {where(le(y, 0.0), c.grad * add(y, scale * alpha), outside)};
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
        const Tensor& y = c.saved[0];
        const Tensor zero = zero_like_scalar(c.grad);
        return {where(le(y, min_val), zero, where(ge(y, max_val), zero, c.grad))};
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
        return {where(gt(c.saved[0], 0.0), c.grad, c.grad * negative_slope)};
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
