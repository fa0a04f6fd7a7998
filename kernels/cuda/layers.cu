// The layer kernels in CUDA: pooling, dropout, softmax and the per-sample losses
// (kernels/cuda/layers.h). kernels/cpu/layers.cpp is the reference; the per-element math is shared
// through kernels/layers_math.h. Decomposition (docs/kernels-layers.md has bytes and rooflines):
//   pooling          one thread per output (forward) or per input element (backward: a gather
//                    over the windows that contain it; deterministic, no atomics)
//   dropout          one thread per Philox counter: one 10-round draw serves its 4 elements
//   softmax (rows)   inner == 1: one block per row; block reductions for the max and the sum
//   softmax (cols)   inner > 1: one thread per (outer, inner) column, consecutive threads on
//                    consecutive columns (coalesced)
//   cross_entropy    one block per row: max, sum of exp, the picked logit -> loss and logsumexp;
//                    the backward is elementwise (softmax - onehot from the saved logsumexp)
// Every index is int64; grids are capped and kernels loop (grid-stride) beyond the cap.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/cuda.h"
#include "core/cuda/cuda_check.h"
#include "kernels/cuda/layers.h"
#include "kernels/dispatch.h"

namespace leangrad::kernels::cuda {

namespace {

constexpr int kWarpSize = 32;
constexpr int kThreads = 256;
constexpr std::int64_t kMaxGrid = 1 << 20;

// ---- Device helpers --------------------------------------------------------------------------

template <typename M>
struct SumOp {
  __device__ M operator()(M a, M b) const { return a + b; }
};
template <typename M>
struct MaxOp {
  __device__ M operator()(M a, M b) const { return layers_math::running_max(a, b); }
};

// Every thread of the block gets the merge of the block's values (blockDim.x a multiple of 32,
// at most kThreads). Starts and ends with a barrier, so it may be called again right away.
template <typename M, typename Combine>
__device__ M block_allreduce(M v, Combine combine) {
  __shared__ M warp_results[kThreads / kWarpSize];
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2)
    v = combine(v, __shfl_down_sync(0xffffffffu, v, offset));
  __syncthreads();
  if (lane == 0) warp_results[warp] = v;
  __syncthreads();
  const int num_warps = blockDim.x / kWarpSize;
  M merged = warp_results[0];
  for (int w = 1; w < num_warps; ++w)
    merged = combine(merged, warp_results[w]);
  return merged;
}

__device__ __forceinline__ std::int64_t global_thread() {
  return blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
}
__device__ __forceinline__ std::int64_t grid_threads() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

// ---- Pooling kernels -------------------------------------------------------------------------

template <typename T>
__global__ void max_pool2d_kernel(T* out, std::int64_t* indices, const T* in, Pool2dShape g) {
  const std::int64_t plane_out = g.OH * g.OW, total = g.planes * plane_out;
  for (std::int64_t i = global_thread(); i < total; i += grid_threads()) {
    const std::int64_t p = i / plane_out, o = i % plane_out;
    layers_math::max_pool2d_at(in + p * g.H * g.W, g, o / g.OW, o % g.OW, &out[i], &indices[i]);
  }
}

template <typename T>
__global__ void max_pool2d_backward_gather_kernel(T* grad_in, const T* grad_out,
                                                  const std::int64_t* indices, Pool2dShape g) {
  const std::int64_t plane_in = g.H * g.W, plane_out = g.OH * g.OW, total = g.planes * plane_in;
  for (std::int64_t i = global_thread(); i < total; i += grid_threads()) {
    const std::int64_t p = i / plane_in, o = i % plane_in;
    grad_in[i] = layers_math::max_pool2d_grad_at(grad_out + p * plane_out, indices + p * plane_out,
                                                 g, o / g.W, o % g.W);
  }
}

template <typename T>
__global__ void avg_pool2d_kernel(T* out, const T* in, Pool2dShape g) {
  const std::int64_t plane_out = g.OH * g.OW, total = g.planes * plane_out;
  for (std::int64_t i = global_thread(); i < total; i += grid_threads()) {
    const std::int64_t p = i / plane_out, o = i % plane_out;
    out[i] = layers_math::avg_pool2d_at(in + p * g.H * g.W, g, o / g.OW, o % g.OW);
  }
}

template <typename T>
__global__ void avg_pool2d_backward_gather_kernel(T* grad_in, const T* grad_out, Pool2dShape g) {
  const std::int64_t plane_in = g.H * g.W, plane_out = g.OH * g.OW, total = g.planes * plane_in;
  for (std::int64_t i = global_thread(); i < total; i += grid_threads()) {
    const std::int64_t p = i / plane_in, o = i % plane_in;
    grad_in[i] = layers_math::avg_pool2d_grad_at(grad_out + p * plane_out, g, o / g.W, o % g.W);
  }
}

// ---- Dropout kernels -------------------------------------------------------------------------

// Thread c owns elements [4 c, 4 c + 4): one Philox draw, four keep decisions.
template <typename T>
__global__ void dropout_philox_per_counter_kernel(T* out, bool* mask, const T* in,
                                                  std::int64_t numel, double p, opmath_t<T> scale,
                                                  std::uint64_t seed, std::uint64_t offset) {
  constexpr std::int64_t kPer = layers_math::kDropoutPerCounter;
  const std::int64_t num_counters = (numel + kPer - 1) / kPer;
  for (std::int64_t c = global_thread(); c < num_counters; c += grid_threads()) {
    const philox::Block block = philox::philox4x32_10(offset + static_cast<std::uint64_t>(c), seed);
#pragma unroll
    for (int lane = 0; lane < kPer; ++lane) {
      const std::int64_t i = c * kPer + lane;
      if (i >= numel) break;
      const bool keep = layers_math::dropout_keep_lane(block, lane, p);
      mask[i] = keep;
      out[i] = keep ? static_cast<T>(static_cast<opmath_t<T>>(in[i]) * scale) : static_cast<T>(0);
    }
  }
}

template <typename T>
__global__ void dropout_backward_kernel(T* grad_in, const T* grad_out, const bool* mask,
                                        std::int64_t numel, opmath_t<T> scale) {
  for (std::int64_t i = global_thread(); i < numel; i += grid_threads()) {
    grad_in[i] =
        mask[i] ? static_cast<T>(static_cast<opmath_t<T>>(grad_out[i]) * scale) : static_cast<T>(0);
  }
}

// ---- Softmax kernels -------------------------------------------------------------------------

// inner == 1: block b owns rows b, b + gridDim.x, ...; its threads stride over the row.
template <typename T>
__global__ void softmax_block_per_row_kernel(T* out, const T* in, std::int64_t rows, std::int64_t R,
                                             bool log) {
  using M = opmath_t<T>;
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* x = in + row * R;
    T* y = out + row * R;
    M max_value = -std::numeric_limits<M>::infinity();
    for (std::int64_t r = threadIdx.x; r < R; r += blockDim.x)
      max_value = layers_math::running_max(max_value, static_cast<M>(x[r]));
    max_value = layers_math::finite_or_zero(block_allreduce(max_value, MaxOp<M>{}));
    M sum = 0;
    for (std::int64_t r = threadIdx.x; r < R; r += blockDim.x)
      sum += exp(static_cast<M>(x[r]) - max_value);
    sum = block_allreduce(sum, SumOp<M>{});
    const M log_sum = ::log(sum);
    for (std::int64_t r = threadIdx.x; r < R; r += blockDim.x) {
      const M shifted = static_cast<M>(x[r]) - max_value;
      y[r] = static_cast<T>(log ? shifted - log_sum : exp(shifted) / sum);
    }
  }
}

