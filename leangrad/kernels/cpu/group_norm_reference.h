// The plain reference loops of GroupNorm on the CPU (kernels/cpu/group_norm.cpp): the
// specification that the launchers of kernels/backend.h (the vectorised kernels of
// kernels/cpu/group_norm_vectorized.cpp) and the CUDA kernels are tested against. Same signatures
// and contract as those launchers (kernels/backend_launchers.inc, "GroupNorm"). Private to
// kernels/, the tests and bench/.
#pragma once

#include <leangrad/core/dtype.h>
#include <leangrad/kernels/group_norm_math.h>

namespace leangrad::kernels::cpu::reference {

void group_norm_forward(DType dtype, const GroupNormSizes& sizes, void* out, void* mean, void* rstd,
                        const void* x, const void* weight, const void* bias, double eps);
void group_norm_backward(DType dtype, const GroupNormSizes& sizes, void* grad_input,
                         void* grad_weight, void* grad_bias, const void* grad_output, const void* x,
                         const void* mean, const void* rstd, const void* weight);

}  // namespace leangrad::kernels::cpu::reference
