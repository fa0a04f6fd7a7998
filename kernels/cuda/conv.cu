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
//               over blockIdx.z and the partial products added atomically (float32 accumulator).
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
#include "kernels/cuda/conv.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include <algorithm>
#include <climits>
#include <type_traits>

#include "core/cuda.h"
#include "core/cuda/cuda_check.h"
#include "core/error.h"

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

// Every size of the problem in 32-bit ints (conv2d_implicit_gemm_supports checks they fit).
struct ConvProblem {
  int in_c, in_h, in_w, out_c, k_w, out_h, out_w;
  int stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups;
  int cin_g, cout_g, taps, in_pixels, out_pixels;
  int gemm_m, gemm_n, gemm_k;  // per group
  int k_tiles, k_tiles_per_split;
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

// Writes C[m, n] (group `group`) to its place: y (+ bias), dx, or added to dw.
template <ConvGemmMode kMode, typename T>
__device__ __forceinline__ void store_output(const ConvProblem& p, int group, int m, int n,
                                             AccT<T> v, void* out, const T* bias) {
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
    atomicAdd(static_cast<AccT<T>*>(out) + (group * p.cout_g + m) * p.gemm_n + n, v);
  }
}

// ---- The kernel ------------------------------------------------------------------------------

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
  const int k_tile_begin = split * p.k_tiles_per_split;
  const int k_tile_end = min(p.k_tiles, k_tile_begin + p.k_tiles_per_split);

  const TileLoader<kMode, T> loader(p, a_src, b_src, group, m_block, n_block, tid);
  T a_regs[kLoadsPerThread];
  T b_regs[kLoadsPerThread];
  if (k_tile_begin < k_tile_end) loader.load(k_tile_begin, a_regs, b_regs);

  if constexpr (kTensorCores) {
    // 16-bit inputs: WMMA m16n16k16; float32: TF32 m16n16k8.
    constexpr bool kTf32 = std::is_same_v<T, float>;
    constexpr int kFragK = kTf32 ? 8 : 16;
    using FragInput = std::conditional_t<kTf32, wmma::precision::tf32, T>;
    using FragA = wmma::fragment<wmma::matrix_a, 16, 16, kFragK, FragInput, wmma::col_major>;
    using FragB = wmma::fragment<wmma::matrix_b, 16, 16, kFragK, FragInput, wmma::row_major>;
    using FragC = wmma::fragment<wmma::accumulator, 16, 16, kFragK, float>;
    const int warp = tid / 32;
    const int warp_m = (warp % 2) * 32;
    const int warp_n = (warp / 2) * 32;
    FragC acc[2][2];
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int j = 0; j < 2; ++j)
        wmma::fill_fragment(acc[i][j], 0.0f);

    for (int k_tile = k_tile_begin; k_tile < k_tile_end; ++k_tile) {
      loader.store(a_regs, b_regs, tiles);
      __syncthreads();
      if (k_tile + 1 < k_tile_end) loader.load(k_tile + 1, a_regs, b_regs);
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

    // Epilogue: C through shared memory (C[m, n] at c[n][m]), then stores along m (along n for
    // the weight gradient, whose dw rows are contiguous in n).
    __shared__ __align__(128) float c_tile[kBlockN][kBlockM + 4];
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int j = 0; j < 2; ++j)
        wmma::store_matrix_sync(&c_tile[warp_n + j * 16][warp_m + i * 16], acc[i][j], kBlockM + 4,
                                wmma::mem_col_major);
    __syncthreads();
    for (int e = tid; e < kBlockM * kBlockN; e += kThreads) {
      const bool n_fastest = kMode == ConvGemmMode::WeightGrad;
      const int m = n_fastest ? e / kBlockN : e % kBlockM;
      const int n = n_fastest ? e % kBlockN : e / kBlockM;
      store_output<kMode, T>(p, group, m_block + m, n_block + n, c_tile[n][m], out, bias);
    }
  } else {
    // SIMT: thread (tx, ty) owns C rows tx + 16 i (i < 4) and columns ty + 8 j (j < 8).
    const int tx = tid % 16;
    const int ty = tid / 16;
    AccT<T> acc[4][8] = {};
    for (int k_tile = k_tile_begin; k_tile < k_tile_end; ++k_tile) {
      loader.store(a_regs, b_regs, tiles);
      __syncthreads();
      if (k_tile + 1 < k_tile_end) loader.load(k_tile + 1, a_regs, b_regs);
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
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 8; ++j)
        store_output<kMode, T>(p, group, m_block + tx + 16 * i, n_block + ty + 8 * j, acc[i][j],
                               out, bias);
  }
}