// inner > 1: thread (o, j) walks the column in[o, :, j] (stride inner).
template <typename T>
__global__ void softmax_thread_per_column_kernel(T* out, const T* in, std::int64_t outer,
                                                 std::int64_t R, std::int64_t inner, bool log) {
  using M = opmath_t<T>;
  for (std::int64_t run = global_thread(); run < outer * inner; run += grid_threads()) {
    const std::int64_t base = (run / inner) * R * inner + run % inner;
    M max_value = -std::numeric_limits<M>::infinity();
    for (std::int64_t r = 0; r < R; ++r)
      max_value = layers_math::running_max(max_value, static_cast<M>(in[base + r * inner]));
    max_value = layers_math::finite_or_zero(max_value);
    M sum = 0;
    for (std::int64_t r = 0; r < R; ++r)
      sum += exp(static_cast<M>(in[base + r * inner]) - max_value);
    const M log_sum = ::log(sum);
    for (std::int64_t r = 0; r < R; ++r) {
      const M shifted = static_cast<M>(in[base + r * inner]) - max_value;
      out[base + r * inner] = static_cast<T>(log ? shifted - log_sum : exp(shifted) / sum);
    }
  }
}

// The backward's two passes over a run starting at `base` with stride `step`, walked by
// threads [first, first + count, ...): the reduction, then the write.
template <typename T>
__device__ opmath_t<T> softmax_backward_dot(const T* gy, const T* y, std::int64_t base,
                                            std::int64_t step, std::int64_t first,
                                            std::int64_t count, std::int64_t R, bool log) {
  using M = opmath_t<T>;
  M dot = 0;
  for (std::int64_t r = first; r < R; r += count) {
    const std::int64_t k = base + r * step;
    dot += log ? static_cast<M>(gy[k]) : static_cast<M>(gy[k]) * static_cast<M>(y[k]);
  }
  return dot;
}
template <typename T>
__device__ void softmax_backward_write(T* gx, const T* gy, const T* y, opmath_t<T> dot,
                                       std::int64_t base, std::int64_t step, std::int64_t first,
                                       std::int64_t count, std::int64_t R, bool log) {
  using M = opmath_t<T>;
  for (std::int64_t r = first; r < R; r += count) {
    const std::int64_t k = base + r * step;
    const M g = static_cast<M>(gy[k]), v = static_cast<M>(y[k]);
    gx[k] = static_cast<T>(log ? g - exp(v) * dot : v * (g - dot));
  }
}

