// GroupNorm in CUDA (kernels/cuda/groupnorm.h). kernels/cpu/groupnorm.cpp is the reference; the
// math (Welford merge, channel affine map, input-gradient coefficients) is shared through
// kernels/groupnorm_math.h. Layout and formulas: Note [GroupNorm layout and math].
//
// Policy:
//   - A "row" is a contiguous run reduced to one result: a group (n, g) of D * HxW elements in
//     the forward, a channel (n, c) of HxW elements in the backward. When there are fewer rows
//     than kTargetBlocks, each row is cut into segments (of at least kMinSegmentLen elements) and
//     one block reduces each (row, segment) into a partial in a workspace: a few large groups
//     still fill the GPU, where one block per group (PyTorch's choice) leaves most SMs idle.
//     Partials are merged by one block per group, in a fixed tree: no atomics, results depend
//     only on the sizes.
//   - Elementwise passes see x as (N * C) rows of HxW and apply out = alpha[row] * a +
//     beta[row] * b + gamma[row] with per-(n, c) coefficients computed beforehand, so the forward
//     normalize + affine and the backward dx are the same kernel.
//   - Loads are 16-byte vectors when HxW (or the row length) is a multiple of the vector width
//     and the pointers are aligned, scalar otherwise. Math in opmath_t<T> (float; double for
//     float64), mean and rstd stored in it.
// Kernels: forward  welford_partial -> forward_finalize (mean, rstd, scale, shift) -> row_affine;
//          backward channel_sums_partial -> backward_finalize (per-group coefficients, per-channel
//          sums) -> weight_bias_grad (if asked) -> row_affine (dx, if asked).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/allocator.h"
#include "core/cuda.h"
#include "core/cuda/cuda_check.h"
#include "kernels/cuda/groupnorm.h"
#include "kernels/dispatch.h"

