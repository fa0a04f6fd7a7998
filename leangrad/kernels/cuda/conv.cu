// 2-D convolution in CUDA as an implicit GEMM: the im2col matrix is never written to memory; each
// block gathers the tiles of it that it needs straight from the NCHW tensors into shared memory.
// kernels/cpu/conv.cpp (im2col + Eigen) is the reference; the index math of both is
// kernels/conv_geometry.h. Layout: device helpers -> the kernel -> launchers -> entries.
//
// Note [Three convolutions, one GEMM kernel]
// All three operations are C (M x N) = A (M x K) B (K x N) per group (blockIdx.z), with index
// maps that say where A[m, k] and B[k, n] live and where C[m, n] goes:
//   forward     m = (n, oh, ow)  n = c_out   k = (c_in, r, s)   A = x (zero in the padding),
//               B = w, C -> y (+ bias)
//   input grad  m = (n, ih, iw)  n = c_in    k = (c_out, r, s)  A = dy at the output pixel whose
//               tap (r, s) reads (ih, iw) (conv_output_coord: zero when there is none, as for
//               most taps when stride > 1), B = w, C -> dx
//   weight grad m = c_out        n = (c_in, r, s)  k = (n, oh, ow)  A = dy, B = x (zero in the
//               padding), C -> dw. K is N * H_out * W_out (hundreds of thousands): it is split
//               over blockIdx.z, each split writing its partial product to its own slice of a
//               float32 (float64) workspace; a second kernel adds the slices in a fixed order
//               (deterministic: no atomics), converts and writes dw. See Note [Split-K].
//
// Note [Tiles]
// A block of 128 threads (4 warps) owns a 64 x 64 tile of C and walks K in steps of 32. Per step
// it stages A (32 x 64, k-major) and B (32 x 64) in shared memory; every thread loads 16 elements
// of each, predicated (zero) outside the problem, so no size needs to divide the tile. The loads
// of step k + 1 are issued into registers before the math of step k, hiding their latency behind
// it. Thread maps follow memory: A is read along m (consecutive ow) for forward and input grad,
// along k (consecutive pixels) for weight grad; B along k.
//   tensor cores (bfloat16, float16; float32 as TF32 when cuda::allow_tf32()): the 4 warps form a
//     2 x 2 grid, each owns 32 x 32 of C as 2 x 2 WMMA 16 x 16 accumulators (float32); the tile
//     goes through shared memory (C staged) so the stores to NCHW are coalesced along m.
//   SIMT (float32 without TF32, float64): each thread owns 4 x 8 outputs, fma in the input type.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include <algorithm>
#include <climits>
#include <optional>
#include <type_traits>

#include <leangrad/core/cuda.h>
#include <leangrad/core/error.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/cuda/conv_cudnn.h>
#include <leangrad/kernels/cuda/cuda_common.cuh>

namespace leangrad::kernels::cuda {

namespace {

namespace wmma = nvcuda::wmma;

enum class ConvGemmMode { Forward, InputGrad, WeightGrad };

constexpr int kBlockM = 64;
constexpr int kBlockN = 64;
constexpr int kBlockK = 32;
constexpr int kThreads = 128;
constexpr int kSmemPad = 8;  // elements per shared row: keeps WMMA's 32-byte alignment, fewer bank
                             // conflicts
constexpr int kLoadsPerThread = kBlockM * kBlockK / kThreads;  // 16 of A and 16 of B per step
static_assert(kBlockN * kBlockK / kThreads == kLoadsPerThread);

// Every size of the problem in 32-bit ints (implicit_gemm_supports checks they fit).
struct ConvProblem {
  int in_c, in_h, in_w, out_c, k_w, out_h, out_w;
  int stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups;
  int cin_g, cout_g, taps, in_pixels, out_pixels;
  int gemm_m, gemm_n, gemm_k;  // per group
  int k_tiles, k_tiles_per_split;
  std::int64_t split_stride;  // weight grad: elements between two splits' partial slices
};

// ---- Device helpers --------------------------------------------------------------------------

// The accumulator type: float, or double for double.
template <typename T>
using AccT = std::conditional_t<std::is_same_v<T, double>, double, float>;

__device__ __forceinline__ float to_acc(float v) {
  return v;
}
__device__ __forceinline__ double to_acc(double v) {
  return v;
}
__device__ __forceinline__ float to_acc(__half v) {
  return __half2float(v);
}
__device__ __forceinline__ float to_acc(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

template <typename T>
__device__ __forceinline__ T from_acc(AccT<T> v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(v);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(v);
  } else {
    return v;
  }
}

// Shared memory of one block: the A and B tiles, k-major, and (tensor-core path) C for the
// epilogue. See Note [Tiles].
template <typename T>
struct ConvTiles {
  __align__(128) T a[kBlockK][kBlockM + kSmemPad];  // A[m, k] at a[k][m]: column-major A
  __align__(128) T b[kBlockK][kBlockN + kSmemPad];  // B[k, n] at b[k][n]: row-major B
};

// Loads this thread's 16 elements of the A and B tiles at k tile `k_tile` into registers.
// See Note [Three convolutions, one GEMM kernel] for the index maps.
template <ConvGemmMode kMode, typename T>
struct TileLoader {
  const ConvProblem& p;
  const T* a_src;
  const T* b_src;
  int group, m_block, n_block, tid;
  // Forward / input grad: this thread's A row m never changes, decoded once.
  bool a_row_valid = false;
  int a_row_y = 0, a_row_x = 0;  // (oh, ow) forward, (ih, iw) input grad
  const T* a_row_base = nullptr;

