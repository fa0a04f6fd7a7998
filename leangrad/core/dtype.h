// DType: the element types a tensor can hold, their sizes, names and promotion rules.
// C++ scalar types map to dtypes through CppTypeToDType / DTypeToCppType (used by dispatch).
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <utility>

#include <leangrad/core/half.h>

namespace leangrad {

enum class DType : std::uint8_t { Float32, Float64, Float16, BFloat16, Int64, Int32, UInt8, Bool };

constexpr DType kFloat32 = DType::Float32;
constexpr DType kFloat64 = DType::Float64;
constexpr DType kFloat16 = DType::Float16;
constexpr DType kBFloat16 = DType::BFloat16;
constexpr DType kInt64 = DType::Int64;
constexpr DType kInt32 = DType::Int32;
constexpr DType kUInt8 = DType::UInt8;
constexpr DType kBool = DType::Bool;
// LibTorch's other names for the same dtypes.
constexpr DType kFloat = kFloat32;
constexpr DType kDouble = kFloat64;
constexpr DType kHalf = kFloat16;
constexpr DType kLong = kInt64;
constexpr DType kInt = kInt32;
constexpr DType kByte = kUInt8;

constexpr std::size_t element_size(DType t) {
  switch (t) {
    case DType::Float64:
    case DType::Int64:
      return 8;
    case DType::Float32:
    case DType::Int32:
      return 4;
    case DType::Float16:
    case DType::BFloat16:
      return 2;
    case DType::UInt8:
    case DType::Bool:
      return 1;
  }
  return 0;
}

// "float32", "bfloat16", "int64", ... (PyTorch's spelling).
constexpr const char* dtype_name(DType t) {
  switch (t) {
    case DType::Float32:
      return "float32";
    case DType::Float64:
      return "float64";
    case DType::Float16:
      return "float16";
    case DType::BFloat16:
      return "bfloat16";
    case DType::Int64:
      return "int64";
    case DType::Int32:
      return "int32";
    case DType::UInt8:
      return "uint8";
    case DType::Bool:
      return "bool";
  }
  return "unknown";
}

inline std::ostream& operator<<(std::ostream& out, DType t) {
  return out << dtype_name(t);
}

constexpr bool is_floating(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Float16 || t == DType::BFloat16;
}
// float16 and bfloat16: stored in 16 bits, computed in float32 (opmath).
constexpr bool is_reduced_precision(DType t) {
  return t == DType::Float16 || t == DType::BFloat16;
}
constexpr bool is_integral(DType t, bool include_bool = false) {
  return t == DType::Int64 || t == DType::Int32 || t == DType::UInt8 ||
         (include_bool && t == DType::Bool);
}

// The dtype of `a op b` (PyTorch's rules for two tensors): floating beats integral, wider beats
// narrower, float16 with bfloat16 gives float32, bool is the lowest.
DType promote_types(DType a, DType b);

// The largest and the lowest finite value of `dtype`, as doubles: float16's 65504, bfloat16's
// (2 - 2^-7) 2^127, int64's 2^63 - 1 rounded to 2^63 (and -2^63), bool's 1 and 0.
double dtype_max(DType dtype);
double dtype_lowest(DType dtype);

// Whether `value` can be stored in `dtype` without overflow (PyTorch's c10::overflows, which
// fill_, full, masked_fill and clamp check): NaN and the infinities only in floating dtypes, a
// finite value within [lowest, max] of the dtype (float16 up to 65504, not to what rounds to
// it); an integral-valued negative value in uint8 down to -255 (it wraps, as PyTorch's integer
// scalars do: -1 is 255); anything in bool (nonzero is true).
bool scalar_fits(double value, DType dtype);

// The integers `dtype` holds, each exactly and with all between: [-2^d, 2^d] for a floating dtype
// of d significant bits (24, 53, 11 and 8), its range for an integral one, [0, 1] for bool. The
// bounds randint and random_ check their values against, as PyTorch's.
std::pair<std::int64_t, std::int64_t> exact_integer_bounds(DType dtype);

template <typename T>
struct CppTypeToDType;
template <DType D>
struct DTypeToCppType;

#define LG_FORALL_DTYPES(_)         \
  _(float, Float32)                 \
  _(double, Float64)                \
  _(::leangrad::Half, Float16)      \
  _(::leangrad::BFloat16, BFloat16) \
  _(std::int64_t, Int64)            \
  _(std::int32_t, Int32)            \
  _(std::uint8_t, UInt8)            \
  _(bool, Bool)

#define LG_DEFINE_DTYPE_TRAITS(cpp_type, name)  \
  template <>                                   \
  struct CppTypeToDType<cpp_type> {             \
    static constexpr DType value = DType::name; \
  };                                            \
  template <>                                   \
  struct DTypeToCppType<DType::name> {          \
    using type = cpp_type;                      \
  };
LG_FORALL_DTYPES(LG_DEFINE_DTYPE_TRAITS)
#undef LG_DEFINE_DTYPE_TRAITS

template <typename T>
constexpr DType dtype_of = CppTypeToDType<T>::value;

// The type arithmetic is done in: float for the 16-bit floats, the type itself otherwise.
template <typename T>
struct OpMathType {
  using type = T;
};
template <>
struct OpMathType<Half> {
  using type = float;
};
template <>
struct OpMathType<BFloat16> {
  using type = float;
};
template <typename T>
using opmath_t = typename OpMathType<T>::type;

}  // namespace leangrad
