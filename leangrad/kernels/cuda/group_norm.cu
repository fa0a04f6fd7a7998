// GroupNorm in CUDA (group_norm_forward/backward of kernels/backend.h). kernels/cpu/group_norm.cpp
// is the reference; the math (Welford states and their merge, the channel affine map, the
// input-gradient coefficients) is shared through kernels/group_norm_math.h. Layout and formulas:
// Note [GroupNorm layout and math]. Every reduction is a fixed tree: no atomics, results depend
// only on the sizes. Math in opmath_t<T> (float; double for float64), mean and rstd stored in it.
//
// Note [GroupNorm strategies]
//   One pass, when a group fits in shared memory (forward: D * HxW values; backward: twice that,
//   dy and x) and there are enough groups to fill the device: one block per group (n, g) loads the
//   group once into shared memory, reduces it, and writes from shared memory. Global traffic is
//   then the minimum: forward read x, write y; backward read dy and x, write dx.
//   Otherwise several passes:
//     forward   statistics (welford_partial: rows = groups, cut into segments when there are too
//               few rows to fill the device) -> forward_finalize (mean, rstd; per-(n, c) scale and
//               shift) -> row_affine (y = scale x + shift): x is read twice;
//     backward  channel_sums (rows = channels (n, c) of HxW: several rows per block when rows are
//               short, segments when they are long) -> backward_finalize (per-group coefficients
//               of dx) -> row_affine (dx = alpha dy + beta (x - centre) + gamma): dy and x are
//               read twice.
//   The backward sums dy and dy (x - mean), and computes dx from x - mean, as the CPU's
//   vectorised kernel does: no cancellation when the mean is far from 0 (Note [GroupNorm layout
//   and math]).
//   The weight and bias gradients are sums over the batch of the per-(n, c) channel sums, reduced
//   by a grid of blocks over (channel tile, batch chunk) and then over the chunks in order.
//   Loads are 16-byte vectors when the run lengths are multiples of the vector width and the
//   pointers are aligned; each vector's statistics are formed locally and merged with one Chan
//   merge (welford_of_values), so no per-element division.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/cuda/cuda_common.cuh>
#include <leangrad/kernels/cuda/norm_common.cuh>

