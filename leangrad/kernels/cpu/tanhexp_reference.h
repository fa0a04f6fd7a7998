// The plain reference loops of TanhExp on the CPU (kernels/cpu/tanhexp.cpp): the specification
// that the launchers of kernels/backend.h (the vectorised kernels of
// kernels/cpu/tanhexp_vectorized.cpp) and the CUDA kernels are tested against. Same signatures
// and contract as those launchers (kernels/backend_launchers.inc, "TanhExp"). Private to kernels/,
// the tests and bench/.
#pragma once

#include <cstdint>

#include <leangrad/core/dtype.h>

namespace leangrad::kernels::cpu::reference {

void tanhexp_forward(DType dtype, std::int64_t n, void* out, const void* x);
void tanhexp_backward(DType dtype, std::int64_t n, void* grad_input, const void* grad_output,
                      const void* x);

}  // namespace leangrad::kernels::cpu::reference
