// Half (IEEE binary16) and BFloat16 storage types with conversions to and from float.
// Conversions round to nearest, ties to even, and handle NaN/Inf/subnormals; they are
// LG_HOST_DEVICE so CPU references and CUDA kernels convert bit-identically (the CPU tests
// exercise exactly what the kernels run). In device code float -> 16-bit uses the hardware
// conversion (__float2half_rn, __float2bfloat16_rn: one instruction, the same round to nearest
// even), with NaN mapped to the software path's NaN so even NaN bits agree across devices.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

#include <leangrad/core/macros.h>

namespace leangrad {

namespace detail {

LG_HOST_DEVICE LG_INLINE std::uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
#endif
}

LG_HOST_DEVICE LG_INLINE float bits_float(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
#endif
}

// float -> binary16 bits, round to nearest even.
LG_HOST_DEVICE LG_INLINE std::uint16_t float_to_half_bits(float f) {
#if defined(__CUDA_ARCH__)
  if (!(f != f)) return __half_as_ushort(__float2half_rn(f));
  return static_cast<std::uint16_t>(((float_bits(f) >> 16) & 0x8000u) | 0x7e00u);  // NaN
#else
  const std::uint32_t x = float_bits(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // Inf or NaN (keep NaN quiet and non-zero)
    return static_cast<std::uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x0200u : 0u));
  }
  if (abs >= 0x477ff000u) {  // rounds to >= 65520: overflow to Inf
    return static_cast<std::uint16_t>(sign | 0x7c00u);
  }
  if (abs < 0x38800000u) {  // below the smallest normal half (2^-14): subnormal or zero
    if (abs < 0x33000000u) return static_cast<std::uint16_t>(sign);  // < 2^-25 rounds to 0
    const std::uint32_t exponent = abs >> 23;                        // 102..112
    const std::uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;    // implicit 1
    const std::uint32_t shift = 126u - exponent;                     // 14..24
    std::uint32_t half = mantissa >> shift;
    const std::uint32_t remainder = mantissa & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1u);
    if (remainder > halfway || (remainder == halfway && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  // Normal: rebias exponent (127 -> 15) and round the 13 dropped mantissa bits.
  std::uint32_t half = ((abs - 0x38000000u) >> 13);
  const std::uint32_t remainder = abs & 0x1fffu;
  if (remainder > 0x1000u || (remainder == 0x1000u && (half & 1u))) ++half;
  return static_cast<std::uint16_t>(sign | half);
#endif
}

LG_HOST_DEVICE LG_INLINE float half_bits_to_float(std::uint16_t h) {
#if defined(__CUDA_ARCH__)
  return __half2float(__ushort_as_half(h));  // exact, NaN payloads kept, as below
#else
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1fu) return bits_float(sign | 0x7f800000u | (mantissa << 13));  // Inf/NaN
  if (exponent == 0) {
    if (mantissa == 0) return bits_float(sign);  // signed zero
    // Subnormal: value = mantissa * 2^-24, exact in float.
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign ? -magnitude : magnitude;
  }
  return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
#endif
}

// float -> bfloat16 bits: keep the top 16 bits, round to nearest even.
LG_HOST_DEVICE LG_INLINE std::uint16_t float_to_bfloat16_bits(float f) {
  const std::uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) {  // NaN: keep it a quiet NaN
    return static_cast<std::uint16_t>((x >> 16) | 0x0040u);
  }
#if defined(__CUDA_ARCH__)
  return __bfloat16_as_ushort(__float2bfloat16_rn(f));
#else
  const std::uint32_t rounding_bias = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>((x + rounding_bias) >> 16);
#endif
}

LG_HOST_DEVICE LG_INLINE float bfloat16_bits_to_float(std::uint16_t b) {
  return bits_float(static_cast<std::uint32_t>(b) << 16);
}

}  // namespace detail

struct Half {
  std::uint16_t bits = 0;
  Half() = default;
  LG_HOST_DEVICE Half(float f) : bits(detail::float_to_half_bits(f)) {}               // NOLINT
  LG_HOST_DEVICE operator float() const { return detail::half_bits_to_float(bits); }  // NOLINT
  LG_HOST_DEVICE static Half from_bits(std::uint16_t b) {
    Half h;
    h.bits = b;
    return h;
  }
};

struct BFloat16 {
  std::uint16_t bits = 0;
  BFloat16() = default;
  LG_HOST_DEVICE BFloat16(float f) : bits(detail::float_to_bfloat16_bits(f)) {}           // NOLINT
  LG_HOST_DEVICE operator float() const { return detail::bfloat16_bits_to_float(bits); }  // NOLINT
  LG_HOST_DEVICE static BFloat16 from_bits(std::uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2);

}  // namespace leangrad