  __device__ TileLoader(const ConvProblem& problem, const T* a, const T* b, int g, int mb, int nb,
                        int t)
      : p(problem), a_src(a), b_src(b), group(g), m_block(mb), n_block(nb), tid(t) {
    if constexpr (kMode != ConvGemmMode::WeightGrad) {
      const int m = m_block + tid % kBlockM;
      a_row_valid = m < p.gemm_m;
      if (a_row_valid) {
        const int pixels = kMode == ConvGemmMode::Forward ? p.out_pixels : p.in_pixels;
        const int width = kMode == ConvGemmMode::Forward ? p.out_w : p.in_w;
        const int image = m / pixels;
        const int pixel = m - image * pixels;
        a_row_y = pixel / width;
        a_row_x = pixel - a_row_y * width;
        if constexpr (kMode == ConvGemmMode::Forward) {
          a_row_base = a_src + (image * p.in_c + group * p.cin_g) * p.in_pixels;
        } else {
          a_row_base = a_src + (image * p.out_c + group * p.cout_g) * p.out_pixels;
        }
      }
    }
  }

  __device__ void load(int k_tile, T (&a)[kLoadsPerThread], T (&b)[kLoadsPerThread]) const {
    const T zero = from_acc<T>(AccT<T>(0));
    const int k0 = k_tile * kBlockK;
    // ---- A
    if constexpr (kMode == ConvGemmMode::WeightGrad) {
      // k-fastest: this thread's k is fixed for the step; m varies.
      const int k = k0 + tid % kBlockK;
      const bool k_valid = k < p.gemm_k;
      const int image = k_valid ? k / p.out_pixels : 0;
      const int pixel = k - image * p.out_pixels;
      const T* base = a_src + (image * p.out_c + group * p.cout_g) * p.out_pixels + pixel;
#pragma unroll
      for (int i = 0; i < kLoadsPerThread; ++i) {
        const int m = m_block + tid / kBlockK + i * (kThreads / kBlockK);
        a[i] = (k_valid && m < p.gemm_m) ? base[m * p.out_pixels] : zero;
      }
    } else {
      // m-fastest: this thread's m is fixed; k varies.
#pragma unroll
      for (int i = 0; i < kLoadsPerThread; ++i) {
        const int k = k0 + tid / kBlockM + i * (kThreads / kBlockM);
        T v = zero;
        if (a_row_valid && k < p.gemm_k) {
          const int channel = k / p.taps;  // c_in (forward) or c_out (input grad)
          const int tap = k - channel * p.taps;
          const int r = tap / p.k_w;
          const int s = tap - r * p.k_w;
          if constexpr (kMode == ConvGemmMode::Forward) {
            const int ih = conv_input_coord(a_row_y, r, p.stride_h, p.pad_h, p.dil_h);
            const int iw = conv_input_coord(a_row_x, s, p.stride_w, p.pad_w, p.dil_w);
            if (ih >= 0 && ih < p.in_h && iw >= 0 && iw < p.in_w)
              v = a_row_base[(channel * p.in_h + ih) * p.in_w + iw];
          } else {
            int oh = 0, ow = 0;
            if (conv_output_coord(a_row_y, r, p.stride_h, p.pad_h, p.dil_h, p.out_h, &oh) &&
                conv_output_coord(a_row_x, s, p.stride_w, p.pad_w, p.dil_w, p.out_w, &ow))
              v = a_row_base[(channel * p.out_h + oh) * p.out_w + ow];
          }
        }
        a[i] = v;
      }
    }
    // ---- B (k-fastest)
    const int k = k0 + tid % kBlockK;
    const bool k_valid = k < p.gemm_k;
    if constexpr (kMode == ConvGemmMode::Forward) {
      const T* base = b_src + group * p.cout_g * p.gemm_k + k;  // w[(g cout_g + n) K + k]
#pragma unroll
      for (int i = 0; i < kLoadsPerThread; ++i) {
        const int n = n_block + tid / kBlockK + i * (kThreads / kBlockK);
        b[i] = (k_valid && n < p.gemm_n) ? base[n * p.gemm_k] : zero;
      }
    } else if constexpr (kMode == ConvGemmMode::InputGrad) {
      const int c_out = k_valid ? k / p.taps : 0;
      const int tap = k - c_out * p.taps;
      const T* base = b_src + (group * p.cout_g + c_out) * p.cin_g * p.taps + tap;
#pragma unroll
      for (int i = 0; i < kLoadsPerThread; ++i) {
        const int n = n_block + tid / kBlockK + i * (kThreads / kBlockK);
        b[i] = (k_valid && n < p.gemm_n) ? base[n * p.taps] : zero;
      }
    } else {
      const int image = k_valid ? k / p.out_pixels : 0;
      const int pixel = k - image * p.out_pixels;
      const int oh = pixel / p.out_w;
      const int ow = pixel - oh * p.out_w;
      const T* base = b_src + (image * p.in_c + group * p.cin_g) * p.in_pixels;
#pragma unroll
      for (int i = 0; i < kLoadsPerThread; ++i) {
        const int n = n_block + tid / kBlockK + i * (kThreads / kBlockK);
        T v = zero;
        if (k_valid && n < p.gemm_n) {
          const int c_in = n / p.taps;
          const int tap = n - c_in * p.taps;
          const int r = tap / p.k_w;
          const int s = tap - r * p.k_w;
          const int ih = conv_input_coord(oh, r, p.stride_h, p.pad_h, p.dil_h);
          const int iw = conv_input_coord(ow, s, p.stride_w, p.pad_w, p.dil_w);
          if (ih >= 0 && ih < p.in_h && iw >= 0 && iw < p.in_w)
            v = base[(c_in * p.in_h + ih) * p.in_w + iw];
        }
        b[i] = v;
      }
    }
  }

