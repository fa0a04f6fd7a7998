// CPU launchers of the 2-D convolution (im2col + Eigen GEMM), the reference for
// kernels/cuda/conv.cu. Called only by kernels/ops_conv.cpp, which has checked shapes, dtypes and
// devices and made every operand contiguous (NCHW; weight (C_out, C_in / groups, kH, kW)).
#pragma once

#include "core/dtype.h"
#include "kernels/conv_geometry.h"

namespace leangrad::kernels::cpu {

// y = conv(x, w) + bias (bias may be null). float32 and float64; ops::conv2d computes
// float16/bfloat16 on the CPU in float32.
void conv2d_forward(DType dtype, const Conv2dGeometry& g, void* y, const void* x, const void* w,
                    const void* bias);
// dx = the input gradient from dy and w (dx is overwritten).
void conv2d_input_grad(DType dtype, const Conv2dGeometry& g, void* dx, const void* dy,
                       const void* w);
// dw = the weight gradient from dy and x (dw is overwritten).
void conv2d_weight_grad(DType dtype, const Conv2dGeometry& g, void* dw, const void* dy,
                        const void* x);

}  // namespace leangrad::kernels::cpu
