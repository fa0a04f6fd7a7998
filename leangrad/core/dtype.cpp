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

double dtype_max(DType dtype) {
  switch (dtype) {
    case DType::Float32:
      return std::numeric_limits<float>::max();
    case DType::Float64:
      return std::numeric_limits<double>::max();
    case DType::Float16:
      return 65504.0;
    case DType::BFloat16:
      return 3.3895313892515355e38;  // (2 - 2^-7) * 2^127
    case DType::Int64:
      // 2^63 - 1 rounds to 2^63 in double; PyTorch's checks compare with that rounded value.
      return 9223372036854775807.0;
    case DType::Int32:
      return std::numeric_limits<std::int32_t>::max();
    case DType::UInt8:
      return 255.0;
    case DType::Bool:
      return 1.0;
  }
  return 0.0;
}

double dtype_lowest(DType dtype) {
  switch (dtype) {
    case DType::Int64:
      return -9223372036854775808.0;
    case DType::Int32:
      return std::numeric_limits<std::int32_t>::min();
    case DType::UInt8:
    case DType::Bool:
      return 0.0;
    default:
      return -dtype_max(dtype);  // the floating dtypes are symmetric
  }
}

bool scalar_fits(double value, DType dtype) {
  if (dtype == DType::Bool || dtype == DType::Float64) return true;
  if (!std::isfinite(value)) return is_floating(dtype);  // NaN and the infinities
  // An integral negative value wraps in uint8 (c10::overflows for an integer scalar): -1 is 255.
  const double lowest =
      dtype == DType::UInt8 && std::trunc(value) == value ? -255.0 : dtype_lowest(dtype);
  return value >= lowest && value <= dtype_max(dtype);
}

std::pair<std::int64_t, std::int64_t> exact_integer_bounds(DType dtype) {
  const auto symmetric = [](int digits) {
    const std::int64_t m = std::int64_t{1} << digits;
    return std::pair{-m, m};
  };
  switch (dtype) {
    case DType::Float32:
      return symmetric(24);
    case DType::Float64:
      return symmetric(53);
    case DType::Float16:
      return symmetric(11);
    case DType::BFloat16:
      return symmetric(8);
    case DType::Int64:
      return {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()};
    case DType::Int32:
      return {std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()};
    case DType::UInt8:
      return {0, 255};
    case DType::Bool:
      return {0, 1};
  }
  return {0, 0};
}

}  // namespace leangrad
