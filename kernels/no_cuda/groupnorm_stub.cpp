// kernels/cuda/groupnorm.h for builds without CUDA: the launchers throw DeviceError (STYLE.md
// habit 13). ops_norm.cpp only calls them for CUDA tensors, which such a build cannot create.
#include "core/error.h"
#include "kernels/cuda/groupnorm.h"

namespace leangrad::kernels::cuda {

void group_norm_forward(DType, const GroupNormSizes&, void*, void*, void*, const void*, const void*,
                        const void*, double) {
  detail::throw_cuda_not_built("group_norm");
}

void group_norm_backward(DType, const GroupNormSizes&, void*, void*, void*, const void*,
                         const void*, const void*, const void*, const void*) {
  detail::throw_cuda_not_built("group_norm_backward");
}

}  // namespace leangrad::kernels::cuda