namespace leangrad::kernels::cuda {
namespace {

constexpr int kWarpSize = 32;
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / kWarpSize;
constexpr int kVectorBytes = 16;
// Enough blocks of kThreads to fill an H100 (132 SMs x 8 resident blocks) once.
constexpr std::int64_t kTargetBlocks = 1024;
// Shortest segment a block reduces: below this the partials cost more than they save.
constexpr std::int64_t kMinSegmentLen = 4096;
// Grid cap of the grid-stride kernels.
constexpr std::int64_t kMaxGrid = 1 << 20;

// ---- Device helpers --------------------------------------------------------------------------

template <typename T, int kWidth>
struct alignas(sizeof(T) * kWidth) Vector {
  T val[kWidth];
};

// The per-(n, c) sums of the backward (Note [GroupNorm layout and math]).
template <typename Acc>
struct DySums {
  Acc dy = Acc(0);
  Acc dy_x = Acc(0);
};

template <typename Acc>
struct WelfordMerge {
  __device__ WelfordState<Acc> operator()(WelfordState<Acc> a, WelfordState<Acc> b) const {
    return welford_merge(a, b);
  }
};
template <typename Acc>
struct DySumsMerge {
  __device__ DySums<Acc> operator()(DySums<Acc> a, DySums<Acc> b) const {
    return {a.dy + b.dy, a.dy_x + b.dy_x};
  }
};

template <typename Acc>
__device__ __forceinline__ WelfordState<Acc> shfl_down(WelfordState<Acc> s, int offset) {
  WelfordState<Acc> r;
  r.mean = __shfl_down_sync(0xffffffffu, s.mean, offset);
  r.m2 = __shfl_down_sync(0xffffffffu, s.m2, offset);
  r.count = __shfl_down_sync(0xffffffffu, static_cast<long long>(s.count), offset);
  return r;
}
template <typename Acc>
__device__ __forceinline__ DySums<Acc> shfl_down(DySums<Acc> s, int offset) {
  return {__shfl_down_sync(0xffffffffu, s.dy, offset),
          __shfl_down_sync(0xffffffffu, s.dy_x, offset)};
}

// Thread 0 gets the merge of the block's kThreads states, in a fixed tree (warp shuffles, then
// the warps' results through shared memory). Ends with a barrier: callable again at once.
template <typename State, typename Merge>
__device__ State block_merge(State v, Merge merge) {
  __shared__ __align__(16) unsigned char storage[kWarps * sizeof(State)];
  State* warp_results = reinterpret_cast<State*>(storage);
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2)
    v = merge(v, shfl_down(v, offset));
  if (lane == 0) warp_results[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kWarps ? warp_results[lane] : State{};
#pragma unroll
    for (int offset = kWarpSize / 2; offset > 0; offset /= 2)
      v = merge(v, shfl_down(v, offset));
  }
  __syncthreads();
  return v;
}

template <typename T, typename Acc>
__device__ __forceinline__ Acc load_or(const T* p, std::int64_t i, Acc fallback) {
  return p != nullptr ? static_cast<Acc>(p[i]) : fallback;
}

// ---- Kernels ---------------------------------------------------------------------------------

// Forward statistics, pass 1: block `item` = row * num_segments + segment runs Welford over
// elements [segment * segment_len, min(row_len, (segment + 1) * segment_len)) of row `row` of x
// (a group), kWidth elements per load; the block's merged state goes to partials[item].
template <typename T, typename Acc, int kWidth>
__global__ void groupnorm_welford_partial_kernel(const T* __restrict__ x, std::int64_t num_items,
                                                 std::int64_t row_len, std::int64_t num_segments,
                                                 std::int64_t segment_len,
                                                 WelfordState<Acc>* __restrict__ partials) {
  for (std::int64_t item = blockIdx.x; item < num_items; item += gridDim.x) {
    const std::int64_t row = item / num_segments;
    const std::int64_t begin = (item % num_segments) * segment_len;
    const std::int64_t end = begin + segment_len < row_len ? begin + segment_len : row_len;
    const T* run = x + row * row_len;
    WelfordState<Acc> s;
    for (std::int64_t i = begin + threadIdx.x * kWidth; i < end; i += kThreads * kWidth) {
      const Vector<T, kWidth> v = *reinterpret_cast<const Vector<T, kWidth>*>(run + i);
#pragma unroll
      for (int lane = 0; lane < kWidth; ++lane)
        s = welford_update(s, static_cast<Acc>(v.val[lane]));
    }
    s = block_merge(s, WelfordMerge<Acc>{});
    if (threadIdx.x == 0) partials[item] = s;
  }
}

// Forward statistics, pass 2: block `row` = (n, g) merges the row's partials (fixed tree), writes
// mean and rstd, and the scale/shift of each of the group's channels:
// scale[n * C + c], shift[n * C + c] (groupnorm_channel_affine).
template <typename T, typename Acc>
__global__ void groupnorm_forward_finalize_kernel(
    GroupNormSizes sizes, std::int64_t num_segments, const WelfordState<Acc>* __restrict__ partials,
    const T* __restrict__ weight, const T* __restrict__ bias, Acc eps, Acc* __restrict__ mean,
    Acc* __restrict__ rstd, Acc* __restrict__ scale, Acc* __restrict__ shift) {
  __shared__ Acc group_stats[2];
  const std::int64_t num_rows = sizes.batch * sizes.groups;
  const std::int64_t per_group = sizes.channels_per_group();
  for (std::int64_t row = blockIdx.x; row < num_rows; row += gridDim.x) {
    WelfordState<Acc> s;
    for (std::int64_t k = threadIdx.x; k < num_segments; k += kThreads)
      s = welford_merge(s, partials[row * num_segments + k]);
    s = block_merge(s, WelfordMerge<Acc>{});
    if (threadIdx.x == 0) {
      group_stats[0] = s.mean;
      group_stats[1] = welford_rstd(s, eps);
      mean[row] = group_stats[0];
      rstd[row] = group_stats[1];
    }
    __syncthreads();
    const std::int64_t n = row / sizes.groups;
    const std::int64_t c0 = (row % sizes.groups) * per_group;
    for (std::int64_t c = c0 + threadIdx.x; c < c0 + per_group; c += kThreads) {
      const ChannelAffine<Acc> a = groupnorm_channel_affine(
          group_stats[0], group_stats[1], load_or(weight, c, Acc(1)), load_or(bias, c, Acc(0)));
      scale[n * sizes.channels + c] = a.scale;
      shift[n * sizes.channels + c] = a.shift;
    }
    __syncthreads();  // group_stats is rewritten by the next row
  }
}

// Backward, pass 1: block `item` = row * num_segments + segment sums dy and dy * x over its
// segment of row `row` = (n, c) (HxW elements) into partials[item].
template <typename T, typename Acc, int kWidth>
__global__ void groupnorm_channel_sums_partial_kernel(
    const T* __restrict__ dy, const T* __restrict__ x, std::int64_t num_items, std::int64_t row_len,
    std::int64_t num_segments, std::int64_t segment_len, DySums<Acc>* __restrict__ partials) {
  for (std::int64_t item = blockIdx.x; item < num_items; item += gridDim.x) {
    const std::int64_t row = item / num_segments;
    const std::int64_t begin = (item % num_segments) * segment_len;
    const std::int64_t end = begin + segment_len < row_len ? begin + segment_len : row_len;
    DySums<Acc> s;
    for (std::int64_t i = begin + threadIdx.x * kWidth; i < end; i += kThreads * kWidth) {
      const std::int64_t offset = row * row_len + i;
      const Vector<T, kWidth> g = *reinterpret_cast<const Vector<T, kWidth>*>(dy + offset);
      const Vector<T, kWidth> v = *reinterpret_cast<const Vector<T, kWidth>*>(x + offset);
#pragma unroll
      for (int lane = 0; lane < kWidth; ++lane) {
        const Acc gl = static_cast<Acc>(g.val[lane]);
        s.dy += gl;
        s.dy_x += gl * static_cast<Acc>(v.val[lane]);
      }
    }
    s = block_merge(s, DySumsMerge<Acc>{});
    if (threadIdx.x == 0) partials[item] = s;
  }
}

// Backward, pass 2: block `row` = (n, g) merges, per channel of the group, that channel's
// partials into channel_sums[n * C + c], sums a = sum w dy and b = sum w dy x over the group,
// and writes the coefficients of dx = alpha dy + beta x + gamma for each of its channels.
template <typename T, typename Acc>
__global__ void groupnorm_backward_finalize_kernel(
    GroupNormSizes sizes, std::int64_t num_segments, const DySums<Acc>* __restrict__ partials,
    const T* __restrict__ weight, const Acc* __restrict__ mean, const Acc* __restrict__ rstd,
    DySums<Acc>* __restrict__ channel_sums, Acc* __restrict__ alpha, Acc* __restrict__ beta,
    Acc* __restrict__ gamma) {
  __shared__ Acc group_coefs[2];
  const std::int64_t num_rows = sizes.batch * sizes.groups;
  const std::int64_t per_group = sizes.channels_per_group();
  for (std::int64_t row = blockIdx.x; row < num_rows; row += gridDim.x) {
    const std::int64_t n = row / sizes.groups;
    const std::int64_t c0 = (row % sizes.groups) * per_group;
    DySums<Acc> weighted;  // (a, b)
    for (std::int64_t c = c0 + threadIdx.x; c < c0 + per_group; c += kThreads) {
      const std::int64_t nc = n * sizes.channels + c;
      DySums<Acc> s;
      for (std::int64_t k = 0; k < num_segments; ++k)
        s = DySumsMerge<Acc>{}(s, partials[nc * num_segments + k]);
      channel_sums[nc] = s;
      const Acc w = load_or(weight, c, Acc(1));
      weighted.dy += w * s.dy;
      weighted.dy_x += w * s.dy_x;
    }
    weighted = block_merge(weighted, DySumsMerge<Acc>{});
    if (threadIdx.x == 0) {
      const GroupInputGradCoefs<Acc> k = groupnorm_input_grad_coefs(
          mean[row], rstd[row], weighted.dy, weighted.dy_x, sizes.group_size());
      group_coefs[0] = k.x_coef;
      group_coefs[1] = k.const_coef;
    }
    __syncthreads();
    const Acc r = rstd[row];
    for (std::int64_t c = c0 + threadIdx.x; c < c0 + per_group; c += kThreads) {
      const std::int64_t nc = n * sizes.channels + c;
      alpha[nc] = r * load_or(weight, c, Acc(1));
      beta[nc] = group_coefs[0];
      gamma[nc] = group_coefs[1];
    }
    __syncthreads();
  }
}

// dweight[c] = sum_n (sum_dy_x - mean sum_dy) rstd, dbias[c] = sum_n sum_dy: one thread per
// channel, the batch in order. Either output may be null.
template <typename T, typename Acc>
__global__ void groupnorm_weight_bias_grad_kernel(GroupNormSizes sizes,
                                                  const DySums<Acc>* __restrict__ channel_sums,
                                                  const Acc* __restrict__ mean,
                                                  const Acc* __restrict__ rstd,
                                                  T* __restrict__ grad_weight,
                                                  T* __restrict__ grad_bias) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= sizes.channels) return;
  const std::int64_t g = c / sizes.channels_per_group();
  Acc dw = 0;
  Acc db = 0;
  for (std::int64_t n = 0; n < sizes.batch; ++n) {
    const DySums<Acc> s = channel_sums[n * sizes.channels + c];
    const std::int64_t row = n * sizes.groups + g;
    dw += (s.dy_x - mean[row] * s.dy) * rstd[row];
    db += s.dy;
  }
  if (grad_weight != nullptr) grad_weight[c] = static_cast<T>(dw);
  if (grad_bias != nullptr) grad_bias[c] = static_cast<T>(db);
}