namespace leangrad::kernels::cuda {
namespace {

constexpr int kThreads = 256;
// Shortest segment a block reduces: below this the partials cost more than they save.
constexpr std::int64_t kMinSegmentLen = 4096;
// Longest row the rows-per-block channel-sums kernel takes (longer rows get whole blocks).
constexpr std::int64_t kShortRowMaxLen = 1024;
// Shared memory a one-pass block may use (two blocks of it fit on an H100 SM).
constexpr std::size_t kOnePassMaxBytes = 96 * 1024;
// Batch entries one block of the weight/bias-gradient reduction sums.
constexpr std::int64_t kBatchPerChunk = 64;
constexpr int kChannelTile = 32;  // channels per block of that reduction (threadIdx.x)
constexpr int kBatchLanes = 8;    // batch entries summed side by side (threadIdx.y)

// ---- Device helpers --------------------------------------------------------------------------

// Adds vector v of x to s: local statistics of its kWidth values, then one Chan merge.
template <typename Acc, typename T, int kWidth>
__device__ __forceinline__ WelfordState<Acc> welford_add(WelfordState<Acc> s,
                                                         const Vector<T, kWidth>& v) {
  Acc values[kWidth];
#pragma unroll
  for (int lane = 0; lane < kWidth; ++lane)
    values[lane] = static_cast<Acc>(v.val[lane]);
  return welford_merge(s, welford_of_values<kWidth>(values));
}

// Adds vector g of dy and v of x to s, x centred on its group's mean.
template <typename Acc, typename T, int kWidth>
__device__ __forceinline__ DySums<Acc> dy_sums_add(DySums<Acc> s, const Vector<T, kWidth>& g,
                                                   const Vector<T, kWidth>& v, Acc mean) {
#pragma unroll
  for (int lane = 0; lane < kWidth; ++lane) {
    const Acc gl = static_cast<Acc>(g.val[lane]);
    s.dy += gl;
    s.dy_centred += gl * (static_cast<Acc>(v.val[lane]) - mean);
  }
  return s;
}

// ---- One-pass kernels (Note [GroupNorm strategies]) ------------------------------------------

// Block `row` = (n, g): the group's D * HxW values of x into shared memory, their statistics,
// then y from shared memory. HxW is a multiple of kWidth, so a vector never straddles channels.
template <typename T, typename Acc, int kWidth>
__global__ void __launch_bounds__(kThreads)
    group_norm_forward_one_pass_kernel(GroupNormSizes sizes, const T* __restrict__ x,
                                       const T* __restrict__ weight, const T* __restrict__ bias,
                                       Acc eps, T* __restrict__ y, Acc* __restrict__ mean,
                                       Acc* __restrict__ rstd) {
  extern __shared__ __align__(16) unsigned char smem[];
  auto* group = reinterpret_cast<Vector<T, kWidth>*>(smem);
  const std::int64_t num_rows = sizes.batch * sizes.groups;
  const std::int64_t num_vectors = sizes.group_size() / kWidth;
  const std::int64_t per_group = sizes.channels_per_group();
  const std::int64_t vectors_per_channel = sizes.spatial / kWidth;
  for (std::int64_t row = blockIdx.x; row < num_rows; row += gridDim.x) {
    const T* in = x + row * sizes.group_size();
    WelfordState<Acc> s;
    for (std::int64_t v = threadIdx.x; v < num_vectors; v += kThreads) {
      group[v] = load_vector<kWidth>(in, v);
      s = welford_add<Acc>(s, group[v]);
    }
    s = block_allreduce<kThreads>(s, WelfordMerge{}, WelfordState<Acc>{});
    const Acc group_rstd = welford_rstd(s, eps);
    if (threadIdx.x == 0) {
      mean[row] = s.mean;
      rstd[row] = group_rstd;
    }
    const std::int64_t c0 = (row % sizes.groups) * per_group;
    T* out = y + row * sizes.group_size();
    for (std::int64_t v = threadIdx.x; v < num_vectors; v += kThreads) {
      const std::int64_t c = c0 + v / vectors_per_channel;
      const ChannelAffine<Acc> a = group_norm_channel_affine(
          s.mean, group_rstd, load_or(weight, c, Acc(1)), load_or(bias, c, Acc(0)));
      Vector<T, kWidth> o;
#pragma unroll
      for (int lane = 0; lane < kWidth; ++lane)
        o.val[lane] = static_cast<T>(a.scale * static_cast<Acc>(group[v].val[lane]) + a.shift);
      store_vector<kWidth>(out, v, o);
    }
    __syncthreads();  // the next row overwrites `group`
  }
}

// Block `row` = (n, g): dy and x of the group into shared memory; per channel the sums of dy and
// dy (x - mean) (one warp per channel, written to channel_sums for the weight/bias gradients);
// the group's coefficients; then dx (when asked) from shared memory.
template <typename T, typename Acc, int kWidth>
__global__ void __launch_bounds__(kThreads)
    group_norm_backward_one_pass_kernel(GroupNormSizes sizes, const T* __restrict__ dy,
                                        const T* __restrict__ x, const Acc* __restrict__ mean,
                                        const Acc* __restrict__ rstd, const T* __restrict__ weight,
                                        DySums<Acc>* __restrict__ channel_sums,
                                        T* __restrict__ dx) {
  extern __shared__ __align__(16) unsigned char smem[];
  const std::int64_t num_vectors = sizes.group_size() / kWidth;
  auto* group_dy = reinterpret_cast<Vector<T, kWidth>*>(smem);
  auto* group_x = group_dy + num_vectors;
  __shared__ Acc group_coefs[2];
  const std::int64_t num_rows = sizes.batch * sizes.groups;
  const std::int64_t per_group = sizes.channels_per_group();
  const std::int64_t vectors_per_channel = sizes.spatial / kWidth;
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
  constexpr int kWarps = kThreads / kWarpSize;
  for (std::int64_t row = blockIdx.x; row < num_rows; row += gridDim.x) {
    const std::int64_t offset = row * sizes.group_size();
    for (std::int64_t v = threadIdx.x; v < num_vectors; v += kThreads) {
      group_dy[v] = load_vector<kWidth>(dy + offset, v);
      group_x[v] = load_vector<kWidth>(x + offset, v);
    }
    __syncthreads();
    const std::int64_t n = row / sizes.groups;
    const std::int64_t c0 = (row % sizes.groups) * per_group;
    const Acc m = mean[row];
    // This thread's share of a = sum_c w dy and b_centred = sum_c w dy (x - mean).
    DySums<Acc> weighted;
    for (std::int64_t k = warp; k < per_group; k += kWarps) {
      DySums<Acc> s;
      for (std::int64_t v = k * vectors_per_channel + lane; v < (k + 1) * vectors_per_channel;
           v += kWarpSize)
        s = dy_sums_add<Acc>(s, group_dy[v], group_x[v], m);
      s = warp_allreduce(s, DySumsMerge{});
      if (lane == 0) {
        channel_sums[n * sizes.channels + c0 + k] = s;
        const Acc w = load_or(weight, c0 + k, Acc(1));
        weighted.dy += w * s.dy;
        weighted.dy_centred += w * s.dy_centred;
      }
    }
    weighted = block_reduce<kThreads>(weighted, DySumsMerge{}, DySums<Acc>{});
    if (threadIdx.x == 0) {
      const GroupInputGradCoefs<Acc> k = group_norm_input_grad_coefs_centred(
          rstd[row], weighted.dy, weighted.dy_centred, sizes.group_size());
      group_coefs[0] = k.x_coef;
      group_coefs[1] = k.const_coef;
    }
    __syncthreads();
    if (dx != nullptr) {
      const Acc r = rstd[row];
      for (std::int64_t v = threadIdx.x; v < num_vectors; v += kThreads) {
        const Acc alpha = r * load_or(weight, c0 + v / vectors_per_channel, Acc(1));
        Vector<T, kWidth> o;
#pragma unroll
        for (int e = 0; e < kWidth; ++e)
          o.val[e] = static_cast<T>(alpha * static_cast<Acc>(group_dy[v].val[e]) +
                                    group_coefs[0] * (static_cast<Acc>(group_x[v].val[e]) - m) +
                                    group_coefs[1]);
        store_vector<kWidth>(dx + offset, v, o);
      }
    }
    __syncthreads();  // the next row overwrites the shared arrays
  }
}

// ---- Multi-pass kernels ----------------------------------------------------------------------

// Forward statistics, pass 1: block `item` = row * num_segments + segment runs Welford over
// vectors [segment * segment_vectors, ...) of row `row` of x (a group); the block's merged state
// goes to partials[item].
template <typename T, typename Acc, int kWidth>
__global__ void __launch_bounds__(kThreads)
    group_norm_welford_partial_kernel(const T* __restrict__ x, std::int64_t num_items,
                                      std::int64_t row_vectors, std::int64_t num_segments,
                                      std::int64_t segment_vectors,
                                      WelfordState<Acc>* __restrict__ partials) {
  for (std::int64_t item = blockIdx.x; item < num_items; item += gridDim.x) {
    const std::int64_t row = item / num_segments;
    const std::int64_t begin = (item % num_segments) * segment_vectors;
    const std::int64_t end = std::min(begin + segment_vectors, row_vectors);
    const T* run = x + row * row_vectors * kWidth;
    WelfordState<Acc> s;
    for (std::int64_t v = begin + threadIdx.x; v < end; v += kThreads)
      s = welford_add<Acc>(s, load_vector<kWidth>(run, v));
    s = block_reduce<kThreads>(s, WelfordMerge{}, WelfordState<Acc>{});
    if (threadIdx.x == 0) partials[item] = s;
  }
}

// Forward statistics, pass 2: block `row` = (n, g) merges the row's partials (fixed tree), writes
// mean and rstd, and the scale/shift of each of the group's channels: scale[n * C + c],
// shift[n * C + c] (group_norm_channel_affine).
template <typename T, typename Acc>
__global__ void __launch_bounds__(kThreads)
    group_norm_forward_finalize_kernel(GroupNormSizes sizes, std::int64_t num_segments,
                                       const WelfordState<Acc>* __restrict__ partials,
                                       const T* __restrict__ weight, const T* __restrict__ bias,
                                       Acc eps, Acc* __restrict__ mean, Acc* __restrict__ rstd,
                                       Acc* __restrict__ scale, Acc* __restrict__ shift) {
  const std::int64_t num_rows = sizes.batch * sizes.groups;
  const std::int64_t per_group = sizes.channels_per_group();
  for (std::int64_t row = blockIdx.x; row < num_rows; row += gridDim.x) {
    WelfordState<Acc> s;
    for (std::int64_t k = threadIdx.x; k < num_segments; k += kThreads)
      s = welford_merge(s, partials[row * num_segments + k]);
    s = block_allreduce<kThreads>(s, WelfordMerge{}, WelfordState<Acc>{});
    const Acc group_rstd = welford_rstd(s, eps);
    if (threadIdx.x == 0) {
      mean[row] = s.mean;
      rstd[row] = group_rstd;
    }
    const std::int64_t n = row / sizes.groups;
    const std::int64_t c0 = (row % sizes.groups) * per_group;
    for (std::int64_t c = c0 + threadIdx.x; c < c0 + per_group; c += kThreads) {
      const ChannelAffine<Acc> a = group_norm_channel_affine(
          s.mean, group_rstd, load_or(weight, c, Acc(1)), load_or(bias, c, Acc(0)));
      scale[n * sizes.channels + c] = a.scale;
      shift[n * sizes.channels + c] = a.shift;
    }
  }
}

// Backward pass 1, short rows: each row (n, c) of row_vectors vectors is summed by a segment of
// kThreadsPerRow lanes, kThreads / kThreadsPerRow rows per block. The loop runs the same number of
// times in every lane of a warp (a row past the end sums nothing), so the shuffles see full warps.
// Row n * C + c belongs to group row (n * C + c) / per_group = n * G + g, whose mean centres x.
template <typename T, typename Acc, int kWidth, int kThreadsPerRow>
__global__ void __launch_bounds__(kThreads)
    group_norm_channel_sums_rows_kernel(const T* __restrict__ dy, const T* __restrict__ x,
                                        const Acc* __restrict__ mean, std::int64_t per_group,
                                        std::int64_t num_rows, std::int64_t row_vectors,
                                        DySums<Acc>* __restrict__ sums) {
  constexpr int kRowsPerBlock = kThreads / kThreadsPerRow;
  const int sub = static_cast<int>(threadIdx.x) % kThreadsPerRow;
  const int block_row = static_cast<int>(threadIdx.x) / kThreadsPerRow;
  for (std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * kRowsPerBlock; first < num_rows;
       first += static_cast<std::int64_t>(gridDim.x) * kRowsPerBlock) {
    const std::int64_t row = first + block_row;
    const bool valid = row < num_rows;
    DySums<Acc> s;
    if (valid) {
      const T* g = dy + row * row_vectors * kWidth;
      const T* v = x + row * row_vectors * kWidth;
      const Acc m = mean[row / per_group];
      for (std::int64_t i = sub; i < row_vectors; i += kThreadsPerRow)
        s = dy_sums_add<Acc>(s, load_vector<kWidth>(g, i), load_vector<kWidth>(v, i), m);
    }
    s = warp_allreduce<kThreadsPerRow>(s, DySumsMerge{});
    if (valid && sub == 0) sums[row] = s;
  }
}

// Backward pass 1, long rows: block `item` = row * num_segments + segment sums dy and
// dy (x - mean) over its segment of row (n, c) into partials[item] (the mean of group row
// (n * C + c) / per_group).
template <typename T, typename Acc, int kWidth>
__global__ void __launch_bounds__(kThreads)
    group_norm_channel_sums_partial_kernel(const T* __restrict__ dy, const T* __restrict__ x,
                                           const Acc* __restrict__ mean, std::int64_t per_group,
                                           std::int64_t num_items, std::int64_t row_vectors,
                                           std::int64_t num_segments, std::int64_t segment_vectors,
                                           DySums<Acc>* __restrict__ partials) {
  for (std::int64_t item = blockIdx.x; item < num_items; item += gridDim.x) {
    const std::int64_t row = item / num_segments;
    const std::int64_t begin = (item % num_segments) * segment_vectors;
    const std::int64_t end = std::min(begin + segment_vectors, row_vectors);
    const T* g = dy + row * row_vectors * kWidth;
    const T* v = x + row * row_vectors * kWidth;
    const Acc m = mean[row / per_group];
    DySums<Acc> s;
    for (std::int64_t i = begin + threadIdx.x; i < end; i += kThreads)
      s = dy_sums_add<Acc>(s, load_vector<kWidth>(g, i), load_vector<kWidth>(v, i), m);
    s = block_reduce<kThreads>(s, DySumsMerge{}, DySums<Acc>{});
    if (threadIdx.x == 0) partials[item] = s;
  }
}

// Backward pass 2: block `row` = (n, g) merges each of its channels' partials into
// channel_sums[n * C + c] (segments in order), sums a = sum w dy and b_centred = sum w dy (x -
// mean) over the group, and writes the coefficients of dx = alpha dy + beta (x - centre) + gamma
// for its channels (centre: the group's mean).
template <typename T, typename Acc>
__global__ void __launch_bounds__(kThreads)
    group_norm_backward_finalize_kernel(GroupNormSizes sizes, std::int64_t num_segments,
                                        const DySums<Acc>* __restrict__ partials,
                                        const T* __restrict__ weight, const Acc* __restrict__ mean,
                                        const Acc* __restrict__ rstd,
                                        DySums<Acc>* __restrict__ channel_sums,
                                        Acc* __restrict__ alpha, Acc* __restrict__ beta,
                                        Acc* __restrict__ gamma, Acc* __restrict__ centre) {
  const std::int64_t num_rows = sizes.batch * sizes.groups;
  const std::int64_t per_group = sizes.channels_per_group();
  for (std::int64_t row = blockIdx.x; row < num_rows; row += gridDim.x) {
    const std::int64_t n = row / sizes.groups;
    const std::int64_t c0 = (row % sizes.groups) * per_group;
    DySums<Acc> weighted;  // (a, b_centred)
    for (std::int64_t c = c0 + threadIdx.x; c < c0 + per_group; c += kThreads) {
      const std::int64_t nc = n * sizes.channels + c;
      DySums<Acc> s;
      for (std::int64_t k = 0; k < num_segments; ++k)
        s = DySumsMerge{}(s, partials[nc * num_segments + k]);
      channel_sums[nc] = s;
      const Acc w = load_or(weight, c, Acc(1));
      weighted.dy += w * s.dy;
      weighted.dy_centred += w * s.dy_centred;
    }
    weighted = block_allreduce<kThreads>(weighted, DySumsMerge{}, DySums<Acc>{});
    const GroupInputGradCoefs<Acc> k = group_norm_input_grad_coefs_centred(
        rstd[row], weighted.dy, weighted.dy_centred, sizes.group_size());
    const Acc r = rstd[row];
    for (std::int64_t c = c0 + threadIdx.x; c < c0 + per_group; c += kThreads) {
      const std::int64_t nc = n * sizes.channels + c;
      alpha[nc] = r * load_or(weight, c, Acc(1));
      beta[nc] = k.x_coef;
      gamma[nc] = k.const_coef;
      centre[nc] = mean[row];
    }
  }
}

// out = alpha[r] * a + beta[r] * (b - centre[r]) + gamma[r] elementwise, r = (flat index) /
// row_len the (n, c) row; b, beta and centre are absent unless kTwoInputs. Grid-stride over
// kWidth-vectors, which never straddle two rows (row_len % kWidth == 0). Index: uint32 when every
// index fits, so the one division per vector is cheap.
template <typename T, typename Acc, int kWidth, bool kTwoInputs, typename Index>
__global__ void group_norm_row_affine_kernel(Index numel, Index row_len, T* __restrict__ out,
                                             const T* __restrict__ a, const T* __restrict__ b,
                                             const Acc* __restrict__ alpha,
                                             const Acc* __restrict__ beta,
                                             const Acc* __restrict__ gamma,
                                             const Acc* __restrict__ centre) {
  const Index num_vectors = numel / kWidth;
  const auto step = static_cast<Index>(grid_thread_count());
  for (auto v = static_cast<Index>(global_thread_index()); v < num_vectors; v += step) {
    const Index row = v * kWidth / row_len;
    const Acc al = alpha[row];
    const Acc ga = gamma[row];
    const Vector<T, kWidth> va = load_vector<kWidth>(a, v);
    Vector<T, kWidth> vo;
    if constexpr (kTwoInputs) {
      const Acc be = beta[row];
      const Acc ce = centre[row];
      const Vector<T, kWidth> vb = load_vector<kWidth>(b, v);
#pragma unroll
      for (int lane = 0; lane < kWidth; ++lane)
        vo.val[lane] = static_cast<T>(al * static_cast<Acc>(va.val[lane]) +
                                      be * (static_cast<Acc>(vb.val[lane]) - ce) + ga);
    } else {
#pragma unroll
      for (int lane = 0; lane < kWidth; ++lane)
        vo.val[lane] = static_cast<T>(al * static_cast<Acc>(va.val[lane]) + ga);
    }
    store_vector<kWidth>(out, v, vo);
  }
}

// Weight/bias gradients, pass 1: block b owns channel tile b % channel_tiles and batch chunk
// b / channel_tiles (one grid dimension: either count may pass gridDim.y's 65535, a batch of more
// than 4M samples or BatchNorm's C groups of one channel); thread (tx, ty) sums channel
// c = tile * kChannelTile + tx over n = chunk_begin + ty, + kBatchLanes, ...; the kBatchLanes sums
// are then added in order of ty: partials[chunk * C + c] = (dweight, dbias).
template <typename Acc>
__global__ void group_norm_weight_bias_partial_kernel(GroupNormSizes sizes,
                                                      std::int64_t channel_tiles,
                                                      const DySums<Acc>* __restrict__ channel_sums,
                                                      const Acc* __restrict__ rstd,
                                                      WeightBiasGrad<Acc>* __restrict__ partials) {
  __shared__ Acc lane_sums[kBatchLanes][kChannelTile][2];
  const std::int64_t tile = static_cast<std::int64_t>(blockIdx.x) % channel_tiles;
  const std::int64_t chunk = static_cast<std::int64_t>(blockIdx.x) / channel_tiles;
  const std::int64_t c = tile * kChannelTile + threadIdx.x;
  const std::int64_t n_begin = chunk * kBatchPerChunk;
  const std::int64_t n_end = std::min(n_begin + kBatchPerChunk, sizes.batch);
  Acc dw = 0;
  Acc db = 0;
  if (c < sizes.channels) {
    const std::int64_t g = c / sizes.channels_per_group();
    for (std::int64_t n = n_begin + threadIdx.y; n < n_end; n += kBatchLanes) {
      const DySums<Acc> s = channel_sums[n * sizes.channels + c];
      const std::int64_t row = n * sizes.groups + g;
      dw += s.dy_centred * rstd[row];
      db += s.dy;
    }
  }
  lane_sums[threadIdx.y][threadIdx.x][0] = dw;
  lane_sums[threadIdx.y][threadIdx.x][1] = db;
  __syncthreads();
  if (threadIdx.y == 0 && c < sizes.channels) {
    for (int k = 1; k < kBatchLanes; ++k) {
      dw += lane_sums[k][threadIdx.x][0];
      db += lane_sums[k][threadIdx.x][1];
    }
    partials[chunk * sizes.channels + c] = {dw, db};
  }
}

// Weight/bias gradients, pass 2: the chunks' partials of channel c in order.
template <typename T, typename Acc>
__global__ void group_norm_weight_bias_sum_kernel(std::int64_t channels, std::int64_t chunks,
                                                  const WeightBiasGrad<Acc>* __restrict__ partials,
                                                  T* __restrict__ grad_weight,
                                                  T* __restrict__ grad_bias) {
  for (std::int64_t c = global_thread_index(); c < channels; c += grid_thread_count()) {
    Acc dw = 0;
    Acc db = 0;
    for (std::int64_t k = 0; k < chunks; ++k) {
      dw += partials[k * channels + c].weight;
      db += partials[k * channels + c].bias;
    }
    if (grad_weight != nullptr) grad_weight[c] = static_cast<T>(dw);
    if (grad_bias != nullptr) grad_bias[c] = static_cast<T>(db);
  }
}

// ---- Launchers -------------------------------------------------------------------------------

// How rows of row_vectors vectors are cut into segments, one block each (Note [GroupNorm
// strategies]): enough (row, segment) items to fill one wave of blocks.
struct Segmentation {
  std::int64_t num_segments = 1;
  std::int64_t segment_vectors = 0;
};

Segmentation segment_rows(std::int64_t num_rows, std::int64_t row_vectors, int width,
                          std::int64_t wave_blocks) {
  std::int64_t segments = 1;
  if (num_rows < wave_blocks) {
    const std::int64_t wanted = ceil_div(wave_blocks, num_rows);
    const std::int64_t allowed = std::max<std::int64_t>(1, row_vectors * width / kMinSegmentLen);
    segments = std::min(wanted, allowed);
  }
  const std::int64_t len = ceil_div(row_vectors, segments);
  return {ceil_div(row_vectors, len), len};
}

// Note [One-pass shared memory limit]
//   Above 48 KiB a kernel launches with dynamic shared memory only up to the limit that
//   cudaFuncSetAttribute gave it on the device, a setting of the (kernel, device) pair, not of a
//   launch. Set to each call's own size, it would race: a thread setting 16 KiB between another
//   thread's setting of 96 KiB and its launch makes that launch fail (cudaErrorInvalidValue). So
//   the limit only ever rises, under a mutex, to the largest size asked for so far.
void allow_dynamic_shared_memory(const void* kernel, std::size_t bytes) {
  static std::mutex mutex;
  static auto* allowed = new std::map<std::pair<const void*, int>, std::size_t>();  // leaked
  int device = 0;
  LG_CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mutex);
  std::size_t& limit = (*allowed)[{kernel, device}];
  if (bytes <= limit) return;
  LG_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(bytes)));
  limit = bytes;
}

