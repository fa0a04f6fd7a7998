// TanhExp on the CPU: one loop each way over contiguous data, the per-element math from
// kernels/tanhexp_math.h (see Note [Stable TanhExp] there).
#include "kernels/backend.h"

#include "kernels/cpu/parallel_for.h"
#include "kernels/dispatch.h"
#include "kernels/tanhexp_math.h"

namespace leangrad::kernels::cpu {

void tanhexp_forward(DType dtype, std::int64_t n, void* out, const void* x) {
  dispatch_floating(dtype, "tanhexp", [&]<typename T>() {
    T* y = static_cast<T*>(out);
    const T* in = static_cast<const T*>(x);
    parallel_for(n, kElementwiseGrain, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i)
        y[i] = tanhexp_forward_element(in[i]);
    });
  });
}

void tanhexp_backward(DType dtype, std::int64_t n, void* grad_input, const void* grad_output,
                      const void* x) {
  dispatch_floating(dtype, "tanhexp_backward", [&]<typename T>() {
    T* dx = static_cast<T*>(grad_input);
    const T* dy = static_cast<const T*>(grad_output);
    const T* in = static_cast<const T*>(x);
    parallel_for(n, kElementwiseGrain, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i)
        dx[i] = tanhexp_backward_element(dy[i], in[i]);
    });
  });
}

}  // namespace leangrad::kernels::cpu
