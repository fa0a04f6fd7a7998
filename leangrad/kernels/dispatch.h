// dtype dispatch: turn a runtime DType into a compile-time C++ type for a templated lambda.
//   dispatch_floating(x.dtype(), "exp", [&]<typename T>() { exp_loop<T>(...); });
// Each helper accepts a subset of dtypes and throws DTypeError naming the op otherwise.
#pragma once

#include <cstdint>

#include <leangrad/core/dtype.h>
#include <leangrad/core/error.h>

namespace leangrad {

#define LG_DISPATCH_CASE(cpp_type, name) \
  case DType::name:                      \
    return f.template operator()<cpp_type>();

// float32, float64, float16, bfloat16.
template <typename F>
decltype(auto) dispatch_floating(DType dtype, const char* op, F&& f) {
  switch (dtype) {
    LG_DISPATCH_CASE(float, Float32)
    LG_DISPATCH_CASE(double, Float64)
    LG_DISPATCH_CASE(Half, Float16)
    LG_DISPATCH_CASE(BFloat16, BFloat16)
    default:
      LG_THROW(DTypeError, op, ": expected a floating dtype (float32, float64, float16, bfloat16)",
               ", got ", dtype);
  }
}

// Every dtype but bool.
template <typename F>
decltype(auto) dispatch_numeric(DType dtype, const char* op, F&& f) {
  switch (dtype) {
    LG_DISPATCH_CASE(float, Float32)
    LG_DISPATCH_CASE(double, Float64)
    LG_DISPATCH_CASE(Half, Float16)
    LG_DISPATCH_CASE(BFloat16, BFloat16)
    LG_DISPATCH_CASE(std::int64_t, Int64)
    LG_DISPATCH_CASE(std::int32_t, Int32)
    LG_DISPATCH_CASE(std::uint8_t, UInt8)
    default:
      LG_THROW(DTypeError, op, ": expected a numeric dtype, got ", dtype);
  }
}

// int64, int32, uint8: the bitwise ops' dtypes (bool is computed as uint8).
template <typename F>
decltype(auto) dispatch_integral(DType dtype, const char* op, F&& f) {
  switch (dtype) {
    LG_DISPATCH_CASE(std::int64_t, Int64)
    LG_DISPATCH_CASE(std::int32_t, Int32)
    LG_DISPATCH_CASE(std::uint8_t, UInt8)
    default:
      LG_THROW(DTypeError, op, ": expected an integral dtype (int64, int32, uint8), got ", dtype);
  }
}

// The floating dtypes, int64 and int32: those a kernel adds into with CUDA atomics (scatter_add).
template <typename F>
decltype(auto) dispatch_addable(DType dtype, const char* op, F&& f) {
  switch (dtype) {
    LG_DISPATCH_CASE(float, Float32)
    LG_DISPATCH_CASE(double, Float64)
    LG_DISPATCH_CASE(Half, Float16)
    LG_DISPATCH_CASE(BFloat16, BFloat16)
    LG_DISPATCH_CASE(std::int64_t, Int64)
    LG_DISPATCH_CASE(std::int32_t, Int32)
    default:
      LG_THROW(DTypeError, op, ": expected a floating, int64 or int32 dtype, got ", dtype);
  }
}

// float32, float64, int32, int64: the key types of the sort launchers (ops::argsort makes the
// keys of every dtype one of these).
template <typename F>
decltype(auto) dispatch_sort_key(DType dtype, const char* op, F&& f) {
  switch (dtype) {
    LG_DISPATCH_CASE(float, Float32)
    LG_DISPATCH_CASE(double, Float64)
    LG_DISPATCH_CASE(std::int32_t, Int32)
    LG_DISPATCH_CASE(std::int64_t, Int64)
    default:
      LG_THROW(DTypeError, op, ": keys of ", dtype,
               " (expected float32, float64, int32 or int64 keys)");
  }
}

// Every dtype.
template <typename F>
decltype(auto) dispatch_all(DType dtype, const char* op, F&& f) {
  switch (dtype) {
    LG_DISPATCH_CASE(float, Float32)
    LG_DISPATCH_CASE(double, Float64)
    LG_DISPATCH_CASE(Half, Float16)
    LG_DISPATCH_CASE(BFloat16, BFloat16)
    LG_DISPATCH_CASE(std::int64_t, Int64)
    LG_DISPATCH_CASE(std::int32_t, Int32)
    LG_DISPATCH_CASE(std::uint8_t, UInt8)
    LG_DISPATCH_CASE(bool, Bool)
  }
  LG_THROW(DTypeError, op, ": unknown dtype ", static_cast<int>(dtype));
}

#undef LG_DISPATCH_CASE

}  // namespace leangrad