template <typename T>
__global__ void softmax_backward_block_per_row_kernel(T* gx, const T* gy, const T* y,
                                                      std::int64_t rows, std::int64_t R, bool log) {
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const opmath_t<T> dot =
        block_allreduce(softmax_backward_dot(gy, y, row * R, 1, threadIdx.x, blockDim.x, R, log),
                        SumOp<opmath_t<T>>{});
    softmax_backward_write(gx, gy, y, dot, row * R, 1, threadIdx.x, blockDim.x, R, log);
  }
}

template <typename T>
__global__ void softmax_backward_thread_per_column_kernel(T* gx, const T* gy, const T* y,
                                                          std::int64_t outer, std::int64_t R,
                                                          std::int64_t inner, bool log) {
  for (std::int64_t run = global_thread(); run < outer * inner; run += grid_threads()) {
    const std::int64_t base = (run / inner) * R * inner + run % inner;
    const opmath_t<T> dot = softmax_backward_dot(gy, y, base, inner, 0, 1, R, log);
    softmax_backward_write(gx, gy, y, dot, base, inner, 0, 1, R, log);
  }
}

// ---- Loss kernels ----------------------------------------------------------------------------

// Block b owns rows b, b + gridDim.x, ...: max, sum of exp, then thread 0 picks the target logit.
// An out-of-range target (not ignored) gives a NaN loss; its logit is never read.
template <typename T>
__global__ void cross_entropy_block_per_row_kernel(T* losses, opmath_t<T>* lse, const T* logits,
                                                   const std::int64_t* target, std::int64_t N,
                                                   std::int64_t C, std::int64_t ignore_index) {
  using M = opmath_t<T>;
  for (std::int64_t row = blockIdx.x; row < N; row += gridDim.x) {
    const T* x = logits + row * C;
    M max_value = -std::numeric_limits<M>::infinity();
    for (std::int64_t j = threadIdx.x; j < C; j += blockDim.x)
      max_value = layers_math::running_max(max_value, static_cast<M>(x[j]));
    max_value = layers_math::finite_or_zero(block_allreduce(max_value, MaxOp<M>{}));
    M sum = 0;
    for (std::int64_t j = threadIdx.x; j < C; j += blockDim.x)
      sum += exp(static_cast<M>(x[j]) - max_value);
    sum = block_allreduce(sum, SumOp<M>{});
    if (threadIdx.x == 0) {
      const M row_lse = max_value + ::log(sum);
      lse[row] = row_lse;
      const std::int64_t t = target[row];
      M loss = 0;
      if (t != ignore_index) {
        loss = (t >= 0 && t < C) ? row_lse - static_cast<M>(x[t])
                                 : std::numeric_limits<M>::quiet_NaN();
      }
      losses[row] = static_cast<T>(loss);
    }
  }
}

