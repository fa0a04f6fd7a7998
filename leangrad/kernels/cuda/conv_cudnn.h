// cuDNN's 2-D convolution (conv_cudnn.cu), behind the conv2d launchers of kernels/cuda/conv.cu:
// the baseline our implicit-GEMM kernels are measured against, chosen with LEANGRAD_CONV=cudnn or
// ops::set_conv2d_backend, and the fallback for problems they do not take. Internal to
// kernels/cuda/: conv.cu has split the batch so that every tensor has fewer than 2^31 elements.
#pragma once

#include <leangrad/core/dtype.h>
#include <leangrad/kernels/conv_geometry.h>

namespace leangrad::kernels::cuda {

// y = conv(x, w) + bias (bias may be null; added by our own kernel, conv.cu).
void conv2d_forward_cudnn(DType dtype, const Conv2dGeometry& g, void* y, const void* x,
                          const void* w);
// dx = the input gradient.
void conv2d_input_grad_cudnn(DType dtype, const Conv2dGeometry& g, void* dx, const void* dy,
                             const void* w);
// dw = the weight gradient, or dw += it when `accumulate` (the sub-batches of one convolution).
void conv2d_weight_grad_cudnn(DType dtype, const Conv2dGeometry& g, void* dw, const void* dy,
                              const void* x, bool accumulate);

}  // namespace leangrad::kernels::cuda
