// kernels/cuda/conv.h for builds without CUDA: the launchers throw DeviceError (STYLE.md
// habit 13). ops_conv.cpp only calls them for CUDA tensors, which such a build cannot create.
#include "core/error.h"
#include "kernels/cuda/conv.h"

namespace leangrad::kernels::cuda {

namespace {

[[noreturn]] void no_cuda(const char* op) {
  LG_THROW(DeviceError, op, " on cuda: leangrad was built without CUDA (LEANGRAD_WITH_CUDA=OFF)");
}

}  // namespace

bool conv2d_implicit_gemm_supports(DType /*dtype*/, const Conv2dGeometry& /*g*/) {
  return false;
}
void conv2d_forward(DType, const Conv2dGeometry&, void*, const void*, const void*, const void*) {
  no_cuda("conv2d");
}
void conv2d_input_grad(DType, const Conv2dGeometry&, void*, const void*, const void*) {
  no_cuda("conv2d_input_grad");
}
void conv2d_weight_grad_accumulate(DType, const Conv2dGeometry&, void*, const void*, const void*) {
  no_cuda("conv2d_weight_grad");
}
void conv2d_forward_cudnn(DType, const Conv2dGeometry&, void*, const void*, const void*,
                          const void*) {
  no_cuda("conv2d");
}
void conv2d_input_grad_cudnn(DType, const Conv2dGeometry&, void*, const void*, const void*) {
  no_cuda("conv2d_input_grad");
}
void conv2d_weight_grad_cudnn(DType, const Conv2dGeometry&, void*, const void*, const void*) {
  no_cuda("conv2d_weight_grad");
}

}  // namespace leangrad::kernels::cuda
