// BatchNorm in CUDA (batch_norm_statistics/forward/backward of kernels/backend.h). The CPU
// kernels (kernels/cpu/batch_norm*.cpp) are the reference; the math (Welford states and their
// merge, the channel affine map, the input-gradient coefficients) is GroupNorm's, shared through
// kernels/group_norm_math.h. Layout and formulas: Note [BatchNorm layout and math]. Math in
// opmath_t<T> (float; double for float64), mean and rstd stored in it.
//
// Note [BatchNorm on CUDA]
//   x is (N, C, S): channel c's N * S values are the N planes x[n, c, :] of S contiguous values,
//   C * S apart. Its reductions (the statistics: Welford states; the backward: sums of dy and of
//   dy (x - mean)) take two kernels, partials then a merge, cut one of two ways by plane size:
//     planes   (S * sizeof(T) >= kPlaneMinBytes: BatchNorm2d and 3d) a channel's values, read as
//              vectors in (n, s) order, are cut into segments, about kPlaneWarps in all and at
//              least kMinSegmentLen values each (so a small C still gets many); a warp reduces a
//              segment (lane i takes its vectors i, i + 32, ..., stepping across planes with no
//              division: PlaneCursor), a shuffle tree merges the lanes, lane 0 writes the partial.
//     columns  (smaller planes, down to BatchNorm1d's S = 1) x is N rows of Q = C * S columns,
//              column q in channel q / S, and neighbouring threads take neighbouring columns, so
//              a warp reads rows (coalesced). Block (column tile, row chunk) is kThreads threads
//              as tile_columns x row_lanes, tile_columns the power of two covering Q up to 32 (a
//              C of 3 still fills its blocks); thread (tx, ty) reduces its column over rows ty,
//              ty + row_lanes, ... of the chunk, kRowBatch rows a step (one Chan merge a step), a
//              tree in shared memory merges the row lanes, and row lane 0 writes the column's
//              partial of the chunk. About kColumnBlocks blocks, chunks of whole rows.
//   The merge kernel gives each channel a team, a warp (up to kWarpTeamMaxPartials partials) or a
//   block: thread i merges partials i, i + team, ... in order, a fixed tree merges the team, and
//   its first thread finishes the channel: mean and rstd; or dweight, dbias and, in training, the
//   input-gradient coefficients (group_norm_input_grad_coefs_centred, in Acc) for the dx pass.
//   forward and dx are elementwise, grid-stride over vectors with the channel of each followed by
//   a PlaneCursor: y = scale[c] x + shift[c] (group_norm_channel_affine), dx = rstd w dy, plus
//   x_coef (x - mean) + const_coef in training (centred, as GroupNorm's fast kernels).
//   Deterministic: no atomics; each partial covers a piece fixed by N, C, S and the dtype (and by
//   whether the pointers allow vector loads), and each merge is a fixed loop or tree, so results
//   never depend on the device's SM count or the grid size. Loads are 16-byte vectors when S is
//   a multiple of the vector width and the pointers are aligned (planes, elementwise); the column
//   kernel loads scalars, a warp's lanes covering whole rows.
#include <algorithm>
#include <cstdint>
#include <optional>

#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/cuda/cuda_common.cuh>
#include <leangrad/kernels/cuda/norm_common.cuh>

namespace leangrad::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarpsPerBlock = kThreads / kWarpSize;
// Planes of at least this many bytes (a cache line) are reduced along planes, smaller by columns.
constexpr std::int64_t kPlaneMinBytes = 128;
// Planes: segments (one warp each) to aim for over all channels (2048 blocks of 8 warps, a few
// waves of the largest GPUs; a constant, so the segments depend only on the sizes), and the
// shortest segment, in values.
constexpr std::int64_t kPlaneWarps = 16384;
constexpr std::int64_t kMinSegmentLen = 1024;
// Columns: blocks to aim for, the widest column tile, rows a thread loads per step, and the
// fewest rows of a chunk per row lane.
constexpr std::int64_t kColumnBlocks = 2048;
constexpr int kMaxTileColumns = kWarpSize;
constexpr int kRowBatch = 4;
constexpr std::int64_t kMinRowsPerLane = 16;
// The merge: a warp per channel up to this many partials, a block above.
constexpr std::int64_t kWarpTeamMaxPartials = 8 * kWarpSize;

