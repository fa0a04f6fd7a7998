// Indexing in CUDA (kernels/backend.h); kernels/cpu/indexing.cpp is the reference.
//   index_select           one thread per output element (o, i, j): consecutive threads read
//                          consecutive elements of one input row and write consecutive outputs
//   index_select_backward  one thread per upstream element, atomicAdd into the opmath_t gradient
//                          (float32 or float64, which have native atomics)
//   gather                 one thread per index element, reading self through its strides
//   scatter_add            one thread per source element, atomicAdd into self (float32, float64,
//                          int32, int64; int64 as the unsigned 64-bit atomic, which wraps alike)
// With atomics, repeated indices make the order of the additions to one element, and so its
// last bits, vary between runs. An out-of-range index reads NaN (0 in an integral dtype) and
// adds nothing: no synchronisation to raise an error (the CPU entries check).
#include <cstdint>
#include <limits>
#include <type_traits>

#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/cuda/cuda_common.cuh>

namespace leangrad::kernels::cuda {

namespace {

constexpr int kThreads = 256;

template <typename T>
__device__ __forceinline__ T out_of_range_value() {
  if constexpr (std::is_integral_v<T>) {
    return T{};
  } else {
    return static_cast<T>(std::numeric_limits<float>::quiet_NaN());
  }
}

template <typename T>
__device__ __forceinline__ void atomic_add(T* address, T value) {
  if constexpr (std::is_same_v<T, std::int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(address),  // NOLINT(runtime/int)
              static_cast<unsigned long long>(value));         // NOLINT(runtime/int)
  } else {
    atomicAdd(address, value);
  }
}

template <typename T>
__global__ void index_select_kernel(T* out, const T* in, const std::int64_t* indices,
                                    std::int64_t outer, std::int64_t size, std::int64_t num_indices,
                                    std::int64_t inner) {
  const std::int64_t total = outer * num_indices * inner;
  for (std::int64_t k = global_thread_index(); k < total; k += grid_thread_count()) {
    const std::int64_t r = k / inner;
    const std::int64_t row = indices[r % num_indices];
    out[k] = (row >= 0 && row < size) ? in[((r / num_indices) * size + row) * inner + k % inner]
                                      : out_of_range_value<T>();
  }
}

template <typename T, typename Acc>
__global__ void index_select_backward_kernel(Acc* grad_in, const T* grad_out,
                                             const std::int64_t* indices, std::int64_t outer,
                                             std::int64_t size, std::int64_t num_indices,
                                             std::int64_t inner, std::int64_t skip_index) {
  const std::int64_t total = outer * num_indices * inner;
  for (std::int64_t k = global_thread_index(); k < total; k += grid_thread_count()) {
    const std::int64_t r = k / inner;
    const std::int64_t row = indices[r % num_indices];
    if (row < 0 || row >= size || row == skip_index) continue;
    atomic_add(grad_in + ((r / num_indices) * size + row) * inner + k % inner,
               static_cast<Acc>(grad_out[k]));
  }
}

template <typename T>
__global__ void gather_kernel(T* out, const T* self, const std::int64_t* index, GatherGeometry g,
                              std::int64_t total) {
  for (std::int64_t k = global_thread_index(); k < total; k += grid_thread_count()) {
    const std::int64_t v = index[k];
    out[k] =
        g.valid(v) ? self[g.self_base(k) + v * g.self_strides[g.dim]] : out_of_range_value<T>();
  }
}

template <typename T, typename Acc>
__global__ void scatter_add_kernel(Acc* self, const T* src, const std::int64_t* index,
                                   GatherGeometry g, std::int64_t total) {
  for (std::int64_t k = global_thread_index(); k < total; k += grid_thread_count()) {
    const std::int64_t v = index[k];
    if (!g.valid(v)) continue;
    atomic_add(self + g.self_base(k) + v * g.self_strides[g.dim], static_cast<Acc>(src[k]));
  }
}

}  // namespace

void index_select(DType dtype, void* out, const void* in, const std::int64_t* indices,
                  std::int64_t outer, std::int64_t size, std::int64_t num_indices,
                  std::int64_t inner) {
  dispatch_all(dtype, "index_select", [&]<typename T>() {
    auto* kernel = index_select_kernel<T>;
    const unsigned int blocks =
        grid_size(kernel, kThreads, ceil_div(outer * num_indices * inner, kThreads));
    kernel<<<blocks, kThreads, 0, current_stream()>>>(
        static_cast<T*>(out), static_cast<const T*>(in), indices, outer, size, num_indices, inner);
    LG_CUDA_CHECK_LAUNCH();
  });
}

void index_select_backward(DType dtype, void* grad_in, const void* grad_out,
                           const std::int64_t* indices, std::int64_t outer, std::int64_t size,
                           std::int64_t num_indices, std::int64_t inner, std::int64_t skip_index) {
  dispatch_floating(dtype, "index_select_backward", [&]<typename T>() {
    using Acc = opmath_t<T>;
    auto* kernel = index_select_backward_kernel<T, Acc>;
    const unsigned int blocks =
        grid_size(kernel, kThreads, ceil_div(outer * num_indices * inner, kThreads));
    kernel<<<blocks, kThreads, 0, current_stream()>>>(static_cast<Acc*>(grad_in),
                                                      static_cast<const T*>(grad_out), indices,
                                                      outer, size, num_indices, inner, skip_index);
    LG_CUDA_CHECK_LAUNCH();
  });
}

void gather(DType dtype, void* out, const void* self, const std::int64_t* index,
            const GatherGeometry& g) {
  const std::int64_t total = g.line_count() * g.line_length();
  if (total == 0) return;
  dispatch_all(dtype, "gather", [&]<typename T>() {
    auto* kernel = gather_kernel<T>;
    const unsigned int blocks = grid_size(kernel, kThreads, ceil_div(total, kThreads));
    kernel<<<blocks, kThreads, 0, current_stream()>>>(static_cast<T*>(out),
                                                      static_cast<const T*>(self), index, g, total);
    LG_CUDA_CHECK_LAUNCH();
  });
}

void scatter_add(DType dtype, void* self, const void* src, const std::int64_t* index,
                 const GatherGeometry& g) {
  const std::int64_t total = g.line_count() * g.line_length();
  if (total == 0) return;
  dispatch_addable(dtype, "scatter_add", [&]<typename T>() {
    using Acc = opmath_t<T>;
    auto* kernel = scatter_add_kernel<T, Acc>;
    const unsigned int blocks = grid_size(kernel, kThreads, ceil_div(total, kThreads));
    kernel<<<blocks, kThreads, 0, current_stream()>>>(static_cast<Acc*>(self),
                                                      static_cast<const T*>(src), index, g, total);
    LG_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace leangrad::kernels::cuda
