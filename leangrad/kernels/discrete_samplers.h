// The samplers of torch.poisson and torch.binomial on the host: each element draws from its own
// Philox stream (key the generator's seed, 128-bit counter (first + i, draw)), so element i's
// value depends on the seed, the counter reserved and i only, never on the thread that ran it.
// The algorithms are PyTorch's: Poisson by multiplying uniforms below a rate of 10 and by
// Hormann's transformed rejection (PTRS) from 10 up; binomial by inversion (summing geometric
// waiting times) while count * min(p, 1 - p) < 10 and by Hormann's BTRS from there (Note
// [Discrete samplers] in the .cpp). autograd/sampling_functions.cpp checks the arguments and
// reserves the counters; a CUDA tensor's values take a round trip to the host.
#pragma once

#include <cstdint>

namespace leangrad::kernels {

// out[i] = a Poisson(rate[i]) draw, rate[i] >= 0 and finite (the caller checks).
template <typename T>
void poisson(const T* rate, T* out, std::int64_t n, std::uint64_t seed, std::uint64_t first);

// out[i] = a Binomial(count[i], prob[i]) draw: count[i] a non-negative integer, prob[i] in
// [0, 1] (the caller checks).
template <typename T>
void binomial(const T* count, const T* prob, T* out, std::int64_t n, std::uint64_t seed,
              std::uint64_t first);

}  // namespace leangrad::kernels