// ---- Device helpers --------------------------------------------------------------------------

// Vector v of p (elements [v * kWidth, (v + 1) * kWidth)) as Acc.
template <int kWidth, typename T, typename Acc>
__device__ __forceinline__ void load_acc(const T* p, std::int64_t v, Acc (&out)[kWidth]) {
  const Vector<T, kWidth> in = load_vector<kWidth>(p, v);
#pragma unroll
  for (int lane = 0; lane < kWidth; ++lane)
    out[lane] = static_cast<Acc>(in.val[lane]);
}

// Index i of a sequence of planes of plane_len as (plane = i / plane_len mod planes,
// offset = i % plane_len), advanced by a fixed step with no division: a grid-stride loop's
// channel (planes = C), a lane's sample within a channel segment (planes = N).
struct PlaneCursor {
  std::int64_t plane;
  std::int64_t offset;
  std::int64_t plane_len;
  std::int64_t planes;
  std::int64_t step_planes;
  std::int64_t step_offset;

  __device__ __forceinline__ void advance() {
    offset += step_offset;
    plane += step_planes;
    if (offset >= plane_len) {
      offset -= plane_len;
      ++plane;
    }
    if (plane >= planes) plane -= planes;
  }
};

__device__ __forceinline__ PlaneCursor plane_cursor(std::int64_t i, std::int64_t plane_len,
                                                    std::int64_t planes, std::int64_t step) {
  const std::int64_t plane = i / plane_len % planes;
  return {plane, i % plane_len, plane_len, planes, step / plane_len % planes, step % plane_len};
}

// What the partial kernels reduce. An op reads kInputs arrays (N, C, S) of T and folds kCount
// values of each, all of one channel and converted to Acc, into its State: add(s, values, centre)
// with centre = op.centre(c).
template <typename T>
struct StatisticsOp {
  using Input = T;
  using Acc = opmath_t<T>;
  using State = WelfordState<Acc>;
  using Merge = WelfordMerge;
  static constexpr int kInputs = 1;
  const T* inputs[kInputs];  // x

  __device__ Acc centre(std::int64_t) const { return Acc(0); }
  template <int kCount>
  __device__ State add(State s, const Acc (&values)[kInputs][kCount], Acc) const {
    return welford_merge(s, welford_of_values<kCount>(values[0]));
  }
};

template <typename T>
struct GradSumsOp {
  using Input = T;
  using Acc = opmath_t<T>;
  using State = DySums<Acc>;
  using Merge = DySumsMerge;
  static constexpr int kInputs = 2;
  const T* inputs[kInputs];  // dy, x
  const Acc* mean;

  __device__ Acc centre(std::int64_t c) const { return mean[c]; }
  template <int kCount>
  __device__ State add(State s, const Acc (&values)[kInputs][kCount], Acc m) const {
#pragma unroll
    for (int k = 0; k < kCount; ++k) {
      s.dy += values[0][k];
      s.dy_centred += values[0][k] * (values[1][k] - m);
    }
    return s;
  }
};

// What the merge kernel does with each channel's merged state (Note [BatchNorm on CUDA]).
template <typename Acc>
struct WriteStatistics {
  Acc eps;
  Acc* mean;
  Acc* rstd;

  __device__ void operator()(std::int64_t c, const WelfordState<Acc>& s) const {
    mean[c] = s.mean;
    rstd[c] = welford_rstd(s, eps);
  }
};

// dbias = sum dy, dweight = sum dy (x - mean) rstd (each when not null), and in training the
// coefficients of dx (coefs not null).
template <typename T>
struct WriteGrads {
  using Acc = opmath_t<T>;
  std::int64_t channel_size;  // N S
  const Acc* rstd;
  const T* weight;
  T* grad_weight;
  T* grad_bias;
  GroupInputGradCoefs<Acc>* coefs;

