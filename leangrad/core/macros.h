// Macros shared by every layer: portability between host C++ and CUDA sources, sanitizer
// detection, and options builders.
//
// LG_HOST_DEVICE marks math that must give identical results on the CPU and in CUDA kernels, so
// the CPU tests exercise what the GPU runs: the Philox generator, half-precision conversions,
// reduction merges.
#pragma once

#include <type_traits>

// LG_ADDRESS_SANITIZER is 1 in an AddressSanitizer build (GCC defines __SANITIZE_ADDRESS__, Clang
// answers __has_feature), 0 otherwise: the caching allocator then tells ASan which bytes of its
// pool callers may touch (Note [AddressSanitizer and the pool] in core/caching_allocator.cpp).
#if defined(__SANITIZE_ADDRESS__)
#define LG_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LG_ADDRESS_SANITIZER 1
#endif
#endif
#ifndef LG_ADDRESS_SANITIZER
#define LG_ADDRESS_SANITIZER 0
#endif

#if defined(__CUDACC__)
#define LG_HOST_DEVICE __host__ __device__
#define LG_INLINE __forceinline__
#define LG_ALWAYS_INLINE __forceinline__
#define LG_LAMBDA_ALWAYS_INLINE
#else
#define LG_HOST_DEVICE
#define LG_INLINE inline
// Inlined whatever the compiler's size limits say: for the per-element math a CPU loop must see
// whole to run in SIMD lanes (GCC stops inlining plain `inline` functions in a translation unit
// as large as the elementwise kernels', and a call per element keeps the loop scalar).
#define LG_ALWAYS_INLINE inline __attribute__((always_inline))
// The same for a lambda, after its parameters: [](float x) LG_LAMBDA_ALWAYS_INLINE { ... }.
#define LG_LAMBDA_ALWAYS_INLINE __attribute__((always_inline))
#endif

// One option of an options builder, in LibTorch's style: `LG_ARG(double, eps) = 1e-5;` declares
// the value eps_ with its default, the setter eps(value), which returns the options object for
// chaining (`GroupNormOptions(32, 64).eps(1e-6).affine(false)`), and the getter eps(). It leaves
// the class in `private:`, so options classes list their LG_ARGs last.
#define LG_ARG(Type, name)                        \
 public:                                          \
  auto name(const Type& value)->decltype(*this) { \
    name##_ = value;                              \
    return *this;                                 \
  }                                               \
  const Type& name() const {                      \
    return name##_;                               \
  }                                               \
                                                  \
 private:                                         \
  Type name##_

namespace leangrad::detail {

// An options builder's size from one number, as LibTorch's ExpandingArray takes one: the number
// itself for a 1-d size (std::int64_t, double), or every element of a std::array set to it
// (Size2, Size3, std::array<double, N>). every_dim<Size3>(2) is {2, 2, 2}.
template <typename Size, typename T>
constexpr Size every_dim(T value) {
  if constexpr (std::is_arithmetic_v<Size>) {
    return static_cast<Size>(value);
  } else {
    Size s{};
    for (auto& v : s)
      v = static_cast<typename Size::value_type>(value);
    return s;
  }
}

}  // namespace leangrad::detail
