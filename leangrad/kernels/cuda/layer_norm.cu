// LayerNorm in CUDA (layer_norm_forward/backward of kernels/backend.h). The CPU kernels
// (kernels/cpu/layer_norm*.cpp) are the reference; the math (Welford states and their merge, the
// input-gradient coefficients) is GroupNorm's, shared through kernels/group_norm_math.h. Layout
// and formulas: Note [LayerNorm layout and math]. Every reduction is a fixed tree: no atomics,
// results depend only on the sizes (and on whether the pointers allow vector loads). Math in
// opmath_t<T> (float; double for float64), mean and rstd stored in it.
//
// Note [LayerNorm on CUDA]
//   x is (R, M), row after row. Each row is reduced by a team of threads whose size depends on M
//   alone (with_threads_per_row): one thread for rows of at most 2 vectors, 8 lanes of a warp up
//   to 16 vectors, a whole warp up to kWarpRowMaxVectors, a block of kThreads above that; a block
//   of kThreads holds kThreads / team rows, and blocks stride over the rows past one wave.
//     forward   each thread runs Welford over its vectors of the row (welford_of_values of each
//               vector, merged into its state by Chan's formula: one division per vector), the
//               team merges the states (a shuffle tree, or block_allreduce), the team's first
//               thread writes mean and rstd, and every thread writes y = (x - mean) * rstd * w + b
//               for its vectors (reading x a second time, mostly from the cache).
//     backward  dx: the same teams sum a = sum w dy and b = sum w dy (x - mean) over the row, then
//               write dx = rstd w dy + x_coef (x - mean) + const_coef
//               (group_norm_input_grad_coefs_centred with group size M). Centred sums, as
//               GroupNorm's fast kernels: no cancellation when the mean is far from 0.
//               dweight, dbias: column sums over the rows, in two kernels. The rows are cut into
//               chunks whose length depends only on R and M (about kWeightGradBlocks blocks in
//               all, at least kMinRowsPerChunk rows each); block (column tile, chunk) of
//               weight_bias_partial sums dy (x - mean) rstd and dy over its chunk for kColumnTile
//               columns (kRowLanes rows side by side, their sums then added in order), and
//               weight_bias_sum adds each column's chunk partials in order.
//   Loads are 16-byte vectors when M is a multiple of the vector width and every pointer
//   (x, y or dx, dy, weight, bias) is aligned to 16 bytes, scalar otherwise.
#include <algorithm>
#include <cstdint>

#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/cuda/cuda_common.cuh>
#include <leangrad/kernels/cuda/norm_common.cuh>