  __device__ void operator()(std::int64_t c, const DySums<Acc>& s) const {
    const Acc r = rstd[c];
    if (grad_bias != nullptr) grad_bias[c] = static_cast<T>(s.dy);
    if (grad_weight != nullptr) grad_weight[c] = static_cast<T>(s.dy_centred * r);
    if (coefs != nullptr) {
      const Acc w = load_or(weight, c, Acc(1));
      coefs[c] = group_norm_input_grad_coefs_centred(r, w * s.dy, w * s.dy_centred, channel_size);
    }
  }
};

// ---- Partial kernels (Note [BatchNorm on CUDA]) ----------------------------------------------

// Planes: warp `item` = c * segments + segment reduces vectors [segment * segment_vectors, ...)
// of channel c (vector j is x[j / plane_vectors, c, j % plane_vectors]) into partials[item].
// The item loop is uniform over a warp, so the shuffles see every lane.
template <typename Op, int kWidth>
__global__ void __launch_bounds__(kThreads)
    batch_norm_plane_partial_kernel(Op op, BatchNormSizes sizes, std::int64_t segments,
                                    std::int64_t segment_vectors,
                                    typename Op::State* __restrict__ partials) {
  using Acc = typename Op::Acc;
  using State = typename Op::State;
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
  const std::int64_t plane_vectors = sizes.spatial / kWidth;
  const std::int64_t channel_vectors = sizes.batch * plane_vectors;
  const std::int64_t items = sizes.channels * segments;
  for (std::int64_t item = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + warp;
       item < items; item += static_cast<std::int64_t>(gridDim.x) * kWarpsPerBlock) {
    const std::int64_t c = item / segments;
    const std::int64_t begin = item % segments * segment_vectors;
    const std::int64_t end = std::min(begin + segment_vectors, channel_vectors);
    const Acc centre = op.centre(c);
    State s;
    PlaneCursor at = plane_cursor(begin + lane, plane_vectors, sizes.batch, kWarpSize);
    for (std::int64_t j = begin + lane; j < end; j += kWarpSize, at.advance()) {
      const std::int64_t v = (at.plane * sizes.channels + c) * plane_vectors + at.offset;
      Acc values[Op::kInputs][kWidth];
#pragma unroll
      for (int k = 0; k < Op::kInputs; ++k)
        load_acc<kWidth>(op.inputs[k], v, values[k]);
      s = op.template add<kWidth>(s, values, centre);
    }
    s = warp_reduce(s, typename Op::Merge{});
    if (lane == 0) partials[item] = s;
  }
}

