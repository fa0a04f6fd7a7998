// GroupNorm's CPU launchers (kernels/backend.h, "GroupNorm"): statistics in SIMD lanes, one fused
// normalise + affine pass, a two-pass backward, threaded over groups or within them. The second
// CPU kernel beside the reference loops of kernels/cpu/group_norm.cpp, which stay the
// specification: tests/kernels/test_group_norm_vectorized.cpp checks these against them.
//
// Note [Vectorised GroupNorm]
//   Layout and formulas: Note [GroupNorm layout and math] (kernels/group_norm_math.h). A row is
//   group (n, g): K = D * HxW contiguous elements.
//   - Statistics by chunks of kChunk elements (8 KiB of float32, in L1): the chunk's sum in kLanes
//     running partial sums (elements i, i + kLanes, ...; the compiler keeps them in 2 to 4 vector
//     registers), its mean, then the sum of squared deviations from that mean the same way, read
//     from L1: a two-pass variance per chunk, which loses nothing to cancellation however far the
//     mean is from 0. Chunks are merged left to right with welford_merge (Chan et al.), the merge
//     the CUDA kernels use. Per element: an add, then a subtract and a fused multiply-add, against
//     the reference's per-element Welford update with its division.
//   - Forward: per row, the statistics, then y = scale[n, c] x + shift[n, c] channel by channel
//     (one fused multiply-add per element) while the row is still in cache (25 KiB for
//     (16, 64, 56, 56), G = 32): x is read from memory once, y written once.
//   - Backward: per row, the per-channel sums of dy and of dy (x - mean) (the reference sums
//     dy x in double and subtracts mean * sum dy after; centring first avoids that cancellation
//     in float), the group's coefficients, then dx = rstd w[c] dy + x_coef (x - mean) + c0, with
//     x_coef = -rstd^3 / M sum_c w[c] sum dy (x - mean) and c0 = -rstd / M sum_c w[c] sum dy (the
//     same affine map as the reference's), while the row's dy and x are in cache: dy and x read
//     from memory once. dweight and dbias add the per-(n, c) sums over the batch afterwards, in
//     double.
//   - Accumulation in opmath_t<T> (float for float32/16/bf16, double for float64), as the
//     reference forward (float16: Note [float16 GroupNorm in float]); the reference backward sums
//     in double. The tests bound the difference by the error of float sums of the lengths involved.
//   - Threads: over rows when there are at least kRowsPerThread rows per thread (the row's
//     passes stay in one core's cache); otherwise over (row, chunk) tasks: every chunk's
//     statistics (or sums), merged per row in the same order, then the elementwise pass over
//     chunks. Both orders compute each chunk alike and merge chunks alike, so results are the
//     same bits at any thread count. This file is compiled with -ffp-contract=off (the fused
//     multiply-adds are written out), so the vector body and its scalar tail round alike too.
//
// Note [float16 GroupNorm in float]
//   One float16 value converts to float by integer code (core/half.h) that GCC does not
//   vectorise, so float16 ran every pass one element at a time: 14x float32's time. Here each
//   float16 array is widened with F16C (kernels/cpu/half_convert.h) a chunk or a piece at a
//   time into a float buffer on the stack, the float32 loops run on the buffers, and results
//   are narrowed once. Those conversions round exactly as core/half.h's, and the float32 loops
//   run the same float operations on the same values, so float16 GroupNorm is float32 GroupNorm
//   of the widened input, rounded once to float16, bit for bit, as before (the test
//   GroupNormVectorized.Float16IsFloat32OfTheWidenedInput). bfloat16's conversions are a shift
//   and an add that GCC vectorises in place, and it keeps the direct loops (as fast as
//   float32's).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/cpu/norm_passes.h>
#include <leangrad/kernels/cpu/norm_statistics.h>
#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/group_norm_math.h>

