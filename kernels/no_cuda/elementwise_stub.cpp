// kernels/cuda/elementwise.h for builds without CUDA: every launcher throws DeviceError
// (STYLE.md habit 13). kernels/cuda/elementwise.cu is the real implementation.
#include "core/error.h"
#include "kernels/cuda/elementwise.h"

namespace leangrad::kernels::cuda {
namespace {

[[noreturn]] void throw_not_built(const char* op) {
  LG_THROW(DeviceError, op, " on a CUDA tensor: leangrad was built without CUDA ",
           "(LEANGRAD_WITH_CUDA=OFF)");
}

}  // namespace

void binary(BinaryOp op, DType, const ElementwiseGeometry&, void*, const void*, const void*) {
  throw_not_built(op_name(op));
}
void binary_scalar(BinaryOp op, DType, const ElementwiseGeometry&, void*, const void*, double,
                   bool) {
  throw_not_built(op_name(op));
}
void unary(UnaryOp op, DType, const ElementwiseGeometry&, void*, const void*) {
  throw_not_built(op_name(op));
}
void compare(CompareOp op, DType, const ElementwiseGeometry&, bool*, const void*, const void*) {
  throw_not_built(op_name(op));
}
void compare_scalar(CompareOp op, DType, const ElementwiseGeometry&, bool*, const void*, double) {
  throw_not_built(op_name(op));
}
void where(DType, const ElementwiseGeometry&, void*, const bool*, const void*, const void*) {
  throw_not_built("where");
}
void cast(DType, DType, const ElementwiseGeometry&, void*, const void*) {
  throw_not_built("cast");
}
void fill(DType, const ElementwiseGeometry&, void*, double) {
  throw_not_built("fill");
}

}  // namespace leangrad::kernels::cuda
