// Philox random fills on the CPU: kernels/random_math.h's elements, a batch of Philox blocks at a
// time in SIMD lanes.
//
// Note [Random fills in lanes]
//   random_math.h defines element i of a fill: Philox block i / per_block of the generator's
//   counters, and the lane i % per_block of it (4 floats or 2 doubles a block). Calling its
//   uniform_at / normal_at per element computed each block's ten rounds per_block times over, one
//   element at a time: 3 times LibTorch's time for uniform_ of float32, 11 for normal_
//   (bench/results/2026-12-02-cpu-random-fills-xeon-2core.md). Here a task takes kBatch blocks at
//   once: the rounds run on kBatch counters side by side (8 to an AVX2 vector), each block gives
//   all its elements, written in order into a buffer that is copied to the output (the last batch
//   only in part). Each element's arithmetic is uniform_lane's / normal_lane's, operation for
//   operation (the fused multiply-adds written out; the file is compiled with -ffp-contract=off),
//   whatever the batch an element falls in and whatever the thread count:
//   - uniform: word to float (k 2^-24) or two words to double (k 2^-53), then low + u range in
//     double, rounded to the dtype: the definition's bits at every element.
//   - normal: the Box-Muller pairs of a block, (words 0, 1) and (2, 3) for float (one element
//     each for float64, from 53-bit uniforms), give radius sqrt(-2 log u1) and angle 2 pi u2 once
//     for both of their elements: radius cos(angle) and radius sin(angle). log, sin and cos are
//     kernels/cpu/double_polynomials.h's, in lanes, where the definition names the C library's
//     (a call per element; the CUDA kernel takes CUDA's): each within an ulp of double, so that a
//     float32 element differs from the definition's only where its double lies within a few ulps
//     of a float rounding boundary (about 1 in 10^8), and a float64 one by a few ulps
//     (tests/core/test_random.cpp, Random.FillsAreTheirDefinitionAtEveryElement, derives the
//     bound). With the C library's calls, normal_ of float32 took 416 ms a 16M fill at one
//     thread; with the polynomials, 82, and 71 with their AVX-512 copy (LibTorch 1.13: 82 to
//     108).
#include <leangrad/kernels/backend.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include <leangrad/core/philox.h>
#include <leangrad/kernels/cpu/avx512.h>
#include <leangrad/kernels/cpu/double_polynomials.h>
#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/random_math.h>

namespace leangrad::kernels::cpu {

namespace {

// Philox blocks a batch takes; the lanes of its rounds.
constexpr std::int64_t kBatch = 16;

// The four words of kBatch consecutive Philox blocks: words[j][b] is word j of counter first + b.
struct BatchWords {
  std::uint32_t words[4][kBatch];
};

// philox::philox4x32_10(first + b, seed) for b < kBatch, the rounds of all kBatch blocks in
// lanes. Compilers do not vectorise philox_round's 32 x 32 -> 64-bit products in a loop over the
// lanes (GCC 12 kept them scalar, or shuffled every product), so with AVX2 the rounds are written
// out for 8 blocks a vector: vpmuludq multiplies the even 32-bit lanes, and the odd ones shifted
// down, giving 8 products in two instructions and two blends.
#if defined(__AVX2__)
// The high and low halves of the 32 x 32 -> 64-bit products of each 32-bit lane of c by m.
[[gnu::always_inline]] inline void mulhilo_lanes(__m256i c, __m256i m, __m256i& hi, __m256i& lo) {
  const __m256i even = _mm256_mul_epu32(c, m);                        // lanes 0, 2, 4, 6
  const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(c, 32), m);  // lanes 1, 3, 5, 7
  constexpr int kOddLanes = 0b10101010;
  hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, kOddLanes);
  lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), kOddLanes);
}

