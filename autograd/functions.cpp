// The public functions: each validates nothing itself and calls its kernel entry in kernels/ops.h
// (which checks shapes, dtypes and devices). The autograd layer records each op's backward here,
// next to its forward (see docs/architecture.md).
#include "autograd/functions.h"

#include "core/creation.h"
#include "core/views.h"
#include "kernels/ops.h"

namespace leangrad {

// ---- Elementwise arithmetic ------------------------------------------------------------------
Tensor add(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Add, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Sub, a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Mul, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Div, a, b); }
Tensor pow(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Pow, a, b); }
Tensor maximum(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Maximum, a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Minimum, a, b); }
Tensor add(const Tensor& a, double b) { return ops::binary(BinaryOp::Add, a, b); }
Tensor sub(const Tensor& a, double b) { return ops::binary(BinaryOp::Sub, a, b); }
Tensor mul(const Tensor& a, double b) { return ops::binary(BinaryOp::Mul, a, b); }
Tensor div(const Tensor& a, double b) { return ops::binary(BinaryOp::Div, a, b); }
Tensor pow(const Tensor& a, double exponent) { return ops::binary(BinaryOp::Pow, a, exponent); }
Tensor rsub(const Tensor& a, double b) { return ops::binary(BinaryOp::Sub, a, b, true); }
Tensor rdiv(const Tensor& a, double b) { return ops::binary(BinaryOp::Div, a, b, true); }

Tensor neg(const Tensor& a) { return ops::unary(UnaryOp::Neg, a); }
Tensor abs(const Tensor& a) { return ops::unary(UnaryOp::Abs, a); }
Tensor exp(const Tensor& a) { return ops::unary(UnaryOp::Exp, a); }
Tensor log(const Tensor& a) { return ops::unary(UnaryOp::Log, a); }
Tensor sqrt(const Tensor& a) { return ops::unary(UnaryOp::Sqrt, a); }
Tensor tanh(const Tensor& a) { return ops::unary(UnaryOp::Tanh, a); }
Tensor sigmoid(const Tensor& a) { return ops::unary(UnaryOp::Sigmoid, a); }
Tensor relu(const Tensor& a) { return ops::unary(UnaryOp::Relu, a); }

