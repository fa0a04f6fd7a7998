// Macros shared by every layer: portability between host C++ and CUDA sources, and options
// builders.
//
// LG_HOST_DEVICE marks math that must give identical results on the CPU and in CUDA kernels, so
// the CPU tests exercise what the GPU runs: the Philox generator, half-precision conversions,
// reduction merges.
#pragma once

#if defined(__CUDACC__)
#define LG_HOST_DEVICE __host__ __device__
#define LG_INLINE __forceinline__
#else
#define LG_HOST_DEVICE
#define LG_INLINE inline
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
