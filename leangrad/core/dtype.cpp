// Type promotion for binary ops, following PyTorch's table for tensor-tensor operands.
#include <leangrad/core/dtype.h>

#include <cmath>
#include <limits>

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

bool scalar_fits(double value, DType dtype) {
  if (dtype == DType::Bool || dtype == DType::Float64) return true;
  if (!std::isfinite(value)) return is_floating(dtype);  // NaN and the infinities
  double lowest = 0;
  double max = 0;
  switch (dtype) {
    case DType::Float32:
      max = std::numeric_limits<float>::max();
      lowest = -max;
      break;
    case DType::Float16:
      max = 65504.0;
      lowest = -max;
      break;
    case DType::BFloat16:
      max = 3.3895313892515355e38;  // (2 - 2^-7) * 2^127
      lowest = -max;
      break;
    case DType::Int64:
      // 2^63 - 1 rounds to 2^63 in double; PyTorch's check compares with that rounded value.
      max = 9223372036854775807.0;
      lowest = -9223372036854775808.0;
      break;
    case DType::Int32:
      max = std::numeric_limits<std::int32_t>::max();
      lowest = std::numeric_limits<std::int32_t>::min();
      break;
    case DType::UInt8:
      max = 255;
      // An integral negative value wraps (c10::overflows for an integer scalar): -1 is 255.
      lowest = std::trunc(value) == value ? -255 : 0;
      break;
    default:
      return true;
  }
  return value >= lowest && value <= max;
}

}  // namespace leangrad
