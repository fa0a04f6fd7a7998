// The math of GroupNorm shared by the CPU reference (kernels/cpu/group_norm.cpp), the CPU's
// vectorised kernel and the CUDA kernels (kernels/cuda/group_norm.cu), and by LayerNorm's and
// BatchNorm's (the Notes below), all LG_HOST_DEVICE so the
// CPU tests exercise it: Welford's running statistics and their merge, the per-channel affine
// map of the forward, and the per-group coefficients of the input gradient. The kernels differ
// in how they split the work, and in one formula: the reference sums dy x in double, the fast
// kernels dy (x - mean) in the accumulation type (below).
//
// Note [GroupNorm layout and math]
//   x is (N, C, *), contiguous; HxW = the product of the trailing dims, G groups of D = C / G
//   channels. Group (n, g) is the contiguous run of D * HxW elements starting at
//   x[n, g * D, 0...]. With mean and rstd = 1 / sqrt(var + eps) of that run (biased variance),
//     y = (x - mean) * rstd * w[c] + b[c]  =  scale[n, c] * x + shift[n, c].
//   Backward, with M = D * HxW and per (n, c) sums over the spatial dims
//     sum_dy[n, c] = sum dy,   sum_dy_x[n, c] = sum dy * x,
//   the gradients are
//     dbias[c]   = sum_n sum_dy[n, c]
//     dweight[c] = sum_n (sum_dy_x[n, c] - mean * sum_dy[n, c]) * rstd
//     dx = rstd * w[c] * dy + x_coef[n, g] * x + const_coef[n, g], where, with
//       a = sum_c w[c] sum_dy[n, c] and b = sum_c w[c] sum_dy_x[n, c] over the group's channels,
//       x_coef = (a * mean - b) * rstd^3 / M,   const_coef = -x_coef * mean - a * rstd / M.
//   (That is dx = rstd (dy w - mean(dy w) - xhat mean(dy w xhat)) written as an affine map of
//   dy and x, so the input gradient is one elementwise pass.)
//   Summed in float, sum_dy_x - mean * sum_dy cancels when the mean is far from 0 (by a factor
//   |mean| / sd, and so does x_coef * x + const_coef in dx). The fast kernels (the CPU's
//   vectorised one and CUDA's) therefore sum the centred products instead,
//     sum_dy_centred[n, c] = sum dy * (x - mean)   (= sum_dy_x - mean * sum_dy),
//     dweight[c] = sum_n sum_dy_centred[n, c] * rstd,
//     dx = rstd * w[c] * dy + x_coef * (x - mean) + centred_const, with
//       b_centred = sum_c w[c] sum_dy_centred[n, c] = b - mean * a,
//       x_coef = -b_centred * rstd^3 / M,   centred_const = -a * rstd / M
//   (group_norm_input_grad_coefs_centred). The reference loops sum dy * x in double, where the
//   cancellation costs nothing that the tests can see.
//
// Note [LayerNorm layout and math]
//   LayerNorm's kernels (kernels/cpu/layer_norm*.cpp, kernels/cuda/layer_norm.cu) take x as
//   (R, M), contiguous: row r is normalized over its M elements with its own mean and rstd (the
//   statistics above, one row being one group), and the affine map is per feature m:
//     y = (x - mean) * rstd * w[m] + b[m].
//   Backward, with g = w[m] dy and per-row sums a = sum_m g, b_centred = sum_m g (x - mean):
//     dx = rstd * w[m] * dy + x_coef * (x - mean) + const_coef,
//   the coefficients of group_norm_input_grad_coefs_centred with group_size = M (GroupNorm's
//   input gradient with one channel per element), and over the rows
//     dweight[m] = sum_r dy (x - mean) * rstd,   dbias[m] = sum_r dy.
//   Those two are column sums: the kernels cut the rows into blocks fixed by R and M alone (not
//   by the thread or block count), sum each block's column partials, then the blocks in order,
//   so results depend only on the sizes.
//
// Note [BatchNorm layout and math]
//   BatchNorm's kernels (kernels/cpu/batch_norm*.cpp, kernels/cuda/batch_norm.cu) take x as
//   (N, C, S), contiguous, S the product of the trailing dims (1 for BatchNorm1d's (N, C)):
//   channel c's N * S values, the planes x[n, c, :] of every sample n, share one mean and rstd.
//   Training normalizes with the batch's (the statistics above over those N S values, biased
//   variance; batch_norm_statistics); evaluation with given ones (mean = running_mean,
//   rstd = 1 / sqrt(running_var + eps)). Either way
//     y = (x - mean[c]) * rstd[c] * w[c] + b[c]  =  scale[c] * x + shift[c]
//   (group_norm_channel_affine). Backward, with per-channel sums over n and s
//     sum_dy[c] = sum dy,   sum_dy_centred[c] = sum dy (x - mean[c]),
//     dbias[c] = sum_dy[c],   dweight[c] = sum_dy_centred[c] * rstd[c],
//     training:   dx = rstd w dy + x_coef[c] (x - mean) + const_coef[c], the coefficients of
//                 group_norm_input_grad_coefs_centred with sum_w_dy = w[c] sum_dy[c],
//                 sum_w_dy_centred = w[c] sum_dy_centred[c] and group_size = N S (GroupNorm's
//                 input gradient for one group of one channel, the statistics depending on x);
//     evaluation: dx = rstd w dy (the statistics are constants).
//   A channel's sums run across the whole batch, so every kernel combines them from pieces
//   (planes, chunks, blocks of rows) in an order fixed by N, C and S alone: results depend only
//   on the sizes, not on the thread or block count.
#pragma once

