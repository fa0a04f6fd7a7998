// The normalization layers of autograd/nn_functions.h, each forward beside its backward
// (STYLE.md habit 1). GroupNorm saves x, the per-group mean and rstd the forward computed, and
// the weight when there is one; its backward is ops::group_norm_backward, which computes only
// the gradients that are needed (Note [GroupNorm layout and math] in kernels/group_norm_math.h).
#include "autograd/graph.h"
#include "autograd/nn_functions.h"
#include "kernels/ops.h"

namespace leangrad {

using autograd::BackwardContext;
using autograd::record_op;

Tensor group_norm(const Tensor& x, std::int64_t num_groups, const Tensor& weight,
                  const Tensor& bias, double eps) {
  ops::GroupNormOutput forward = ops::group_norm(x, num_groups, weight, bias, eps);
  std::vector<Tensor> saved = {x, forward.mean, forward.rstd};
  if (weight.defined()) saved.push_back(weight);
  return record_op("group_norm", forward.output, {x, weight, bias}, saved,
                   [num_groups](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor weight = c.saved.size() > 3 ? c.saved[3] : Tensor();
                     ops::GroupNormGrads g = ops::group_norm_backward(
                         c.grad, c.saved[0], c.saved[1], c.saved[2], weight, num_groups, c.needs(0),
                         c.needs(1), c.needs(2));
                     return {g.grad_input, g.grad_weight, g.grad_bias};
                   });
}

}  // namespace leangrad
