// TanhExp in CUDA (tanhexp_forward/backward of kernels/backend.h): one fused kernel each way,
// reading x (and dy) once and writing once, with the per-element math of kernels/tanhexp_math.h
// (the CPU's own; Note [Stable TanhExp]: one exp of e^x, one of e^{-2u}, one division).
// Decomposition: a grid-stride loop over 16-byte vectors (4 float32, 8 float16/bfloat16,
// 2 float64), each thread loading one vector per operand, applying the math lane by lane in
// float (double for float64) and storing one vector; the last n % width elements are done one
// by one. Operands not aligned to 16 bytes (a view starting mid-vector) take width 1. The grid is
// one wave (Note [Grid policy]). Memory-bound: 2 (forward) or 3 (backward) transfers per element.
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/cuda/cuda_common.cuh>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/tanhexp_math.h>

namespace leangrad::kernels::cuda {
namespace {

constexpr int kThreadsPerBlock = 256;

// y[i] = x[i] tanh(e^x[i]), i < n; kWidth elements per load/store.
template <typename T, int kWidth>
__global__ void tanhexp_forward_kernel(std::int64_t n, T* __restrict__ y, const T* __restrict__ x) {
  const std::int64_t num_vectors = n / kWidth;
  for (std::int64_t v = global_thread_index(); v < num_vectors; v += grid_thread_count()) {
    const Vector<T, kWidth> in = load_vector<kWidth>(x, v);
    Vector<T, kWidth> out;
#pragma unroll
    for (int lane = 0; lane < kWidth; ++lane)
      out.val[lane] = tanhexp_forward_element(in.val[lane]);
    store_vector<kWidth>(y, v, out);
  }
  for (std::int64_t i = num_vectors * kWidth + global_thread_index(); i < n;
       i += grid_thread_count())
    y[i] = tanhexp_forward_element(x[i]);
}

// dx[i] = dy[i] tanhexp'(x[i]), i < n.
template <typename T, int kWidth>
__global__ void tanhexp_backward_kernel(std::int64_t n, T* __restrict__ dx,
                                        const T* __restrict__ dy, const T* __restrict__ x) {
  const std::int64_t num_vectors = n / kWidth;
  for (std::int64_t v = global_thread_index(); v < num_vectors; v += grid_thread_count()) {
    const Vector<T, kWidth> g = load_vector<kWidth>(dy, v);
    const Vector<T, kWidth> in = load_vector<kWidth>(x, v);
    Vector<T, kWidth> out;
#pragma unroll
    for (int lane = 0; lane < kWidth; ++lane)
      out.val[lane] = tanhexp_backward_element(g.val[lane], in.val[lane]);
    store_vector<kWidth>(dx, v, out);
  }
  for (std::int64_t i = num_vectors * kWidth + global_thread_index(); i < n;
       i += grid_thread_count())
    dx[i] = tanhexp_backward_element(dy[i], x[i]);
}

// Launches kernel<kWidth> with the 16-byte width when every pointer allows it, else width 1.
template <typename T, typename Launch>
void launch_vectorized(bool aligned, const Launch& launch) {
  if (aligned) {
    launch.template operator()<kVectorWidth<T>>();
  } else {
    launch.template operator()<1>();
  }
  LG_CUDA_CHECK_LAUNCH();
}

}  // namespace

void tanhexp_forward(DType dtype, std::int64_t n, void* out, const void* x) {
  dispatch_floating(dtype, "tanhexp", [&]<typename T>() {
    auto* y = static_cast<T*>(out);
    const auto* in = static_cast<const T*>(x);
    launch_vectorized<T>(vector_aligned<T, kVectorWidth<T>>(y, in), [&]<int kWidth>() {
      auto* kernel = tanhexp_forward_kernel<T, kWidth>;
      const unsigned int blocks =
          grid_size(kernel, kThreadsPerBlock, ceil_div(ceil_div(n, kWidth), kThreadsPerBlock));
      kernel<<<blocks, kThreadsPerBlock, 0, current_stream()>>>(n, y, in);
    });
  });
}

void tanhexp_backward(DType dtype, std::int64_t n, void* grad_input, const void* grad_output,
                      const void* x) {
  dispatch_floating(dtype, "tanhexp_backward", [&]<typename T>() {
    auto* dx = static_cast<T*>(grad_input);
    const auto* dy = static_cast<const T*>(grad_output);
    const auto* in = static_cast<const T*>(x);
    launch_vectorized<T>(vector_aligned<T, kVectorWidth<T>>(dx, dy, in), [&]<int kWidth>() {
      auto* kernel = tanhexp_backward_kernel<T, kWidth>;
      const unsigned int blocks =
          grid_size(kernel, kThreadsPerBlock, ceil_div(ceil_div(n, kWidth), kThreadsPerBlock));
      kernel<<<blocks, kThreadsPerBlock, 0, current_stream()>>>(n, dx, dy, in);
    });
  });
}

}  // namespace leangrad::kernels::cuda