// Columns: block (blockIdx.x, blockIdx.y) = (column tile, row chunk), blockDim = (tile_columns,
// row_lanes) with tile_columns * row_lanes = kThreads, row_lanes a power of two. Thread (tx, ty)
// reduces column q = tile * tile_columns + tx over rows chunk_begin + ty, + row_lanes, ...; the
// row lanes' states are merged by a halving tree (lane ty takes lane ty + half) into
// partials[chunk * Q + q].
template <typename Op>
__global__ void __launch_bounds__(kThreads)
    batch_norm_column_partial_kernel(Op op, BatchNormSizes sizes, std::int64_t rows_per_chunk,
                                     typename Op::State* __restrict__ partials) {
  using Acc = typename Op::Acc;
  using State = typename Op::State;
  // Raw storage: State has default member initializers, which __shared__ variables cannot run.
  __shared__ __align__(16) unsigned char storage[kThreads * sizeof(State)];
  auto* lane_states = reinterpret_cast<State*>(storage);
  const std::int64_t columns = sizes.channels * sizes.spatial;
  const std::int64_t q = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t chunk = blockIdx.y;
  const std::int64_t r_begin = chunk * rows_per_chunk;
  const std::int64_t r_end = std::min(r_begin + rows_per_chunk, sizes.batch);
  const std::int64_t row_lanes = blockDim.y;
  State s;
  if (q < columns) {
    const Acc centre = op.centre(q / sizes.spatial);
    std::int64_t r = r_begin + threadIdx.y;
    for (; r + (kRowBatch - 1) * row_lanes < r_end; r += kRowBatch * row_lanes) {
      Acc values[Op::kInputs][kRowBatch];
#pragma unroll
      for (int k = 0; k < Op::kInputs; ++k) {
#pragma unroll
        for (int b = 0; b < kRowBatch; ++b)
          values[k][b] = static_cast<Acc>(op.inputs[k][(r + b * row_lanes) * columns + q]);
      }
      s = op.template add<kRowBatch>(s, values, centre);
    }
    for (; r < r_end; r += row_lanes) {
      Acc values[Op::kInputs][1];
#pragma unroll
      for (int k = 0; k < Op::kInputs; ++k)
        values[k][0] = static_cast<Acc>(op.inputs[k][r * columns + q]);
      s = op.template add<1>(s, values, centre);
    }
  }
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const int tile_columns = static_cast<int>(blockDim.x);
  lane_states[ty * tile_columns + tx] = s;
  __syncthreads();
  for (int half = static_cast<int>(blockDim.y) / 2; half > 0; half /= 2) {
    if (ty < half) {
      lane_states[ty * tile_columns + tx] = typename Op::Merge{}(
          lane_states[ty * tile_columns + tx], lane_states[(ty + half) * tile_columns + tx]);
    }
    __syncthreads();
  }
  if (ty == 0 && q < columns) partials[chunk * columns + q] = lane_states[tx];
}

// ---- Merge kernel (Note [BatchNorm on CUDA]) -------------------------------------------------

// Where a channel's partials lie: runs of `run` consecutive partials, `runs` of them run_stride
// apart, channel c's first at c * channel_stride. Planes: one run of the channel's segments;
// columns: a run of its S columns per row chunk.
struct PartialLayout {
  std::int64_t runs = 1;
  std::int64_t run = 1;
  std::int64_t channel_stride = 0;
  std::int64_t run_stride = 0;
  std::int64_t count() const { return runs * run; }
};

// merge() of a team's values into its first thread: a warp's halving tree, or block_reduce.
template <int kTeam, typename V, typename Merge>
__device__ __forceinline__ V team_reduce(V v, Merge merge) {
  if constexpr (kTeam == kThreads) {
    return block_reduce<kThreads>(v, merge, V{});
  } else {
    static_assert(kTeam == kWarpSize);
    return warp_reduce(v, merge);
  }
}

// Team `team` of kTeam threads merges channel c = first + team: thread `sub` its partials
// k = sub, sub + kTeam, ... in order, then team_reduce; the team's first thread calls
// finish(c, state). The channel loop runs the same number of times in every thread of a block
// (a channel past the end merges nothing), so barriers and shuffles see every thread.
template <int kTeam, typename State, typename Merge, typename Finish>
__global__ void __launch_bounds__(kThreads)
    batch_norm_merge_kernel(std::int64_t channels, PartialLayout layout,
                            const State* __restrict__ partials, Finish finish) {
  constexpr int kChannelsPerBlock = kThreads / kTeam;
  const int sub = static_cast<int>(threadIdx.x) % kTeam;
  const int team = static_cast<int>(threadIdx.x) / kTeam;
  const std::int64_t count = layout.runs * layout.run;
  for (std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * kChannelsPerBlock;
       first < channels; first += static_cast<std::int64_t>(gridDim.x) * kChannelsPerBlock) {
    const std::int64_t c = first + team;
    State s;
    if (c < channels) {
      const State* channel_partials = partials + c * layout.channel_stride;
      PlaneCursor at = plane_cursor(sub, layout.run, layout.runs, kTeam);
      for (std::int64_t k = sub; k < count; k += kTeam, at.advance())
        s = Merge{}(s, channel_partials[at.plane * layout.run_stride + at.offset]);
    }
    s = team_reduce<kTeam>(s, Merge{});
    if (c < channels && sub == 0) finish(c, s);
  }
}