  // Registers -> shared memory, at the places load() fetched them for.
  __device__ void store(const T (&a)[kLoadsPerThread], const T (&b)[kLoadsPerThread],
                        ConvTiles<T>& tiles) const {
#pragma unroll
    for (int i = 0; i < kLoadsPerThread; ++i) {
      if constexpr (kMode == ConvGemmMode::WeightGrad) {
        tiles.a[tid % kBlockK][tid / kBlockK + i * (kThreads / kBlockK)] = a[i];
      } else {
        tiles.a[tid / kBlockM + i * (kThreads / kBlockM)][tid % kBlockM] = a[i];
      }
      tiles.b[tid % kBlockK][tid / kBlockK + i * (kThreads / kBlockK)] = b[i];
    }
  }
};

// Writes C[m, n] (group `group`, K split `split`) to its place: y (+ bias), dx, or the split's
// slice of the weight gradient's partials.
template <ConvGemmMode kMode, typename T>
__device__ __forceinline__ void store_output(const ConvProblem& p, int group, int split, int m,
                                             int n, AccT<T> v, void* out, const T* bias) {
  if (m >= p.gemm_m || n >= p.gemm_n) return;
  if constexpr (kMode == ConvGemmMode::Forward) {
    const int image = m / p.out_pixels;
    const int pixel = m - image * p.out_pixels;
    const int c_out = group * p.cout_g + n;
    if (bias != nullptr) v += to_acc(bias[c_out]);
    static_cast<T*>(out)[(image * p.out_c + c_out) * p.out_pixels + pixel] = from_acc<T>(v);
  } else if constexpr (kMode == ConvGemmMode::InputGrad) {
    const int image = m / p.in_pixels;
    const int pixel = m - image * p.in_pixels;
    static_cast<T*>(out)[(image * p.in_c + group * p.cin_g + n) * p.in_pixels + pixel] =
        from_acc<T>(v);
  } else {
    static_cast<AccT<T>*>(out)[split * p.split_stride + (group * p.cout_g + m) * p.gemm_n + n] = v;
  }
}

// ---- The two main loops ----------------------------------------------------------------------

// Tensor cores (Note [Tiles]): the block's 64 x 64 tile of C over k tiles [k_begin, k_end), left
// in c_tile (C[m, n] at c_tile[n][m]). 16-bit inputs: WMMA m16n16k16; float32: TF32 m16n16k8.
template <ConvGemmMode kMode, typename T>
__device__ void tensor_core_main_loop(const TileLoader<kMode, T>& loader, int k_begin, int k_end,
                                      T (&a_regs)[kLoadsPerThread], T (&b_regs)[kLoadsPerThread],
                                      ConvTiles<T>& tiles, float (&c_tile)[kBlockN][kBlockM + 4]) {
  constexpr bool kTf32 = std::is_same_v<T, float>;
  constexpr int kFragK = kTf32 ? 8 : 16;
  using FragInput = std::conditional_t<kTf32, wmma::precision::tf32, T>;
  using FragA = wmma::fragment<wmma::matrix_a, 16, 16, kFragK, FragInput, wmma::col_major>;
  using FragB = wmma::fragment<wmma::matrix_b, 16, 16, kFragK, FragInput, wmma::row_major>;
  using FragC = wmma::fragment<wmma::accumulator, 16, 16, kFragK, float>;
  const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
  const int warp_m = (warp % 2) * 32;
  const int warp_n = (warp / 2) * 32;
  FragC acc[2][2];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j)
      wmma::fill_fragment(acc[i][j], 0.0f);

