// CUDA layer launchers in a build without CUDA: unreachable in practice (no CUDA tensor can be
// allocated), present so the library links; they throw DeviceError.
#include "core/error.h"
#include "kernels/cuda/layers.h"

namespace leangrad::kernels::cuda {

void max_pool2d(DType, void*, std::int64_t*, const void*, const Pool2dShape&) {
  detail::throw_cuda_not_built("max_pool2d");
}
void max_pool2d_backward(DType, void*, const void*, const std::int64_t*, const Pool2dShape&) {
  detail::throw_cuda_not_built("max_pool2d_backward");
}
void avg_pool2d(DType, void*, const void*, const Pool2dShape&) {
  detail::throw_cuda_not_built("avg_pool2d");
}
void avg_pool2d_backward(DType, void*, const void*, const Pool2dShape&) {
  detail::throw_cuda_not_built("avg_pool2d_backward");
}
void dropout(DType, void*, bool*, const void*, std::int64_t, double, double, std::uint64_t,
             std::uint64_t) {
  detail::throw_cuda_not_built("dropout");
}
void dropout_backward(DType, void*, const void*, const bool*, std::int64_t, double) {
  detail::throw_cuda_not_built("dropout_backward");
}
void softmax(DType, void*, const void*, std::int64_t, std::int64_t, std::int64_t, bool) {
  detail::throw_cuda_not_built("softmax");
}
void softmax_backward(DType, void*, const void*, const void*, std::int64_t, std::int64_t,
                      std::int64_t, bool) {
  detail::throw_cuda_not_built("softmax_backward");
}
void cross_entropy(DType, void*, void*, const void*, const std::int64_t*, std::int64_t,
                   std::int64_t, std::int64_t) {
  detail::throw_cuda_not_built("cross_entropy");
}
void cross_entropy_backward(DType, void*, const void*, const void*, const void*,
                            const std::int64_t*, std::int64_t, std::int64_t, std::int64_t) {
  detail::throw_cuda_not_built("cross_entropy_backward");
}
void nll_loss(DType, void*, const void*, const std::int64_t*, std::int64_t, std::int64_t,
              std::int64_t) {
  detail::throw_cuda_not_built("nll_loss");
}
void nll_loss_backward(DType, void*, const void*, const std::int64_t*, std::int64_t, std::int64_t,
                       std::int64_t) {
  detail::throw_cuda_not_built("nll_loss_backward");
}

}  // namespace leangrad::kernels::cuda
