// The layer kernels in CUDA: pooling, dropout, softmax and the per-sample losses
// (kernels/backend.h). kernels/cpu/layers.cpp is the reference; the per-element math is shared
// through kernels/layers_math.h. Decomposition (docs/kernels.md has bytes and rooflines):
//   pooling          one thread per output (forward) or per input element (backward: a gather
//                    over the windows that contain it; deterministic, no atomics)
//   dropout          one thread per Philox counter: one 10-round draw serves its 4 elements
//   softmax (rows)   inner == 1: one block per row; block reductions for the max and the sum
//   softmax (cols)   inner > 1: one thread per (outer, inner) column, consecutive threads on
//                    consecutive columns (coalesced)
//   cross_entropy    one block per row: max, sum of exp, the picked logit and its class weight
//                    -> loss, sample weight and logsumexp; the backward is elementwise
//                    (w_t (softmax - onehot) from the saved logsumexp)
// Every index is int64; grids are one wave (Note [Grid policy]) and kernels loop beyond it.
#include <algorithm>
#include <cstdint>
#include <limits>

#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/cuda/cuda_common.cuh>

namespace leangrad::kernels::cuda {

namespace {

using layers_math::Pool2dShape;

constexpr int kThreads = 256;

// ---- Device helpers --------------------------------------------------------------------------

template <typename M>
struct MaxOp {
  __device__ M operator()(M a, M b) const { return layers_math::running_max(a, b); }
};

// Every thread of the block gets the maximum / the sum of the block's values.
template <typename M>
__device__ M block_max(M v) {
  return block_allreduce<kThreads>(v, MaxOp<M>{}, -std::numeric_limits<M>::infinity());
}
template <typename M>
__device__ M block_sum(M v) {
  return block_allreduce<kThreads>(v, SumMerge{}, M(0));
}

// ---- Pooling kernels -------------------------------------------------------------------------

template <typename T>
__global__ void max_pool2d_kernel(T* out, std::int64_t* indices, const T* in, Pool2dShape g) {
  const std::int64_t plane_out = g.OH * g.OW, total = g.planes * plane_out;
  for (std::int64_t i = global_thread_index(); i < total; i += grid_thread_count()) {
    const std::int64_t p = i / plane_out, o = i % plane_out;
    layers_math::max_pool2d_at(in + p * g.H * g.W, g, o / g.OW, o % g.OW, &out[i], &indices[i]);
  }
}

template <typename T>
__global__ void max_pool2d_backward_gather_kernel(T* grad_in, const T* grad_out,
                                                  const std::int64_t* indices, Pool2dShape g) {
  const std::int64_t plane_in = g.H * g.W, plane_out = g.OH * g.OW, total = g.planes * plane_in;
  for (std::int64_t i = global_thread_index(); i < total; i += grid_thread_count()) {
    const std::int64_t p = i / plane_in, o = i % plane_in;
    grad_in[i] = layers_math::max_pool2d_grad_at(grad_out + p * plane_out, indices + p * plane_out,
                                                 g, o / g.W, o % g.W);
  }
}

template <typename T>
__global__ void adaptive_max_pool2d_kernel(T* out, std::int64_t* indices, const T* in,
                                           Pool2dShape g) {
  const std::int64_t plane_out = g.OH * g.OW, total = g.planes * plane_out;
  for (std::int64_t i = global_thread_index(); i < total; i += grid_thread_count()) {
    const std::int64_t p = i / plane_out, o = i % plane_out;
    layers_math::adaptive_max_pool2d_at(in + p * g.H * g.W, g, o / g.OW, o % g.OW, &out[i],
                                        &indices[i]);
  }
}

template <typename T>
__global__ void adaptive_max_pool2d_backward_gather_kernel(T* grad_in, const T* grad_out,
                                                           const std::int64_t* indices,
                                                           Pool2dShape g) {
  const std::int64_t plane_in = g.H * g.W, plane_out = g.OH * g.OW, total = g.planes * plane_in;
  for (std::int64_t i = global_thread_index(); i < total; i += grid_thread_count()) {
    const std::int64_t p = i / plane_in, o = i % plane_in;
    grad_in[i] = layers_math::adaptive_max_pool2d_grad_at(
        grad_out + p * plane_out, indices + p * plane_out, g, o / g.W, o % g.W);
  }
}

template <typename T>
__global__ void avg_pool2d_kernel(T* out, const T* in, Pool2dShape g) {
  const std::int64_t plane_out = g.OH * g.OW, total = g.planes * plane_out;
  for (std::int64_t i = global_thread_index(); i < total; i += grid_thread_count()) {
    const std::int64_t p = i / plane_out, o = i % plane_out;
    out[i] = layers_math::avg_pool2d_at(in + p * g.H * g.W, g, o / g.OW, o % g.OW);
  }
}

template <typename T>
__global__ void avg_pool2d_backward_gather_kernel(T* grad_in, const T* grad_out, Pool2dShape g) {
  const std::int64_t plane_in = g.H * g.W, plane_out = g.OH * g.OW, total = g.planes * plane_in;
  for (std::int64_t i = global_thread_index(); i < total; i += grid_thread_count()) {
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
  for (std::int64_t c = global_thread_index(); c < num_counters; c += grid_thread_count()) {
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
  for (std::int64_t i = global_thread_index(); i < numel; i += grid_thread_count()) {
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
    max_value = layers_math::softmax_shift(block_max(max_value));
    M sum = 0;
    for (std::int64_t r = threadIdx.x; r < R; r += blockDim.x)
      sum += exp(static_cast<M>(x[r]) - max_value);
    sum = block_sum(sum);
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
  for (std::int64_t run = global_thread_index(); run < outer * inner; run += grid_thread_count()) {
    const std::int64_t base = (run / inner) * R * inner + run % inner;
    M max_value = -std::numeric_limits<M>::infinity();
    for (std::int64_t r = 0; r < R; ++r)
      max_value = layers_math::running_max(max_value, static_cast<M>(in[base + r * inner]));
    max_value = layers_math::softmax_shift(max_value);
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
        block_sum(softmax_backward_dot(gy, y, row * R, 1, threadIdx.x, blockDim.x, R, log));
    softmax_backward_write(gx, gy, y, dot, row * R, 1, threadIdx.x, blockDim.x, R, log);
  }
}

template <typename T>
__global__ void softmax_backward_thread_per_column_kernel(T* gx, const T* gy, const T* y,
                                                          std::int64_t outer, std::int64_t R,
                                                          std::int64_t inner, bool log) {
  for (std::int64_t run = global_thread_index(); run < outer * inner; run += grid_thread_count()) {
    const std::int64_t base = (run / inner) * R * inner + run % inner;
    const opmath_t<T> dot = softmax_backward_dot(gy, y, base, inner, 0, 1, R, log);
    softmax_backward_write(gx, gy, y, dot, base, inner, 0, 1, R, log);
  }
}

// ---- Loss kernels ----------------------------------------------------------------------------

// Block b owns rows b, b + gridDim.x, ...: max, sum of exp, then thread 0 picks the target logit
// and its class weight (layers_math::class_weight). An out-of-range target (not ignored) gives a
// NaN loss and sample weight; its logit and weight are never read.
template <typename T>
__global__ void cross_entropy_block_per_row_kernel(T* losses, T* sample_weights, opmath_t<T>* lse,
                                                   const T* logits, const std::int64_t* target,
                                                   const T* weight, std::int64_t N, std::int64_t C,
                                                   std::int64_t ignore_index) {
  using M = opmath_t<T>;
  for (std::int64_t row = blockIdx.x; row < N; row += gridDim.x) {
    const T* x = logits + row * C;
    M max_value = -std::numeric_limits<M>::infinity();
    for (std::int64_t j = threadIdx.x; j < C; j += blockDim.x)
      max_value = layers_math::running_max(max_value, static_cast<M>(x[j]));
    max_value = layers_math::softmax_shift(block_max(max_value));
    M sum = 0;
    for (std::int64_t j = threadIdx.x; j < C; j += blockDim.x)
      sum += exp(static_cast<M>(x[j]) - max_value);
    sum = block_sum(sum);
    if (threadIdx.x == 0) {
      const M row_lse = max_value + ::log(sum);
      lse[row] = row_lse;
      const std::int64_t t = target[row];
      const M w = layers_math::class_weight(weight, t, C, ignore_index);
      sample_weights[row] = static_cast<T>(w);
      M loss = 0;
      if (t != ignore_index) {
        loss = (t >= 0 && t < C) ? w * (row_lse - static_cast<M>(x[t]))
                                 : std::numeric_limits<M>::quiet_NaN();
      }
      losses[row] = static_cast<T>(loss);
    }
  }
}

template <typename T>
__global__ void cross_entropy_backward_kernel(T* grad_logits, const T* grad_losses, const T* logits,
                                              const opmath_t<T>* lse, const std::int64_t* target,
                                              const T* weight, std::int64_t N, std::int64_t C,
                                              std::int64_t ignore_index) {
  using M = opmath_t<T>;
  for (std::int64_t k = global_thread_index(); k < N * C; k += grid_thread_count()) {
    const std::int64_t i = k / C, j = k % C;
    const std::int64_t t = target[i];
    if (t == ignore_index) {
      grad_logits[k] = static_cast<T>(0);
      continue;
    }
    const M p = exp(static_cast<M>(logits[k]) - lse[i]);
    const M g =
        static_cast<M>(grad_losses[i]) * layers_math::class_weight(weight, t, C, ignore_index);
    grad_logits[k] = static_cast<T>(g * (j == t ? p - M(1) : p));
  }
}

template <typename T>
__global__ void nll_loss_kernel(T* losses, T* sample_weights, const T* logp,
                                const std::int64_t* target, const T* weight, std::int64_t N,
                                std::int64_t C, std::int64_t ignore_index) {
  using M = opmath_t<T>;
  for (std::int64_t i = global_thread_index(); i < N; i += grid_thread_count()) {
    const std::int64_t t = target[i];
    const M w = layers_math::class_weight(weight, t, C, ignore_index);
    sample_weights[i] = static_cast<T>(w);
    M loss = 0;
    if (t != ignore_index) {
      loss = (t >= 0 && t < C) ? -w * static_cast<M>(logp[i * C + t])
                               : std::numeric_limits<M>::quiet_NaN();
    }
    losses[i] = static_cast<T>(loss);
  }
}

template <typename T>
__global__ void nll_loss_backward_kernel(T* grad_logp, const T* grad_losses,
                                         const std::int64_t* target, const T* weight,
                                         std::int64_t N, std::int64_t C,
                                         std::int64_t ignore_index) {
  using M = opmath_t<T>;
  for (std::int64_t k = global_thread_index(); k < N * C; k += grid_thread_count()) {
    const std::int64_t t = target[k / C];
    grad_logp[k] = (t != ignore_index && k % C == t)
                       ? static_cast<T>(-static_cast<M>(grad_losses[k / C]) *
                                        layers_math::class_weight(weight, t, C, ignore_index))
                       : static_cast<T>(0);
  }
}

// ---- Launchers -------------------------------------------------------------------------------

// Blocks for a grid-stride kernel with one thread per item.
template <typename Kernel>
unsigned int items_grid(Kernel* kernel, std::int64_t items) {
  return grid_size(kernel, kThreads, ceil_div(items, kThreads));
}

// Threads of a block-per-row kernel: enough whole warps to cover a row once, at most kThreads.
int threads_for_row(std::int64_t row_len) {
  return static_cast<int>(
      std::clamp<std::int64_t>(ceil_div(row_len, kWarpSize) * kWarpSize, kWarpSize, kThreads));
}

// Blocks for a grid-stride kernel with one block per row.
template <typename Kernel>
unsigned int rows_grid(Kernel* kernel, std::int64_t rows, std::int64_t row_len) {
  return grid_size(kernel, threads_for_row(row_len), rows);
}

}  // namespace

void max_pool2d(DType dtype, void* out, std::int64_t* indices, const void* in,
                const Pool2dShape& g) {
  dispatch_floating(dtype, "max_pool2d", [&]<typename T>() {
    max_pool2d_kernel<T>
        <<<items_grid(max_pool2d_kernel<T>, g.planes * g.OH * g.OW), kThreads, 0,
           current_stream()>>>(static_cast<T*>(out), indices, static_cast<const T*>(in), g);
    LG_CUDA_CHECK_LAUNCH();
  });
}

void max_pool2d_backward(DType dtype, void* grad_in, const void* grad_out,
                         const std::int64_t* indices, const Pool2dShape& g) {
  dispatch_floating(dtype, "max_pool2d_backward", [&]<typename T>() {
    max_pool2d_backward_gather_kernel<T>
        <<<items_grid(max_pool2d_backward_gather_kernel<T>, g.planes * g.H * g.W), kThreads, 0,
           current_stream()>>>(static_cast<T*>(grad_in), static_cast<const T*>(grad_out), indices,
                               g);
    LG_CUDA_CHECK_LAUNCH();
  });
}

void adaptive_max_pool2d(DType dtype, void* out, std::int64_t* indices, const void* in,
                         const Pool2dShape& g) {
  dispatch_floating(dtype, "adaptive_max_pool2d", [&]<typename T>() {
    adaptive_max_pool2d_kernel<T>
        <<<items_grid(adaptive_max_pool2d_kernel<T>, g.planes * g.OH * g.OW), kThreads, 0,
           current_stream()>>>(static_cast<T*>(out), indices, static_cast<const T*>(in), g);
    LG_CUDA_CHECK_LAUNCH();
  });
}

void adaptive_max_pool2d_backward(DType dtype, void* grad_in, const void* grad_out,
                                  const std::int64_t* indices, const Pool2dShape& g) {
  dispatch_floating(dtype, "adaptive_max_pool2d_backward", [&]<typename T>() {
    adaptive_max_pool2d_backward_gather_kernel<T>
        <<<items_grid(adaptive_max_pool2d_backward_gather_kernel<T>, g.planes * g.H * g.W),
           kThreads, 0, current_stream()>>>(static_cast<T*>(grad_in),
                                            static_cast<const T*>(grad_out), indices, g);
    LG_CUDA_CHECK_LAUNCH();
  });
}

void avg_pool2d(DType dtype, void* out, const void* in, const Pool2dShape& g) {
  dispatch_floating(dtype, "avg_pool2d", [&]<typename T>() {
    avg_pool2d_kernel<T><<<items_grid(avg_pool2d_kernel<T>, g.planes * g.OH * g.OW), kThreads, 0,
                           current_stream()>>>(static_cast<T*>(out), static_cast<const T*>(in), g);
    LG_CUDA_CHECK_LAUNCH();
  });
}

void avg_pool2d_backward(DType dtype, void* grad_in, const void* grad_out, const Pool2dShape& g) {
  dispatch_floating(dtype, "avg_pool2d_backward", [&]<typename T>() {
    avg_pool2d_backward_gather_kernel<T>
        <<<items_grid(avg_pool2d_backward_gather_kernel<T>, g.planes * g.H * g.W), kThreads, 0,
           current_stream()>>>(static_cast<T*>(grad_in), static_cast<const T*>(grad_out), g);
    LG_CUDA_CHECK_LAUNCH();
  });
}

void dropout(DType dtype, void* out, bool* mask, const void* in, std::int64_t numel, double p,
             double scale, std::uint64_t seed, std::uint64_t offset) {
  dispatch_floating(dtype, "dropout", [&]<typename T>() {
    const std::int64_t counters =
        (numel + layers_math::kDropoutPerCounter - 1) / layers_math::kDropoutPerCounter;
    dropout_philox_per_counter_kernel<T>
        <<<items_grid(dropout_philox_per_counter_kernel<T>, counters), kThreads, 0,
           current_stream()>>>(static_cast<T*>(out), mask, static_cast<const T*>(in), numel, p,
                               static_cast<opmath_t<T>>(scale), seed, offset);
    LG_CUDA_CHECK_LAUNCH();
  });
}

void dropout_backward(DType dtype, void* grad_in, const void* grad_out, const bool* mask,
                      std::int64_t numel, double scale) {
  dispatch_floating(dtype, "dropout_backward", [&]<typename T>() {
    dropout_backward_kernel<T>
        <<<items_grid(dropout_backward_kernel<T>, numel), kThreads, 0, current_stream()>>>(
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
      softmax_block_per_row_kernel<T>
          <<<rows_grid(softmax_block_per_row_kernel<T>, outer, R), threads_for_row(R), 0,
             current_stream()>>>(y, x, outer, R, log);
    } else {
      softmax_thread_per_column_kernel<T>
          <<<items_grid(softmax_thread_per_column_kernel<T>, outer * inner), kThreads, 0,
             current_stream()>>>(y, x, outer, R, inner, log);
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
      softmax_backward_block_per_row_kernel<T>
          <<<rows_grid(softmax_backward_block_per_row_kernel<T>, outer, R), threads_for_row(R), 0,
             current_stream()>>>(gx, gy, y, outer, R, log);
    } else {
      softmax_backward_thread_per_column_kernel<T>
          <<<items_grid(softmax_backward_thread_per_column_kernel<T>, outer * inner), kThreads, 0,
             current_stream()>>>(gx, gy, y, outer, R, inner, log);
    }
    LG_CUDA_CHECK_LAUNCH();
  });
}

void cross_entropy(DType dtype, void* losses, void* sample_weights, void* lse, const void* logits,
                   const std::int64_t* target, const void* weight, std::int64_t N, std::int64_t C,
                   std::int64_t ignore_index) {
  dispatch_floating(dtype, "cross_entropy", [&]<typename T>() {
    cross_entropy_block_per_row_kernel<T><<<rows_grid(cross_entropy_block_per_row_kernel<T>, N, C),
                                            threads_for_row(C), 0, current_stream()>>>(
        static_cast<T*>(losses), static_cast<T*>(sample_weights), static_cast<opmath_t<T>*>(lse),
        static_cast<const T*>(logits), target, static_cast<const T*>(weight), N, C, ignore_index);
    LG_CUDA_CHECK_LAUNCH();
  });
}

void cross_entropy_backward(DType dtype, void* grad_logits, const void* grad_losses,
                            const void* logits, const void* lse, const std::int64_t* target,
                            const void* weight, std::int64_t N, std::int64_t C,
                            std::int64_t ignore_index) {
  dispatch_floating(dtype, "cross_entropy_backward", [&]<typename T>() {
    cross_entropy_backward_kernel<T>
        <<<items_grid(cross_entropy_backward_kernel<T>, N * C), kThreads, 0, current_stream()>>>(
            static_cast<T*>(grad_logits), static_cast<const T*>(grad_losses),
            static_cast<const T*>(logits), static_cast<const opmath_t<T>*>(lse), target,
            static_cast<const T*>(weight), N, C, ignore_index);
    LG_CUDA_CHECK_LAUNCH();
  });
}

void nll_loss(DType dtype, void* losses, void* sample_weights, const void* logp,
              const std::int64_t* target, const void* weight, std::int64_t N, std::int64_t C,
              std::int64_t ignore_index) {
  dispatch_floating(dtype, "nll_loss", [&]<typename T>() {
    nll_loss_kernel<T><<<items_grid(nll_loss_kernel<T>, N), kThreads, 0, current_stream()>>>(
        static_cast<T*>(losses), static_cast<T*>(sample_weights), static_cast<const T*>(logp),
        target, static_cast<const T*>(weight), N, C, ignore_index);
    LG_CUDA_CHECK_LAUNCH();
  });
}

void nll_loss_backward(DType dtype, void* grad_logp, const void* grad_losses,
                       const std::int64_t* target, const void* weight, std::int64_t N,
                       std::int64_t C, std::int64_t ignore_index) {
  dispatch_floating(dtype, "nll_loss_backward", [&]<typename T>() {
    nll_loss_backward_kernel<T>
        <<<items_grid(nll_loss_backward_kernel<T>, N * C), kThreads, 0, current_stream()>>>(
            static_cast<T*>(grad_logp), static_cast<const T*>(grad_losses), target,
            static_cast<const T*>(weight), N, C, ignore_index);
    LG_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace leangrad::kernels::cuda