  for (int k_tile = k_begin; k_tile < k_end; ++k_tile) {
    loader.store(a_regs, b_regs, tiles);
    __syncthreads();
    if (k_tile + 1 < k_end) loader.load(k_tile + 1, a_regs, b_regs);
#pragma unroll
    for (int kk = 0; kk < kBlockK; kk += kFragK) {
      FragA a_frag[2];
      FragB b_frag[2];
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        wmma::load_matrix_sync(a_frag[i], &tiles.a[kk][warp_m + i * 16], kBlockM + kSmemPad);
        wmma::load_matrix_sync(b_frag[i], &tiles.b[kk][warp_n + i * 16], kBlockN + kSmemPad);
        if constexpr (kTf32) {
#pragma unroll
          for (int e = 0; e < a_frag[i].num_elements; ++e)
            a_frag[i].x[e] = wmma::__float_to_tf32(a_frag[i].x[e]);
#pragma unroll
          for (int e = 0; e < b_frag[i].num_elements; ++e)
            b_frag[i].x[e] = wmma::__float_to_tf32(b_frag[i].x[e]);
        }
      }
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j)
          wmma::mma_sync(acc[i][j], a_frag[i], b_frag[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(&c_tile[warp_n + j * 16][warp_m + i * 16], acc[i][j], kBlockM + 4,
                              wmma::mem_col_major);
  __syncthreads();
}

// SIMT (float32 without TF32, float64): thread (tx, ty) = (tid % 16, tid / 16) accumulates C rows
// tx + 16 i (i < 4) and columns ty + 8 j (j < 8) over k tiles [k_begin, k_end).
template <ConvGemmMode kMode, typename T>
__device__ void simt_main_loop(const TileLoader<kMode, T>& loader, int k_begin, int k_end,
                               T (&a_regs)[kLoadsPerThread], T (&b_regs)[kLoadsPerThread],
                               ConvTiles<T>& tiles, AccT<T> (&acc)[4][8]) {
  const int tx = static_cast<int>(threadIdx.x) % 16;
  const int ty = static_cast<int>(threadIdx.x) / 16;
  for (int k_tile = k_begin; k_tile < k_end; ++k_tile) {
    loader.store(a_regs, b_regs, tiles);
    __syncthreads();
    if (k_tile + 1 < k_end) loader.load(k_tile + 1, a_regs, b_regs);
#pragma unroll 4
    for (int kk = 0; kk < kBlockK; ++kk) {
      AccT<T> a[4], b[8];
#pragma unroll
      for (int i = 0; i < 4; ++i)
        a[i] = to_acc(tiles.a[kk][tx + 16 * i]);
#pragma unroll
      for (int j = 0; j < 8; ++j)
        b[j] = to_acc(tiles.b[kk][ty + 8 * j]);
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
          acc[i][j] = fma(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
}

// ---- Kernels ---------------------------------------------------------------------------------

// One 64 x 64 tile of C for group blockIdx.z % groups over the k tiles of split
// blockIdx.z / groups. See Note [Three convolutions, one GEMM kernel] and Note [Tiles].
template <ConvGemmMode kMode, typename T, bool kTensorCores>
__global__ void __launch_bounds__(kThreads)
    conv2d_implicit_gemm_kernel(ConvProblem p, const T* a_src, const T* b_src, void* out,
                                const T* bias) {
  __shared__ ConvTiles<T> tiles;
  const int tid = static_cast<int>(threadIdx.x);
  const int group = static_cast<int>(blockIdx.z) % p.groups;
  const int split = static_cast<int>(blockIdx.z) / p.groups;
  const int m_block = static_cast<int>(blockIdx.x) * kBlockM;
  const int n_block = static_cast<int>(blockIdx.y) * kBlockN;
  const int k_begin = split * p.k_tiles_per_split;
  const int k_end = min(p.k_tiles, k_begin + p.k_tiles_per_split);

  const TileLoader<kMode, T> loader(p, a_src, b_src, group, m_block, n_block, tid);
  T a_regs[kLoadsPerThread];
  T b_regs[kLoadsPerThread];
  if (k_begin < k_end) loader.load(k_begin, a_regs, b_regs);

  if constexpr (kTensorCores) {
    __shared__ __align__(128) float c_tile[kBlockN][kBlockM + 4];
    tensor_core_main_loop(loader, k_begin, k_end, a_regs, b_regs, tiles, c_tile);
    // Stores along m (along n for the weight gradient, whose rows are contiguous in n).
    for (int e = tid; e < kBlockM * kBlockN; e += kThreads) {
      const bool n_fastest = kMode == ConvGemmMode::WeightGrad;
      const int m = n_fastest ? e / kBlockN : e % kBlockM;
      const int n = n_fastest ? e % kBlockN : e / kBlockM;
      store_output<kMode, T>(p, group, split, m_block + m, n_block + n, c_tile[n][m], out, bias);
    }
  } else {
    AccT<T> acc[4][8] = {};
    simt_main_loop(loader, k_begin, k_end, a_regs, b_regs, tiles, acc);
    const int tx = tid % 16;
    const int ty = tid / 16;
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 8; ++j)
        store_output<kMode, T>(p, group, split, m_block + tx + 16 * i, n_block + ty + 8 * j,
                               acc[i][j], out, bias);
  }
}

// Note [Split-K]
//   dw[i] = sum over the splits s of partials[s * n + i], in the order s = 0, 1, ..., added to
//   running[i] when `running` is given and accumulate is set (a previous sub-batch's sum, Note
//   [Huge convolutions]); the sum is kept in `running` when given and written to dw (in T) when
//   dw is given. One thread per element, the splits in a fixed order: deterministic.
template <typename T>
__global__ void conv2d_weight_grad_sum_splits_kernel(std::int64_t n, int splits,
                                                     const AccT<T>* __restrict__ partials,
                                                     AccT<T>* __restrict__ running, bool accumulate,
                                                     T* __restrict__ dw) {
  for (std::int64_t i = global_thread_index(); i < n; i += grid_thread_count()) {
    AccT<T> v = accumulate ? running[i] : AccT<T>(0);
    for (int s = 0; s < splits; ++s)
      v += partials[s * n + i];
    if (running != nullptr) running[i] = v;
    if (dw != nullptr) dw[i] = from_acc<T>(v);
  }
}

// y[(image, c, pixel)] += bias[c]: the bias of the cuDNN path (the implicit GEMM adds it in its
// epilogue). Plain per-element math, the CPU's own (conv.cpp adds the bias the same way).
template <typename T>
__global__ void conv2d_add_bias_kernel(std::int64_t numel, std::int64_t channels,
                                       std::int64_t pixels, T* __restrict__ y,
                                       const T* __restrict__ bias) {
  for (std::int64_t i = global_thread_index(); i < numel; i += grid_thread_count()) {
    const std::int64_t c = (i / pixels) % channels;
    y[i] = from_acc<T>(to_acc(y[i]) + to_acc(bias[c]));
  }
}

// ---- Launchers -------------------------------------------------------------------------------

constexpr int kMaxGridYZ = 65535;
// Largest tensor (elements) one call of either implementation takes: the implicit GEMM indexes
// with int (and reads up to a tile past the end before masking), cuDNN's 4-D descriptors take int.
constexpr std::int64_t kMaxElementsPerCall = INT_MAX - kBlockM * std::int64_t{kBlockK};
// The split-K partials of the weight gradient use at most this many bytes.
constexpr std::int64_t kMaxPartialBytes = std::int64_t{1} << 28;

int to_int(std::int64_t v) {
  return static_cast<int>(v);
}

ConvProblem make_problem(const Conv2dGeometry& g, ConvGemmMode mode) {
  ConvProblem p{};
  p.in_c = to_int(g.in_channels);
  p.in_h = to_int(g.in_h);
  p.in_w = to_int(g.in_w);
  p.out_c = to_int(g.out_channels);
  p.k_w = to_int(g.kernel_w);
  p.out_h = to_int(g.out_h);
  p.out_w = to_int(g.out_w);
  p.stride_h = to_int(g.stride_h);
  p.stride_w = to_int(g.stride_w);
  p.pad_h = to_int(g.pad_h);
  p.pad_w = to_int(g.pad_w);
  p.dil_h = to_int(g.dilation_h);
  p.dil_w = to_int(g.dilation_w);
  p.groups = to_int(g.groups);
  p.cin_g = to_int(g.in_channels_per_group());
  p.cout_g = to_int(g.out_channels_per_group());
  p.taps = to_int(g.kernel_taps());
  p.in_pixels = to_int(g.in_pixels());
  p.out_pixels = to_int(g.out_pixels());
  switch (mode) {
    case ConvGemmMode::Forward:
      p.gemm_m = to_int(g.batch * g.out_pixels());
      p.gemm_n = p.cout_g;
      p.gemm_k = p.cin_g * p.taps;
      break;
    case ConvGemmMode::InputGrad:
      p.gemm_m = to_int(g.batch * g.in_pixels());
      p.gemm_n = p.cin_g;
      p.gemm_k = p.cout_g * p.taps;
      break;
    case ConvGemmMode::WeightGrad:
      p.gemm_m = p.cout_g;
      p.gemm_n = p.cin_g * p.taps;
      p.gemm_k = to_int(g.batch * g.out_pixels());
      break;
  }
  p.k_tiles = to_int(ceil_div(p.gemm_k, kBlockK));
  p.k_tiles_per_split = p.k_tiles;
  p.split_stride = g.out_channels * g.patch_size();
  return p;
}

// The weight gradient's split of K: enough blocks to fill the GPU about four times over, within
// kMaxPartialBytes of partials. Sets p.k_tiles_per_split; returns the number of splits.
int choose_k_split(ConvProblem& p, int tiles_mn, std::size_t acc_bytes) {
  const int tiles = std::max(1, tiles_mn * p.groups);
  const std::int64_t slice_bytes = p.split_stride * static_cast<std::int64_t>(acc_bytes);
  const auto max_by_memory =
      static_cast<int>(std::clamp<std::int64_t>(kMaxPartialBytes / slice_bytes, 1, kMaxGridYZ));
  int splits = std::clamp(4 * sm_count() / tiles, 1, std::max(1, p.k_tiles));
  splits = std::min({splits, kMaxGridYZ / p.groups, max_by_memory});
  p.k_tiles_per_split = to_int(ceil_div(p.k_tiles, splits));
  return to_int(ceil_div(p.k_tiles, p.k_tiles_per_split));
}

// Launches the implicit GEMM of `kMode` on problem p with `splits` K splits.
template <ConvGemmMode kMode, typename T>
void launch_implicit_gemm(const ConvProblem& p, int splits, void* out, const void* a_src,
                          const void* b_src, const void* bias) {
  const dim3 grid(static_cast<unsigned>(ceil_div(p.gemm_m, kBlockM)),
                  static_cast<unsigned>(ceil_div(p.gemm_n, kBlockN)),
                  static_cast<unsigned>(p.groups * splits));
  const auto* a = static_cast<const T*>(a_src);
  const auto* b = static_cast<const T*>(b_src);
  const auto* bias_t = static_cast<const T*>(bias);
  const cudaStream_t stream = current_stream();
  // Tensor cores for the 16-bit types, and for float32 when TF32 is allowed.
  const bool tensor_cores =
      !std::is_same_v<T, double> && (!std::is_same_v<T, float> || leangrad::cuda::allow_tf32());
  if constexpr (std::is_same_v<T, double>) {
    conv2d_implicit_gemm_kernel<kMode, T, false>
        <<<grid, kThreads, 0, stream>>>(p, a, b, out, bias_t);
  } else {
    if (tensor_cores) {
      conv2d_implicit_gemm_kernel<kMode, T, true>
          <<<grid, kThreads, 0, stream>>>(p, a, b, out, bias_t);
    } else {
      conv2d_implicit_gemm_kernel<kMode, T, false>
          <<<grid, kThreads, 0, stream>>>(p, a, b, out, bias_t);
    }
  }
  LG_CUDA_CHECK_LAUNCH();
}

// Whether the implicit-GEMM kernels take this (sub-batch) problem: every tensor below
// kMaxElementsPerCall elements and every grid dimension within its limit.
bool implicit_gemm_supports(const Conv2dGeometry& g) {
  const std::int64_t x_numel = g.batch * g.in_channels * g.in_pixels();
  const std::int64_t y_numel = g.batch * g.out_channels * g.out_pixels();
  const std::int64_t w_numel = g.out_channels * g.patch_size();
  return x_numel < kMaxElementsPerCall && y_numel < kMaxElementsPerCall &&
         w_numel < kMaxElementsPerCall && g.groups <= kMaxGridYZ &&
         ceil_div(g.out_channels_per_group(), kBlockN) <= kMaxGridYZ &&
         ceil_div(g.patch_size(), kBlockN) <= kMaxGridYZ &&
         ceil_div(g.in_channels_per_group(), kBlockN) <= kMaxGridYZ;
}

bool use_cudnn(const Conv2dGeometry& g) {
  return ops::conv2d_backend() == ops::Conv2dBackend::Cudnn || !implicit_gemm_supports(g);
}

// Note [Huge convolutions]
//   Neither implementation takes a tensor of 2^31 elements or more (32-bit indices; cuDNN's int
//   sizes). As PyTorch does, such a convolution runs over sub-batches of images whose input and
//   output each stay below kMaxElementsPerCall; the weight gradient adds the sub-batches'
//   contributions in order. A single image above the limit is refused with the shapes.

// Images per call (the whole batch unless it is huge).
std::int64_t images_per_call(const char* op, const Conv2dGeometry& g) {
  const std::int64_t per_image =
      std::max(g.in_channels * g.in_pixels(), g.out_channels * g.out_pixels());
  LG_CHECK_SHAPE(per_image < kMaxElementsPerCall, op, " (cuda): one image of the input (",
                 g.in_channels, ", ", g.in_h, ", ", g.in_w, ") or output (", g.out_channels, ", ",
                 g.out_h, ", ", g.out_w, ") has ", per_image,
                 " elements; CUDA convolutions take at most ", kMaxElementsPerCall,
                 " per image (split the image)");
  return std::max<std::int64_t>(1, std::min(g.batch, (kMaxElementsPerCall - 1) / per_image));
}

// Calls fn(sub_geometry, first_image) for each sub-batch, in order.
template <typename Fn>
void for_each_sub_batch(const char* op, const Conv2dGeometry& g, const Fn& fn) {
  const std::int64_t per_call = images_per_call(op, g);
  for (std::int64_t first = 0; first < g.batch; first += per_call) {
    Conv2dGeometry sub = g;
    sub.batch = std::min(per_call, g.batch - first);
    fn(sub, first);
  }
}

template <typename T>
const T* image_offset(const void* base, std::int64_t image, std::int64_t per_image) {
  return static_cast<const T*>(base) + image * per_image;
}
template <typename T>
T* image_offset(void* base, std::int64_t image, std::int64_t per_image) {
  return static_cast<T*>(base) + image * per_image;
}

template <typename T>
void add_bias(const Conv2dGeometry& g, T* y, const T* bias) {
  const std::int64_t numel = g.batch * g.out_channels * g.out_pixels();
  constexpr int kBiasThreads = 256;
  const unsigned int blocks =
      grid_size(conv2d_add_bias_kernel<T>, kBiasThreads, ceil_div(numel, kBiasThreads));
  conv2d_add_bias_kernel<T><<<blocks, kBiasThreads, 0, current_stream()>>>(numel, g.out_channels,
                                                                           g.out_pixels(), y, bias);
  LG_CUDA_CHECK_LAUNCH();
}

template <typename T>
void forward(DType dtype, const Conv2dGeometry& g, void* y, const void* x, const void* w,
             const void* bias) {
  for_each_sub_batch("conv2d", g, [&](const Conv2dGeometry& sub, std::int64_t first) {
    const T* x_sub = image_offset<T>(x, first, g.in_channels * g.in_pixels());
    T* y_sub = image_offset<T>(y, first, g.out_channels * g.out_pixels());
    if (use_cudnn(sub)) {
      conv2d_forward_cudnn(dtype, sub, y_sub, x_sub, w);
      if (bias != nullptr) add_bias(sub, y_sub, static_cast<const T*>(bias));
    } else {
      launch_implicit_gemm<ConvGemmMode::Forward, T>(make_problem(sub, ConvGemmMode::Forward), 1,
                                                     y_sub, x_sub, w, bias);
    }
  });
}

template <typename T>
void input_grad(DType dtype, const Conv2dGeometry& g, void* dx, const void* dy, const void* w) {
  for_each_sub_batch("conv2d_input_grad", g, [&](const Conv2dGeometry& sub, std::int64_t first) {
    T* dx_sub = image_offset<T>(dx, first, g.in_channels * g.in_pixels());
    const T* dy_sub = image_offset<T>(dy, first, g.out_channels * g.out_pixels());
    if (use_cudnn(sub)) {
      conv2d_input_grad_cudnn(dtype, sub, dx_sub, dy_sub, w);
    } else {
      launch_implicit_gemm<ConvGemmMode::InputGrad, T>(make_problem(sub, ConvGemmMode::InputGrad),
                                                       1, dx_sub, dy_sub, w, nullptr);
    }
  });
}

// See Note [Split-K] and Note [Huge convolutions]: each sub-batch's splits write partials, and
// one sum kernel per sub-batch adds them (to the previous sub-batches' running sum).
template <typename T>
void weight_grad(DType dtype, const Conv2dGeometry& g, void* dw, const void* dy, const void* x) {
  using Acc = AccT<T>;
  const char* op = "conv2d_weight_grad";
  const std::int64_t w_numel = g.out_channels * g.patch_size();
  const std::int64_t per_call = images_per_call(op, g);
  const std::int64_t sub_batches = ceil_div(g.batch, per_call);
  Conv2dGeometry largest = g;
  largest.batch = per_call;
  const bool cudnn = use_cudnn(largest);  // one choice for every sub-batch: they add up
  std::optional<Workspace> running_ws;
  Acc* running = nullptr;
  if (sub_batches > 1 && !cudnn) {
    running_ws.emplace(Workspace::bytes_for<Acc>(w_numel));
    running = running_ws->take<Acc>(w_numel);
  }
  std::int64_t index = 0;
  for_each_sub_batch(op, g, [&](const Conv2dGeometry& sub, std::int64_t first) {
    const T* dy_sub = image_offset<T>(dy, first, g.out_channels * g.out_pixels());
    const T* x_sub = image_offset<T>(x, first, g.in_channels * g.in_pixels());
    const bool first_call = index == 0;
    const bool last_call = ++index == sub_batches;
    if (cudnn) {
      conv2d_weight_grad_cudnn(dtype, sub, dw, dy_sub, x_sub, /*accumulate=*/!first_call);
      return;
    }
    ConvProblem p = make_problem(sub, ConvGemmMode::WeightGrad);
    const int splits = choose_k_split(
        p, to_int(ceil_div(p.gemm_m, kBlockM) * ceil_div(p.gemm_n, kBlockN)), sizeof(Acc));
    Workspace partials_ws(Workspace::bytes_for<Acc>(splits * w_numel));
    Acc* partials = partials_ws.take<Acc>(splits * w_numel);
    launch_implicit_gemm<ConvGemmMode::WeightGrad, T>(p, splits, partials, dy_sub, x_sub, nullptr);
    constexpr int kSumThreads = 256;
    const unsigned int blocks = grid_size(conv2d_weight_grad_sum_splits_kernel<T>, kSumThreads,
                                          ceil_div(w_numel, kSumThreads));
    conv2d_weight_grad_sum_splits_kernel<T><<<blocks, kSumThreads, 0, current_stream()>>>(
        w_numel, splits, partials, running, !first_call, last_call ? static_cast<T*>(dw) : nullptr);
    LG_CUDA_CHECK_LAUNCH();
  });
}

template <typename F>
void dispatch_conv_dtype(DType dtype, const char* op, const F& f) {
  switch (dtype) {
    case DType::Float32:
      return f.template operator()<float>();
    case DType::Float64:
      return f.template operator()<double>();
    case DType::Float16:
      return f.template operator()<__half>();
    case DType::BFloat16:
      return f.template operator()<__nv_bfloat16>();
    default:
      LG_THROW(DTypeError, op, " (cuda): expected a floating dtype, got ", dtype);
  }
}

}  // namespace

// ---- Entries (kernels/backend.h) -------------------------------------------------------------

void conv2d_forward(DType dtype, const Conv2dGeometry& g, void* y, const void* x, const void* w,
                    const void* bias) {
  dispatch_conv_dtype(dtype, "conv2d", [&]<typename T>() { forward<T>(dtype, g, y, x, w, bias); });
}

void conv2d_input_grad(DType dtype, const Conv2dGeometry& g, void* dx, const void* dy,
                       const void* w) {
  dispatch_conv_dtype(dtype, "conv2d_input_grad",
                      [&]<typename T>() { input_grad<T>(dtype, g, dx, dy, w); });
}

void conv2d_weight_grad(DType dtype, const Conv2dGeometry& g, void* dw, const void* dy,
                        const void* x) {
  dispatch_conv_dtype(dtype, "conv2d_weight_grad",
                      [&]<typename T>() { weight_grad<T>(dtype, g, dw, dy, x); });
}

}  // namespace leangrad::kernels::cuda
