// CPU launchers of TanhExp (the reference for kernels/cuda/tanhexp.cu). Called only by
// kernels/ops_activation.cpp, which has made every operand contiguous and checked dtypes.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace leangrad::kernels::cpu {

// out[i] = x[i] * tanh(exp(x[i])) for i < n; out and x of `dtype` (floating).
void tanhexp_forward(DType dtype, std::int64_t n, void* out, const void* x);
// grad_input[i] = grad_output[i] * tanhexp'(x[i]); all three of `dtype`.
void tanhexp_backward(DType dtype, std::int64_t n, void* grad_input, const void* grad_output,
                      const void* x);

}  // namespace leangrad::kernels::cpu