// out = alpha[r] * a + beta[r] * b + gamma[r] elementwise, r = (flat index) / row_len the
// (n, c) row; b and beta are absent unless kTwoInputs. Grid-stride over kWidth-vectors, which
// never straddle two rows (row_len % kWidth == 0). Index: uint32 when every index fits, so the
// one division per vector is cheap.
template <typename T, typename Acc, int kWidth, bool kTwoInputs, typename Index>
__global__ void groupnorm_row_affine_kernel(Index numel, Index row_len, T* __restrict__ out,
                                            const T* __restrict__ a, const T* __restrict__ b,
                                            const Acc* __restrict__ alpha,
                                            const Acc* __restrict__ beta,
                                            const Acc* __restrict__ gamma) {
  const Index num_vectors = numel / kWidth;
  const Index step = static_cast<Index>(gridDim.x) * blockDim.x;
  for (Index v = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; v < num_vectors;
       v += step) {
    const Index i = v * kWidth;
    const Index row = i / row_len;
    const Acc al = alpha[row];
    const Acc ga = gamma[row];
    const Vector<T, kWidth> va = *reinterpret_cast<const Vector<T, kWidth>*>(a + i);
    Vector<T, kWidth> vo;
    if constexpr (kTwoInputs) {
      const Acc be = beta[row];
      const Vector<T, kWidth> vb = *reinterpret_cast<const Vector<T, kWidth>*>(b + i);
#pragma unroll
      for (int lane = 0; lane < kWidth; ++lane)
        vo.val[lane] = static_cast<T>(al * static_cast<Acc>(va.val[lane]) +
                                      be * static_cast<Acc>(vb.val[lane]) + ga);
    } else {
#pragma unroll
      for (int lane = 0; lane < kWidth; ++lane)
        vo.val[lane] = static_cast<T>(al * static_cast<Acc>(va.val[lane]) + ga);
    }
    *reinterpret_cast<Vector<T, kWidth>*>(out + i) = vo;
  }
}

