// Embedding on the CPU (kernels/backend.h): the forward copies one weight row per index; the
// backward adds each upstream row into the weight gradient's row of its index, in index order,
// threads splitting the columns (each owns its columns across every index: no races, and the same
// order of additions as one thread). Accumulation is in opmath_t (float for the 16-bit floats).
#include <leangrad/kernels/backend.h>

#include <algorithm>
#include <limits>

#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/dispatch.h>

namespace leangrad::kernels::cpu {

void embedding_forward(DType dtype, void* out, const void* weight, const std::int64_t* indices,
                       std::int64_t num_indices, std::int64_t num_embeddings, std::int64_t dim) {
  dispatch_floating(dtype, "embedding", [&]<typename T>() {
    const T* w = static_cast<const T*>(weight);
    T* y = static_cast<T*>(out);
    const std::int64_t grain =
        std::max<std::int64_t>(1, kElementwiseGrain / std::max<std::int64_t>(dim, 1));
    parallel_for(num_indices, grain, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) {
        const std::int64_t row = indices[i];
        T* dst = y + i * dim;
        if (row < 0 || row >= num_embeddings) {
          std::fill(dst, dst + dim, static_cast<T>(std::numeric_limits<float>::quiet_NaN()));
          continue;
        }
        std::copy(w + row * dim, w + (row + 1) * dim, dst);
      }
    });
  });
}

void embedding_backward(DType dtype, void* grad_weight, const void* grad_out,
                        const std::int64_t* indices, std::int64_t num_indices,
                        std::int64_t num_embeddings, std::int64_t dim, std::int64_t padding_idx) {
  dispatch_floating(dtype, "embedding_backward", [&]<typename T>() {
    using Acc = opmath_t<T>;
    Acc* dw = static_cast<Acc*>(grad_weight);
    const T* dy = static_cast<const T*>(grad_out);
    // Columns per task: about kElementwiseGrain additions each.
    const std::int64_t grain =
        std::max<std::int64_t>(1, kElementwiseGrain / std::max<std::int64_t>(num_indices, 1));
    parallel_for(dim, grain, [&](std::int64_t d0, std::int64_t d1) {
      for (std::int64_t i = 0; i < num_indices; ++i) {
        const std::int64_t row = indices[i];
        if (row < 0 || row >= num_embeddings || row == padding_idx) continue;
        Acc* dst = dw + row * dim;
        const T* src = dy + i * dim;
        for (std::int64_t d = d0; d < d1; ++d)
          dst[d] += static_cast<Acc>(src[d]);
      }
    });
  });
}

}  // namespace leangrad::kernels::cpu