template <typename T>
__global__ void cross_entropy_backward_kernel(T* grad_logits, const T* grad_losses, const T* logits,
                                              const opmath_t<T>* lse, const std::int64_t* target,
                                              std::int64_t N, std::int64_t C,
                                              std::int64_t ignore_index) {
  using M = opmath_t<T>;
  for (std::int64_t k = global_thread(); k < N * C; k += grid_threads()) {
    const std::int64_t i = k / C, j = k % C;
    const std::int64_t t = target[i];
    if (t == ignore_index) {
      grad_logits[k] = static_cast<T>(0);
      continue;
    }
    const M p = exp(static_cast<M>(logits[k]) - lse[i]);
    grad_logits[k] = static_cast<T>(static_cast<M>(grad_losses[i]) * (j == t ? p - M(1) : p));
  }
}

template <typename T>
__global__ void nll_loss_kernel(T* losses, const T* logp, const std::int64_t* target,
                                std::int64_t N, std::int64_t C, std::int64_t ignore_index) {
  using M = opmath_t<T>;
  for (std::int64_t i = global_thread(); i < N; i += grid_threads()) {
    const std::int64_t t = target[i];
    M loss = 0;
    if (t != ignore_index) {
      loss = (t >= 0 && t < C) ? -static_cast<M>(logp[i * C + t])
                               : std::numeric_limits<M>::quiet_NaN();
    }
    losses[i] = static_cast<T>(loss);
  }
}

template <typename T>
__global__ void nll_loss_backward_kernel(T* grad_logp, const T* grad_losses,
                                         const std::int64_t* target, std::int64_t N, std::int64_t C,
                                         std::int64_t ignore_index) {
  using M = opmath_t<T>;
  for (std::int64_t k = global_thread(); k < N * C; k += grid_threads()) {
    const std::int64_t t = target[k / C];
    grad_logp[k] = (t != ignore_index && k % C == t)
                       ? static_cast<T>(-static_cast<M>(grad_losses[k / C]))
                       : static_cast<T>(0);
  }
}

// ---- Launchers -------------------------------------------------------------------------------

cudaStream_t current_cuda_stream() {
  return reinterpret_cast<cudaStream_t>(leangrad::cuda::current_stream().id());
}

// Blocks for one thread per item.
unsigned int grid_for(std::int64_t items) {
  return static_cast<unsigned int>(
      std::clamp<std::int64_t>((items + kThreads - 1) / kThreads, 1, kMaxGrid));
}

// Threads of a block-per-row kernel: enough whole warps to cover a row once, at most kThreads.
int threads_for_row(std::int64_t row_len) {
  return static_cast<int>(std::clamp<std::int64_t>(
      (row_len + kWarpSize - 1) / kWarpSize * kWarpSize, kWarpSize, kThreads));
}

