// Block-wise dynamic quantisation of optimizer states (Dettmers et al., "8-bit Optimizers via
// Block-wise Quantization", 2022; the bitsandbytes library): the maps from 8-bit codes to values
// in [-1, 1] and the nearest-code search. Kernel math beside kernels/optim_math.h: LG_HOST_DEVICE,
// so the CPU loops and the CUDA kernel of Adam8bit (kernels/cpu/optim.cpp, kernels/cuda/optim.cu)
// call these same functions (the vectorised CPU kernel finds codes in a table tested to give
// quantize_state's, kernels/cpu/quant_code_table.h); optim/adam8bit.cpp only needs the block size.
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

#include <leangrad/core/macros.h>

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
// specification of quantize_state, which gets the same answer faster (Note [Code search from a
// guess]).
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
//   step within the decade from a linear formula (guess_code, from the float's bits). The guess
//   is then settled against a table of thresholds: thresholds[c] (c < 255) is the midpoint of
//   map[c] and map[c + 1], so code c + 1 is the nearer exactly when x > thresholds[c] (a tie
//   goes to the lower code, as in quantize_nearest). The midpoint is computed exactly in double
//   and rounded down to a float, which keeps "x > midpoint" exact for every float x. One step up
//   and one step down settle any guess that is off by at most one, and the guess never is more:
//   QuantizationMap.ThresholdSearchEqualsBinarySearch checks all 3.2 billion floats of the two
//   maps' domains ([-1, 1] signed, [0, 1] unsigned) against quantize_nearest.
LG_HOST_DEVICE LG_INLINE int guess_code(float x, bool is_signed) {
  if (!is_signed && !(x > 0.0f)) return 0;  // the unsigned map's domain starts at 0
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
  // Clamped before the conversion: x = +-Inf (a block whose absmax is so small that its
  // reciprocal overflows) gives t = Inf, whose conversion to int would be undefined.
  const float last = static_cast<float>(count - 1);
  float position = (t - 0.1f) * static_cast<float>(count) * (1.0f / 0.9f);
  position = position < 0.0f ? 0.0f : (position > last ? last : position);
  const int j = static_cast<int>(position);
  const int rank = (is_signed ? count - 1 : count - 2) + j;  // values in lower decades: count - 1
  if (!is_signed) return 1 + rank;
  return x > 0.0f ? 128 + rank : 126 - rank;
}

// The midpoint of two neighbouring map values, exactly, rounded down to a float (Note [Code
// search from a guess]): for every float x, x > threshold iff x is above the exact midpoint.
LG_HOST_DEVICE LG_INLINE float midpoint_threshold(float lo, float hi) {
  const double mid = (static_cast<double>(lo) + static_cast<double>(hi)) * 0.5;  // exact
#if defined(__CUDA_ARCH__)
  return __double2float_rd(mid);
#else
  const auto f = static_cast<float>(mid);
  return static_cast<double>(f) > mid ? std::nextafter(f, -HUGE_VALF) : f;
#endif
}

// quantize_nearest's code for x from a guess that is off by at most one: one step up, one down.
LG_HOST_DEVICE LG_INLINE std::uint8_t quantize_from_guess(const float* thresholds, float x,
                                                          int guess) {
  constexpr int kLast = kQuantCodes - 1;
  int c = guess;
  c += static_cast<int>((c < kLast) && (x > thresholds[c < kLast ? c : 0]));
  c -= static_cast<int>((c > 0) && !(x > thresholds[c > 0 ? c - 1 : 0]));
  return static_cast<std::uint8_t>(c);
}

// The code of `value` in a block whose absmax has the reciprocal `inv_absmax` (0 when the block
// is all zeros, which gives the code of 0), in the signed or unsigned map whose thresholds are
// `thresholds`. Kernels compute inv_absmax once per block.
LG_HOST_DEVICE LG_INLINE std::uint8_t quantize_state(const float* thresholds, float value,
                                                     float inv_absmax, bool is_signed) {
  const float normalized = value * inv_absmax;
  return quantize_from_guess(thresholds, normalized, guess_code(normalized, is_signed));
}

// 1 / absmax, or 0 for an all-zero block.
LG_HOST_DEVICE LG_INLINE float inverse_absmax(float absmax) {
  return absmax > 0.0f ? 1.0f / absmax : 0.0f;
}

LG_HOST_DEVICE LG_INLINE float dequantize_state(const float* map, std::uint8_t code, float absmax) {
  return map[code] * absmax;
}

}  // namespace leangrad::kernels
