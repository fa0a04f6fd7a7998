// result_type and can_cast (autograd/type_promotion.h), over the rules the elementwise ops apply
// (kernels/result_type.h).
#include <leangrad/autograd/type_promotion.h>

#include <leangrad/core/error.h>
#include <leangrad/kernels/result_type.h>

namespace leangrad {

DType result_type(const Tensor& a, const Tensor& b) {
  LG_CHECK(a.defined() && b.defined(),
           "result_type: expected two defined tensors, got an undefined Tensor()");
  return ops::result_type(a, b);
}

DType result_type(const Tensor& a, double b) {
  LG_CHECK(a.defined(), "result_type: expected a defined tensor, got an undefined Tensor()");
  return ops::scalar_result_dtype(a.dtype(), b);
}

DType result_type(double a, const Tensor& b) {
  return result_type(b, a);
}

bool can_cast(DType from, DType to) {
  if (is_floating(from) && !is_floating(to)) return false;
  return to != kBool || from == kBool;
}

}  // namespace leangrad