unsigned int grid_for_rows(std::int64_t rows) {
  return static_cast<unsigned int>(std::clamp<std::int64_t>(rows, 1, kMaxGrid));
}

}  // namespace

void max_pool2d(DType dtype, void* out, std::int64_t* indices, const void* in,
                const Pool2dShape& g) {
  dispatch_floating(dtype, "max_pool2d", [&]<typename T>() {
    max_pool2d_kernel<<<grid_for(g.planes * g.OH * g.OW), kThreads, 0, current_cuda_stream()>>>(
        static_cast<T*>(out), indices, static_cast<const T*>(in), g);
    LG_CUDA_CHECK_LAUNCH();
  });
}

void max_pool2d_backward(DType dtype, void* grad_in, const void* grad_out,
                         const std::int64_t* indices, const Pool2dShape& g) {
  dispatch_floating(dtype, "max_pool2d_backward", [&]<typename T>() {
    max_pool2d_backward_gather_kernel<<<grid_for(g.planes * g.H * g.W), kThreads, 0,
                                        current_cuda_stream()>>>(
        static_cast<T*>(grad_in), static_cast<const T*>(grad_out), indices, g);
    LG_CUDA_CHECK_LAUNCH();
  });
}

void avg_pool2d(DType dtype, void* out, const void* in, const Pool2dShape& g) {
  dispatch_floating(dtype, "avg_pool2d", [&]<typename T>() {
    avg_pool2d_kernel<<<grid_for(g.planes * g.OH * g.OW), kThreads, 0, current_cuda_stream()>>>(
        static_cast<T*>(out), static_cast<const T*>(in), g);
    LG_CUDA_CHECK_LAUNCH();
  });
}

void avg_pool2d_backward(DType dtype, void* grad_in, const void* grad_out, const Pool2dShape& g) {
  dispatch_floating(dtype, "avg_pool2d_backward", [&]<typename T>() {
    avg_pool2d_backward_gather_kernel<<<grid_for(g.planes * g.H * g.W), kThreads, 0,
                                        current_cuda_stream()>>>(
        static_cast<T*>(grad_in), static_cast<const T*>(grad_out), g);
    LG_CUDA_CHECK_LAUNCH();
  });
}

void dropout(DType dtype, void* out, bool* mask, const void* in, std::int64_t numel, double p,
             double scale, std::uint64_t seed, std::uint64_t offset) {
  dispatch_floating(dtype, "dropout", [&]<typename T>() {
    const std::int64_t counters =
        (numel + layers_math::kDropoutPerCounter - 1) / layers_math::kDropoutPerCounter;
    dropout_philox_per_counter_kernel<<<grid_for(counters), kThreads, 0, current_cuda_stream()>>>(
        static_cast<T*>(out), mask, static_cast<const T*>(in), numel, p,
        static_cast<opmath_t<T>>(scale), seed, offset);
    LG_CUDA_CHECK_LAUNCH();
  });
}

void dropout_backward(DType dtype, void* grad_in, const void* grad_out, const bool* mask,
                      std::int64_t numel, double scale) {
  dispatch_floating(dtype, "dropout_backward", [&]<typename T>() {
    dropout_backward_kernel<<<grid_for(numel), kThreads, 0, current_cuda_stream()>>>(
        static_cast<T*>(grad_in), static_cast<const T*>(grad_out), mask, numel,
        static_cast<opmath_t<T>>(scale));
    LG_CUDA_CHECK_LAUNCH();
  });
}

