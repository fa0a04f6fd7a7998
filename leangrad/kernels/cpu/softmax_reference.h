// The plain reference loops of softmax and log_softmax on the CPU (kernels/cpu/layers.cpp): the
// specification that the launchers of kernels/backend.h (the vectorised kernels of
// kernels/cpu/softmax_vectorized.cpp) and the CUDA kernels are tested against. Same signatures
// and contract as those launchers (kernels/backend_launchers.inc, "Layers"). Private to kernels/,
// the tests and bench/.
#pragma once

#include <cstdint>

#include <leangrad/core/dtype.h>

namespace leangrad::kernels::cpu::reference {

void softmax(DType dtype, void* out, const void* in, std::int64_t outer, std::int64_t R,
             std::int64_t inner, bool log);
void softmax_backward(DType dtype, void* grad_in, const void* grad_out, const void* out,
                      std::int64_t outer, std::int64_t R, std::int64_t inner, bool log);

}  // namespace leangrad::kernels::cpu::reference
