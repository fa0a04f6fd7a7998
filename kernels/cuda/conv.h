// CUDA launchers of the 2-D convolution, on the current stream of the current device
// (asynchronous): our implicit-GEMM kernels (conv.cu) and cuDNN (conv_cudnn.cpp), the second
// implementation they are measured against and fall back to. Same contract as
// kernels/cpu/conv.h, which is the reference: contiguous NCHW operands, checked by ops_conv.cpp.
#pragma once

#include "core/dtype.h"
#include "kernels/conv_geometry.h"

namespace leangrad::kernels::cuda {

// ---- Implicit GEMM (conv.cu) -----------------------------------------------------------------
// Whether the implicit-GEMM kernels take this problem (every floating dtype; every tensor below
// 2^31 elements, as they index with 32-bit ints). ops_conv.cpp uses cuDNN otherwise.
bool conv2d_implicit_gemm_supports(DType dtype, const Conv2dGeometry& g);
// y = conv(x, w) + bias (bias may be null). float32 (TF32 tensor cores only when
// cuda::allow_tf32()), float64, float16 and bfloat16 (tensor cores, float32 accumulate).
void conv2d_forward(DType dtype, const Conv2dGeometry& g, void* y, const void* x, const void* w,
                    const void* bias);
// dx = the input gradient (overwritten).
void conv2d_input_grad(DType dtype, const Conv2dGeometry& g, void* dx, const void* dy,
                       const void* w);
// dw_accum += the weight gradient. dw_accum is float32 (float64 for float64 inputs) and must be
// zero-filled: the reduction over N * H_out * W_out is split across blocks that add atomically.
void conv2d_weight_grad_accumulate(DType dtype, const Conv2dGeometry& g, void* dw_accum,
                                   const void* dy, const void* x);

// ---- cuDNN (conv_cudnn.cpp) ------------------------------------------------------------------
// The same three operations with cuDNN's legacy convolution API (the algorithm its heuristics
// rank first, workspace from leangrad's allocator). dw is written in `dtype`.
void conv2d_forward_cudnn(DType dtype, const Conv2dGeometry& g, void* y, const void* x,
                          const void* w, const void* bias);
void conv2d_input_grad_cudnn(DType dtype, const Conv2dGeometry& g, void* dx, const void* dy,
                             const void* w);
void conv2d_weight_grad_cudnn(DType dtype, const Conv2dGeometry& g, void* dw, const void* dy,
                              const void* x);

}  // namespace leangrad::kernels::cuda