namespace leangrad::kernels::cuda {
namespace {

constexpr int kThreads = 256;
// Rows of at most this many vectors are reduced by part of a warp (Note [LayerNorm on CUDA]).
constexpr std::int64_t kWarpRowMaxVectors = 256;
// The weight/bias-gradient reduction: blocks to aim for (a few waves of the largest GPUs; a
// constant, so the chunks depend only on the sizes), shortest chunk, columns per block
// (threadIdx.x) and rows summed side by side (threadIdx.y).
constexpr std::int64_t kWeightGradBlocks = 2048;
constexpr std::int64_t kMinRowsPerChunk = 64;
constexpr int kColumnTile = 32;
constexpr int kRowLanes = 8;
constexpr int kWeightGradThreads = kColumnTile * kRowLanes;

// ---- Device helpers --------------------------------------------------------------------------

// The per-row sums of the input gradient: a = sum w dy and b = sum w dy (x - mean).
template <typename Acc>
struct RowGradSums {
  Acc w_dy = Acc(0);
  Acc w_dy_centred = Acc(0);
};

struct RowGradSumsMerge {
  template <typename Acc>
  __device__ RowGradSums<Acc> operator()(const RowGradSums<Acc>& a,
                                         const RowGradSums<Acc>& b) const {
    return {a.w_dy + b.w_dy, a.w_dy_centred + b.w_dy_centred};
  }
};

// Vector v of p (elements [v * kWidth, (v + 1) * kWidth)) as Acc; `fallback` in every lane when
// p is null (an absent weight or bias).
template <int kWidth, typename Acc, typename T>
__device__ __forceinline__ void load_acc(const T* p, std::int64_t v, Acc fallback,
                                         Acc (&out)[kWidth]) {
  if (p == nullptr) {
#pragma unroll
    for (int lane = 0; lane < kWidth; ++lane)
      out[lane] = fallback;
    return;
  }
  const Vector<T, kWidth> in = load_vector<kWidth>(p, v);
#pragma unroll
  for (int lane = 0; lane < kWidth; ++lane)
    out[lane] = static_cast<Acc>(in.val[lane]);
}

// Every thread of a team of kThreadsPerRow gets merge() of the team's values: for a team within
// a warp (consecutive lanes, a power of two) a halving tree into the team's first lane, which
// then broadcasts it (so every lane holds the same bits, even for a merge that is not
// commutative to the last bit, as Welford's is not); for a whole block, block_allreduce.
template <int kThreadsPerRow, typename V, typename Merge>
__device__ __forceinline__ V row_allreduce(V v, Merge merge, V identity) {
  if constexpr (kThreadsPerRow == kThreads) {
    return block_allreduce<kThreads>(v, merge, identity);
  } else {
    static_assert(kThreadsPerRow > 0 && kThreadsPerRow <= kWarpSize &&
                  (kThreadsPerRow & (kThreadsPerRow - 1)) == 0);
    (void)identity;
    if constexpr (kThreadsPerRow == 1) {
      return v;
    } else {
#pragma unroll
      for (int offset = kThreadsPerRow / 2; offset > 0; offset /= 2)
        v = merge(v, shfl_down(v, offset));
      return shuffle_words(
          v, [](unsigned int w) { return __shfl_sync(kFullWarpMask, w, 0, kThreadsPerRow); });
    }
  }
}

// ---- Row kernels (Note [LayerNorm on CUDA]) --------------------------------------------------

// Rows of row_vectors vectors, kThreads / kThreadsPerRow rows per block; thread `sub` of a row's
// team takes vectors sub, sub + kThreadsPerRow, ... The row loop runs the same number of times
// in every thread of a block (a row past the end sums nothing), so shuffles and barriers see
// every thread.
template <typename T, typename Acc, int kWidth, int kThreadsPerRow>
__global__ void __launch_bounds__(kThreads)
    layer_norm_forward_kernel(std::int64_t rows, std::int64_t row_vectors, const T* __restrict__ x,
                              const T* __restrict__ weight, const T* __restrict__ bias, Acc eps,
                              T* __restrict__ y, Acc* __restrict__ mean, Acc* __restrict__ rstd) {
  constexpr int kRowsPerBlock = kThreads / kThreadsPerRow;
  const int sub = static_cast<int>(threadIdx.x) % kThreadsPerRow;
  const int block_row = static_cast<int>(threadIdx.x) / kThreadsPerRow;
  for (std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * kRowsPerBlock; first < rows;
       first += static_cast<std::int64_t>(gridDim.x) * kRowsPerBlock) {
    const std::int64_t row = first + block_row;
    const bool valid = row < rows;
    const std::int64_t offset = (valid ? row : 0) * row_vectors * kWidth;
    WelfordState<Acc> s;
    if (valid) {
      for (std::int64_t v = sub; v < row_vectors; v += kThreadsPerRow) {
        Acc values[kWidth];
        load_acc<kWidth>(x + offset, v, Acc(0), values);
        s = welford_merge(s, welford_of_values<kWidth>(values));
      }
    }
    s = row_allreduce<kThreadsPerRow>(s, WelfordMerge{}, WelfordState<Acc>{});
    if (valid) {
      const Acc r = welford_rstd(s, eps);
      if (sub == 0) {
        mean[row] = s.mean;
        rstd[row] = r;
      }
      for (std::int64_t v = sub; v < row_vectors; v += kThreadsPerRow) {
        Acc xv[kWidth];
        Acc wv[kWidth];
        Acc bv[kWidth];
        load_acc<kWidth>(x + offset, v, Acc(0), xv);
        load_acc<kWidth>(weight, v, Acc(1), wv);
        load_acc<kWidth>(bias, v, Acc(0), bv);
        Vector<T, kWidth> o;
#pragma unroll
        for (int lane = 0; lane < kWidth; ++lane)
          o.val[lane] = static_cast<T>((xv[lane] - s.mean) * r * wv[lane] + bv[lane]);
        store_vector<kWidth>(y + offset, v, o);
      }
    }
  }
}

// dx of each row, with the teams of layer_norm_forward_kernel: the row's sums a = sum w dy and
// b = sum w dy (x - mean), their coefficients, then
// dx = rstd w dy + x_coef (x - mean) + const_coef.
template <typename T, typename Acc, int kWidth, int kThreadsPerRow>
__global__ void __launch_bounds__(kThreads)
    layer_norm_backward_input_kernel(std::int64_t rows, std::int64_t row_vectors,
                                     const T* __restrict__ dy, const T* __restrict__ x,
                                     const Acc* __restrict__ mean, const Acc* __restrict__ rstd,
                                     const T* __restrict__ weight, T* __restrict__ dx) {
  constexpr int kRowsPerBlock = kThreads / kThreadsPerRow;
  const int sub = static_cast<int>(threadIdx.x) % kThreadsPerRow;
  const int block_row = static_cast<int>(threadIdx.x) / kThreadsPerRow;
  const std::int64_t features = row_vectors * kWidth;
  for (std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * kRowsPerBlock; first < rows;
       first += static_cast<std::int64_t>(gridDim.x) * kRowsPerBlock) {
    const std::int64_t row = first + block_row;
    const bool valid = row < rows;
    const std::int64_t offset = (valid ? row : 0) * features;
    const Acc m = valid ? mean[row] : Acc(0);
    const Acc r = valid ? rstd[row] : Acc(0);
    RowGradSums<Acc> s;
    if (valid) {
      for (std::int64_t v = sub; v < row_vectors; v += kThreadsPerRow) {
        Acc gv[kWidth];
        Acc xv[kWidth];
        Acc wv[kWidth];
        load_acc<kWidth>(dy + offset, v, Acc(0), gv);
        load_acc<kWidth>(x + offset, v, Acc(0), xv);
        load_acc<kWidth>(weight, v, Acc(1), wv);
#pragma unroll
        for (int lane = 0; lane < kWidth; ++lane) {
          const Acc wg = wv[lane] * gv[lane];
          s.w_dy += wg;
          s.w_dy_centred += wg * (xv[lane] - m);
        }
      }
    }
    s = row_allreduce<kThreadsPerRow>(s, RowGradSumsMerge{}, RowGradSums<Acc>{});
    if (valid) {
      const GroupInputGradCoefs<Acc> k =
          group_norm_input_grad_coefs_centred(r, s.w_dy, s.w_dy_centred, features);
      for (std::int64_t v = sub; v < row_vectors; v += kThreadsPerRow) {
        Acc gv[kWidth];
        Acc xv[kWidth];
        Acc wv[kWidth];
        load_acc<kWidth>(dy + offset, v, Acc(0), gv);
        load_acc<kWidth>(x + offset, v, Acc(0), xv);
        load_acc<kWidth>(weight, v, Acc(1), wv);
        Vector<T, kWidth> o;
#pragma unroll
        for (int lane = 0; lane < kWidth; ++lane)
          o.val[lane] =
              static_cast<T>(r * wv[lane] * gv[lane] + k.x_coef * (xv[lane] - m) + k.const_coef);
        store_vector<kWidth>(dx + offset, v, o);
      }
    }
  }
}

// ---- Weight and bias gradients (Note [LayerNorm on CUDA]) ------------------------------------

// Pass 1: block (blockIdx.x, blockIdx.y) = (column tile, row chunk); thread (tx, ty) sums column
// c = tile * kColumnTile + tx over rows chunk_begin + ty, + kRowLanes, ... of the chunk; the
// kRowLanes sums are then added in order of ty: partials[chunk * features + c] = (dweight,
// dbias). with_weight false: the weight gradient is not asked for (x, mean and rstd unread).
template <typename T, typename Acc>
__global__ void __launch_bounds__(kWeightGradThreads)
    layer_norm_weight_bias_partial_kernel(std::int64_t rows, std::int64_t features,
                                          std::int64_t rows_per_chunk, const T* __restrict__ dy,
                                          const T* __restrict__ x, const Acc* __restrict__ mean,
                                          const Acc* __restrict__ rstd, bool with_weight,
                                          WeightBiasGrad<Acc>* __restrict__ partials) {
  __shared__ Acc lane_sums[kRowLanes][kColumnTile][2];
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * kColumnTile + threadIdx.x;
  const std::int64_t chunk = blockIdx.y;
  const std::int64_t r_begin = chunk * rows_per_chunk;
  const std::int64_t r_end = std::min(r_begin + rows_per_chunk, rows);
  Acc dw = 0;
  Acc db = 0;
  if (c < features) {
    for (std::int64_t r = r_begin + threadIdx.y; r < r_end; r += kRowLanes) {
      const Acc g = static_cast<Acc>(dy[r * features + c]);
      db += g;
      if (with_weight) dw += g * (static_cast<Acc>(x[r * features + c]) - mean[r]) * rstd[r];
    }
  }
  lane_sums[threadIdx.y][threadIdx.x][0] = dw;
  lane_sums[threadIdx.y][threadIdx.x][1] = db;
  __syncthreads();
  if (threadIdx.y == 0 && c < features) {
    for (int k = 1; k < kRowLanes; ++k) {
      dw += lane_sums[k][threadIdx.x][0];
      db += lane_sums[k][threadIdx.x][1];
    }
    partials[chunk * features + c] = {dw, db};
  }
}

// Pass 2: the chunks' partials of column c in order.
template <typename T, typename Acc>
__global__ void layer_norm_weight_bias_sum_kernel(std::int64_t features, std::int64_t chunks,
                                                  const WeightBiasGrad<Acc>* __restrict__ partials,
                                                  T* __restrict__ grad_weight,
                                                  T* __restrict__ grad_bias) {
  for (std::int64_t c = global_thread_index(); c < features; c += grid_thread_count()) {
    Acc dw = 0;
    Acc db = 0;
    for (std::int64_t k = 0; k < chunks; ++k) {
      dw += partials[k * features + c].weight;
      db += partials[k * features + c].bias;
    }
    if (grad_weight != nullptr) grad_weight[c] = static_cast<T>(dw);
    if (grad_bias != nullptr) grad_bias[c] = static_cast<T>(db);
  }
}

// ---- Launchers -------------------------------------------------------------------------------

// Calls f.template operator()<kThreadsPerRow>() with the team size for rows of row_vectors
// vectors (Note [LayerNorm on CUDA]).
template <typename F>
void with_threads_per_row(std::int64_t row_vectors, const F& f) {
  if (row_vectors <= 2) {
    f.template operator()<1>();
  } else if (row_vectors <= 16) {
    f.template operator()<8>();
  } else if (row_vectors <= kWarpRowMaxVectors) {
    f.template operator()<kWarpSize>();
  } else {
    f.template operator()<kThreads>();
  }
}

template <typename T, int kWidth>
void forward(std::int64_t rows, std::int64_t features, T* y, opmath_t<T>* mean, opmath_t<T>* rstd,
             const T* x, const T* weight, const T* bias, double eps) {
  using Acc = opmath_t<T>;
  const std::int64_t row_vectors = features / kWidth;
  with_threads_per_row(row_vectors, [&]<int kThreadsPerRow>() {
    auto* kernel = layer_norm_forward_kernel<T, Acc, kWidth, kThreadsPerRow>;
    const unsigned int blocks =
        grid_size(kernel, kThreads, ceil_div(rows, kThreads / kThreadsPerRow));
    kernel<<<blocks, kThreads, 0, current_stream()>>>(rows, row_vectors, x, weight, bias,
                                                      static_cast<Acc>(eps), y, mean, rstd);
  });
  LG_CUDA_CHECK_LAUNCH();
}

template <typename T, int kWidth>
void backward_input(std::int64_t rows, std::int64_t features, T* dx, const T* dy, const T* x,
                    const opmath_t<T>* mean, const opmath_t<T>* rstd, const T* weight) {
  using Acc = opmath_t<T>;
  const std::int64_t row_vectors = features / kWidth;
  with_threads_per_row(row_vectors, [&]<int kThreadsPerRow>() {
    auto* kernel = layer_norm_backward_input_kernel<T, Acc, kWidth, kThreadsPerRow>;
    const unsigned int blocks =
        grid_size(kernel, kThreads, ceil_div(rows, kThreads / kThreadsPerRow));
    kernel<<<blocks, kThreads, 0, current_stream()>>>(rows, row_vectors, dy, x, mean, rstd, weight,
                                                      dx);
  });
  LG_CUDA_CHECK_LAUNCH();
}

// The weight and bias gradients (either may be null, not both): chunks fixed by the sizes.
template <typename T>
void weight_bias_grads(std::int64_t rows, std::int64_t features, T* grad_weight, T* grad_bias,
                       const T* dy, const T* x, const opmath_t<T>* mean, const opmath_t<T>* rstd) {
  using Acc = opmath_t<T>;
  const std::int64_t column_tiles = ceil_div(features, kColumnTile);
  // At most kWeightGradBlocks / column_tiles (rounded up) chunks: gridDim.y stays below 65535.
  const std::int64_t chunks_wanted = ceil_div(kWeightGradBlocks, column_tiles);
  const std::int64_t rows_per_chunk = std::max(kMinRowsPerChunk, ceil_div(rows, chunks_wanted));
  const std::int64_t chunks = ceil_div(rows, rows_per_chunk);
  Workspace ws(Workspace::bytes_for<WeightBiasGrad<Acc>>(chunks * features));
  auto* partials = ws.take<WeightBiasGrad<Acc>>(chunks * features);
  const dim3 grid(static_cast<unsigned int>(column_tiles), static_cast<unsigned int>(chunks));
  layer_norm_weight_bias_partial_kernel<T, Acc>
      <<<grid, dim3(kColumnTile, kRowLanes), 0, current_stream()>>>(
          rows, features, rows_per_chunk, dy, x, mean, rstd, grad_weight != nullptr, partials);
  LG_CUDA_CHECK_LAUNCH();
  auto* sum = layer_norm_weight_bias_sum_kernel<T, Acc>;
  sum<<<grid_size(sum, kThreads, ceil_div(features, kThreads)), kThreads, 0, current_stream()>>>(
      features, chunks, partials, grad_weight, grad_bias);
  LG_CUDA_CHECK_LAUNCH();
}

}  // namespace

void layer_norm_forward(DType dtype, std::int64_t rows, std::int64_t features, void* out,
                        void* mean, void* rstd, const void* x, const void* weight, const void* bias,
                        double eps) {
  dispatch_floating(dtype, "layer_norm", [&]<typename T>() {
    using Acc = opmath_t<T>;
    auto* y = static_cast<T*>(out);
    const auto* in = static_cast<const T*>(x);
    const auto* w = static_cast<const T*>(weight);
    const auto* b = static_cast<const T*>(bias);
    with_vector_width<T>(features, vector_aligned<T, kVectorWidth<T>>(y, in, w, b),
                         [&]<int kWidth>() {
                           forward<T, kWidth>(rows, features, y, static_cast<Acc*>(mean),
                                              static_cast<Acc*>(rstd), in, w, b, eps);
                         });
  });
}

void layer_norm_backward(DType dtype, std::int64_t rows, std::int64_t features, void* grad_input,
                         void* grad_weight, void* grad_bias, const void* grad_output, const void* x,
                         const void* mean, const void* rstd, const void* weight) {
  dispatch_floating(dtype, "layer_norm_backward", [&]<typename T>() {
    using Acc = opmath_t<T>;
    auto* dx = static_cast<T*>(grad_input);
    const auto* dy = static_cast<const T*>(grad_output);
    const auto* in = static_cast<const T*>(x);
    const auto* w = static_cast<const T*>(weight);
    const auto* m = static_cast<const Acc*>(mean);
    const auto* r = static_cast<const Acc*>(rstd);
    if (dx != nullptr) {
      with_vector_width<T>(
          features, vector_aligned<T, kVectorWidth<T>>(dx, dy, in, w),
          [&]<int kWidth>() { backward_input<T, kWidth>(rows, features, dx, dy, in, m, r, w); });
    }
    if (grad_weight != nullptr || grad_bias != nullptr) {
      weight_bias_grads<T>(rows, features, static_cast<T*>(grad_weight), static_cast<T*>(grad_bias),
                           dy, in, m, r);
    }
  });
}

}  // namespace leangrad::kernels::cuda
