// Type promotion for binary ops, following PyTorch's table for tensor-tensor operands.
#include <leangrad/core/dtype.h>

namespace leangrad {

namespace {
// Rank within a category: bool < uint8 < int32 < int64 < (float16 | bfloat16) < float32 < float64.
int rank(DType t) {
  switch (t) {
    case DType::Bool:
      return 0;
    case DType::UInt8:
      return 1;
    case DType::Int32:
      return 2;
    case DType::Int64:
      return 3;
    case DType::Float16:
    case DType::BFloat16:
      return 4;
    case DType::Float32:
      return 5;
    case DType::Float64:
      return 6;
  }
  return 0;
}
}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  // float16 and bfloat16 have the same rank but neither holds the other: both fit in float32.
  if ((a == DType::Float16 && b == DType::BFloat16) ||
      (a == DType::BFloat16 && b == DType::Float16)) {
    return DType::Float32;
  }
  return rank(a) >= rank(b) ? a : b;
}

}  // namespace leangrad