void softmax(DType dtype, void* out, const void* in, std::int64_t outer, std::int64_t R,
             std::int64_t inner, bool log) {
  dispatch_floating(dtype, log ? "log_softmax" : "softmax", [&]<typename T>() {
    T* y = static_cast<T*>(out);
    const T* x = static_cast<const T*>(in);
    if (inner == 1) {
      softmax_block_per_row_kernel<<<grid_for_rows(outer), threads_for_row(R), 0,
                                     current_cuda_stream()>>>(y, x, outer, R, log);
    } else {
      softmax_thread_per_column_kernel<<<grid_for(outer * inner), kThreads, 0,
                                         current_cuda_stream()>>>(y, x, outer, R, inner, log);
    }
    LG_CUDA_CHECK_LAUNCH();
  });
}

void softmax_backward(DType dtype, void* grad_in, const void* grad_out, const void* out,
                      std::int64_t outer, std::int64_t R, std::int64_t inner, bool log) {
  dispatch_floating(dtype, log ? "log_softmax_backward" : "softmax_backward", [&]<typename T>() {
    T* gx = static_cast<T*>(grad_in);
    const T* gy = static_cast<const T*>(grad_out);
    const T* y = static_cast<const T*>(out);
    if (inner == 1) {
      softmax_backward_block_per_row_kernel<<<grid_for_rows(outer), threads_for_row(R), 0,
                                              current_cuda_stream()>>>(gx, gy, y, outer, R, log);
    } else {
      softmax_backward_thread_per_column_kernel<<<grid_for(outer * inner), kThreads, 0,
                                                  current_cuda_stream()>>>(gx, gy, y, outer, R,
                                                                           inner, log);
    }
    LG_CUDA_CHECK_LAUNCH();
  });
}

void cross_entropy(DType dtype, void* losses, void* lse, const void* logits,
                   const std::int64_t* target, std::int64_t N, std::int64_t C,
                   std::int64_t ignore_index) {
  dispatch_floating(dtype, "cross_entropy", [&]<typename T>() {
    cross_entropy_block_per_row_kernel<<<grid_for_rows(N), threads_for_row(C), 0,
                                         current_cuda_stream()>>>(
        static_cast<T*>(losses), static_cast<opmath_t<T>*>(lse), static_cast<const T*>(logits),
        target, N, C, ignore_index);
    LG_CUDA_CHECK_LAUNCH();
  });
}

void cross_entropy_backward(DType dtype, void* grad_logits, const void* grad_losses,
                            const void* logits, const void* lse, const std::int64_t* target,
                            std::int64_t N, std::int64_t C, std::int64_t ignore_index) {
  dispatch_floating(dtype, "cross_entropy_backward", [&]<typename T>() {
    cross_entropy_backward_kernel<<<grid_for(N * C), kThreads, 0, current_cuda_stream()>>>(
        static_cast<T*>(grad_logits), static_cast<const T*>(grad_losses),
        static_cast<const T*>(logits), static_cast<const opmath_t<T>*>(lse), target, N, C,
        ignore_index);
    LG_CUDA_CHECK_LAUNCH();
  });
}

void nll_loss(DType dtype, void* losses, const void* logp, const std::int64_t* target,
              std::int64_t N, std::int64_t C, std::int64_t ignore_index) {
  dispatch_floating(dtype, "nll_loss", [&]<typename T>() {
    nll_loss_kernel<<<grid_for(N), kThreads, 0, current_cuda_stream()>>>(
        static_cast<T*>(losses), static_cast<const T*>(logp), target, N, C, ignore_index);
    LG_CUDA_CHECK_LAUNCH();
  });
}

void nll_loss_backward(DType dtype, void* grad_logp, const void* grad_losses,
                       const std::int64_t* target, std::int64_t N, std::int64_t C,
                       std::int64_t ignore_index) {
  dispatch_floating(dtype, "nll_loss_backward", [&]<typename T>() {
    nll_loss_backward_kernel<<<grid_for(N * C), kThreads, 0, current_cuda_stream()>>>(
        static_cast<T*>(grad_logp), static_cast<const T*>(grad_losses), target, N, C, ignore_index);
    LG_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace leangrad::kernels::cuda