// ---- Launchers -------------------------------------------------------------------------------

cudaStream_t current_cuda_stream() {
  return reinterpret_cast<cudaStream_t>(leangrad::cuda::current_stream().id());
}

unsigned int grid_size(std::int64_t blocks) {
  return static_cast<unsigned int>(std::clamp<std::int64_t>(blocks, 1, kMaxGrid));
}

bool aligned_to_vector(const void* p) {
  return p == nullptr || reinterpret_cast<std::uintptr_t>(p) % kVectorBytes == 0;
}

// The 16-byte vector width of T, or 1 when run lengths or pointers do not allow it.
template <typename T>
int vector_width(std::int64_t run_len, std::initializer_list<const void*> pointers) {
  constexpr int kWidth = kVectorBytes / static_cast<int>(sizeof(T));
  if (run_len % kWidth != 0) return 1;
  for (const void* p : pointers)
    if (!aligned_to_vector(p)) return 1;
  return kWidth;
}

// How rows of row_len elements are cut into segments, one block each (see Policy).
struct Segmentation {
  std::int64_t num_segments = 1;
  std::int64_t segment_len = 0;
};

Segmentation segment_rows(std::int64_t num_rows, std::int64_t row_len) {
  constexpr std::int64_t kSegmentAlign = 8;  // any vector width divides it
  std::int64_t segments = 1;
  if (num_rows < kTargetBlocks) {
    const std::int64_t wanted = (kTargetBlocks + num_rows - 1) / num_rows;
    const std::int64_t allowed = std::max<std::int64_t>(1, row_len / kMinSegmentLen);
    segments = std::min(wanted, allowed);
  }
  std::int64_t len = (row_len + segments - 1) / segments;
  len = (len + kSegmentAlign - 1) / kSegmentAlign * kSegmentAlign;
  return {(row_len + len - 1) / len, len};
}

