// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11): a
// counter-based generator. The numbers for counter c under key k are a pure function of (c, k),
// so element i of a random tensor can be computed independently on any device, and the CPU and
// CUDA kernels (which both call these functions) produce the same bits.
#pragma once

#include <cstdint>

#include <leangrad/core/macros.h>

namespace leangrad::philox {

struct Block {
  std::uint32_t x[4];
};

LG_HOST_DEVICE LG_INLINE void mulhilo(std::uint32_t a, std::uint32_t b, std::uint32_t& hi,
                                      std::uint32_t& lo) {
  const std::uint64_t product = static_cast<std::uint64_t>(a) * b;
  hi = static_cast<std::uint32_t>(product >> 32);
  lo = static_cast<std::uint32_t>(product);
}

// The round's multipliers, and the key schedule: round r's key is the seed's two words plus r
// times the Weyl constants.
inline constexpr std::uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
inline constexpr std::uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;

// One of Philox4x32's rounds on the words c0..c3 under the round's key (k0, k1).
LG_HOST_DEVICE LG_INLINE void philox_round(std::uint32_t& c0, std::uint32_t& c1, std::uint32_t& c2,
                                           std::uint32_t& c3, std::uint32_t k0, std::uint32_t k1) {
  std::uint32_t hi0, lo0, hi1, lo1;
  mulhilo(kMul0, c0, hi0, lo0);
  mulhilo(kMul1, c2, hi1, lo1);
  c0 = hi1 ^ c1 ^ k0;
  c1 = lo1;
  c2 = hi0 ^ c3 ^ k1;
  c3 = lo0;
}

// One Philox4x32-10 evaluation: four 32-bit words for a 128-bit counter and a 64-bit key.
LG_HOST_DEVICE LG_INLINE Block philox4x32_10(Block counter, std::uint32_t k0, std::uint32_t k1) {
  std::uint32_t c0 = counter.x[0], c1 = counter.x[1], c2 = counter.x[2], c3 = counter.x[3];
  for (int round = 0; round < 10; ++round) {
    philox_round(c0, c1, c2, c3, k0, k1);
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  return Block{{c0, c1, c2, c3}};
}

// leangrad's use: a 64-bit counter (upper counter words zero) and the 64-bit seed as the key.
LG_HOST_DEVICE LG_INLINE Block philox4x32_10(std::uint64_t counter, std::uint64_t seed) {
  const Block c{
      {static_cast<std::uint32_t>(counter), static_cast<std::uint32_t>(counter >> 32), 0u, 0u}};
  return philox4x32_10(c, static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
}

// A float in [0, 1) from the top `Digits` bits of a word (exact: every value is k * 2^-Digits,
// which any floating type of at least Digits significant bits holds, so none rounds up to 1).
template <int Digits>
LG_HOST_DEVICE LG_INLINE float uniform_float_of_digits(std::uint32_t word) {
  static_assert(Digits >= 1 && Digits <= 24, "a float holds 24 significant bits");
  return static_cast<float>(word >> (32 - Digits)) * (1.0f / static_cast<float>(1u << Digits));
}

// A float in [0, 1) from the top 24 bits of a word (exact: every value is k * 2^-24).
LG_HOST_DEVICE LG_INLINE float uniform_float(std::uint32_t word) {
  return uniform_float_of_digits<24>(word);
}

// A double in [0, 1) from 53 bits of two words (exact: k * 2^-53).
LG_HOST_DEVICE LG_INLINE double uniform_double(std::uint32_t hi, std::uint32_t lo) {
  const std::uint64_t bits = (static_cast<std::uint64_t>(hi) << 21) ^ (lo >> 11);
  return static_cast<double>(bits & ((std::uint64_t{1} << 53) - 1)) * (1.0 / 9007199254740992.0);
}

}  // namespace leangrad::philox
