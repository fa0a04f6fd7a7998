// kernels/cuda/tanhexp.h for builds without CUDA: the launchers throw DeviceError (STYLE.md
// habit 13). ops_activation.cpp only calls them for CUDA tensors, which such a build cannot create.
#include "core/error.h"
#include "kernels/cuda/tanhexp.h"

namespace leangrad::kernels::cuda {

void tanhexp_forward(DType, std::int64_t, void*, const void*) {
  detail::throw_cuda_not_built("tanhexp");
}

void tanhexp_backward(DType, std::int64_t, void*, const void*, const void*) {
  detail::throw_cuda_not_built("tanhexp_backward");
}

}  // namespace leangrad::kernels::cuda