// ---- Launchers -------------------------------------------------------------------------------

constexpr int kMaxGridYZ = 65535;

int ceil_div(std::int64_t a, std::int64_t b) {
  return static_cast<int>((a + b - 1) / b);
}

ConvProblem make_problem(const Conv2dGeometry& g, ConvGemmMode mode) {
  ConvProblem p{};
  p.in_c = static_cast<int>(g.in_channels);
  p.in_h = static_cast<int>(g.in_h);
  p.in_w = static_cast<int>(g.in_w);
  p.out_c = static_cast<int>(g.out_channels);
  p.k_w = static_cast<int>(g.kernel_w);
  p.out_h = static_cast<int>(g.out_h);
  p.out_w = static_cast<int>(g.out_w);
  p.stride_h = static_cast<int>(g.stride_h);
  p.stride_w = static_cast<int>(g.stride_w);
  p.pad_h = static_cast<int>(g.pad_h);
  p.pad_w = static_cast<int>(g.pad_w);
  p.dil_h = static_cast<int>(g.dilation_h);
  p.dil_w = static_cast<int>(g.dilation_w);
  p.groups = static_cast<int>(g.groups);
  p.cin_g = static_cast<int>(g.in_channels_per_group());
  p.cout_g = static_cast<int>(g.out_channels_per_group());
  p.taps = static_cast<int>(g.kernel_taps());
  p.in_pixels = static_cast<int>(g.in_pixels());
  p.out_pixels = static_cast<int>(g.out_pixels());
  switch (mode) {
    case ConvGemmMode::Forward:
      p.gemm_m = static_cast<int>(g.batch * g.out_pixels());
      p.gemm_n = p.cout_g;
      p.gemm_k = p.cin_g * p.taps;
      break;
    case ConvGemmMode::InputGrad:
      p.gemm_m = static_cast<int>(g.batch * g.in_pixels());
      p.gemm_n = p.cin_g;
      p.gemm_k = p.cout_g * p.taps;
      break;
    case ConvGemmMode::WeightGrad:
      p.gemm_m = p.cout_g;
      p.gemm_n = p.cin_g * p.taps;
      p.gemm_k = static_cast<int>(g.batch * g.out_pixels());
      break;
  }
  p.k_tiles = ceil_div(p.gemm_k, kBlockK);
  p.k_tiles_per_split = p.k_tiles;
  return p;
}

// The weight gradient's split of K: enough blocks to fill the GPU about four times over.
void choose_k_split(ConvProblem& p, int tiles_mn, int& splits) {
  int device = leangrad::cuda::current_device();
  int sms = 0;
  LG_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const int tiles = std::max(1, tiles_mn * p.groups);
  splits = std::clamp(4 * sms / tiles, 1, std::max(1, p.k_tiles));
  splits = std::min(splits, kMaxGridYZ / p.groups);
  p.k_tiles_per_split = ceil_div(p.k_tiles, splits);
  splits = ceil_div(p.k_tiles, p.k_tiles_per_split);
}

