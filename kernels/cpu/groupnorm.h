// CPU launchers of GroupNorm (the reference for kernels/cuda/groupnorm.cu). Called only by
// kernels/ops_norm.cpp, which has made x and the gradient contiguous (N, C, HxW) and checked
// dtypes and shapes. Layout and formulas: Note [GroupNorm layout and math] in
// kernels/groupnorm_math.h.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "kernels/groupnorm_math.h"

namespace leangrad::kernels::cpu {

// out, x: (N, C, HxW) of `dtype`; weight, bias: (C,) of `dtype`, or null (no affine part);
// mean, rstd: (N, G) of the accumulation dtype (float64 for float64, float32 otherwise).
void group_norm_forward(DType dtype, const GroupNormSizes& sizes, void* out, void* mean, void* rstd,
                        const void* x, const void* weight, const void* bias, double eps);

// grad_input: (N, C, HxW) of `dtype`, or null when not needed; grad_weight, grad_bias: (C,) of
// `dtype`, or null when not needed; grad_output, x as the forward's out and x; mean, rstd as the
// forward wrote them; weight null means all ones.
void group_norm_backward(DType dtype, const GroupNormSizes& sizes, void* grad_input,
                         void* grad_weight, void* grad_bias, const void* grad_output, const void* x,
                         const void* mean, const void* rstd, const void* weight);

}  // namespace leangrad::kernels::cpu
