// The dtypes the elementwise ops give (Note [Elementwise dtype rules] in
// kernels/ops_elementwise.cpp), for the public result_type (autograd/functions.h) and the ops.
#pragma once

#include <leangrad/core/dtype.h>
#include <leangrad/core/tensor.h>

namespace leangrad::ops {

// The dtype of `a op b` for two tensors (PyTorch's result_type): a 0-d operand beside one with
// dims counts only when its category is higher (the dims' dtype is bool, or the 0-d one is
// floating and the dims' is not), and is then promoted with it; two operands both with dims, or
// both 0-d, promote as usual.
DType result_type(const Tensor& a, const Tensor& b);
// The dtype of `tensor op scalar`: a floating tensor's own; an integral one's with an
// integral-valued scalar (int64 for bool), float32 otherwise.
DType scalar_result_dtype(DType t, double s);

}  // namespace leangrad::ops
