// The fused activations of autograd/nn_functions.h, each forward beside its backward
// (STYLE.md habit 1). TanhExp saves only x: its derivative is recomputed from x in one fused
// kernel (ops::tanhexp_backward), which costs less than storing tanh(e^x) beside y.
#include "autograd/graph.h"
#include "autograd/nn_functions.h"
#include "kernels/ops.h"

namespace leangrad {

using autograd::BackwardContext;
using autograd::record_op;

Tensor tanhexp(const Tensor& x) {
  return record_op("tanhexp", ops::tanhexp(x), {x}, {x},
                   [](const BackwardContext& c) -> std::vector<Tensor> {
                     return {ops::tanhexp_backward(c.grad, c.saved[0])};
                   });
}

}  // namespace leangrad
