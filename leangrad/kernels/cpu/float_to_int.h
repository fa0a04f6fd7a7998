// float -> int32 (and the narrower integers) as cast_value converts it, written for SIMD lanes:
// the CPU cast's loop (kernels/cpu/elementwise.cpp). Note [float to int32 in lanes].
#pragma once

#include <cmath>
#include <cstdint>

namespace leangrad::kernels::cpu {

// Note [float to int32 in lanes]
//   cast_value (Note [Defined integer semantics] in kernels/elementwise_math.h) takes a float to
//   int64 (NaN -> 0, beyond int64 saturated, else truncated) and an int64 to int32 by its low 32
//   bits. As written, a double conversion and two branches per element, the loop stayed scalar:
//   .to(kInt32) of a (2048, 2048) float32 took 2.3 ms on one thread, LibTorch 1.13's 0.6. The same
//   value in float arithmetic that runs in lanes: below 2^31 in magnitude it is the truncation
//   itself; from 2^31 up x is an integer, and r = x - trunc(x 2^-32) 2^32 is its value modulo
//   2^32, exactly (every term is a multiple of x's ulp, at least 2^8, and |r| < 2^32 needs at most
//   24 bits), moved into [-2^31, 2^31) by one more 2^32, exactly; so the one truncation is of a
//   value in int32's range. From 2^63 up (and the infinities) int64's extreme, whose low 32 bits
//   are all ones (INT64_MAX) or zeros (INT64_MIN); NaN 0. Each is computed for every element and
//   one selected. A narrower integer (uint8) is the low bits of the same int64, so of this
//   int32. tests/kernels/test_float_to_int.cpp checks every float against cast_value.
inline std::int32_t float_to_int32_wrapping(float x) {
  const float magnitude = std::fabs(x);
  const float q = std::trunc(x * 0x1p-32f);
  float r = x - q * 0x1p32f;  // x modulo 2^32, exact where it is used
  r = r >= 0x1p31f ? r - 0x1p32f : r;
  r = r < -0x1p31f ? r + 0x1p32f : r;
  // In int32's range for every x below 2^63 in magnitude; 0 for the others (NaN compares false).
  const float in_range = magnitude < 0x1p31f ? x : (magnitude < 0x1p63f ? r : 0.0f);
  const auto converted = static_cast<std::int32_t>(in_range);
  const bool negative_or_nan = !(x > 0.0f);
  const std::int32_t saturated = negative_or_nan ? 0 : -1;  // INT64_MIN's, NaN's; INT64_MAX's
  return magnitude < 0x1p63f ? converted : saturated;
}

// y[i] = Int(float_to_int32_wrapping(x[i])) for i in [0, n), Int int32 or uint8. A block of
// kFloatToIntBlock floats all below 2^31 in magnitude (NaN is not) is that truncation alone,
// one vector conversion per 8 lanes; a block with any other value takes the wrapping form
// (Note [float to int32 in lanes]: 1.05 ms for a (2048, 2048) float32 on one thread, where the
// plain conversion of in-range values takes 0.5, LibTorch 1.13's 0.6).
inline constexpr std::int64_t kFloatToIntBlock = 64;
template <typename Int>
void float_to_int_run(const float* x, Int* y, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + kFloatToIntBlock <= n; i += kFloatToIntBlock) {
    int in_range = 1;
    for (std::int64_t l = 0; l < kFloatToIntBlock; ++l)
      in_range &= std::fabs(x[i + l]) < 0x1p31f ? 1 : 0;
    if (in_range) {
      for (std::int64_t l = 0; l < kFloatToIntBlock; ++l)
        y[i + l] = static_cast<Int>(static_cast<std::int32_t>(x[i + l]));
    } else {
      for (std::int64_t l = 0; l < kFloatToIntBlock; ++l)
        y[i + l] = static_cast<Int>(float_to_int32_wrapping(x[i + l]));
    }
  }
  for (; i < n; ++i)
    y[i] = static_cast<Int>(float_to_int32_wrapping(x[i]));
}

}  // namespace leangrad::kernels::cpu
