// philox_permutation: a uniformly random permutation of 0 .. n - 1 from Philox4x32-10, the
// shuffle behind randperm (kernels/creation.h) and the DataLoader's random_permutation
// (data/sampler.h).
#pragma once

#include <cstdint>

namespace leangrad {

// Fisher-Yates from the back: step i (n - 1 down to 1) swaps elements i and j, j uniform in
// [0, i], from the Philox block of key `seed` and 128-bit counter (counter_low + i, counter_high)
// (the low 64 bits in the block's words 0 and 1). 64 random bits a step, j = floor(bits (i + 1) /
// 2^64) (Lemire's multiply-shift): its bias is below n / 2^64. Writes order[0, n), n >= 0.
void philox_permutation(std::int64_t* order, std::int64_t n, std::uint64_t seed,
                        std::uint64_t counter_low, std::uint64_t counter_high);

}  // namespace leangrad
