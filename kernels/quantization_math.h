// Block-wise dynamic quantisation of optimizer states (Dettmers et al., "8-bit Optimizers via
// Block-wise Quantization", 2022; the bitsandbytes library): the maps from 8-bit codes to values
// in [-1, 1] and the nearest-code search. Kernel math beside kernels/optim_math.h: LG_HOST_DEVICE,
// so the CPU loops and the CUDA kernel of Adam8bit (kernels/cpu/optim.cpp, kernels/cuda/optim.cu)
// call these same functions; optim/adam8bit.cpp only needs the block size.
//
// Note [Dynamic quantisation map]
//   A state tensor is cut into blocks of kQuantBlockSize elements; each block stores its absmax
//   (one float) and one code per element for x / absmax, a value in [-1, 1]. The code indexes a
//   sorted table of 256 values laid out as a dynamic (exponent + linear fraction) number:
//   decade e = 0..6 covers [10^(e-6) * 0.1, 10^(e-6)] with k_e values placed at the midpoints of
//   k_e equal steps of [0.1, 1] (scaled by 10^(e-6)), so small magnitudes keep their relative
//   precision. The signed map (first moment) has k_e = 2^e for each sign: 127 positive,
//   127 negative, 0 and 1; the unsigned map (second moment, >= 0) spends the sign bit on
//   fraction, k_e = 2^(e+1): 254 positive values, 0 and 1. Codes are in ascending order:
//     signed:   code 0 = -0.99296875 ... 126 = -5.5e-7, 127 = 0, 128 = 5.5e-7 ... 254, 255 = 1
//     unsigned: code 0 = 0, 1 = 3.25e-7 ... 254 = 0.99648..., 255 = 1
//   This is bitsandbytes' create_dynamic_map(signed, max_exponent_bits=7, total_bits=8).
//   Each value is computed in double and rounded to float once (identical on host and device).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "core/macros.h"

