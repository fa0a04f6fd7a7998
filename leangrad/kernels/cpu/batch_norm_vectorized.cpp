// BatchNorm's CPU launchers (kernels/backend.h, "BatchNorm"): per-channel statistics and sums in
// SIMD lanes, combined in an order fixed by the sizes, and one fused elementwise pass each for
// the output and the input gradient. The second CPU kernel beside the reference loops of
// kernels/cpu/batch_norm.cpp, which stay the specification: tests/kernels/test_batch_norm.cpp
// checks these against them.
//
// Note [Vectorised BatchNorm]
//   Layout and formulas: Note [BatchNorm layout and math] (kernels/group_norm_math.h). x is
//   (N, C, S); channel c's values are the N planes x[n, c, :] of S contiguous values each, C S
//   apart. A channel spans the whole batch, so x is read twice however it is cut: once for the
//   statistics (or the backward's sums) and once for the elementwise pass. Two layouts:
//   - Planes (S >= kMinPlane: BatchNorm2d's images). Tasks are (plane, chunk of at most 2048
//     values) pieces, each reduced as GroupNorm's kernel reduces its chunks
//     (kernels/cpu/norm_statistics.h, kernels/cpu/norm_passes.h: 32 partial sums, a two-pass
//     variance per chunk), then each channel's pieces are combined sample after sample, chunk
//     after chunk (Chan's merge for the statistics; in double for the backward's sums). The
//     elementwise passes take the same tasks, each with its channel's scale and shift (or
//     input-gradient coefficients): one fused multiply-add or two per value.
//   - Columns (S < kMinPlane: BatchNorm1d's (N, C), small feature maps). A plane is too short
//     for lanes of its own, so x is seen as N rows of L = C S columns, and a channel is S
//     adjacent columns. The rows are cut into blocks (at least kMinBlockRows rows, at most
//     kMaxBlocks blocks and kPartialValues / L, as LayerNorm's backward blocks: a cut fixed by
//     N and L alone) and the columns into tiles of kTile; a (block, tile) task runs Welford's
//     update down its rows with the columns in the lanes (mean += (x - mean) / k with one
//     reciprocal per row, the count being the same in every column), or sums dy and
//     dy (x - mean) down them. Each column's blocks are then merged in order (Chan's merge, the
//     block's fraction of the count one scalar for all columns; or added in double), and each
//     channel's S columns in order. The elementwise passes run along rows with per-column
//     arrays of the channel's coefficients.
//   Every piece is computed alike and combined in the same order whatever the thread count, so
//   the results are the same bits on any number of threads (the test
//   BatchNormVectorized.SameBitsOnAnyThreadCount). Accumulation in opmath_t<T> (float for
//   float32/16/bf16, double for float64). 16-bit values: the plane path as GroupNorm's (float16
//   widened a chunk or a piece at a time, bfloat16 converted in the loops); the column path
//   widens both into stack buffers a tile or a piece of a row at a time. Either way the float32
//   loops run on the same float values, so 16-bit BatchNorm is float32 BatchNorm of the widened
//   input, rounded once, bit for bit. This file is compiled with -ffp-contract=off, so the
//   vector body and the scalar tail round alike.
//   Before these kernels, training BatchNorm ran GroupNorm's kernel on x transposed to (C, N, S)
//   (a copy of x in, one of y out, and two more in backward), and evaluation ran an elementwise
//   mul and add: a (4096, 4096) forward and backward took 317 ms at one thread, LibTorch 1.13's
//   144 ms.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/cpu/half_convert.h>
#include <leangrad/kernels/cpu/norm_passes.h>
#include <leangrad/kernels/cpu/norm_statistics.h>
#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/group_norm_math.h>

