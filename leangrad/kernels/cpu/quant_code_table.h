// The nearest-code search of a dynamic quantisation map (kernels/quantization_math.h) as one
// table lookup and one comparison, for SIMD lanes: the code search of the vectorised Adam8bit
// kernel (kernels/cpu/optim_vectorized.cpp). It gives quantize_state's code for every float;
// tests/kernels/test_optim_vectorized.cpp checks all 2^32 of them, for both maps.
//
// Note [Code table]
//   quantize_state's code is T(x) = #{c : x > thresholds[c]} (Note [Code search from a guess]),
//   except for NaN. Cut the floats into buckets by their top 16 bits: sign, exponent and the first
//   7 bits of the mantissa (magnitudes below 2^-24 fall into the first bucket of their sign, those
//   from 4 up, Inf included, into the last). A bucket is an interval of floats [lo, hi]; if at
//   most one threshold lies in it, then for every x of the bucket
//     T(x) = T(lo) + (x > the bucket's threshold, if it has one)
//   The constructor checks the "at most one" for every bucket: a bucket of [2^k, 2^(k+1)) is
//   2^k / 128 wide, narrower than the gaps between thresholds there (the finest, the unsigned
//   map's 0.9 / 128 near 1, is 1.8 times the width of [0.5, 1)'s buckets). A threshold shares its
//   top 16 bits with its bucket, so one 32-bit entry per bucket holds everything: T(lo) and
//   whether there is a threshold, and the threshold's low 16 bits, to which x's own top 16 bits
//   are put back. One table read per value (a gather across SIMD lanes), where the guess and
//   its settling (quantize_state) read two thresholds and compute some 40 operations. The maps'
//   values are within [-1, 1], so every threshold lies in [2^-24, 1): the clamped buckets hold
//   none.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

#include <leangrad/kernels/quantization_math.h>

namespace leangrad::kernels::cpu {

class QuantCodeTable {
 public:
  static constexpr int kMantissaBits = 7;
  static constexpr int kFirstExponent = 103;  // biased exponent of 2^-24
  static constexpr int kExponents = 26;       // the binades of 2^-24 .. 2^1
  static constexpr int kBucketsPerSign = kExponents << kMantissaBits;
  static_assert(1 + 8 + kMantissaBits == 16, "a bucket is the top 16 bits of a float");

  // The table of the map whose 255 midpoint thresholds are `thresholds` (signed: the first
  // moment's map). NaN gets quantize_state's code for NaN (126 signed, 0 unsigned).
  QuantCodeTable(const float* thresholds, bool is_signed);

  // The bucket of x: positive buckets first, then negative ones.
  static int bucket(float x) {
    const auto bits = std::bit_cast<std::uint32_t>(x);
    const int exponent = static_cast<int>((bits >> 23) & 0xffu) - kFirstExponent;
    const int mantissa =
        static_cast<int>((bits >> (23 - kMantissaBits)) & ((1u << kMantissaBits) - 1));
    const int b = exponent < 0             ? 0
                  : exponent >= kExponents ? kBucketsPerSign - 1
                                           : (exponent << kMantissaBits) + mantissa;
    return b + ((bits >> 31) != 0 ? kBucketsPerSign : 0);
  }

  // The table as a plain pointer, for a loop to copy before it starts (so that the compiler sees
  // it does not change while the loop stores codes).
  struct View {
    const std::uint32_t* entries;  // T(lo) << 16 | has a threshold << 24 | its low 16 bits
    int nan_code;

    // quantize_state(thresholds, value, inv_absmax, is_signed).
    std::uint8_t code(float value, float inv_absmax) const {
      const float x = value * inv_absmax;
      const auto bits = std::bit_cast<std::uint32_t>(x);
      const std::uint32_t entry = entries[bucket(x)];
      const auto threshold = std::bit_cast<float>((bits & 0xffff0000u) | (entry & 0xffffu));
      const int above = static_cast<int>((entry >> 24) != 0) & static_cast<int>(x > threshold);
      const int c = static_cast<int>((entry >> 16) & 0xffu) + above;
      return static_cast<std::uint8_t>(x == x ? c : nan_code);
    }
  };
  View view() const { return {entries_.data(), nan_code_}; }

 private:
  std::vector<std::uint32_t> entries_;  // (2 kBucketsPerSign): positive buckets, then negative
  int nan_code_;
};

// The tables of the signed and unsigned maps, built once.
const QuantCodeTable& signed_code_table();
const QuantCodeTable& unsigned_code_table();

}  // namespace leangrad::kernels::cpu
