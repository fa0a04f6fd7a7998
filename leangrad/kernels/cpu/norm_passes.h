// The per-run passes of GroupNorm's and BatchNorm's vectorised CPU kernels over one channel's
// contiguous run of values (a plane (n, c), or a chunk of it): the backward's sums of dy and
// dy (x - mean), the forward's y = scale x + shift and the backward's dx = dy_coef dy +
// x_coef (x - mean) + constant (Note [Vectorised GroupNorm] in
// kernels/cpu/group_norm_vectorized.cpp, Note [Vectorised BatchNorm] in
// kernels/cpu/batch_norm_vectorized.cpp). Both files are compiled with the same flags
// (-ffp-contract=off: the fused multiply-adds are written out), so these round alike in both and
// in the vector body and scalar tail. float16 runs are widened a piece at a time into float
// buffers on the stack (Note [float16 GroupNorm in float]); bfloat16 is converted in the loops,
// which GCC vectorises.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include <leangrad/core/half.h>
#include <leangrad/kernels/cpu/half_convert.h>
#include <leangrad/kernels/cpu/lane_sums.h>
#include <leangrad/kernels/cpu/norm_statistics.h>

namespace leangrad::kernels::cpu {

// float16 elements widened at a time by the elementwise passes: 2 KiB per float buffer.
inline constexpr std::int64_t kNormPiece = 512;

// A channel's sums for the backward over a run of its values.
template <typename Acc>
struct ChannelSums {
  Acc dy = Acc(0);          // sum dy
  Acc dy_centred = Acc(0);  // sum dy (x - mean)
};

// The sums over dy[0, m), x[0, m), 0 < m <= kStatisticsChunk, in kStatisticsLanes partial sums
// (element i in lane i mod kStatisticsLanes).
template <typename T, typename Acc>
ChannelSums<Acc> chunk_sums(const T* dy, const T* x, Acc mean, std::int64_t m) {
  if constexpr (std::is_same_v<T, Half>) {
    float wide_dy[kStatisticsChunk];
    float wide_x[kStatisticsChunk];
    widen(dy, wide_dy, m);
    widen(x, wide_x, m);
    return chunk_sums<float, Acc>(wide_dy, wide_x, mean, m);
  } else {
    constexpr int kLanes = kStatisticsLanes;
    Acc sum_dy[kLanes] = {};
    Acc sum_dy_centred[kLanes] = {};
    std::int64_t i = 0;
    for (; i + kLanes <= m; i += kLanes)
      for (int l = 0; l < kLanes; ++l) {
        const Acc g = static_cast<Acc>(dy[i + l]);
        sum_dy[l] += g;
        sum_dy_centred[l] = std::fma(g, static_cast<Acc>(x[i + l]) - mean, sum_dy_centred[l]);
      }
    for (int l = 0; i + l < m; ++l) {
      const Acc g = static_cast<Acc>(dy[i + l]);
      sum_dy[l] += g;
      sum_dy_centred[l] = std::fma(g, static_cast<Acc>(x[i + l]) - mean, sum_dy_centred[l]);
    }
    return {sum_of_lanes(sum_dy), sum_of_lanes(sum_dy_centred)};
  }
}

// The sums of `count` runs added in order (from 0: the first is exact).
template <typename Acc>
ChannelSums<Acc> add_in_order(const ChannelSums<Acc>* parts, std::int64_t count) {
  ChannelSums<Acc> total;
  for (std::int64_t k = 0; k < count; ++k) {
    total.dy += parts[k].dy;
    total.dy_centred += parts[k].dy_centred;
  }
  return total;
}

// y = scale x + shift over a run of m elements.
template <typename T, typename Acc>
void normalise_run(T* y, const T* x, std::int64_t m, Acc scale, Acc shift) {
  if constexpr (std::is_same_v<T, Half>) {
    float wide[kNormPiece];
    for (std::int64_t i0 = 0; i0 < m; i0 += kNormPiece) {
      const std::int64_t p = std::min(kNormPiece, m - i0);
      widen(x + i0, wide, p);
      normalise_run<float, Acc>(wide, wide, p, scale, shift);
      narrow(wide, y + i0, p);
    }
  } else {
#pragma GCC ivdep
    for (std::int64_t i = 0; i < m; ++i)
      y[i] = static_cast<T>(std::fma(scale, static_cast<Acc>(x[i]), shift));
  }
}

// dx = dy_coef dy + x_coef (x - mean) + constant over a run of m elements.
template <typename T, typename Acc>
void input_grad_run(T* dx, const T* dy, const T* x, std::int64_t m, Acc dy_coef, Acc x_coef,
                    Acc mean, Acc constant) {
  if constexpr (std::is_same_v<T, Half>) {
    float wide_dy[kNormPiece];
    float wide_x[kNormPiece];
    for (std::int64_t i0 = 0; i0 < m; i0 += kNormPiece) {
      const std::int64_t p = std::min(kNormPiece, m - i0);
      widen(dy + i0, wide_dy, p);
      widen(x + i0, wide_x, p);
      input_grad_run<float, Acc>(wide_dy, wide_dy, wide_x, p, dy_coef, x_coef, mean, constant);
      narrow(wide_dy, dx + i0, p);
    }
  } else {
#pragma GCC ivdep
    for (std::int64_t i = 0; i < m; ++i) {
      const Acc centred = static_cast<Acc>(x[i]) - mean;
      dx[i] = static_cast<T>(
          std::fma(dy_coef, static_cast<Acc>(dy[i]), std::fma(x_coef, centred, constant)));
    }
  }
}

}  // namespace leangrad::kernels::cpu