namespace leangrad::kernels::cpu {

namespace {

constexpr std::int64_t kChunk = kStatisticsChunk;
// Planes at least this long take the plane path, shorter ones the column path.
constexpr std::int64_t kMinPlane = 64;
// The column path's row blocks (as LayerNorm's backward's, Note [Vectorised LayerNorm]).
constexpr std::int64_t kMinBlockRows = 8;
constexpr std::int64_t kMaxBlocks = 256;
constexpr std::int64_t kPartialValues = std::int64_t{1} << 21;
// Columns per task of the column path: 8 KiB of float32 per row's slice, in L1 with its two
// accumulator arrays.
constexpr std::int64_t kTile = 2048;

template <typename T>
constexpr bool kSixteenBit = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

bool plane_layout(const BatchNormSizes& sizes) {
  return sizes.spatial >= kMinPlane;
}

std::int64_t chunks_of(std::int64_t n) {
  return (n + kChunk - 1) / kChunk;
}

// ---- The plane path --------------------------------------------------------------------------

// Task t of the plane path: chunk t % chunks of plane t / chunks.
struct PlaneChunk {
  std::int64_t channel;
  std::int64_t offset;  // of its first value
  std::int64_t size;
};

struct PlaneTasks {
  const BatchNormSizes& sizes;
  std::int64_t chunks = chunks_of(sizes.spatial);  // per plane
  std::int64_t count() const { return sizes.batch * sizes.channels * chunks; }
  PlaneChunk operator[](std::int64_t t) const {
    const std::int64_t plane = t / chunks;
    const std::int64_t begin = (t % chunks) * kChunk;
    return {plane % sizes.channels, plane * sizes.spatial + begin,
            std::min(kChunk, sizes.spatial - begin)};
  }
  // Task of (sample n, channel c, chunk k).
  std::int64_t index(std::int64_t n, std::int64_t c, std::int64_t k) const {
    return (n * sizes.channels + c) * chunks + k;
  }
};

// fn(chunk) for every task, over threads.
template <typename F>
void for_each_plane_chunk(const PlaneTasks& tasks, const F& fn) {
  parallel_for(tasks.count(), grain_for(std::min(kChunk, tasks.sizes.spatial)),
               [&](std::int64_t begin, std::int64_t end) {
                 for (std::int64_t t = begin; t < end; ++t)
                   fn(t, tasks[t]);
               });
}

// ---- The column path -------------------------------------------------------------------------

// The column path's cut of the N rows into blocks and of the L columns into tiles.
struct ColumnTasks {
  std::int64_t rows;            // N
  std::int64_t columns;         // L = C S
  std::int64_t rows_per_block;  // every block's but the last
  std::int64_t blocks;
  std::int64_t tiles;
  std::int64_t count() const { return blocks * tiles; }
  std::int64_t block_rows(std::int64_t block) const {
    return std::min(rows, (block + 1) * rows_per_block) - block * rows_per_block;
  }
};

ColumnTasks column_tasks(const BatchNormSizes& sizes) {
  ColumnTasks t;
  t.rows = sizes.batch;
  t.columns = sizes.channels * sizes.spatial;
  const std::int64_t wanted =
      std::max<std::int64_t>(1, std::min({(t.rows + kMinBlockRows - 1) / kMinBlockRows, kMaxBlocks,
                                          kPartialValues / std::max<std::int64_t>(t.columns, 1)}));
  t.rows_per_block = (t.rows + wanted - 1) / wanted;
  t.blocks = (t.rows + t.rows_per_block - 1) / t.rows_per_block;
  t.tiles = (t.columns + kTile - 1) / kTile;
  return t;
}

// fn(block, first column, column count) for every (block, tile) task, over threads.
template <typename F>
void for_each_column_task(const ColumnTasks& tasks, const F& fn) {
  parallel_for(tasks.count(), grain_for(tasks.rows_per_block * std::min(kTile, tasks.columns)),
               [&](std::int64_t begin, std::int64_t end) {
                 for (std::int64_t t = begin; t < end; ++t) {
                   const std::int64_t column = (t % tasks.tiles) * kTile;
                   fn(t / tasks.tiles, column, std::min(kTile, tasks.columns - column));
                 }
               });
}

// Row r's values [column, column + n) as U: the row itself, or widened into `buffer`.
template <typename U, typename T>
const U* row_slice(const T* base, std::int64_t offset, std::int64_t n, U* buffer) {
  if constexpr (std::is_same_v<T, U>) {
    return base + offset;
  } else {
    widen(base + offset, buffer, n);
    return buffer;
  }
}

// Welford's update of n column states by one row's values v, the k-th row of the block:
// mean += (v - mean) / k, m2 += (v - mean_old) (v - mean_new), with 1 / k computed once.
template <typename U>
void welford_row(U* mean, U* m2, const U* v, std::int64_t n, std::int64_t k) {
  const U inverse = U(1) / static_cast<U>(k);
#pragma GCC ivdep
  for (std::int64_t j = 0; j < n; ++j) {
    const U delta = v[j] - mean[j];
    mean[j] = std::fma(delta, inverse, mean[j]);
    m2[j] = std::fma(delta, v[j] - mean[j], m2[j]);
  }
}

// Per-column copies of `channels` per-channel values (each channel's repeated S times).
template <typename Acc>
std::vector<Acc> per_column(const Acc* per_channel, std::size_t channels, std::int64_t spatial) {
  std::vector<Acc> columns(channels * static_cast<std::size_t>(spatial));
  for (std::size_t j = 0; j < columns.size(); ++j)
    columns[j] = per_channel[j / static_cast<std::size_t>(spatial)];
  return columns;
}

// ---- Statistics ------------------------------------------------------------------------------

template <typename T, typename Acc>
void plane_statistics(const BatchNormSizes& sizes, const T* x, Acc* mean, Acc* rstd, Acc eps) {
  const PlaneTasks tasks{sizes};
  std::vector<WelfordState<Acc>> parts(static_cast<std::size_t>(tasks.count()));
  for_each_plane_chunk(tasks, [&](std::int64_t t, const PlaneChunk& p) {
    parts[t] = chunk_statistics<T, Acc>(x + p.offset, p.size);
  });
  parallel_for(sizes.channels, grain_for(sizes.batch * tasks.chunks * 8),
               [&](std::int64_t begin, std::int64_t end) {
                 for (std::int64_t c = begin; c < end; ++c) {
                   WelfordState<Acc> total;
                   for (std::int64_t n = 0; n < sizes.batch; ++n)
                     for (std::int64_t k = 0; k < tasks.chunks; ++k)
                       total = welford_merge(total, parts[tasks.index(n, c, k)]);
                   mean[c] = total.mean;
                   rstd[c] = welford_rstd(total, eps);
                 }
               });
}

template <typename T, typename Acc>
void column_statistics(const BatchNormSizes& sizes, const T* x, Acc* mean, Acc* rstd, Acc eps) {
  using U = std::conditional_t<kSixteenBit<T>, float, T>;  // the values as the loops see them
  const ColumnTasks tasks = column_tasks(sizes);
  const auto size = static_cast<std::size_t>(tasks.blocks * tasks.columns);
  std::vector<Acc> block_mean(size), block_m2(size);
  for_each_column_task(tasks, [&](std::int64_t block, std::int64_t column, std::int64_t n) {
    Acc* m = block_mean.data() + block * tasks.columns + column;
    Acc* m2 = block_m2.data() + block * tasks.columns + column;
    std::fill(m, m + n, Acc(0));
    std::fill(m2, m2 + n, Acc(0));
    U buffer[kSixteenBit<T> ? kTile : 1];
    const std::int64_t r0 = block * tasks.rows_per_block;
    for (std::int64_t k = 1; k <= tasks.block_rows(block); ++k)
      welford_row(m, m2, row_slice<U>(x, (r0 + k - 1) * tasks.columns + column, n, buffer), n, k);
  });
  // Each column's blocks merged in order, threads over ranges of columns: welford_merge's
  // formula, with the block's fraction of the merged count one scalar for all columns (every
  // column of a block has the same count), so the columns run in SIMD lanes.
  std::vector<Acc> column_mean(static_cast<std::size_t>(tasks.columns));
  std::vector<Acc> column_m2(column_mean.size());
  parallel_for(tasks.columns, grain_for(tasks.blocks), [&](std::int64_t begin, std::int64_t end) {
    Acc* m = column_mean.data();
    Acc* m2 = column_m2.data();
    std::int64_t count = 0;
    for (std::int64_t block = 0; block < tasks.blocks; ++block) {
      const std::int64_t rows = tasks.block_rows(block);
      const Acc fraction = static_cast<Acc>(rows) / static_cast<Acc>(count + rows);
      const Acc weight = static_cast<Acc>(count);
      const Acc* bm = block_mean.data() + block * tasks.columns;
      const Acc* bm2 = block_m2.data() + block * tasks.columns;
#pragma GCC ivdep
      for (std::int64_t j = begin; j < end; ++j) {
        // From zeros, the first block's fraction 1 and weight 0 give its own bm and bm2.
        const Acc delta = bm[j] - m[j];
        m[j] = m[j] + delta * fraction;
        m2[j] = m2[j] + bm2[j] + delta * delta * weight * fraction;
      }
      count += rows;
    }
  });
  // Each channel's S columns merged in order.
  for (std::int64_t c = 0; c < sizes.channels; ++c) {
    WelfordState<Acc> total;
    for (std::int64_t j = c * sizes.spatial; j < (c + 1) * sizes.spatial; ++j)
      total = welford_merge(total, WelfordState<Acc>{column_mean[j], column_m2[j], tasks.rows});
    mean[c] = total.mean;
    rstd[c] = welford_rstd(total, eps);
  }
}

// ---- The elementwise passes ------------------------------------------------------------------

// y = scale x + shift along one row's n columns (the column path), scale and shift per column;
// y may be x.
template <typename U>
void normalise_row(U* y, const U* x, std::int64_t n, const U* scale, const U* shift) {
#pragma GCC ivdep
  for (std::int64_t j = 0; j < n; ++j)
    y[j] = std::fma(scale[j], x[j], shift[j]);
}

// dx = dy_coef dy + x_coef (x - mean) + constant along one row's n columns, or dx = dy_coef dy + 0
// (the plane path's evaluation formula) when x_coef is null; dx may be dy.
template <typename U>
void input_grad_row(U* dx, const U* dy, const U* x, std::int64_t n, const U* dy_coef,
                    const U* x_coef, const U* mean, const U* constant) {
  if (x_coef == nullptr) {
#pragma GCC ivdep
    for (std::int64_t j = 0; j < n; ++j)
      dx[j] = std::fma(dy_coef[j], dy[j], U(0));
    return;
  }
#pragma GCC ivdep
  for (std::int64_t j = 0; j < n; ++j)
    dx[j] = std::fma(dy_coef[j], dy[j], std::fma(x_coef[j], x[j] - mean[j], constant[j]));
}

// fn(out_row, a_row, b_row, n, first column) over every row of the column path, the rows of 16-bit
// tensors widened (and out narrowed back) kTile values at a time; b may be null.
template <typename T, typename F>
void for_each_row_piece(const BatchNormSizes& sizes, T* out, const T* a, const T* b, const F& fn) {
  const std::int64_t columns = sizes.channels * sizes.spatial;
  parallel_for(sizes.batch, grain_for(columns), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const std::int64_t base = r * columns;
      if constexpr (kSixteenBit<T>) {
        float wide_a[kTile];
        float wide_b[kTile];
        for (std::int64_t j0 = 0; j0 < columns; j0 += kTile) {
          const std::int64_t n = std::min(kTile, columns - j0);
          widen(a + base + j0, wide_a, n);
          if (b != nullptr) widen(b + base + j0, wide_b, n);
          fn(wide_a, wide_a, b != nullptr ? wide_b : nullptr, n, j0);
          narrow(wide_a, out + base + j0, n);
        }
      } else {
        fn(out + base, a + base, b != nullptr ? b + base : nullptr, columns, std::int64_t{0});
      }
    }
  });
}

