// TanhExp in CUDA (kernels/cuda/tanhexp.h): one fused kernel each way, reading x (and dy) once
// and writing once, with the per-element math of kernels/tanhexp_math.h (the CPU's own).
// Decomposition: a grid-stride loop over 16-byte vectors (4 float32, 8 float16/bfloat16,
// 2 float64), each thread loading one vector per operand, applying the math lane by lane in
// float (double for float64) and storing one vector; the last n % width elements are done one
// by one. Operands not aligned to 16 bytes (a view starting mid-vector) take width 1.
// Memory-bound: 2 (forward) or 3 (backward) element transfers per element.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "core/cuda.h"
#include "core/cuda/cuda_check.h"
#include "kernels/cuda/tanhexp.h"
#include "kernels/dispatch.h"
#include "kernels/tanhexp_math.h"

namespace leangrad::kernels::cuda {
namespace {

constexpr int kThreadsPerBlock = 256;
constexpr int kVectorBytes = 16;
// Grid cap: enough resident blocks for every H100/H200 SM (132 x 8), the loop covers the rest.
constexpr std::int64_t kMaxBlocks = 132 * 8;

// ---- Device helpers --------------------------------------------------------------------------

template <typename T, int kWidth>
struct alignas(sizeof(T) * kWidth) Vector {
  T val[kWidth];
};

__device__ __forceinline__ std::int64_t global_thread_index() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ std::int64_t grid_stride() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

// ---- Kernels ---------------------------------------------------------------------------------

// y[i] = x[i] tanh(e^x[i]), i < n; kWidth elements per load/store.
template <typename T, int kWidth>
__global__ void tanhexp_forward_kernel(std::int64_t n, T* __restrict__ y, const T* __restrict__ x) {
  const std::int64_t num_vectors = n / kWidth;
  for (std::int64_t v = global_thread_index(); v < num_vectors; v += grid_stride()) {
    const Vector<T, kWidth> in = reinterpret_cast<const Vector<T, kWidth>*>(x)[v];
    Vector<T, kWidth> out;
#pragma unroll
    for (int lane = 0; lane < kWidth; ++lane)
      out.val[lane] = tanhexp_forward_element(in.val[lane]);
    reinterpret_cast<Vector<T, kWidth>*>(y)[v] = out;
  }
  for (std::int64_t i = num_vectors * kWidth + global_thread_index(); i < n; i += grid_stride())
    y[i] = tanhexp_forward_element(x[i]);
}

// dx[i] = dy[i] tanhexp'(x[i]), i < n.
template <typename T, int kWidth>
__global__ void tanhexp_backward_kernel(std::int64_t n, T* __restrict__ dx,
                                        const T* __restrict__ dy, const T* __restrict__ x) {
  const std::int64_t num_vectors = n / kWidth;
  for (std::int64_t v = global_thread_index(); v < num_vectors; v += grid_stride()) {
    const Vector<T, kWidth> g = reinterpret_cast<const Vector<T, kWidth>*>(dy)[v];
    const Vector<T, kWidth> in = reinterpret_cast<const Vector<T, kWidth>*>(x)[v];
    Vector<T, kWidth> out;
#pragma unroll
    for (int lane = 0; lane < kWidth; ++lane)
      out.val[lane] = tanhexp_backward_element(g.val[lane], in.val[lane]);
    reinterpret_cast<Vector<T, kWidth>*>(dx)[v] = out;
  }
  for (std::int64_t i = num_vectors * kWidth + global_thread_index(); i < n; i += grid_stride())
    dx[i] = tanhexp_backward_element(dy[i], x[i]);
}

// ---- Launchers -------------------------------------------------------------------------------

cudaStream_t current_cuda_stream() {
  return reinterpret_cast<cudaStream_t>(leangrad::cuda::current_stream().id());
}

bool aligned_to_vector(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % kVectorBytes == 0;
}

unsigned int grid_size(std::int64_t work_items) {
  const std::int64_t blocks = (work_items + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<unsigned int>(std::clamp<std::int64_t>(blocks, 1, kMaxBlocks));
}

// Launches kernel<T, width> with the 16-byte width when every pointer allows it, else width 1.
template <typename T, typename Launch>
void launch_vectorized(std::int64_t n, bool aligned, const Launch& launch) {
  constexpr int kWidth = kVectorBytes / static_cast<int>(sizeof(T));
  if (aligned) {
    launch.template operator()<kWidth>(grid_size(n / kWidth + 1));
  } else {
    launch.template operator()<1>(grid_size(n));
  }
  LG_CUDA_CHECK_LAUNCH();
}

}  // namespace

void tanhexp_forward(DType dtype, std::int64_t n, void* out, const void* x) {
  const cudaStream_t stream = current_cuda_stream();
  const bool aligned = aligned_to_vector(out) && aligned_to_vector(x);
  dispatch_floating(dtype, "tanhexp", [&]<typename T>() {
    launch_vectorized<T>(n, aligned, [&]<int kWidth>(unsigned int blocks) {
      tanhexp_forward_kernel<T, kWidth><<<blocks, kThreadsPerBlock, 0, stream>>>(
          n, static_cast<T*>(out), static_cast<const T*>(x));
    });
  });
}

void tanhexp_backward(DType dtype, std::int64_t n, void* grad_input, const void* grad_output,
                      const void* x) {
  const cudaStream_t stream = current_cuda_stream();
  const bool aligned =
      aligned_to_vector(grad_input) && aligned_to_vector(grad_output) && aligned_to_vector(x);
  dispatch_floating(dtype, "tanhexp_backward", [&]<typename T>() {
    launch_vectorized<T>(n, aligned, [&]<int kWidth>(unsigned int blocks) {
      tanhexp_backward_kernel<T, kWidth><<<blocks, kThreadsPerBlock, 0, stream>>>(
          n, static_cast<T*>(grad_input), static_cast<const T*>(grad_output),
          static_cast<const T*>(x));
    });
  });
}

}  // namespace leangrad::kernels::cuda