void philox_batch(std::uint64_t first, std::uint64_t seed, BatchWords& out) {
  constexpr std::int64_t kLanes = 8;
  static_assert(kBatch % kLanes == 0);
  alignas(32) std::uint32_t low[kBatch], high[kBatch];
  for (std::int64_t b = 0; b < kBatch; ++b) {
    const std::uint64_t counter = first + static_cast<std::uint64_t>(b);
    low[b] = static_cast<std::uint32_t>(counter);
    high[b] = static_cast<std::uint32_t>(counter >> 32);
  }
  const __m256i mul0 = _mm256_set1_epi32(static_cast<int>(philox::kMul0));
  const __m256i mul1 = _mm256_set1_epi32(static_cast<int>(philox::kMul1));
  for (std::int64_t b = 0; b < kBatch; b += kLanes) {
    __m256i c0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(low + b));
    __m256i c1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(high + b));
    __m256i c2 = _mm256_setzero_si256();
    __m256i c3 = _mm256_setzero_si256();
    auto k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
    for (int round = 0; round < 10; ++round) {  // philox::philox_round
      __m256i hi0, lo0, hi1, lo1;
      mulhilo_lanes(c0, mul0, hi0, lo0);
      mulhilo_lanes(c2, mul1, hi1, lo1);
      c0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1), _mm256_set1_epi32(static_cast<int>(k0)));
      c1 = lo1;
      c2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3), _mm256_set1_epi32(static_cast<int>(k1)));
      c3 = lo0;
      k0 += philox::kWeyl0;
      k1 += philox::kWeyl1;
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.words[0] + b), c0);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.words[1] + b), c1);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.words[2] + b), c2);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.words[3] + b), c3);
  }
}
#else
void philox_batch(std::uint64_t first, std::uint64_t seed, BatchWords& out) {
  for (std::int64_t b = 0; b < kBatch; ++b) {
    const philox::Block block = philox::philox4x32_10(first + static_cast<std::uint64_t>(b), seed);
    for (int j = 0; j < 4; ++j)
      out.words[j][b] = block.x[j];
  }
}
#endif

// philox::uniform_double(hi, lo), k 2^-53 with k < 2^53, converted as two parts below 2^31 each
// (exact), which SIMD lanes convert where a 64-bit integer would not (AVX2 has no such
// conversion).
[[gnu::always_inline]] inline double uniform_double_in_lanes(std::uint32_t hi, std::uint32_t lo) {
  const std::uint64_t bits =
      ((static_cast<std::uint64_t>(hi) << 21) ^ (lo >> 11)) & ((std::uint64_t{1} << 53) - 1);
  const auto high = static_cast<std::int32_t>(bits >> 27);
  const auto low = static_cast<std::int32_t>(bits & ((std::uint64_t{1} << 27) - 1));
  return std::fma(static_cast<double>(high), 0x1p27, static_cast<double>(low)) * 0x1p-53;
}

// Box-Muller over n pairs: first[i] = mean + stddev radius cos(angle) and second[i] the same with
// sin, radius = sqrt(-2 log u1[i]) and angle = 2 pi u2[i], u1 in [2^-53, 1] (a positive normal)
// and u2 in [0, 1). Written once; each copy below is vectorised for its own target (Note [AVX-512
// at run time] in kernels/cpu/avx512.h), and both give the same bits.
[[gnu::always_inline]] inline void box_muller_loop(std::int64_t n, const double* u1,
                                                   const double* u2, double mean, double stddev,
                                                   double* first, double* second) {
#pragma GCC ivdep
  for (std::int64_t i = 0; i < n; ++i) {
    const double radius = std::sqrt(-2.0 * log_of_positive_normal(u1[i]));
    const SinCos angle = sin_cos_moderate(random_math::kTwoPi * u2[i]);
    first[i] = std::fma(radius * angle.cos, stddev, mean);
    second[i] = std::fma(radius * angle.sin, stddev, mean);
  }
}

#if LEANGRAD_AVX512_CLONES
LG_AVX512_TARGET void box_muller_avx512(std::int64_t n, const double* u1, const double* u2,
                                        double mean, double stddev, double* first, double* second) {
  box_muller_loop(n, u1, u2, mean, stddev, first, second);
}
#endif

void box_muller(std::int64_t n, const double* u1, const double* u2, double mean, double stddev,
                double* first, double* second) {
#if LEANGRAD_AVX512_CLONES
  if (avx512_copies_enabled()) return box_muller_avx512(n, u1, u2, mean, stddev, first, second);
#endif
  box_muller_loop(n, u1, u2, mean, stddev, first, second);
}