// ---- The backward's sums ---------------------------------------------------------------------

// Each channel's sum dy and sum dy (x - mean), in double.
template <typename T, typename Acc>
std::vector<ChannelSums<double>> plane_sums(const BatchNormSizes& sizes, const T* dy, const T* x,
                                            const Acc* mean) {
  const PlaneTasks tasks{sizes};
  std::vector<ChannelSums<Acc>> parts(static_cast<std::size_t>(tasks.count()));
  for_each_plane_chunk(tasks, [&](std::int64_t t, const PlaneChunk& p) {
    parts[t] = chunk_sums<T, Acc>(dy + p.offset, x + p.offset, mean[p.channel], p.size);
  });
  std::vector<ChannelSums<double>> sums(static_cast<std::size_t>(sizes.channels));
  for (std::int64_t c = 0; c < sizes.channels; ++c)
    for (std::int64_t n = 0; n < sizes.batch; ++n)
      for (std::int64_t k = 0; k < tasks.chunks; ++k) {
        const ChannelSums<Acc>& part = parts[tasks.index(n, c, k)];
        sums[c].dy += static_cast<double>(part.dy);
        sums[c].dy_centred += static_cast<double>(part.dy_centred);
      }
  return sums;
}

template <typename T, typename Acc>
std::vector<ChannelSums<double>> column_sums(const BatchNormSizes& sizes, const T* dy, const T* x,
                                             const Acc* mean) {
  using U = std::conditional_t<kSixteenBit<T>, float, T>;
  const ColumnTasks tasks = column_tasks(sizes);
  const std::vector<Acc> column_mean =
      per_column(mean, static_cast<std::size_t>(sizes.channels), sizes.spatial);
  const auto size = static_cast<std::size_t>(tasks.blocks * tasks.columns);
  std::vector<Acc> block_dy(size), block_centred(size);
  for_each_column_task(tasks, [&](std::int64_t block, std::int64_t column, std::int64_t n) {
    Acc* sdy = block_dy.data() + block * tasks.columns + column;
    Acc* sc = block_centred.data() + block * tasks.columns + column;
    std::fill(sdy, sdy + n, Acc(0));
    std::fill(sc, sc + n, Acc(0));
    const Acc* m = column_mean.data() + column;
    U buffer_dy[kSixteenBit<T> ? kTile : 1];
    U buffer_x[kSixteenBit<T> ? kTile : 1];
    const std::int64_t r0 = block * tasks.rows_per_block;
    for (std::int64_t r = r0; r < r0 + tasks.block_rows(block); ++r) {
      const std::int64_t offset = r * tasks.columns + column;
      const U* g = row_slice<U>(dy, offset, n, buffer_dy);
      const U* v = row_slice<U>(x, offset, n, buffer_x);
#pragma GCC ivdep
      for (std::int64_t j = 0; j < n; ++j) {
        sdy[j] += g[j];
        sc[j] = std::fma(g[j], v[j] - m[j], sc[j]);
      }
    }
  });
  // Each column's blocks in order, then each channel's columns in order, in double; threads over
  // ranges of columns, the columns in SIMD lanes.
  std::vector<double> column_dy(static_cast<std::size_t>(tasks.columns));
  std::vector<double> column_centred(column_dy.size());
  parallel_for(tasks.columns, grain_for(tasks.blocks), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t block = 0; block < tasks.blocks; ++block) {
      const Acc* bdy = block_dy.data() + block * tasks.columns;
      const Acc* bc = block_centred.data() + block * tasks.columns;
#pragma GCC ivdep
      for (std::int64_t j = begin; j < end; ++j) {
        column_dy[j] += static_cast<double>(bdy[j]);
        column_centred[j] += static_cast<double>(bc[j]);
      }
    }
  });
  std::vector<ChannelSums<double>> sums(static_cast<std::size_t>(sizes.channels));
  for (std::int64_t c = 0; c < sizes.channels; ++c)
    for (std::int64_t s = 0; s < sizes.spatial; ++s) {
      sums[c].dy += column_dy[c * sizes.spatial + s];
      sums[c].dy_centred += column_centred[c * sizes.spatial + s];
    }
  return sums;
}

}  // namespace