namespace leangrad::kernels {

inline constexpr int kQuantBlockSize = 256;  // elements per absmax
inline constexpr int kQuantCodes = 256;      // 8-bit codes
inline constexpr int kQuantDecades = 7;      // 10^-6 .. 10^0

// Value of `code` in the signed or unsigned dynamic map (Note [Dynamic quantisation map]).
LG_HOST_DEVICE LG_INLINE float dynamic_map_value(int code, bool is_signed) {
  if (code == kQuantCodes - 1) return 1.0f;
  int rank;  // position among the positive values, ascending
  double sign = 1.0;
  if (is_signed) {
    if (code == 127) return 0.0f;
    if (code < 127) {
      rank = 126 - code;  // code 126 is the smallest magnitude
      sign = -1.0;
    } else {
      rank = code - 128;
    }
  } else {
    if (code == 0) return 0.0f;
    rank = code - 1;
  }
  // Find the decade: decade e holds k_e = 2^e (signed) or 2^(e+1) (unsigned) values.
  int decade = 0;
  int count = is_signed ? 1 : 2;
  while (rank >= count) {
    rank -= count;
    count *= 2;
    ++decade;
  }
  double scale = 1.0;  // 10^(decade - 6), by exact integer powers then one division
  for (int i = decade; i < kQuantDecades - 1; ++i)
    scale *= 10.0;
  const double mean = 0.1 + (rank + 0.5) * (0.9 / count);
  return static_cast<float>(sign * mean / scale);
}

// The nearest code to x in a sorted 256-entry map (ties go to the lower code); x outside the
// map's range gets the first or last code. Eight branch-free steps of binary search: the
// specification of quantize_state, which gets the same answer faster.
LG_HOST_DEVICE LG_INLINE std::uint8_t quantize_nearest(const float* map, float x) {
  int lo = 0;  // the largest index with map[lo] <= x (0 when x < map[0])
  for (int step = kQuantCodes / 2; step > 0; step /= 2)
    lo += map[lo + step] <= x ? step : 0;
  if (lo < kQuantCodes - 1 && map[lo + 1] - x < x - map[lo]) ++lo;
  return static_cast<std::uint8_t>(lo);
}

// Note [Code search from a guess]
//   A binary search costs 8 dependent, data-dependent loads per value (branch mispredictions on
//   the CPU, shared-memory bank conflicts on the GPU, where each lane looks up a different
//   value). The map's layout gives the answer almost directly: the decade from log10|x|, the
//   step within the decade from a linear formula. That guess is then moved to the exact
//   answer by comparing against the map itself (usually zero or one move), so the result is
//   identical to quantize_nearest for any guess (the guess takes log10 from the float's bits).
LG_HOST_DEVICE LG_INLINE int guess_code(float x, bool is_signed) {
  const float a = x < 0.0f ? -x : x;
  if (!(a > 1e-7f)) return is_signed ? 127 : 0;  // zero (and NaN)
    // log2(a) from the float's bits (exponent + mantissa, linear between powers of two: off by
    // < 0.09), times log10(2); the decade is then corrected from t below.
#if defined(__CUDA_ARCH__)
  const std::uint32_t bits = __float_as_uint(a);
#else
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(a);
#endif
  const float log2_a = static_cast<float>(static_cast<int>(bits >> 23) - 127) +
                       static_cast<float>(bits & 0x7fffffu) * (1.0f / 8388608.0f);
  int decade = static_cast<int>(std::floor(log2_a * 0.30103f)) + kQuantDecades;
  decade = decade < 0 ? 0 : (decade > kQuantDecades - 1 ? kQuantDecades - 1 : decade);
  float t = a;  // a / 10^(decade - 6), in [0.1, 1) once the decade is right
  for (int i = decade; i < kQuantDecades - 1; ++i)
    t *= 10.0f;
  if (t >= 1.0f && decade < kQuantDecades - 1) {
    ++decade;
    t *= 0.1f;
  } else if (t < 0.1f && decade > 0) {
    --decade;
    t *= 10.0f;
  }
  const int count = is_signed ? (1 << decade) : (2 << decade);
  int j = static_cast<int>((t - 0.1f) * static_cast<float>(count) * (1.0f / 0.9f));
  j = j < 0 ? 0 : (j > count - 1 ? count - 1 : j);
  const int rank = (is_signed ? count - 1 : count - 2) + j;  // values in lower decades: count - 1
  if (!is_signed) return 1 + rank;
  return x > 0.0f ? 128 + rank : 126 - rank;
}

// quantize_nearest(map, x), starting from a guess (Note [Code search from a guess]).
LG_HOST_DEVICE LG_INLINE std::uint8_t quantize_nearest_from(const float* map, float x, int guess) {
  constexpr int kLast = kQuantCodes - 1;
  // Two branch-free moves up from guess - 1 settle a guess that is off by one either way (the
  // common case: unpredictable branches cost more than the search on a CPU).
  int lo = guess > 0 ? guess - 1 : 0;
  for (int k = 0; k < 2; ++k)
    lo += static_cast<int>((lo < kLast) & (map[lo < kLast ? lo + 1 : kLast] <= x));
  // Any other guess: walk (rarely taken, so well predicted).
  while (lo < kLast && map[lo + 1] <= x)
    ++lo;
  while (lo > 0 && map[lo] > x)
    --lo;
  const int up = lo < kLast ? lo + 1 : kLast;
  lo += static_cast<int>((lo < kLast) & (map[up] - x < x - map[lo]));
  return static_cast<std::uint8_t>(lo);
}

// The code of `value` in a block whose absmax is `absmax` (0 when the block is all zeros), in
// the signed or unsigned map `map`.
LG_HOST_DEVICE LG_INLINE std::uint8_t quantize_state(const float* map, float value, float absmax,
                                                     bool is_signed) {
  const float normalized = absmax > 0.0f ? value * (1.0f / absmax) : 0.0f;
  return quantize_nearest_from(map, normalized, guess_code(normalized, is_signed));
}

LG_HOST_DEVICE LG_INLINE float dequantize_state(const float* map, std::uint8_t code, float absmax) {
  return map[code] * absmax;
}

}  // namespace leangrad::kernels