// ---- Elementwise kernels (Note [BatchNorm on CUDA]) ------------------------------------------

// y = scale[c] x + shift[c] over kWidth-vectors (S % kWidth == 0: a vector is in one plane).
template <typename T, typename Acc, int kWidth>
__global__ void __launch_bounds__(kThreads)
    batch_norm_forward_kernel(BatchNormSizes sizes, const T* __restrict__ x,
                              const Acc* __restrict__ mean, const Acc* __restrict__ rstd,
                              const T* __restrict__ weight, const T* __restrict__ bias,
                              T* __restrict__ y) {
  const std::int64_t num_vectors = sizes.batch * sizes.channels * (sizes.spatial / kWidth);
  const std::int64_t step = grid_thread_count();
  std::int64_t v = global_thread_index();
  for (PlaneCursor at = plane_cursor(v, sizes.spatial / kWidth, sizes.channels, step);
       v < num_vectors; v += step, at.advance()) {
    const std::int64_t c = at.plane;
    const ChannelAffine<Acc> a = group_norm_channel_affine(
        mean[c], rstd[c], load_or(weight, c, Acc(1)), load_or(bias, c, Acc(0)));
    Acc xv[kWidth];
    load_acc<kWidth>(x, v, xv);
    Vector<T, kWidth> o;
#pragma unroll
    for (int lane = 0; lane < kWidth; ++lane)
      o.val[lane] = static_cast<T>(a.scale * xv[lane] + a.shift);
    store_vector<kWidth>(y, v, o);
  }
}

// dx = rstd[c] w[c] dy, plus x_coef[c] (x - mean[c]) + const_coef[c] when kTraining (coefs from
// the merge kernel; x, mean and coefs unread otherwise).
template <typename T, typename Acc, int kWidth, bool kTraining>
__global__ void __launch_bounds__(kThreads)
    batch_norm_input_grad_kernel(BatchNormSizes sizes, const T* __restrict__ dy,
                                 const T* __restrict__ x, const Acc* __restrict__ mean,
                                 const Acc* __restrict__ rstd, const T* __restrict__ weight,
                                 const GroupInputGradCoefs<Acc>* __restrict__ coefs,
                                 T* __restrict__ dx) {
  const std::int64_t num_vectors = sizes.batch * sizes.channels * (sizes.spatial / kWidth);
  const std::int64_t step = grid_thread_count();
  std::int64_t v = global_thread_index();
  for (PlaneCursor at = plane_cursor(v, sizes.spatial / kWidth, sizes.channels, step);
       v < num_vectors; v += step, at.advance()) {
    const std::int64_t c = at.plane;
    const Acc alpha = rstd[c] * load_or(weight, c, Acc(1));
    Acc gv[kWidth];
    load_acc<kWidth>(dy, v, gv);
    Vector<T, kWidth> o;
    if constexpr (kTraining) {
      const GroupInputGradCoefs<Acc> k = coefs[c];
      const Acc m = mean[c];
      Acc xv[kWidth];
      load_acc<kWidth>(x, v, xv);
#pragma unroll
      for (int lane = 0; lane < kWidth; ++lane)
        o.val[lane] = static_cast<T>(alpha * gv[lane] + k.x_coef * (xv[lane] - m) + k.const_coef);
    } else {
#pragma unroll
      for (int lane = 0; lane < kWidth; ++lane)
        o.val[lane] = static_cast<T>(alpha * gv[lane]);
    }
    store_vector<kWidth>(dx, v, o);
  }
}

// ---- Launchers -------------------------------------------------------------------------------

// Blocks for an elementwise kernel over the (N, C, S) tensor in kWidth-vectors.
template <typename Kernel>
unsigned int elementwise_blocks(Kernel* kernel, const BatchNormSizes& sizes, int width) {
  const std::int64_t num_vectors = sizes.batch * sizes.channels * (sizes.spatial / width);
  return grid_size(kernel, kThreads, ceil_div(num_vectors, kThreads));
}