void batch_norm_statistics(DType dtype, const BatchNormSizes& sizes, void* mean, void* rstd,
                           const void* x, double eps) {
  dispatch_floating(dtype, "batch_norm", [&]<typename T>() {
    using Acc = opmath_t<T>;
    const T* in = static_cast<const T*>(x);
    if (plane_layout(sizes)) {
      plane_statistics<T, Acc>(sizes, in, static_cast<Acc*>(mean), static_cast<Acc*>(rstd),
                               static_cast<Acc>(eps));
    } else {
      column_statistics<T, Acc>(sizes, in, static_cast<Acc*>(mean), static_cast<Acc*>(rstd),
                                static_cast<Acc>(eps));
    }
  });
}

void batch_norm_forward(DType dtype, const BatchNormSizes& sizes, void* out, const void* x,
                        const void* mean, const void* rstd, const void* weight, const void* bias) {
  dispatch_floating(dtype, "batch_norm", [&]<typename T>() {
    using Acc = opmath_t<T>;
    const T* in = static_cast<const T*>(x);
    const T* w = static_cast<const T*>(weight);
    const T* b = static_cast<const T*>(bias);
    const Acc* mean_in = static_cast<const Acc*>(mean);
    const Acc* rstd_in = static_cast<const Acc*>(rstd);
    T* y = static_cast<T*>(out);
    std::vector<Acc> scale(static_cast<std::size_t>(sizes.channels));
    std::vector<Acc> shift(scale.size());
    for (std::int64_t c = 0; c < sizes.channels; ++c) {
      const ChannelAffine<Acc> a = group_norm_channel_affine(
          mean_in[c], rstd_in[c], load_or(w, c, Acc(1)), load_or(b, c, Acc(0)));
      scale[c] = a.scale;
      shift[c] = a.shift;
    }
    if (plane_layout(sizes)) {
      for_each_plane_chunk(PlaneTasks{sizes}, [&](std::int64_t, const PlaneChunk& p) {
        normalise_run(y + p.offset, in + p.offset, p.size, scale[p.channel], shift[p.channel]);
      });
      return;
    }
    const std::vector<Acc> scale_of = per_column(scale.data(), scale.size(), sizes.spatial);
    const std::vector<Acc> shift_of = per_column(shift.data(), shift.size(), sizes.spatial);
    for_each_row_piece(sizes, y, in, static_cast<const T*>(nullptr),
                       [&](auto* yr, const auto* xr, const auto*, std::int64_t n, std::int64_t j0) {
                         normalise_row(yr, xr, n, scale_of.data() + j0, shift_of.data() + j0);
                       });
  });
}

