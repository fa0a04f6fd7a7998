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
#include <leangrad/autograd/nn_internal.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>

namespace leangrad {

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
  constexpr double kAlpha = 1.6732632423543772848170429916717;
  constexpr double kScale = 1.0507009873554804934193349852946;
  return mul(elu(x, kAlpha), kScale);
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

Tensor hardtanh(const Tensor& x, double min_val, double max_val) {
  LG_PROFILE_OP(x);
  autograd::check_floating_input("hardtanh", x);
  LG_CHECK(min_val <= max_val, "hardtanh: expected min_val <= max_val, got min_val ", min_val,
           " and max_val ", max_val);
  // Strict inside, as PyTorch's gradient: a bound itself is filled in, so its gradient is 0. NaN
  // fails both comparisons and stays NaN.
  return masked_fill(masked_fill(x, ge(x, max_val), max_val), le(x, min_val), min_val);
}

Tensor relu6(const Tensor& x) {
  LG_PROFILE_OP(x);
  return hardtanh(x, 0.0, 6.0);
}

}  // namespace leangrad