// A workspace from the caching allocator, carved into typed arrays. Stream-ordered: freeing it
// when the launcher returns is safe, since later work on the stream runs after these kernels.
class Workspace {
 public:
  explicit Workspace(std::size_t nbytes)
      : data_(allocator_for(Device::cuda(leangrad::cuda::current_device()))
                  .allocate(std::max<std::size_t>(nbytes, 1),
                            leangrad::cuda::current_stream().id())) {}
  template <typename U>
  U* take(std::int64_t count) {
    U* p = reinterpret_cast<U*>(static_cast<unsigned char*>(data_.get()) + used_);
    used_ += round_up(static_cast<std::size_t>(count) * sizeof(U));
    return p;
  }
  static std::size_t round_up(std::size_t nbytes) { return (nbytes + 255) / 256 * 256; }

 private:
  DataPtr data_;
  std::size_t used_ = 0;
};

// out = alpha * a (+ beta * b) + gamma over (N * C) rows of HxW.
template <typename T, typename Acc, bool kTwoInputs>
void launch_row_affine(const GroupNormSizes& sizes, T* out, const T* a, const T* b,
                       const Acc* alpha, const Acc* beta, const Acc* gamma, cudaStream_t stream) {
  const std::int64_t numel = sizes.batch * sizes.channels * sizes.spatial;
  const int width = vector_width<T>(sizes.spatial, {out, a, b});
  const bool small_index = numel <= std::numeric_limits<std::int32_t>::max();
  const unsigned int blocks = grid_size((numel / width + kThreads - 1) / kThreads);
  auto launch = [&]<int kWidth, typename Index>() {
    groupnorm_row_affine_kernel<T, Acc, kWidth, kTwoInputs, Index><<<blocks, kThreads, 0, stream>>>(
        static_cast<Index>(numel), static_cast<Index>(sizes.spatial), out, a, b, alpha, beta,
        gamma);
  };
  constexpr int kWidth = kVectorBytes / static_cast<int>(sizeof(T));
  if (width == kWidth) {
    if (small_index)
      launch.template operator()<kWidth, std::uint32_t>();
    else
      launch.template operator()<kWidth, std::int64_t>();
  } else {
    if (small_index)
      launch.template operator()<1, std::uint32_t>();
    else
      launch.template operator()<1, std::int64_t>();
  }
  LG_CUDA_CHECK_LAUNCH();
}

}  // namespace

void group_norm_forward(DType dtype, const GroupNormSizes& sizes, void* out, void* mean, void* rstd,
                        const void* x, const void* weight, const void* bias, double eps) {
  dispatch_floating(dtype, "group_norm", [&]<typename T>() {
    using Acc = opmath_t<T>;
    const cudaStream_t stream = current_cuda_stream();
    const std::int64_t num_rows = sizes.batch * sizes.groups;
    const std::int64_t row_len = sizes.group_size();
    const Segmentation seg = segment_rows(num_rows, row_len);
    const std::int64_t num_items = num_rows * seg.num_segments;
    const std::int64_t num_channels = sizes.batch * sizes.channels;
    Workspace ws(Workspace::round_up(num_items * sizeof(WelfordState<Acc>)) +
                 2 * Workspace::round_up(num_channels * sizeof(Acc)));
    auto* partials = ws.take<WelfordState<Acc>>(num_items);
    Acc* scale = ws.take<Acc>(num_channels);
    Acc* shift = ws.take<Acc>(num_channels);
    const T* in = static_cast<const T*>(x);

    constexpr int kWidth = kVectorBytes / static_cast<int>(sizeof(T));
    if (vector_width<T>(row_len, {x}) == kWidth) {
      groupnorm_welford_partial_kernel<T, Acc, kWidth>
          <<<grid_size(num_items), kThreads, 0, stream>>>(in, num_items, row_len, seg.num_segments,
                                                          seg.segment_len, partials);
    } else {
      groupnorm_welford_partial_kernel<T, Acc, 1><<<grid_size(num_items), kThreads, 0, stream>>>(
          in, num_items, row_len, seg.num_segments, seg.segment_len, partials);
    }
    LG_CUDA_CHECK_LAUNCH();
    groupnorm_forward_finalize_kernel<T, Acc><<<grid_size(num_rows), kThreads, 0, stream>>>(
        sizes, seg.num_segments, partials, static_cast<const T*>(weight),
        static_cast<const T*>(bias), static_cast<Acc>(eps), static_cast<Acc*>(mean),
        static_cast<Acc*>(rstd), scale, shift);
    LG_CUDA_CHECK_LAUNCH();
    launch_row_affine<T, Acc, /*kTwoInputs=*/false>(sizes, static_cast<T*>(out), in, nullptr, scale,
                                                    nullptr, shift, stream);
  });
}