#include <cmath>
#include <cstdint>

#include <leangrad/core/macros.h>

namespace leangrad::kernels {

// The sizes of a GroupNorm problem: x viewed as (batch, channels, spatial), `groups` groups.
struct GroupNormSizes {
  std::int64_t batch = 0;     // N
  std::int64_t channels = 0;  // C
  std::int64_t spatial = 0;   // HxW: the product of the trailing dims (1 for (N, C))
  std::int64_t groups = 0;    // G, dividing C
  LG_HOST_DEVICE std::int64_t channels_per_group() const { return channels / groups; }
  LG_HOST_DEVICE std::int64_t group_size() const { return channels / groups * spatial; }
};

// The sizes of a BatchNorm problem: x viewed as (batch, channels, spatial).
struct BatchNormSizes {
  std::int64_t batch = 0;     // N
  std::int64_t channels = 0;  // C
  std::int64_t spatial = 0;   // S: the product of the trailing dims (1 for (N, C))
  // The values each channel's statistics are over: N * S.
  LG_HOST_DEVICE std::int64_t channel_size() const { return batch * spatial; }
};

// p[i] as Acc, or `absent` when there is no array: an affine parameter left out (a weight of
// ones, a bias of zeros), as every normalization kernel reads them.
template <typename T, typename Acc>
LG_HOST_DEVICE LG_INLINE Acc load_or(const T* p, std::int64_t i, Acc absent) {
  return p != nullptr ? static_cast<Acc>(p[i]) : absent;
}

// Welford's running mean and sum of squared deviations (m2) of `count` values, in Acc.
template <typename Acc>
struct WelfordState {
  Acc mean = Acc(0);
  Acc m2 = Acc(0);
  std::int64_t count = 0;
};

// Adds one value.
template <typename Acc>
LG_HOST_DEVICE LG_INLINE WelfordState<Acc> welford_update(WelfordState<Acc> s, Acc x) {
  s.count += 1;
  const Acc delta = x - s.mean;
  s.mean += delta / static_cast<Acc>(s.count);
  s.m2 += delta * (x - s.mean);
  return s;
}

// The statistics of kWidth values at once (a vector load): their mean (one multiplication by
// 1 / kWidth) and sum of squared deviations from it, merged into a running state with one
// welford_merge. Per element this is an add and a fused multiply-add, where welford_update costs
// a division and an int64 -> float conversion; test_group_norm.cpp bounds the difference.
template <int kWidth, typename Acc>
LG_HOST_DEVICE LG_INLINE WelfordState<Acc> welford_of_values(const Acc (&v)[kWidth]) {
  Acc sum = Acc(0);
  for (int i = 0; i < kWidth; ++i)
    sum += v[i];
  WelfordState<Acc> s;
  s.mean = sum * (Acc(1) / static_cast<Acc>(kWidth));
  for (int i = 0; i < kWidth; ++i) {
    const Acc d = v[i] - s.mean;
    s.m2 += d * d;
  }
  s.count = kWidth;
  return s;
}

// The statistics of the union of two disjoint sets of values (Chan et al.). Either may be empty.
// The result depends on the order of the arguments only by rounding; kernels merge in a fixed
// order, so results are deterministic.
template <typename Acc>
LG_HOST_DEVICE LG_INLINE WelfordState<Acc> welford_merge(WelfordState<Acc> a, WelfordState<Acc> b) {
  if (b.count == 0) return a;
  if (a.count == 0) return b;
  WelfordState<Acc> s;
  s.count = a.count + b.count;
  const Acc delta = b.mean - a.mean;
  const Acc b_fraction = static_cast<Acc>(b.count) / static_cast<Acc>(s.count);
  s.mean = a.mean + delta * b_fraction;
  s.m2 = a.m2 + b.m2 + delta * delta * static_cast<Acc>(a.count) * b_fraction;
  return s;
}

// 1 / sqrt(biased variance + eps); an empty set gives 1 / sqrt(eps).
template <typename Acc>
LG_HOST_DEVICE LG_INLINE Acc welford_rstd(WelfordState<Acc> s, Acc eps) {
  const Acc var = s.count > 0 ? s.m2 / static_cast<Acc>(s.count) : Acc(0);
  // m2 is a sum of squares, but merges may round it a hair below 0. A NaN stays NaN (the running
  // variance batch_norm takes back from rstd must be NaN then, as PyTorch's).
  return Acc(1) / std::sqrt((var < Acc(0) ? Acc(0) : var) + eps);
}

// y = scale * x + shift for channel c of group (n, g). weight/bias null: no affine.
template <typename Acc>
struct ChannelAffine {
  Acc scale;
  Acc shift;
};

template <typename Acc>
LG_HOST_DEVICE LG_INLINE ChannelAffine<Acc> group_norm_channel_affine(Acc mean, Acc rstd,
                                                                      Acc weight, Acc bias) {
  const Acc scale = rstd * weight;
  return {scale, bias - mean * scale};
}

// The per-group part of dx = rstd * w[c] * dy + x_coef * x + const_coef
// (Note [GroupNorm layout and math]). sum_w_dy = a, sum_w_dy_x = b, group_size = M = D * HxW.
template <typename Acc>
struct GroupInputGradCoefs {
  Acc x_coef;
  Acc const_coef;
};

template <typename Acc>
LG_HOST_DEVICE LG_INLINE GroupInputGradCoefs<Acc> group_norm_input_grad_coefs(
    Acc mean, Acc rstd, Acc sum_w_dy, Acc sum_w_dy_x, std::int64_t group_size) {
  const Acc inv_m = Acc(1) / static_cast<Acc>(group_size);
  const Acc x_coef = (sum_w_dy * mean - sum_w_dy_x) * rstd * rstd * rstd * inv_m;
  const Acc const_coef = -x_coef * mean - sum_w_dy * rstd * inv_m;
  return {x_coef, const_coef};
}

// The same coefficients from centred sums (Note [GroupNorm layout and math]): sum_w_dy = a,
// sum_w_dy_centred = b - mean * a, for dx = rstd * w[c] * dy + x_coef * (x - mean) + const_coef.
template <typename Acc>
LG_HOST_DEVICE LG_INLINE GroupInputGradCoefs<Acc> group_norm_input_grad_coefs_centred(
    Acc rstd, Acc sum_w_dy, Acc sum_w_dy_centred, std::int64_t group_size) {
  const Acc inv_m = Acc(1) / static_cast<Acc>(group_size);
  return {-sum_w_dy_centred * rstd * rstd * rstd * inv_m, -sum_w_dy * rstd * inv_m};
}

}  // namespace leangrad::kernels
