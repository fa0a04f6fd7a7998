// Arithmetic of several tensors in one call, as torch's: lerp, addcmul, addcdiv and logaddexp.
// Compositions of autograd/functions.h's elementwise ops (logaddexp with a gradient of its own),
// so they broadcast as those do and differentiate, twice too; the operands share a dtype and a
// device (the error names the op).
#pragma once

#include <leangrad/core/tensor.h>

namespace leangrad {

// input + weight (end - input), as torch.lerp, in PyTorch's two forms for accuracy at both ends:
// end - (end - input) (1 - weight) where |weight| >= 0.5. Floating dtypes.
Tensor lerp(const Tensor& input, const Tensor& end, double weight);
Tensor lerp(const Tensor& input, const Tensor& end, const Tensor& weight);
// input + value * tensor1 * tensor2, as torch.addcmul (the product (value tensor1) tensor2).
Tensor addcmul(const Tensor& input, const Tensor& tensor1, const Tensor& tensor2,
               double value = 1.0);
// input + value * tensor1 / tensor2, as torch.addcdiv ((value tensor1) / tensor2); floating
// dtypes only (PyTorch refuses integer division there too).
Tensor addcdiv(const Tensor& input, const Tensor& tensor1, const Tensor& tensor2,
               double value = 1.0);
// log(e^a + e^b) without overflow: max(a, b) + log1p(e^-|a - b|), and a where a and b are the
// same infinity, as torch.logaddexp; its gradient is sigmoid(a - b) (and sigmoid(b - a) for b).
// Floating dtypes.
Tensor logaddexp(const Tensor& a, const Tensor& b);

}  // namespace leangrad