// Partials of op over every channel (planes or columns, Note [BatchNorm on CUDA]), then the merge
// kernel, which calls finish(c, state) for each channel. aligned: every input allows vector loads.
template <typename Op, typename Finish>
void reduce_channels(const BatchNormSizes& sizes, const Op& op, bool aligned,
                     const Finish& finish) {
  using T = typename Op::Input;
  using State = typename Op::State;
  const cudaStream_t stream = current_stream();
  std::optional<Workspace> ws;
  State* partials = nullptr;
  PartialLayout layout;
  if (sizes.spatial * static_cast<std::int64_t>(sizeof(T)) >= kPlaneMinBytes) {
    with_vector_width<T>(sizes.spatial, aligned, [&]<int kWidth>() {
      const std::int64_t channel_vectors = sizes.channel_size() / kWidth;
      const std::int64_t wanted = ceil_div(kPlaneWarps, sizes.channels);
      const std::int64_t allowed = std::max<std::int64_t>(1, sizes.channel_size() / kMinSegmentLen);
      const std::int64_t segment_vectors = ceil_div(channel_vectors, std::min(wanted, allowed));
      const std::int64_t segments = ceil_div(channel_vectors, segment_vectors);
      const std::int64_t items = sizes.channels * segments;
      ws.emplace(Workspace::bytes_for<State>(items));
      partials = ws->take<State>(items);
      auto* kernel = batch_norm_plane_partial_kernel<Op, kWidth>;
      const unsigned int blocks = grid_size(kernel, kThreads, ceil_div(items, kWarpsPerBlock));
      kernel<<<blocks, kThreads, 0, stream>>>(op, sizes, segments, segment_vectors, partials);
      layout = {1, segments, segments, 0};
    });
  } else {
    const std::int64_t columns = sizes.channels * sizes.spatial;
    int tile_columns = 1;
    while (tile_columns < kMaxTileColumns && tile_columns < columns)
      tile_columns *= 2;
    const int row_lanes = kThreads / tile_columns;
    const std::int64_t column_tiles = ceil_div(columns, tile_columns);
    // At most kColumnBlocks / column_tiles (rounded up) chunks: gridDim.y stays below 65535.
    const std::int64_t chunks_wanted = ceil_div(kColumnBlocks, column_tiles);
    const std::int64_t rows_per_chunk =
        std::max(row_lanes * kMinRowsPerLane, ceil_div(sizes.batch, chunks_wanted));
    const std::int64_t chunks = ceil_div(sizes.batch, rows_per_chunk);
    ws.emplace(Workspace::bytes_for<State>(chunks * columns));
    partials = ws->take<State>(chunks * columns);
    const dim3 grid(static_cast<unsigned int>(column_tiles), static_cast<unsigned int>(chunks));
    batch_norm_column_partial_kernel<Op>
        <<<grid, dim3(tile_columns, row_lanes), 0, stream>>>(op, sizes, rows_per_chunk, partials);
    layout = {chunks, sizes.spatial, sizes.spatial, columns};
  }
  LG_CUDA_CHECK_LAUNCH();
  const auto merge = [&]<int kTeam>() {
    auto* kernel = batch_norm_merge_kernel<kTeam, State, typename Op::Merge, Finish>;
    const unsigned int blocks =
        grid_size(kernel, kThreads, ceil_div(sizes.channels, kThreads / kTeam));
    kernel<<<blocks, kThreads, 0, stream>>>(sizes.channels, layout, partials, finish);
  };
  if (layout.count() <= kWarpTeamMaxPartials) {
    merge.template operator()<kWarpSize>();
  } else {
    merge.template operator()<kThreads>();
  }
  LG_CUDA_CHECK_LAUNCH();
}

}  // namespace