template <ConvGemmMode kMode, typename T>
void launch(const Conv2dGeometry& g, void* out, const void* a_src, const void* b_src,
            const void* bias) {
  ConvProblem p = make_problem(g, kMode);
  const dim3 block(kThreads);
  const int tiles_m = ceil_div(p.gemm_m, kBlockM);
  const int tiles_n = ceil_div(p.gemm_n, kBlockN);
  int splits = 1;
  if (kMode == ConvGemmMode::WeightGrad) choose_k_split(p, tiles_m * tiles_n, splits);
  const dim3 grid(static_cast<unsigned>(tiles_m), static_cast<unsigned>(tiles_n),
                  static_cast<unsigned>(p.groups * splits));
  const auto stream = reinterpret_cast<cudaStream_t>(leangrad::cuda::current_stream().id());
  const T* a = static_cast<const T*>(a_src);
  const T* b = static_cast<const T*>(b_src);
  const T* bias_t = static_cast<const T*>(bias);
  if constexpr (std::is_same_v<T, double>) {
    conv2d_implicit_gemm_kernel<kMode, T, false><<<grid, block, 0, stream>>>(p, a, b, out, bias_t);
  } else if constexpr (std::is_same_v<T, float>) {
    if (leangrad::cuda::allow_tf32()) {
      conv2d_implicit_gemm_kernel<kMode, T, true><<<grid, block, 0, stream>>>(p, a, b, out, bias_t);
    } else {
      conv2d_implicit_gemm_kernel<kMode, T, false>
          <<<grid, block, 0, stream>>>(p, a, b, out, bias_t);
    }
  } else {
    conv2d_implicit_gemm_kernel<kMode, T, true><<<grid, block, 0, stream>>>(p, a, b, out, bias_t);
  }
  LG_CUDA_CHECK_LAUNCH();
}

template <ConvGemmMode kMode>
void launch_for_dtype(DType dtype, const char* op, const Conv2dGeometry& g, void* out,
                      const void* a_src, const void* b_src, const void* bias) {
  switch (dtype) {
    case DType::Float32:
      return launch<kMode, float>(g, out, a_src, b_src, bias);
    case DType::Float64:
      return launch<kMode, double>(g, out, a_src, b_src, bias);
    case DType::Float16:
      return launch<kMode, __half>(g, out, a_src, b_src, bias);
    case DType::BFloat16:
      return launch<kMode, __nv_bfloat16>(g, out, a_src, b_src, bias);
    default:
      LG_THROW(DTypeError, op, " (cuda kernel): expected a floating dtype, got ", dtype);
  }
}

}  // namespace

// ---- Entries ---------------------------------------------------------------------------------

bool conv2d_implicit_gemm_supports(DType dtype, const Conv2dGeometry& g) {
  if (!is_floating(dtype)) return false;
  const std::int64_t x_numel = g.batch * g.in_channels * g.in_pixels();
  const std::int64_t y_numel = g.batch * g.out_channels * g.out_pixels();
  const std::int64_t w_numel = g.out_channels * g.patch_size();
  const std::int64_t limit = INT_MAX - kBlockM * std::int64_t{kBlockK};  // room for tile overrun
  return x_numel < limit && y_numel < limit && w_numel < limit && g.groups <= kMaxGridYZ &&
         (g.out_channels_per_group() + kBlockN - 1) / kBlockN <= kMaxGridYZ &&
         (g.patch_size() + kBlockN - 1) / kBlockN <= kMaxGridYZ &&
         (g.in_channels_per_group() + kBlockN - 1) / kBlockN <= kMaxGridYZ;
}

void conv2d_forward(DType dtype, const Conv2dGeometry& g, void* y, const void* x, const void* w,
                    const void* bias) {
  launch_for_dtype<ConvGemmMode::Forward>(dtype, "conv2d", g, y, x, w, bias);
}

void conv2d_input_grad(DType dtype, const Conv2dGeometry& g, void* dx, const void* dy,
                       const void* w) {
  launch_for_dtype<ConvGemmMode::InputGrad>(dtype, "conv2d_input_grad", g, dx, dy, w, nullptr);
}

void conv2d_weight_grad_accumulate(DType dtype, const Conv2dGeometry& g, void* dw_accum,
                                   const void* dy, const void* x) {
  launch_for_dtype<ConvGemmMode::WeightGrad>(dtype, "conv2d_weight_grad", g, dw_accum, dy, x,
                                             nullptr);
}

}  // namespace leangrad::kernels::cuda
