// LibTorch's type-promotion queries: the dtype an elementwise op of two operands gives
// (result_type) and whether a value of one dtype may be written into a tensor of another in place
// (can_cast). promote_types is core/dtype.h's.
//   if (!can_cast(result_type(x, y), x.dtype())) ...  // x.add_(y) would be refused
#pragma once

#include <leangrad/core/dtype.h>
#include <leangrad/core/tensor.h>

namespace leangrad {

// The dtype of `a op b` for leangrad's elementwise ops (add, mul, maximum, where, ...), as
// torch.result_type: promote_types of the two, except that a 0-d tensor beside one with dims
// counts only when its category (bool < integral < floating) is higher. With a number: a floating
// tensor's dtype; an integral tensor's with an integral-valued number (int64 for a bool tensor),
// float32 with another (a C++ double cannot say whether it was written 2 or 2.0, so 2.0 counts
// as the integer PyTorch's Python 2 is; Note [Elementwise dtype rules]). Division of two integral
// operands, which gives float32, is the op's own rule, not result_type's.
DType result_type(const Tensor& a, const Tensor& b);
DType result_type(const Tensor& a, double b);
DType result_type(double a, const Tensor& b);

// Whether PyTorch's casting rules let a value of dtype `from` be written into a tensor of dtype
// `to` in place (x.add_(y) and the other in-place ops, the out= forms): not floating into
// integral, and nothing but bool into bool.
bool can_cast(DType from, DType to);

}  // namespace leangrad