void batch_norm_statistics(DType dtype, const BatchNormSizes& sizes, void* mean, void* rstd,
                           const void* x, double eps) {
  dispatch_floating(dtype, "batch_norm", [&]<typename T>() {
    using Acc = opmath_t<T>;
    const auto* in = static_cast<const T*>(x);
    reduce_channels(sizes, StatisticsOp<T>{{in}}, vector_aligned<T, kVectorWidth<T>>(in),
                    WriteStatistics<Acc>{static_cast<Acc>(eps), static_cast<Acc*>(mean),
                                         static_cast<Acc*>(rstd)});
  });
}

void batch_norm_forward(DType dtype, const BatchNormSizes& sizes, void* out, const void* x,
                        const void* mean, const void* rstd, const void* weight, const void* bias) {
  dispatch_floating(dtype, "batch_norm", [&]<typename T>() {
    using Acc = opmath_t<T>;
    auto* y = static_cast<T*>(out);
    const auto* in = static_cast<const T*>(x);
    with_vector_width<T>(
        sizes.spatial, vector_aligned<T, kVectorWidth<T>>(y, in), [&]<int kWidth>() {
          auto* kernel = batch_norm_forward_kernel<T, Acc, kWidth>;
          kernel<<<elementwise_blocks(kernel, sizes, kWidth), kThreads, 0, current_stream()>>>(
              sizes, in, static_cast<const Acc*>(mean), static_cast<const Acc*>(rstd),
              static_cast<const T*>(weight), static_cast<const T*>(bias), y);
        });
    LG_CUDA_CHECK_LAUNCH();
  });
}

void batch_norm_backward(DType dtype, const BatchNormSizes& sizes, bool training, void* grad_input,
                         void* grad_weight, void* grad_bias, const void* grad_output, const void* x,
                         const void* mean, const void* rstd, const void* weight) {
  dispatch_floating(dtype, "batch_norm_backward", [&]<typename T>() {
    using Acc = opmath_t<T>;
    using Coefs = GroupInputGradCoefs<Acc>;
    auto* dx = static_cast<T*>(grad_input);
    const auto* dy = static_cast<const T*>(grad_output);
    const auto* in = static_cast<const T*>(x);
    const auto* m = static_cast<const Acc*>(mean);
    const auto* r = static_cast<const Acc*>(rstd);
    const auto* w = static_cast<const T*>(weight);
    // The sums' vector width ignores dx, so dweight and dbias do not depend on where dx lies.
    const bool sums_aligned = vector_aligned<T, kVectorWidth<T>>(dy, in);
    // In training dx needs the channel sums (through the coefficients); in evaluation only the
    // weight and bias gradients do.
    const bool dx_coefs = training && dx != nullptr;
    std::optional<Workspace> ws;
    Coefs* coefs = nullptr;
    if (dx_coefs) {
      ws.emplace(Workspace::bytes_for<Coefs>(sizes.channels));
      coefs = ws->take<Coefs>(sizes.channels);
    }
    if (dx_coefs || grad_weight != nullptr || grad_bias != nullptr) {
      reduce_channels(sizes, GradSumsOp<T>{{dy, in}, m}, sums_aligned,
                      WriteGrads<T>{sizes.channel_size(), r, w, static_cast<T*>(grad_weight),
                                    static_cast<T*>(grad_bias), coefs});
    }
    if (dx == nullptr) return;
    const bool dx_aligned = vector_aligned<T, kVectorWidth<T>>(dx, dy, in);
    with_vector_width<T>(sizes.spatial, dx_aligned, [&]<int kWidth>() {
      const auto launch = [&]<bool kTraining>() {
        auto* kernel = batch_norm_input_grad_kernel<T, Acc, kWidth, kTraining>;
        kernel<<<elementwise_blocks(kernel, sizes, kWidth), kThreads, 0, current_stream()>>>(
            sizes, dy, in, m, r, w, coefs, dx);
      };
      if (training) {
        launch.template operator()<true>();
      } else {
        launch.template operator()<false>();
      }
    });
    LG_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace leangrad::kernels::cuda
