// Portability macros shared by host C++ and CUDA sources.
// LG_HOST_DEVICE marks math that must give identical results on the CPU and in CUDA kernels
// (STYLE.md habit 2): the Philox generator, half-precision conversions, reduction merges.
#pragma once

#if defined(__CUDACC__)
#define LG_HOST_DEVICE __host__ __device__
#define LG_INLINE __forceinline__
#else
#define LG_HOST_DEVICE
#define LG_INLINE inline
#endif
