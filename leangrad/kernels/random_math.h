// The value of element i of a random tensor, shared by the CPU and CUDA kernels so both devices
// produce the same numbers. Element i uses Philox counter
// `offset + i / per_block` and one or two of that block's four words:
//   uniform float32/16:  4 elements per block, one word each (its top 24 bits; float16's 11 and
//                        bfloat16's 8, so that no value rounds up to 1: uniform_digits)
//   uniform float64:     2 elements per block, two words each (53 bits)
//   normal float32/16:   4 elements per block; words (0,1) and (2,3) are Box-Muller pairs
//   normal float64:      2 elements per block; words (0,1) and (2,3) give u1, u2 (53 bits each)
// Affine maps use fma() explicitly: the compiler may not contract differently on each device.
// The math functions are the global namespace's, named so: leangrad's own sqrt, log, ... of
// tensors would hide them from an unqualified call here.
// Box-Muller runs in double; log/sin/cos may differ by an ulp between implementations (the C
// library's here, CUDA's in its kernel, the CPU kernel's own polynomials in SIMD lanes: Note
// [Random fills in lanes] in kernels/cpu/random.cpp), which the final rounding to float32 hides
// except in rare ties (float64 normals agree to a few ulps). Uniforms agree bit for bit.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include <leangrad/core/half.h>
#include <leangrad/core/macros.h>
#include <leangrad/core/philox.h>

namespace leangrad::random_math {

template <typename T>
constexpr std::int64_t uniform_per_block = sizeof(T) == 8 ? 2 : 4;
template <typename T>
constexpr std::int64_t normal_per_block = sizeof(T) == 8 ? 2 : 4;

constexpr double kTwoPi = 6.283185307179586476925286766559;

// The significant bits of a uniform of T below float64 (which takes 53 from two words): as many
// as T holds, so that every value k * 2^-digits in [0, 1) is a T and none rounds up to 1 (with
// float32's 24 bits, 1 - 2^-24 would round to float16's and bfloat16's 1). PyTorch's
// uniform_real takes the same widths.
template <typename T>
constexpr int uniform_digits = std::is_same_v<T, Half>       ? 11
                               : std::is_same_v<T, BFloat16> ? 8
                                                             : 24;

// U[0, 1) of T from one Philox word (T below float64).
template <typename T>
LG_HOST_DEVICE LG_INLINE double uniform_of_word(std::uint32_t word) {
  return static_cast<double>(philox::uniform_float_of_digits<uniform_digits<T>>(word));
}

// The value of lane `lane` of a Philox block as U[low, high), in double (before the final
// conversion to T).
template <typename T>
LG_HOST_DEVICE LG_INLINE double uniform_lane(const philox::Block& block, int lane, double low,
                                             double range) {
  const double u = uniform_per_block<T> == 2
                       ? philox::uniform_double(block.x[2 * lane], block.x[2 * lane + 1])
                       : uniform_of_word<T>(block.x[lane]);
  return ::fma(u, range, low);
}

// N(mean, std) of lane `lane` of a Philox block, in double.
template <typename T>
LG_HOST_DEVICE LG_INLINE double normal_lane(const philox::Block& block, int lane, double mean,
                                            double stddev) {
  double u1, u2;
  bool use_sin;
  if (normal_per_block<T> == 2) {
    u1 = 1.0 - philox::uniform_double(block.x[0], block.x[1]);  // (0, 1]: log is finite
    u2 = philox::uniform_double(block.x[2], block.x[3]);
    use_sin = lane == 1;
  } else {
    const int pair = lane / 2;
    u1 = 1.0 - static_cast<double>(philox::uniform_float(block.x[2 * pair]));
    u2 = static_cast<double>(philox::uniform_float(block.x[2 * pair + 1]));
    use_sin = (lane % 2) == 1;
  }
  const double radius = ::sqrt(-2.0 * ::log(u1));
  const double angle = kTwoPi * u2;
  const double z = radius * (use_sin ? ::sin(angle) : ::cos(angle));
  return ::fma(z, stddev, mean);
}

// Element i of a U[low, low + range) tensor: the specification. Kernels compute whole blocks
// (one Philox call for uniform_per_block<T> elements) with uniform_lane, which gives the same bits.
template <typename T>
LG_HOST_DEVICE LG_INLINE double uniform_at(std::int64_t i, std::uint64_t seed, std::uint64_t offset,
                                           double low, double range) {
  constexpr std::int64_t per_block = uniform_per_block<T>;
  const philox::Block block =
      philox::philox4x32_10(offset + static_cast<std::uint64_t>(i / per_block), seed);
  return uniform_lane<T>(block, static_cast<int>(i % per_block), low, range);
}

// Element i of an N(mean, std) tensor (as uniform_at: the specification of normal_lane's blocks).
template <typename T>
LG_HOST_DEVICE LG_INLINE double normal_at(std::int64_t i, std::uint64_t seed, std::uint64_t offset,
                                          double mean, double stddev) {
  constexpr std::int64_t per_block = normal_per_block<T>;
  const philox::Block block =
      philox::philox4x32_10(offset + static_cast<std::uint64_t>(i / per_block), seed);
  return normal_lane<T>(block, static_cast<int>(i % per_block), mean, stddev);
}

}  // namespace leangrad::random_math
