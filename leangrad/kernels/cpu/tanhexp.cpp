// TanhExp's reference loops on the CPU (kernels/cpu/tanhexp_reference.h): one loop each way over
// contiguous data, the per-element math from kernels/tanhexp_math.h (Note [Stable TanhExp]) with
// the library's exp. The specification that the vectorised launchers
// (kernels/cpu/tanhexp_vectorized.cpp) and the CUDA kernels are tested against.
#include <leangrad/kernels/cpu/tanhexp_reference.h>

#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/tanhexp_math.h>

namespace leangrad::kernels::cpu::reference {

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

}  // namespace leangrad::kernels::cpu::reference
