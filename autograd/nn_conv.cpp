// conv2d, forward and backward side by side (autograd/nn_functions.h). The three computations are
// kernel entries of kernels/ops.h (ops_conv.cpp): the forward, the input gradient (a convolution
// of grad with the flipped weight, gathered per input pixel) and the weight gradient (grad
// correlated with the input over every sample and pixel); the bias gradient is grad summed over
// (N, H_out, W_out).
#include "autograd/functions.h"
#include "autograd/graph.h"
#include "autograd/nn_functions.h"
#include "kernels/ops.h"

namespace leangrad {

using autograd::BackwardContext;
using autograd::record_op;

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, Size2 stride,
              Size2 padding, Size2 dilation, std::int64_t groups) {
  ops::Conv2dParams p;
  p.stride_h = stride[0], p.stride_w = stride[1];
  p.pad_h = padding[0], p.pad_w = padding[1];
  p.dilation_h = dilation[0], p.dilation_w = dilation[1];
  p.groups = groups;
  const Tensor out = ops::conv2d(x, weight, bias, p);
  std::vector<Tensor> inputs = {x, weight};
  if (bias.defined()) inputs.push_back(bias);
  return record_op("conv2d", out, inputs, {x, weight},
                   [p](const BackwardContext& c) -> std::vector<Tensor> {
                     const Tensor& x_saved = c.saved[0];
                     const Tensor& w_saved = c.saved[1];
                     std::vector<Tensor> grads(c.inputs.size());
                     if (c.needs(0))
                       grads[0] = ops::conv2d_input_grad(c.grad, w_saved, x_saved.shape(), p);
                     if (c.needs(1))
                       grads[1] = ops::conv2d_weight_grad(c.grad, x_saved, w_saved.shape(), p);
                     if (c.inputs.size() == 3 && c.needs(2)) grads[2] = sum(c.grad, {0, 2, 3});
                     return grads;
                   });
}

}  // namespace leangrad