void batch_norm_backward(DType dtype, const BatchNormSizes& sizes, bool training, void* grad_input,
                         void* grad_weight, void* grad_bias, const void* grad_output, const void* x,
                         const void* mean, const void* rstd, const void* weight) {
  dispatch_floating(dtype, "batch_norm_backward", [&]<typename T>() {
    using Acc = opmath_t<T>;
    const T* dy = static_cast<const T*>(grad_output);
    const T* in = static_cast<const T*>(x);
    const T* w = static_cast<const T*>(weight);
    const Acc* mean_in = static_cast<const Acc*>(mean);
    const Acc* rstd_in = static_cast<const Acc*>(rstd);
    T* dx = static_cast<T*>(grad_input);
    const bool plane = plane_layout(sizes);
    const bool need_sums =
        grad_weight != nullptr || grad_bias != nullptr || (dx != nullptr && training);
    std::vector<ChannelSums<double>> sums;
    if (need_sums)
      sums = plane ? plane_sums<T, Acc>(sizes, dy, in, mean_in)
                   : column_sums<T, Acc>(sizes, dy, in, mean_in);
    for (std::int64_t c = 0; c < sizes.channels && !sums.empty(); ++c) {
      const double r = rstd_in[c];
      if (grad_weight != nullptr)
        static_cast<T*>(grad_weight)[c] = static_cast<T>(sums[c].dy_centred * r);
      if (grad_bias != nullptr) static_cast<T*>(grad_bias)[c] = static_cast<T>(sums[c].dy);
    }
    if (dx == nullptr) return;

    // dx's per-channel coefficients, computed in double and used in Acc.
    const auto channels = static_cast<std::size_t>(sizes.channels);
    // Training's dx also reads x: its coefficients and the mean, per channel; evaluation's none.
    const std::size_t x_channels = training ? channels : 0;
    std::vector<Acc> dy_coef(channels), x_coef(x_channels), constant(x_channels);
    for (std::int64_t c = 0; c < sizes.channels; ++c) {
      const double r = rstd_in[c];
      const double wc = load_or(w, c, 1.0);
      dy_coef[c] = static_cast<Acc>(r * wc);
      if (!training) continue;
      const GroupInputGradCoefs<double> k = group_norm_input_grad_coefs_centred(
          r, wc * sums[c].dy, wc * sums[c].dy_centred, sizes.channel_size());
      x_coef[c] = static_cast<Acc>(k.x_coef);
      constant[c] = static_cast<Acc>(k.const_coef);
    }
    if (plane) {
      for_each_plane_chunk(PlaneTasks{sizes}, [&](std::int64_t, const PlaneChunk& p) {
        if (training) {
          input_grad_run(dx + p.offset, dy + p.offset, in + p.offset, p.size, dy_coef[p.channel],
                         x_coef[p.channel], mean_in[p.channel], constant[p.channel]);
        } else {
          normalise_run(dx + p.offset, dy + p.offset, p.size, dy_coef[p.channel], Acc(0));
        }
      });
      return;
    }
    // Evaluation's dx reads dy_coef alone: x_coef, constant and mean_of are empty, and no pointer
    // into them is formed (an offset added to an empty vector's null data() is undefined).
    const std::vector<Acc> dy_coef_of = per_column(dy_coef.data(), channels, sizes.spatial);
    const std::vector<Acc> x_coef_of = per_column(x_coef.data(), x_channels, sizes.spatial);
    const std::vector<Acc> mean_of = per_column(mean_in, x_channels, sizes.spatial);
    const std::vector<Acc> constant_of = per_column(constant.data(), x_channels, sizes.spatial);
    for_each_row_piece(
        sizes, dx, dy, training ? in : nullptr,
        [&](auto* dxr, const auto* dyr, const auto* xr, std::int64_t n, std::int64_t j0) {
          if (!training) {
            input_grad_row<Acc>(dxr, dyr, xr, n, dy_coef_of.data() + j0, nullptr, nullptr, nullptr);
            return;
          }
          input_grad_row(dxr, dyr, xr, n, dy_coef_of.data() + j0, x_coef_of.data() + j0,
                         mean_of.data() + j0, constant_of.data() + j0);
        });
  });
}

}  // namespace leangrad::kernels::cpu