// Fills y[0, numel) with `per_block` elements of each Philox block from counter `offset` on:
// fill_batch(words, values) writes the kBatch * per_block elements of a batch into values.
template <typename T, typename FillBatch>
void fill_by_batches(T* y, std::int64_t numel, std::int64_t per_block, std::uint64_t seed,
                     std::uint64_t offset, std::int64_t grain, const FillBatch& fill_batch) {
  const std::int64_t batch_elements = kBatch * per_block;
  const std::int64_t batches = (numel + batch_elements - 1) / batch_elements;
  parallel_for(batches, std::max<std::int64_t>(1, grain / batch_elements),
               [&](std::int64_t begin, std::int64_t end) {
                 BatchWords words;
                 T values[kBatch * 4];
                 for (std::int64_t batch = begin; batch < end; ++batch) {
                   philox_batch(offset + static_cast<std::uint64_t>(batch * kBatch), seed, words);
                   fill_batch(words, values);
                   const std::int64_t first = batch * batch_elements;
                   const std::int64_t count = std::min(batch_elements, numel - first);
                   std::memcpy(y + first, values, static_cast<std::size_t>(count) * sizeof(T));
                 }
               });
}

}  // namespace

void uniform(DType dtype, void* out, std::int64_t numel, std::uint64_t seed, std::uint64_t offset,
             double low, double high) {
  dispatch_floating(dtype, "uniform_", [&]<typename T>() {
    const double range = high - low;
    constexpr std::int64_t per_block = random_math::uniform_per_block<T>;
    fill_by_batches(static_cast<T*>(out), numel, per_block, seed, offset, kElementwiseGrain / 4,
                    [&](const BatchWords& w, T* values) {
                      for (std::int64_t b = 0; b < kBatch; ++b) {
                        for (std::int64_t lane = 0; lane < per_block; ++lane) {
                          const double u = per_block == 2
                                               ? uniform_double_in_lanes(w.words[2 * lane][b],
                                                                         w.words[2 * lane + 1][b])
                                               : random_math::uniform_of_word<T>(w.words[lane][b]);
                          values[b * per_block + lane] = static_cast<T>(std::fma(u, range, low));
                        }
                      }
                    });
  });
}

void normal(DType dtype, void* out, std::int64_t numel, std::uint64_t seed, std::uint64_t offset,
            double mean, double stddev) {
  dispatch_floating(dtype, "normal_", [&]<typename T>() {
    constexpr std::int64_t per_block = random_math::normal_per_block<T>;
    constexpr std::int64_t pairs = per_block == 2 ? 1 : 2;  // Box-Muller pairs of a block
    fill_by_batches(
        static_cast<T*>(out), numel, per_block, seed, offset, kElementwiseGrain / 4,
        [&](const BatchWords& w, T* values) {
          // The pairs' uniforms, pair p of block b at p kBatch + b; then their two elements, put
          // in order.
          double u1[pairs * kBatch], u2[pairs * kBatch];
          for (std::int64_t pair = 0; pair < pairs; ++pair) {
            for (std::int64_t b = 0; b < kBatch; ++b) {
              double* p1 = u1 + pair * kBatch + b;
              double* p2 = u2 + pair * kBatch + b;
              if constexpr (per_block == 2) {
                *p1 = 1.0 - uniform_double_in_lanes(w.words[0][b], w.words[1][b]);
                *p2 = uniform_double_in_lanes(w.words[2][b], w.words[3][b]);
              } else {
                *p1 = 1.0 - static_cast<double>(philox::uniform_float(w.words[2 * pair][b]));
                *p2 = static_cast<double>(philox::uniform_float(w.words[2 * pair + 1][b]));
              }
            }
          }
          double first[pairs * kBatch], second[pairs * kBatch];
          box_muller(pairs * kBatch, u1, u2, mean, stddev, first, second);
          for (std::int64_t b = 0; b < kBatch; ++b) {
            for (std::int64_t pair = 0; pair < pairs; ++pair) {
              values[b * per_block + 2 * pair] = static_cast<T>(first[pair * kBatch + b]);
              values[b * per_block + 2 * pair + 1] = static_cast<T>(second[pair * kBatch + b]);
            }
          }
        });
  });
}

}  // namespace leangrad::kernels::cpu