namespace leangrad::kernels::cpu {

namespace {

// Elements of one chunk: statistics (kernels/cpu/norm_statistics.h), sums and tasks of the
// within-group path are per chunk.
constexpr std::int64_t kChunk = kStatisticsChunk;
// Threads split rows when each gets at least this many (imbalance at most 1 / kRowsPerThread).
constexpr std::int64_t kRowsPerThread = 8;

std::int64_t chunks_of(std::int64_t n) {
  return (n + kChunk - 1) / kChunk;
}

// fn(c, begin, end) for the runs of elements [begin, end) of row `row` (group (n, g)) that lie in
// one channel c, in order; begin and end are offsets in the row.
template <typename F>
void for_each_channel_run(const GroupNormSizes& sizes, std::int64_t row, std::int64_t begin,
                          std::int64_t end, const F& fn) {
  const std::int64_t first_channel = (row % sizes.groups) * sizes.channels_per_group();
  while (begin < end) {
    const std::int64_t k = begin / sizes.spatial;
    const std::int64_t stop = std::min(end, (k + 1) * sizes.spatial);
    fn(first_channel + k, begin, stop);
    begin = stop;
  }
}

}  // namespace

void group_norm_forward(DType dtype, const GroupNormSizes& sizes, void* out, void* mean, void* rstd,
                        const void* x, const void* weight, const void* bias, double eps) {
  dispatch_floating(dtype, "group_norm", [&]<typename T>() {
    using Acc = opmath_t<T>;
    const std::int64_t rows = sizes.batch * sizes.groups;
    const std::int64_t row_size = sizes.group_size();
    const std::int64_t chunks = chunks_of(row_size);
    const T* in = static_cast<const T*>(x);
    const T* w = static_cast<const T*>(weight);
    const T* b = static_cast<const T*>(bias);
    T* y = static_cast<T*>(out);
    Acc* mean_out = static_cast<Acc*>(mean);
    Acc* rstd_out = static_cast<Acc*>(rstd);

    // parts[k]: the statistics of chunk k of the row.
    auto chunk_of_row = [&](std::int64_t row, std::int64_t k) {
      const std::int64_t begin = k * kChunk;
      return chunk_statistics<T, Acc>(in + row * row_size + begin,
                                      std::min(kChunk, row_size - begin));
    };
    auto finish_row = [&](std::int64_t row, const WelfordState<Acc>* parts) {
      WelfordState<Acc> total;
      for (std::int64_t k = 0; k < chunks; ++k)
        total = welford_merge(total, parts[k]);
      mean_out[row] = total.mean;
      rstd_out[row] = welford_rstd(total, static_cast<Acc>(eps));
    };
    auto normalise = [&](std::int64_t row, std::int64_t begin, std::int64_t end) {
      for_each_channel_run(
          sizes, row, begin, end, [&](std::int64_t c, std::int64_t b0, std::int64_t b1) {
            const ChannelAffine<Acc> a = group_norm_channel_affine(
                mean_out[row], rstd_out[row], load_or(w, c, Acc(1)), load_or(b, c, Acc(0)));
            const std::int64_t offset = row * row_size + b0;
            normalise_run(y + offset, in + offset, b1 - b0, a.scale, a.shift);
          });
    };

    if (rows >= kRowsPerThread * max_threads()) {
      parallel_for(rows, grain_for(row_size), [&](std::int64_t begin, std::int64_t end) {
        std::vector<WelfordState<Acc>> parts(static_cast<std::size_t>(chunks));
        for (std::int64_t row = begin; row < end; ++row) {
          for (std::int64_t k = 0; k < chunks; ++k)
            parts[k] = chunk_of_row(row, k);
          finish_row(row, parts.data());
          normalise(row, 0, row_size);
        }
      });
      return;
    }
    // Few rows: threads within them, over (row, chunk) tasks.
    std::vector<WelfordState<Acc>> parts(static_cast<std::size_t>(rows * chunks));
    parallel_for(rows * chunks, grain_for(kChunk), [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t t = begin; t < end; ++t)
        parts[t] = chunk_of_row(t / chunks, t % chunks);
    });
    for (std::int64_t row = 0; row < rows; ++row)
      finish_row(row, parts.data() + row * chunks);
    parallel_for(rows * chunks, grain_for(kChunk), [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t t = begin; t < end; ++t) {
        const std::int64_t k = t % chunks;
        normalise(t / chunks, k * kChunk, std::min(row_size, (k + 1) * kChunk));
      }
    });
  });
}

