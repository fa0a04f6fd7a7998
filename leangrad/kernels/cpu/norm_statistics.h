// The mean and sum of squared deviations of a run of values in SIMD lanes, a chunk at a time: the
// statistics pass of GroupNorm's and LayerNorm's vectorised CPU kernels (Note [Vectorised
// GroupNorm] in kernels/cpu/group_norm_vectorized.cpp, Note [Vectorised LayerNorm] in
// kernels/cpu/layer_norm_vectorized.cpp). Both files are compiled with the same flags
// (-ffp-contract=off: the fused multiply-adds are written out), so the vector body and the scalar
// tail round alike wherever these are inlined.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include <leangrad/core/half.h>
#include <leangrad/kernels/cpu/half_convert.h>
#include <leangrad/kernels/cpu/lane_sums.h>
#include <leangrad/kernels/group_norm_math.h>

namespace leangrad::kernels::cpu {

// Elements of one chunk (8 KiB of float32, in L1): its statistics are two passes over it.
inline constexpr std::int64_t kStatisticsChunk = 2048;
// Partial sums per chunk: 32 floats are 4 AVX2 registers or 2 AVX-512 ones.
inline constexpr int kStatisticsLanes = 32;

// Mean and sum of squared deviations of x[0, m), 0 < m <= kStatisticsChunk: the sum in
// kStatisticsLanes partial sums (element i in lane i mod kStatisticsLanes, then sum_of_lanes),
// the mean, then the squared deviations from it the same way, read again from L1 (a two-pass
// variance: no cancellation however far the mean is from 0). float16 is widened first
// (kernels/cpu/half_convert.h), bfloat16 converted in the loops.
template <typename T, typename Acc>
WelfordState<Acc> chunk_statistics(const T* x, std::int64_t m) {
  if constexpr (std::is_same_v<T, Half>) {
    float wide[kStatisticsChunk];
    widen(x, wide, m);
    return chunk_statistics<float, Acc>(wide, m);
  } else {
    constexpr int kLanes = kStatisticsLanes;
    Acc sums[kLanes] = {};
    std::int64_t i = 0;
    for (; i + kLanes <= m; i += kLanes)
      for (int l = 0; l < kLanes; ++l)
        sums[l] += static_cast<Acc>(x[i + l]);
    for (int l = 0; i + l < m; ++l)
      sums[l] += static_cast<Acc>(x[i + l]);
    WelfordState<Acc> s;
    s.count = m;
    s.mean = sum_of_lanes(sums) / static_cast<Acc>(m);
    Acc squares[kLanes] = {};
    for (i = 0; i + kLanes <= m; i += kLanes)
      for (int l = 0; l < kLanes; ++l) {
        const Acc d = static_cast<Acc>(x[i + l]) - s.mean;
        squares[l] = std::fma(d, d, squares[l]);
      }
    for (int l = 0; i + l < m; ++l) {
      const Acc d = static_cast<Acc>(x[i + l]) - s.mean;
      squares[l] = std::fma(d, d, squares[l]);
    }
    s.m2 = sum_of_lanes(squares);
    return s;
  }
}

// The statistics of x[0, n): chunk_statistics of each chunk, merged left to right with
// welford_merge (the merge the CUDA kernels use).
template <typename T, typename Acc>
WelfordState<Acc> run_statistics(const T* x, std::int64_t n) {
  WelfordState<Acc> total;
  for (std::int64_t begin = 0; begin < n; begin += kStatisticsChunk)
    total = welford_merge(
        total, chunk_statistics<T, Acc>(x + begin, std::min(kStatisticsChunk, n - begin)));
  return total;
}

}  // namespace leangrad::kernels::cpu
