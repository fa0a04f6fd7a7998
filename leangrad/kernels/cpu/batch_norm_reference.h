// The plain reference loops of BatchNorm on the CPU (kernels/cpu/batch_norm.cpp): the
// specification that the launchers of kernels/backend.h (the vectorised kernels of
// kernels/cpu/batch_norm_vectorized.cpp) and the CUDA kernels are tested against. Same signatures
// and contract as those launchers (kernels/backend_launchers.inc, "BatchNorm"). Private to
// kernels/, the tests and bench/.
#pragma once

#include <leangrad/core/dtype.h>
#include <leangrad/kernels/group_norm_math.h>

namespace leangrad::kernels::cpu::reference {

void batch_norm_statistics(DType dtype, const BatchNormSizes& sizes, void* mean, void* rstd,
                           const void* x, double eps);
void batch_norm_forward(DType dtype, const BatchNormSizes& sizes, void* out, const void* x,
                        const void* mean, const void* rstd, const void* weight, const void* bias);
void batch_norm_backward(DType dtype, const BatchNormSizes& sizes, bool training, void* grad_input,
                         void* grad_weight, void* grad_bias, const void* grad_output, const void* x,
                         const void* mean, const void* rstd, const void* weight);

}  // namespace leangrad::kernels::cpu::reference