void group_norm_backward(DType dtype, const GroupNormSizes& sizes, void* grad_input,
                         void* grad_weight, void* grad_bias, const void* grad_output, const void* x,
                         const void* mean, const void* rstd, const void* weight) {
  dispatch_floating(dtype, "group_norm_backward", [&]<typename T>() {
    using Acc = opmath_t<T>;
    const std::int64_t rows = sizes.batch * sizes.groups;
    const std::int64_t row_size = sizes.group_size();
    const std::int64_t per_group = sizes.channels_per_group();
    const std::int64_t hw = sizes.spatial;
    const std::int64_t plane_chunks = chunks_of(hw);
    const T* dy = static_cast<const T*>(grad_output);
    const T* in = static_cast<const T*>(x);
    const T* w = static_cast<const T*>(weight);
    const Acc* mean_in = static_cast<const Acc*>(mean);
    const Acc* rstd_in = static_cast<const Acc*>(rstd);
    T* dx = static_cast<T*>(grad_input);

    // Per (n, c): sum dy and sum dy (x - mean).
    std::vector<ChannelSums<Acc>> sums(static_cast<std::size_t>(sizes.batch * sizes.channels));
    // Chunk k of plane nc's sums.
    auto chunk_of_plane = [&](std::int64_t nc, std::int64_t k) {
      const std::int64_t row = nc / per_group;  // (n * C + c) / D = n * G + g
      const std::int64_t offset = nc * hw + k * kChunk;
      return chunk_sums<T, Acc>(dy + offset, in + offset, mean_in[row],
                                std::min(kChunk, hw - k * kChunk));
    };
    // dx over elements [begin, end) of row `row`, from the row's channel sums.
    auto input_grad = [&](std::int64_t row, std::int64_t begin, std::int64_t end) {
      const std::int64_t n = row / sizes.groups;
      const std::int64_t c0 = (row % sizes.groups) * per_group;
      double a = 0;
      double b = 0;
      for (std::int64_t c = c0; c < c0 + per_group; ++c) {
        const double wc = load_or(w, c, 1.0);
        a += wc * static_cast<double>(sums[n * sizes.channels + c].dy);
        b += wc * static_cast<double>(sums[n * sizes.channels + c].dy_centred);
      }
      const double r = rstd_in[row];
      const GroupInputGradCoefs<double> k = group_norm_input_grad_coefs_centred(r, a, b, row_size);
      const Acc x_coef = static_cast<Acc>(k.x_coef);
      const Acc constant = static_cast<Acc>(k.const_coef);
      for_each_channel_run(sizes, row, begin, end,
                           [&](std::int64_t c, std::int64_t b0, std::int64_t b1) {
                             const Acc dy_coef = static_cast<Acc>(r * load_or(w, c, 1.0));
                             const std::int64_t offset = row * row_size + b0;
                             input_grad_run(dx + offset, dy + offset, in + offset, b1 - b0, dy_coef,
                                            x_coef, mean_in[row], constant);
                           });
    };

    if (rows >= kRowsPerThread * max_threads()) {
      parallel_for(rows, grain_for(row_size), [&](std::int64_t begin, std::int64_t end) {
        std::vector<ChannelSums<Acc>> parts(static_cast<std::size_t>(plane_chunks));
        for (std::int64_t row = begin; row < end; ++row) {
          for (std::int64_t nc = row * per_group; nc < (row + 1) * per_group; ++nc) {
            for (std::int64_t k = 0; k < plane_chunks; ++k)
              parts[k] = chunk_of_plane(nc, k);
            sums[nc] = add_in_order(parts.data(), plane_chunks);
          }
          if (dx != nullptr) input_grad(row, 0, row_size);
        }
      });
    } else {
      // Few rows: threads within them, over (plane, chunk) tasks, then (row, chunk) tasks.
      const std::int64_t planes = sizes.batch * sizes.channels;
      std::vector<ChannelSums<Acc>> parts(static_cast<std::size_t>(planes * plane_chunks));
      parallel_for(planes * plane_chunks, grain_for(kChunk),
                   [&](std::int64_t begin, std::int64_t end) {
                     for (std::int64_t t = begin; t < end; ++t)
                       parts[t] = chunk_of_plane(t / plane_chunks, t % plane_chunks);
                   });
      for (std::int64_t nc = 0; nc < planes; ++nc)
        sums[nc] = add_in_order(parts.data() + nc * plane_chunks, plane_chunks);
      if (dx != nullptr) {
        const std::int64_t chunks = chunks_of(row_size);
        parallel_for(rows * chunks, grain_for(kChunk), [&](std::int64_t begin, std::int64_t end) {
          for (std::int64_t t = begin; t < end; ++t) {
            const std::int64_t k = t % chunks;
            input_grad(t / chunks, k * kChunk, std::min(row_size, (k + 1) * kChunk));
          }
        });
      }
    }

    // dweight, dbias: per channel, over the batch, in double.
    if (grad_weight == nullptr && grad_bias == nullptr) return;
    for (std::int64_t c = 0; c < sizes.channels; ++c) {
      double dw = 0;
      double db = 0;
      for (std::int64_t n = 0; n < sizes.batch; ++n) {
        const ChannelSums<Acc>& s = sums[n * sizes.channels + c];
        dw += static_cast<double>(s.dy_centred) *
              static_cast<double>(rstd_in[n * sizes.groups + c / per_group]);
        db += static_cast<double>(s.dy);
      }
      if (grad_weight != nullptr) static_cast<T*>(grad_weight)[c] = static_cast<T>(dw);
      if (grad_bias != nullptr) static_cast<T*>(grad_bias)[c] = static_cast<T>(db);
    }
  });
}

}  // namespace leangrad::kernels::cpu
