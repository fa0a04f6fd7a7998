// Embedding in CUDA (kernels/backend.h); kernels/cpu/embedding.cpp is the reference.
//   forward   one thread per output element (i, d): consecutive threads read consecutive
//             elements of one weight row and write consecutive outputs (coalesced)
//   backward  one thread per upstream element (i, d), atomicAdd into the opmath_t weight gradient
//             (float32 or float64, which have native atomics); repeated indices make the order of
//             the additions to a row, and so its last bits, vary between runs
// An index outside [0, num_embeddings) reads nothing: a row of NaN forward, nothing backward (no
// synchronisation to raise an error; the CPU entry checks). Indices are int64 throughout.
#include <cstdint>
#include <limits>

#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/cuda/cuda_common.cuh>

namespace leangrad::kernels::cuda {

namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void embedding_forward_kernel(T* out, const T* weight, const std::int64_t* indices,
                                         std::int64_t num_indices, std::int64_t num_embeddings,
                                         std::int64_t dim) {
  const std::int64_t total = num_indices * dim;
  for (std::int64_t k = global_thread_index(); k < total; k += grid_thread_count()) {
    const std::int64_t row = indices[k / dim];
    out[k] = (row >= 0 && row < num_embeddings)
                 ? weight[row * dim + k % dim]
                 : static_cast<T>(std::numeric_limits<float>::quiet_NaN());
  }
}

template <typename T, typename Acc>
__global__ void embedding_backward_kernel(Acc* grad_weight, const T* grad_out,
                                          const std::int64_t* indices, std::int64_t num_indices,
                                          std::int64_t num_embeddings, std::int64_t dim,
                                          std::int64_t padding_idx) {
  const std::int64_t total = num_indices * dim;
  for (std::int64_t k = global_thread_index(); k < total; k += grid_thread_count()) {
    const std::int64_t row = indices[k / dim];
    if (row < 0 || row >= num_embeddings || row == padding_idx) continue;
    atomicAdd(grad_weight + row * dim + k % dim, static_cast<Acc>(grad_out[k]));
  }
}

}  // namespace

void embedding_forward(DType dtype, void* out, const void* weight, const std::int64_t* indices,
                       std::int64_t num_indices, std::int64_t num_embeddings, std::int64_t dim) {
  dispatch_floating(dtype, "embedding", [&]<typename T>() {
    auto* kernel = embedding_forward_kernel<T>;
    const unsigned int blocks = grid_size(kernel, kThreads, ceil_div(num_indices * dim, kThreads));
    kernel<<<blocks, kThreads, 0, current_stream()>>>(static_cast<T*>(out),
                                                      static_cast<const T*>(weight), indices,
                                                      num_indices, num_embeddings, dim);
    LG_CUDA_CHECK_LAUNCH();
  });
}

void embedding_backward(DType dtype, void* grad_weight, const void* grad_out,
                        const std::int64_t* indices, std::int64_t num_indices,
                        std::int64_t num_embeddings, std::int64_t dim, std::int64_t padding_idx) {
  dispatch_floating(dtype, "embedding_backward", [&]<typename T>() {
    using Acc = opmath_t<T>;
    auto* kernel = embedding_backward_kernel<T, Acc>;
    const unsigned int blocks = grid_size(kernel, kThreads, ceil_div(num_indices * dim, kThreads));
    kernel<<<blocks, kThreads, 0, current_stream()>>>(
        static_cast<Acc*>(grad_weight), static_cast<const T*>(grad_out), indices, num_indices,
        num_embeddings, dim, padding_idx);
    LG_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace leangrad::kernels::cuda