void group_norm_backward(DType dtype, const GroupNormSizes& sizes, void* grad_input,
                         void* grad_weight, void* grad_bias, const void* grad_output, const void* x,
                         const void* mean, const void* rstd, const void* weight) {
  dispatch_floating(dtype, "group_norm_backward", [&]<typename T>() {
    using Acc = opmath_t<T>;
    const cudaStream_t stream = current_cuda_stream();
    const std::int64_t num_channels = sizes.batch * sizes.channels;  // the rows of pass 1
    const Segmentation seg = segment_rows(num_channels, sizes.spatial);
    const std::int64_t num_items = num_channels * seg.num_segments;
    Workspace ws(Workspace::round_up(num_items * sizeof(DySums<Acc>)) +
                 Workspace::round_up(num_channels * sizeof(DySums<Acc>)) +
                 3 * Workspace::round_up(num_channels * sizeof(Acc)));
    auto* partials = ws.take<DySums<Acc>>(num_items);
    auto* channel_sums = ws.take<DySums<Acc>>(num_channels);
    Acc* alpha = ws.take<Acc>(num_channels);
    Acc* beta = ws.take<Acc>(num_channels);
    Acc* gamma = ws.take<Acc>(num_channels);
    const T* dy = static_cast<const T*>(grad_output);
    const T* in = static_cast<const T*>(x);
    const T* w = static_cast<const T*>(weight);
    const Acc* mean_in = static_cast<const Acc*>(mean);
    const Acc* rstd_in = static_cast<const Acc*>(rstd);

    constexpr int kWidth = kVectorBytes / static_cast<int>(sizeof(T));
    if (vector_width<T>(sizes.spatial, {dy, in}) == kWidth) {
      groupnorm_channel_sums_partial_kernel<T, Acc, kWidth>
          <<<grid_size(num_items), kThreads, 0, stream>>>(
              dy, in, num_items, sizes.spatial, seg.num_segments, seg.segment_len, partials);
    } else {
      groupnorm_channel_sums_partial_kernel<T, Acc, 1>
          <<<grid_size(num_items), kThreads, 0, stream>>>(
              dy, in, num_items, sizes.spatial, seg.num_segments, seg.segment_len, partials);
    }
    LG_CUDA_CHECK_LAUNCH();
    groupnorm_backward_finalize_kernel<T, Acc>
        <<<grid_size(sizes.batch * sizes.groups), kThreads, 0, stream>>>(
            sizes, seg.num_segments, partials, w, mean_in, rstd_in, channel_sums, alpha, beta,
            gamma);
    LG_CUDA_CHECK_LAUNCH();
    if (grad_weight != nullptr || grad_bias != nullptr) {
      groupnorm_weight_bias_grad_kernel<T, Acc>
          <<<grid_size((sizes.channels + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
              sizes, channel_sums, mean_in, rstd_in, static_cast<T*>(grad_weight),
              static_cast<T*>(grad_bias));
      LG_CUDA_CHECK_LAUNCH();
    }
    if (grad_input != nullptr) {
      launch_row_affine<T, Acc, /*kTwoInputs=*/true>(sizes, static_cast<T*>(grad_input), dy, in,
                                                     alpha, beta, gamma, stream);
    }
  });
}

}  // namespace leangrad::kernels::cuda
