// The arithmetic of autograd/arithmetic_functions.h.
#include <leangrad/autograd/arithmetic_functions.h>

#include <cmath>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/nn_internal.h>
#include <leangrad/core/error.h>
#include <leangrad/core/profiler.h>

namespace leangrad {

using autograd::BackwardContext;
using autograd::check_operands;
using autograd::record_op;
using autograd::sum_to;

Tensor lerp(const Tensor& input, const Tensor& end, double weight) {
  LG_PROFILE_OP(input, end);
  check_operands("lerp", {input, end}, /*floating=*/true);
  const Tensor diff = sub(end, input);
  if (std::fabs(weight) < 0.5) return add(input, mul(diff, weight));
  return sub(end, mul(diff, 1.0 - weight));
}

Tensor lerp(const Tensor& input, const Tensor& end, const Tensor& weight) {
  LG_PROFILE_OP(input, end, weight);
  check_operands("lerp", {input, end, weight}, /*floating=*/true);
  const Tensor diff = sub(end, input);
  // Both forms are the same function, so where's gradient (each form's where it is chosen) is
  // lerp's: 1 - weight, weight and end - input.
  return where(lt(abs(weight), 0.5), add(input, mul(weight, diff)),
               sub(end, mul(diff, rsub(weight, 1.0))));
}

Tensor addcmul(const Tensor& input, const Tensor& tensor1, const Tensor& tensor2, double value) {
  LG_PROFILE_OP(input, tensor1, tensor2);
  check_operands("addcmul", {input, tensor1, tensor2}, /*floating=*/false);
  const Tensor scaled = value == 1.0 ? tensor1 : mul(tensor1, value);
  return add(input, mul(scaled, tensor2));
}

Tensor addcdiv(const Tensor& input, const Tensor& tensor1, const Tensor& tensor2, double value) {
  LG_PROFILE_OP(input, tensor1, tensor2);
  check_operands("addcdiv", {input, tensor1, tensor2}, /*floating=*/true);
  const Tensor scaled = value == 1.0 ? tensor1 : mul(tensor1, value);
  return add(input, div(scaled, tensor2));
}

Tensor logaddexp(const Tensor& a, const Tensor& b) {
  LG_PROFILE_OP(a, b);
  check_operands("logaddexp", {a, b}, /*floating=*/true);
  Tensor out;
  {
    NoGradGuard no_grad;
    out = autograd::in_working_precision(a, b, [](const Tensor& x, const Tensor& y) {
      const Tensor m = maximum(x, y);
      const Tensor stable = add(m, log1p(exp(neg(abs(sub(x, y))))));
      // The same infinity twice: x - y is NaN, the sum that infinity.
      return where(logical_and(isinf(x), eq(x, y)), m, stable);
    });
  }
  return record_op("logaddexp", out, {a, b}, {a, b},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor d = sub(c.saved[0], c.saved[1]);
                     std::vector<Tensor> grads(2);
                     if (c.needs(0)) grads[0] = sum_to(mul(c.grad, sigmoid(d)), c.shape(0));
                     if (c.needs(1)) grads[1] = sum_to(mul(c.grad, sigmoid(neg(d))), c.shape(1));
                     return grads;
                   });
}

}  // namespace leangrad