// Whether a one-pass kernel with `bytes` of dynamic shared memory per group can run here, and
// with enough groups to keep every SM busy.
template <typename Kernel>
bool one_pass_fits(Kernel* kernel, std::size_t bytes, std::int64_t num_rows) {
  if (bytes > kOnePassMaxBytes || num_rows < sm_count()) return false;
  int device = 0;
  int max_optin = 0;
  LG_CUDA_CHECK(cudaGetDevice(&device));
  LG_CUDA_CHECK(
      cudaDeviceGetAttribute(&max_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (bytes > static_cast<std::size_t>(max_optin)) return false;
  allow_dynamic_shared_memory(reinterpret_cast<const void*>(kernel), bytes);
  return true;
}

// out = alpha * a (+ beta * (b - centre)) + gamma over (N * C) rows of HxW.
template <typename T, typename Acc, int kWidth, bool kTwoInputs>
void launch_row_affine(const GroupNormSizes& sizes, T* out, const T* a, const T* b,
                       const Acc* alpha, const Acc* beta, const Acc* gamma, const Acc* centre) {
  const std::int64_t numel = sizes.batch * sizes.channels * sizes.spatial;
  const auto launch = [&]<typename Index>() {
    auto* kernel = group_norm_row_affine_kernel<T, Acc, kWidth, kTwoInputs, Index>;
    const unsigned int blocks =
        grid_size(kernel, kThreads, ceil_div(ceil_div(numel, kWidth), kThreads));
    kernel<<<blocks, kThreads, 0, current_stream()>>>(static_cast<Index>(numel),
                                                      static_cast<Index>(sizes.spatial), out, a, b,
                                                      alpha, beta, gamma, centre);
  };
  if (numel <= std::numeric_limits<std::int32_t>::max()) {
    launch.template operator()<std::uint32_t>();
  } else {
    launch.template operator()<std::int64_t>();
  }
  LG_CUDA_CHECK_LAUNCH();
}

template <typename T, int kWidth>
void forward(const GroupNormSizes& sizes, T* y, opmath_t<T>* mean, opmath_t<T>* rstd, const T* x,
             const T* weight, const T* bias, double eps) {
  using Acc = opmath_t<T>;
  const cudaStream_t stream = current_stream();
  const std::int64_t num_rows = sizes.batch * sizes.groups;
  const std::int64_t row_vectors = sizes.group_size() / kWidth;
  const auto one_pass_bytes = static_cast<std::size_t>(sizes.group_size()) * sizeof(T);
  auto* one_pass = group_norm_forward_one_pass_kernel<T, Acc, kWidth>;
  if (one_pass_fits(one_pass, one_pass_bytes, num_rows)) {
    const unsigned int blocks = grid_size(one_pass, kThreads, num_rows, one_pass_bytes);
    one_pass<<<blocks, kThreads, one_pass_bytes, stream>>>(sizes, x, weight, bias,
                                                           static_cast<Acc>(eps), y, mean, rstd);
    LG_CUDA_CHECK_LAUNCH();
    return;
  }
  auto* partial = group_norm_welford_partial_kernel<T, Acc, kWidth>;
  const Segmentation seg =
      segment_rows(num_rows, row_vectors, kWidth, wave_blocks(partial, kThreads));
  const std::int64_t num_items = num_rows * seg.num_segments;
  const std::int64_t num_channels = sizes.batch * sizes.channels;
  Workspace ws(Workspace::bytes_for<WelfordState<Acc>>(num_items) +
               2 * Workspace::bytes_for<Acc>(num_channels));
  auto* partials = ws.take<WelfordState<Acc>>(num_items);
  Acc* scale = ws.take<Acc>(num_channels);
  Acc* shift = ws.take<Acc>(num_channels);
  partial<<<grid_size(partial, kThreads, num_items), kThreads, 0, stream>>>(
      x, num_items, row_vectors, seg.num_segments, seg.segment_vectors, partials);
  LG_CUDA_CHECK_LAUNCH();
  auto* finalize = group_norm_forward_finalize_kernel<T, Acc>;
  finalize<<<grid_size(finalize, kThreads, num_rows), kThreads, 0, stream>>>(
      sizes, seg.num_segments, partials, weight, bias, static_cast<Acc>(eps), mean, rstd, scale,
      shift);
  LG_CUDA_CHECK_LAUNCH();
  launch_row_affine<T, Acc, kWidth, /*kTwoInputs=*/false>(sizes, y, x, nullptr, scale, nullptr,
                                                          shift, nullptr);
}

// Per-(n, c) sums of dy and dy (x - mean) into channel_sums (multi-pass backward, pass 1 and the
// merge of pass 2), then the dx coefficients.
template <typename T, int kWidth>
void backward_channel_sums(const GroupNormSizes& sizes, const T* dy, const T* x,
                           const opmath_t<T>* mean, const opmath_t<T>* rstd, const T* weight,
                           DySums<opmath_t<T>>* channel_sums, opmath_t<T>* alpha, opmath_t<T>* beta,
                           opmath_t<T>* gamma, opmath_t<T>* centre) {
  using Acc = opmath_t<T>;
  const cudaStream_t stream = current_stream();
  const std::int64_t num_channels = sizes.batch * sizes.channels;  // the rows of pass 1
  const std::int64_t row_vectors = sizes.spatial / kWidth;
  // One partial per (row, segment); rows are short (one block holds several) or cut into
  // segments (Note [GroupNorm strategies]).
  std::int64_t num_segments = 1;
  std::optional<Workspace> partials_ws;
  DySums<Acc>* partials = nullptr;
  if (sizes.spatial <= kShortRowMaxLen) {
    partials_ws.emplace(Workspace::bytes_for<DySums<Acc>>(num_channels));
    partials = partials_ws->take<DySums<Acc>>(num_channels);
    const auto launch_rows = [&]<int kThreadsPerRow>() {
      auto* kernel = group_norm_channel_sums_rows_kernel<T, Acc, kWidth, kThreadsPerRow>;
      const std::int64_t blocks_needed = ceil_div(num_channels, kThreads / kThreadsPerRow);
      kernel<<<grid_size(kernel, kThreads, blocks_needed), kThreads, 0, stream>>>(
          dy, x, mean, sizes.channels_per_group(), num_channels, row_vectors, partials);
    };
    if (row_vectors <= 2) {
      launch_rows.template operator()<1>();
    } else if (row_vectors <= 16) {
      launch_rows.template operator()<8>();
    } else {
      launch_rows.template operator()<32>();
    }
    LG_CUDA_CHECK_LAUNCH();
  } else {
    auto* kernel = group_norm_channel_sums_partial_kernel<T, Acc, kWidth>;
    const Segmentation seg =
        segment_rows(num_channels, row_vectors, kWidth, wave_blocks(kernel, kThreads));
    num_segments = seg.num_segments;
    const std::int64_t num_items = num_channels * seg.num_segments;
    partials_ws.emplace(Workspace::bytes_for<DySums<Acc>>(num_items));
    partials = partials_ws->take<DySums<Acc>>(num_items);
    kernel<<<grid_size(kernel, kThreads, num_items), kThreads, 0, stream>>>(
        dy, x, mean, sizes.channels_per_group(), num_items, row_vectors, seg.num_segments,
        seg.segment_vectors, partials);
    LG_CUDA_CHECK_LAUNCH();
  }
  auto* finalize = group_norm_backward_finalize_kernel<T, Acc>;
  finalize<<<grid_size(finalize, kThreads, sizes.batch * sizes.groups), kThreads, 0, stream>>>(
      sizes, num_segments, partials, weight, mean, rstd, channel_sums, alpha, beta, gamma, centre);
  LG_CUDA_CHECK_LAUNCH();
}

template <typename T>
void weight_bias_grads(const GroupNormSizes& sizes, const DySums<opmath_t<T>>* channel_sums,
                       const opmath_t<T>* rstd, T* grad_weight, T* grad_bias) {
  using Acc = opmath_t<T>;
  const std::int64_t chunks = ceil_div(sizes.batch, kBatchPerChunk);
  Workspace ws(Workspace::bytes_for<WeightBiasGrad<Acc>>(chunks * sizes.channels));
  auto* partials = ws.take<WeightBiasGrad<Acc>>(chunks * sizes.channels);
  const std::int64_t channel_tiles = ceil_div(sizes.channels, kChannelTile);
  // One block per (tile, chunk), flattened into gridDim.x: about N C / 2048 blocks, below its
  // 2^31 - 1 for any tensor that fits in memory.
  const auto blocks = static_cast<unsigned int>(channel_tiles * chunks);
  group_norm_weight_bias_partial_kernel<Acc>
      <<<blocks, dim3(kChannelTile, kBatchLanes), 0, current_stream()>>>(
          sizes, channel_tiles, channel_sums, rstd, partials);
  LG_CUDA_CHECK_LAUNCH();
  auto* sum = group_norm_weight_bias_sum_kernel<T, Acc>;
  sum<<<grid_size(sum, kThreads, ceil_div(sizes.channels, kThreads)), kThreads, 0,
        current_stream()>>>(sizes.channels, chunks, partials, grad_weight, grad_bias);
  LG_CUDA_CHECK_LAUNCH();
}

template <typename T, int kWidth>
void backward(const GroupNormSizes& sizes, T* dx, T* grad_weight, T* grad_bias, const T* dy,
              const T* x, const opmath_t<T>* mean, const opmath_t<T>* rstd, const T* weight) {
  using Acc = opmath_t<T>;
  const std::int64_t num_channels = sizes.batch * sizes.channels;
  const std::int64_t num_rows = sizes.batch * sizes.groups;
  Workspace ws(Workspace::bytes_for<DySums<Acc>>(num_channels) +
               4 * Workspace::bytes_for<Acc>(num_channels));
  auto* channel_sums = ws.take<DySums<Acc>>(num_channels);
  const auto one_pass_bytes = 2 * static_cast<std::size_t>(sizes.group_size()) * sizeof(T);
  auto* one_pass = group_norm_backward_one_pass_kernel<T, Acc, kWidth>;
  if (one_pass_fits(one_pass, one_pass_bytes, num_rows)) {
    one_pass<<<grid_size(one_pass, kThreads, num_rows, one_pass_bytes), kThreads, one_pass_bytes,
               current_stream()>>>(sizes, dy, x, mean, rstd, weight, channel_sums, dx);
    LG_CUDA_CHECK_LAUNCH();
  } else {
    Acc* alpha = ws.take<Acc>(num_channels);
    Acc* beta = ws.take<Acc>(num_channels);
    Acc* gamma = ws.take<Acc>(num_channels);
    Acc* centre = ws.take<Acc>(num_channels);
    backward_channel_sums<T, kWidth>(sizes, dy, x, mean, rstd, weight, channel_sums, alpha, beta,
                                     gamma, centre);
    if (dx != nullptr) {
      launch_row_affine<T, Acc, kWidth, /*kTwoInputs=*/true>(sizes, dx, dy, x, alpha, beta, gamma,
                                                             centre);
    }
  }
  if (grad_weight != nullptr || grad_bias != nullptr)
    weight_bias_grads<T>(sizes, channel_sums, rstd, grad_weight, grad_bias);
}

// Calls f.template operator()<T, kWidth>() with the 16-byte width of T when HxW is a multiple of
// it and every pointer is aligned, else width 1.
}  // namespace

void group_norm_forward(DType dtype, const GroupNormSizes& sizes, void* out, void* mean, void* rstd,
                        const void* x, const void* weight, const void* bias, double eps) {
  dispatch_floating(dtype, "group_norm", [&]<typename T>() {
    using Acc = opmath_t<T>;
    auto* y = static_cast<T*>(out);
    const auto* in = static_cast<const T*>(x);
    with_vector_width<T>(
        sizes.spatial, vector_aligned<T, kVectorWidth<T>>(y, in), [&]<int kWidth>() {
          forward<T, kWidth>(sizes, y, static_cast<Acc*>(mean), static_cast<Acc*>(rstd), in,
                             static_cast<const T*>(weight), static_cast<const T*>(bias), eps);
        });
  });
}

void group_norm_backward(DType dtype, const GroupNormSizes& sizes, void* grad_input,
                         void* grad_weight, void* grad_bias, const void* grad_output, const void* x,
                         const void* mean, const void* rstd, const void* weight) {
  dispatch_floating(dtype, "group_norm_backward", [&]<typename T>() {
    using Acc = opmath_t<T>;
    auto* dx = static_cast<T*>(grad_input);
    const auto* dy = static_cast<const T*>(grad_output);
    const auto* in = static_cast<const T*>(x);
    with_vector_width<T>(
        sizes.spatial, vector_aligned<T, kVectorWidth<T>>(dx, dy, in), [&]<int kWidth>() {
          backward<T, kWidth>(sizes, dx, static_cast<T*>(grad_weight), static_cast<T*>(grad_bias),
                              dy, in, static_cast<const Acc*>(mean), static_cast<const Acc*>(rstd),
                              static_cast<const T*>(weight));
        });
  });
}

}  // namespace leangrad::kernels::cuda
