// The plain reference loops of LayerNorm on the CPU (kernels/cpu/layer_norm.cpp): the
// specification that the launchers of kernels/backend.h (the vectorised kernels of
// kernels/cpu/layer_norm_vectorized.cpp) and the CUDA kernels are tested against. Same signatures
// and contract as those launchers (kernels/backend_launchers.inc, "LayerNorm"). Private to
// kernels/, the tests and bench/.
#pragma once

#include <cstdint>

#include <leangrad/core/dtype.h>

namespace leangrad::kernels::cpu::reference {

void layer_norm_forward(DType dtype, std::int64_t rows, std::int64_t features, void* out,
                        void* mean, void* rstd, const void* x, const void* weight, const void* bias,
                        double eps);
void layer_norm_backward(DType dtype, std::int64_t rows, std::int64_t features, void* grad_input,
                         void* grad_weight, void* grad_bias, const void* grad_output, const void* x,
                         const void* mean, const void* rstd, const void* weight);

}  // namespace leangrad::kernels::cpu::reference