// ---- Comparisons -----------------------------------------------------------------------------
Tensor gt(const Tensor& a, const Tensor& b) { return ops::compare(CompareOp::Gt, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return ops::compare(CompareOp::Lt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return ops::compare(CompareOp::Ge, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return ops::compare(CompareOp::Le, a, b); }
Tensor eq(const Tensor& a, const Tensor& b) { return ops::compare(CompareOp::Eq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return ops::compare(CompareOp::Ne, a, b); }
Tensor gt(const Tensor& a, double b) { return ops::compare(CompareOp::Gt, a, b); }
Tensor lt(const Tensor& a, double b) { return ops::compare(CompareOp::Lt, a, b); }
Tensor ge(const Tensor& a, double b) { return ops::compare(CompareOp::Ge, a, b); }
Tensor le(const Tensor& a, double b) { return ops::compare(CompareOp::Le, a, b); }
Tensor eq(const Tensor& a, double b) { return ops::compare(CompareOp::Eq, a, b); }
Tensor ne(const Tensor& a, double b) { return ops::compare(CompareOp::Ne, a, b); }

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  return ops::where(cond, a, b);
}

// ---- Reductions ------------------------------------------------------------------------------
Tensor sum(const Tensor& a, const std::vector<std::int64_t>& dims, bool keepdim) {
  return ops::reduce(ReduceOp::Sum, a, dims, keepdim);
}
Tensor mean(const Tensor& a, const std::vector<std::int64_t>& dims, bool keepdim) {
  return ops::reduce(ReduceOp::Mean, a, dims, keepdim);
}
Tensor max(const Tensor& a, const std::vector<std::int64_t>& dims, bool keepdim) {
  return ops::reduce(ReduceOp::Max, a, dims, keepdim);
}
Tensor argmax(const Tensor& a) { return ops::argmax(a, std::nullopt, false); }
Tensor argmax(const Tensor& a, std::int64_t dim, bool keepdim) {
  return ops::argmax(a, dim, keepdim);
}

// ---- Linear algebra, joining -----------------------------------------------------------------
Tensor matmul(const Tensor& a, const Tensor& b) { return ops::matmul(a, b); }
Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim) { return ops::cat(tensors, dim); }

Tensor stack(const std::vector<Tensor>& tensors, std::int64_t dim) {
  LG_CHECK(!tensors.empty(), "stack: expected a non-empty list of tensors");
  const std::int64_t d = wrap_dim(dim, tensors[0].dim() + 1, "stack");
  std::vector<Tensor> expanded;
  expanded.reserve(tensors.size());
  for (const Tensor& t : tensors) {
    LG_CHECK_SHAPE(t.shape() == tensors[0].shape(), "stack: expected tensors of equal shape, got ",
                   tensors[0].shape(), " and ", t.shape());
    expanded.push_back(unsqueeze(t, d));
  }
  return cat(expanded, d);
}

// ---- Views and copies ------------------------------------------------------------------------
Tensor view(const Tensor& a, const Shape& shape) { return views::view(a, shape); }

Tensor reshape(const Tensor& a, const Shape& shape) {
  const Shape new_shape = views::infer_size(shape, a.numel(), "reshape");
  if (views::view_strides(a.shape(), a.strides(), new_shape)) return view(a, new_shape);
  return view(clone(a), new_shape);
}

Tensor permute(const Tensor& a, const std::vector<std::int64_t>& dims) {
  return views::permute(a, dims);
}
Tensor transpose(const Tensor& a, std::int64_t dim0, std::int64_t dim1) {
  return views::transpose(a, dim0, dim1);
}
Tensor slice(const Tensor& a, std::int64_t dim, std::int64_t start, std::int64_t end,
             std::int64_t step) {
  return views::slice(a, dim, start, end, step);
}
Tensor select(const Tensor& a, std::int64_t dim, std::int64_t index) {
  return views::select(a, dim, index);
}
Tensor unsqueeze(const Tensor& a, std::int64_t dim) { return views::unsqueeze(a, dim); }
Tensor squeeze(const Tensor& a) { return views::squeeze(a); }
Tensor squeeze(const Tensor& a, std::int64_t dim) { return views::squeeze(a, dim); }
Tensor expand(const Tensor& a, const Shape& shape) { return views::expand(a, shape); }

Tensor flatten(const Tensor& a, std::int64_t start_dim, std::int64_t end_dim) {
  if (a.dim() == 0) return reshape(a, {1});
  const std::int64_t start = wrap_dim(start_dim, a.dim(), "flatten");
  const std::int64_t end = wrap_dim(end_dim, a.dim(), "flatten");
  LG_CHECK_SHAPE(start <= end, "flatten: start_dim ", start_dim, " comes after end_dim ", end_dim,
                 " for shape ", a.shape());
  Shape shape(a.shape().begin(), a.shape().begin() + start);
  std::int64_t merged = 1;
  for (std::int64_t d = start; d <= end; ++d) merged *= a.shape()[d];
  shape.push_back(merged);
  shape.insert(shape.end(), a.shape().begin() + end + 1, a.shape().end());
  return reshape(a, shape);
}

Tensor clone(const Tensor& a) {
  Tensor out = empty(a.shape(), a.options());
  ops::copy_(out, a);
  return out;
}

Tensor to(const Tensor& a, Device device, DType dtype, bool non_blocking) {
  if (a.device() == device && a.dtype() == dtype) return a;
  // A non_blocking copy to the host lands in pinned memory, so it can really be asynchronous.
  const bool pinned = non_blocking && device.is_cpu() && a.is_cuda();
  Tensor out = empty(a.shape(), TensorOptions(dtype).device(device).pinned_memory(pinned));
  ops::copy_(out, a, non_blocking);
  return out;
}

}  // namespace leangrad
