// The plain reference loops of softmax, log_softmax and cross_entropy (log_softmax and the
// target's term) on the CPU (kernels/cpu/layers.cpp): the specification that the launchers of
// kernels/backend.h (the vectorised kernels of kernels/cpu/softmax_vectorized.cpp) and the CUDA
// kernels are tested against. Same signatures and contract as those launchers
// (kernels/backend_launchers.inc, "Layers"). Private to kernels/, the tests and bench/.
#pragma once

#include <cstdint>

#include <leangrad/core/dtype.h>

namespace leangrad::kernels::cpu::reference {

void softmax(DType dtype, void* out, const void* in, std::int64_t outer, std::int64_t R,
             std::int64_t inner, bool log);
void softmax_backward(DType dtype, void* grad_in, const void* grad_out, const void* out,
                      std::int64_t outer, std::int64_t R, std::int64_t inner, bool log);
void cross_entropy(DType dtype, void* losses, void* sample_weights, void* lse, const void* logits,
                   const std::int64_t* target, const void* weight, std::int64_t N, std::int64_t C,
                   std::int64_t ignore_index);
void cross_entropy_backward(DType dtype, void* grad_logits, const void* grad_losses,
                            const void* logits, const void* lse, const std::int64_t* target,
                            const void* weight, std::int64_t N, std::int64_t C,
                            std::int64_t ignore_index);

}  // namespace leangrad::kernels::cpu::reference
