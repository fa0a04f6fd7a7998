// The cumulative sum in CUDA (kernels/backend.h); kernels/cpu/cumsum.cpp is the reference. One
// thread per column (o, c): it walks down the dim adding in order, the same additions as the CPU
// makes, so both give the same bits. Adjacent threads take adjacent columns (coalesced when
// inner is large). A long last dim (inner == 1) of few rows leaves most of the GPU idle; a
// block-wide scan is the next step if that case matters.
#include <cstdint>

#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/reduce_math.h>
#include <leangrad/kernels/cuda/cuda_common.cuh>

namespace leangrad::kernels::cuda {

namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void cumsum_kernel(T* out, const T* in, std::int64_t outer, std::int64_t size,
                              std::int64_t inner, bool reverse) {
  using Acc = opmath_t<T>;
  const std::int64_t columns = outer * inner;
  for (std::int64_t k = global_thread_index(); k < columns; k += grid_thread_count()) {
    const std::int64_t base = (k / inner) * size * inner + k % inner;
    Acc acc{};
    for (std::int64_t j = 0; j < size; ++j) {
      const std::int64_t offset = base + (reverse ? size - 1 - j : j) * inner;
      acc = reduce_math::wrapping_add(acc, static_cast<Acc>(in[offset]));
      out[offset] = static_cast<T>(acc);
    }
  }
}

}  // namespace

void cumsum(DType dtype, void* out, const void* in, std::int64_t outer, std::int64_t size,
            std::int64_t inner, bool reverse) {
  dispatch_addable(dtype, "cumsum", [&]<typename T>() {
    auto* kernel = cumsum_kernel<T>;
    const unsigned int blocks = grid_size(kernel, kThreads, ceil_div(outer * inner, kThreads));
    kernel<<<blocks, kThreads, 0, current_stream()>>>(
        static_cast<T*>(out), static_cast<const T*>(in), outer, size, inner, reverse);
    LG_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace leangrad::kernels::cuda
