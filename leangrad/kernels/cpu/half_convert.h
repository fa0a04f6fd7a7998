// float16 and bfloat16 arrays to float and back, in vector lanes: the conversions of core/half.h,
// bit for bit, for the CPU kernels that run their math in float over 16-bit tensors (the optimizer
// steps, Note [Vectorised optimizer steps] in kernels/cpu/optim_vectorized.cpp, and copy_ between
// float32 and a 16-bit dtype, kernels/cpu/elementwise.cpp, and the elementwise ops of float16,
// kernels/cpu/elementwise_loops.h).
//
// Note [Vectorised 16-bit conversions]
//   core/half.h converts one value at a time with integer code that is the specification on every
//   device. In a loop of its own, the bfloat16 conversions (a shift; an add and a shift, a select
//   for NaN) are code GCC vectorises as written. The float16 ones are not (a subnormal takes a
//   shift by a variable count and a rounding of its own), nor is GCC 12's _Float16, which it
//   converts one value at a time. They take F16C's vcvtph2ps and vcvtps2ph, 8 values each,
//   round to nearest even by the instruction's own rounding field whatever MXCSR says, when the
//   build targets F16C (LEANGRAD_CPU_ARCH x86-64-v3, the default, or above); otherwise
//   core/half.h's loops. Why intrinsics: STYLE.md wants them behind a library, and the library
//   that has these, Eigen's half packets, does not use them in Eigen 3.4.0 under GCC (its F16C
//   test reads EIGEN_COMP_CLANG, which is defined as 0 there), so it converts one value at a time
//   too. These two instructions are the whole of it, in half_convert.cpp.
//   F16C rounds like core/half.h for every value but NaN: the hardware keeps the payload's top
//   bits (float -> float16) and quiets a signalling NaN (float16 -> float), where core/half.h
//   gives a float16 NaN as sign | 0x7e00 and widens a NaN's bits exactly. So each group of 8
//   values is tested for a NaN in the same pass (a compare and a test) and converted with
//   core/half.h when it holds one. (Until 2026-12-01 a pass over the whole input looked for NaNs
//   first: a second read of it, which made a large cast 1.5 to 1.9 times slower.)
//   tests/kernels/test_half_convert.cpp compares the conversion of every float16 and bfloat16
//   value and of every float with core/half.h's, bitwise.
#pragma once

#include <cstdint>

#include <leangrad/core/half.h>

namespace leangrad::kernels::cpu {

// dst[i] = float(src[i]) for i in [0, n).
void widen(const Half* src, float* dst, std::int64_t n);
void widen(const BFloat16* src, float* dst, std::int64_t n);

// dst[i] = src[i] rounded to nearest even (core/half.h's Half(float), BFloat16(float)).
void narrow(const float* src, Half* dst, std::int64_t n);
void narrow(const float* src, BFloat16* dst, std::int64_t n);

// The same conversions over `rows` runs of `cols` values, run r of the 16-bit side starting at
// r * stride and of the float side at r * cols (a block of columns gathered into a dense
// buffer and back: softmax over a middle dim): one call where a call per run of a few dozen
// values would cost as much as the conversions.
void widen_strided(const Half* src, std::int64_t stride, float* dst, std::int64_t rows,
                   std::int64_t cols);
void widen_strided(const BFloat16* src, std::int64_t stride, float* dst, std::int64_t rows,
                   std::int64_t cols);
void narrow_strided(const float* src, Half* dst, std::int64_t stride, std::int64_t rows,
                    std::int64_t cols);
void narrow_strided(const float* src, BFloat16* dst, std::int64_t stride, std::int64_t rows,
                    std::int64_t cols);

// True when the float16 conversions above take F16C in this build.
bool half_convert_vectorized();

// widen and narrow of bfloat16 as inline loops, which GCC vectorises where they are inlined: the
// bodies of the two functions above, for a caller that converts a few dozen values at a time
// (softmax's 64-column steps), where a call each time would cost as much as the conversion.
inline void widen_inline(const BFloat16* src, float* dst, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i)
    dst[i] = detail::bfloat16_bits_to_float(src[i].bits);
}

inline void narrow_inline(const float* src, BFloat16* dst, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i)
    dst[i].bits = detail::float_to_bfloat16_bits(src[i]);
}

}  // namespace leangrad::kernels::cpu
