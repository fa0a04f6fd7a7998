// Tensor's computing methods and the arithmetic operators: one-line forwards to the public
// functions of autograd/functions.h, so there is one implementation of each op.
#include "autograd/functions.h"
#include "autograd/grad_mode.h"
#include "core/creation.h"
#include "core/host_sync.h"
#include "core/views.h"
#include "kernels/dispatch.h"
#include "kernels/ops.h"

namespace leangrad {

// ---- Conversions -----------------------------------------------------------------------------
Tensor Tensor::to(Device device, bool non_blocking) const {
  return leangrad::to(*this, device, dtype(), non_blocking);
}
Tensor Tensor::to(DType dtype) const {
  return leangrad::to(*this, device(), dtype);
}
Tensor Tensor::contiguous() const {
  return is_contiguous() ? *this : leangrad::clone(*this);
}
Tensor Tensor::clone() const {
  return leangrad::clone(*this);
}

Tensor Tensor::pin_memory() const {
  LG_CHECK_DEVICE(device().is_cpu(), "pin_memory: expected a CPU tensor, got one on ", device());
  if (is_pinned()) return *this;
  Tensor out = empty(shape(), options().pinned_memory(true));
  ops::copy_(out, *this);
  return out;
}

template <typename T>
T Tensor::item() const {
  LG_CHECK_SHAPE(numel() == 1, "item: expected a tensor with one element, got shape ", shape());
  // A host read of a value (core/host_sync.h); a CUDA tensor's counts in its copy to the host.
  if (device().is_cpu()) count_host_sync();
  const Tensor host = cpu();
  return dispatch_all(dtype(), "item", [&]<typename S>() {
    const S value = *static_cast<const S*>(host.data_ptr());
    if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) {
      return static_cast<T>(static_cast<float>(value));
    } else {
      return static_cast<T>(value);
    }
  });
}
template float Tensor::item<float>() const;
template double Tensor::item<double>() const;
template std::int64_t Tensor::item<std::int64_t>() const;
template std::int32_t Tensor::item<std::int32_t>() const;
template std::uint8_t Tensor::item<std::uint8_t>() const;
template bool Tensor::item<bool>() const;

// ---- Views -----------------------------------------------------------------------------------
Tensor Tensor::view(const Shape& shape) const {
  return leangrad::view(*this, shape);
}
Tensor Tensor::reshape(const Shape& shape) const {
  return leangrad::reshape(*this, shape);
}
Tensor Tensor::permute(const std::vector<std::int64_t>& dims) const {
  return leangrad::permute(*this, dims);
}
Tensor Tensor::transpose(std::int64_t dim0, std::int64_t dim1) const {
  return leangrad::transpose(*this, dim0, dim1);
}
Tensor Tensor::slice(std::int64_t dim, std::int64_t start, std::int64_t end,
                     std::int64_t step) const {
  return leangrad::slice(*this, dim, start, end, step);
}
Tensor Tensor::select(std::int64_t dim, std::int64_t index) const {
  return leangrad::select(*this, dim, index);
}
Tensor Tensor::unsqueeze(std::int64_t dim) const {
  return leangrad::unsqueeze(*this, dim);
}
Tensor Tensor::squeeze() const {
  return leangrad::squeeze(*this);
}
Tensor Tensor::squeeze(std::int64_t dim) const {
  return leangrad::squeeze(*this, dim);
}
Tensor Tensor::expand(const Shape& shape) const {
  return leangrad::expand(*this, shape);
}
Tensor Tensor::flatten(std::int64_t start_dim, std::int64_t end_dim) const {
  return leangrad::flatten(*this, start_dim, end_dim);
}

// ---- In-place --------------------------------------------------------------------------------
// Autograd does not track in-place ops: a tensor that requires grad may be written in place only
// with grad mode off (optimizer steps, initialisation), as PyTorch requires for leaves. Saved
// tensors written in place are caught at backward time by the version counter.
namespace {
void check_inplace(const char* op, const Tensor& self) {
  LG_CHECK(!(self.requires_grad() && autograd::grad_mode_enabled()), op,
           ": in-place operation on a tensor that requires grad (shape ", self.shape(),
           "); run it under NoGradGuard, or use the out-of-place op");
}
}  // namespace

Tensor& Tensor::add_(const Tensor& other, double alpha) {
  check_inplace("add_", *this);
  ops::binary_(BinaryOp::Add, *this, alpha == 1.0 ? other : leangrad::mul(other, alpha));
  return *this;
}
Tensor& Tensor::add_(double other) {
  check_inplace("add_", *this);
  ops::binary_(BinaryOp::Add, *this, other);
  return *this;
}
Tensor& Tensor::mul_(const Tensor& other) {
  check_inplace("mul_", *this);
  ops::binary_(BinaryOp::Mul, *this, other);
  return *this;
}
Tensor& Tensor::mul_(double other) {
  check_inplace("mul_", *this);
  ops::binary_(BinaryOp::Mul, *this, other);
  return *this;
}
Tensor& Tensor::zero_() {
  check_inplace("zero_", *this);
  ops::fill_(*this, 0.0);
  return *this;
}
Tensor& Tensor::fill_(double value) {
  check_inplace("fill_", *this);
  ops::fill_(*this, value);
  return *this;
}
Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) {
  check_inplace("copy_", *this);
  ops::copy_(*this, src, non_blocking);
  return *this;
}

// ---- Reductions ------------------------------------------------------------------------------
Tensor Tensor::sum() const {
  return leangrad::sum(*this);
}
Tensor Tensor::sum(const std::vector<std::int64_t>& dims, bool keepdim) const {
  return leangrad::sum(*this, dims, keepdim);
}
Tensor Tensor::mean() const {
  return leangrad::mean(*this);
}
Tensor Tensor::mean(const std::vector<std::int64_t>& dims, bool keepdim) const {
  return leangrad::mean(*this, dims, keepdim);
}
Tensor Tensor::max() const {
  return leangrad::max(*this);
}
Tensor Tensor::max(const std::vector<std::int64_t>& dims, bool keepdim) const {
  return leangrad::max(*this, dims, keepdim);
}
Tensor Tensor::argmax() const {
  return leangrad::argmax(*this);
}
Tensor Tensor::argmax(std::int64_t dim, bool keepdim) const {
  return leangrad::argmax(*this, dim, keepdim);
}

// ---- Elementwise -----------------------------------------------------------------------------
Tensor Tensor::exp() const {
  return leangrad::exp(*this);
}
Tensor Tensor::log() const {
  return leangrad::log(*this);
}
Tensor Tensor::tanh() const {
  return leangrad::tanh(*this);
}
Tensor Tensor::sigmoid() const {
  return leangrad::sigmoid(*this);
}
Tensor Tensor::relu() const {
  return leangrad::relu(*this);
}
Tensor Tensor::sqrt() const {
  return leangrad::sqrt(*this);
}
Tensor Tensor::abs() const {
  return leangrad::abs(*this);
}
Tensor Tensor::neg() const {
  return leangrad::neg(*this);
}
Tensor Tensor::pow(const Tensor& exponent) const {
  return leangrad::pow(*this, exponent);
}
Tensor Tensor::pow(double exponent) const {
  return leangrad::pow(*this, exponent);
}
Tensor Tensor::gt(const Tensor& other) const {
  return leangrad::gt(*this, other);
}
Tensor Tensor::gt(double other) const {
  return leangrad::gt(*this, other);
}
Tensor Tensor::lt(const Tensor& other) const {
  return leangrad::lt(*this, other);
}
Tensor Tensor::lt(double other) const {
  return leangrad::lt(*this, other);
}
Tensor Tensor::ge(const Tensor& other) const {
  return leangrad::ge(*this, other);
}
Tensor Tensor::ge(double other) const {
  return leangrad::ge(*this, other);
}
Tensor Tensor::le(const Tensor& other) const {
  return leangrad::le(*this, other);
}
Tensor Tensor::le(double other) const {
  return leangrad::le(*this, other);
}
Tensor Tensor::eq(const Tensor& other) const {
  return leangrad::eq(*this, other);
}
Tensor Tensor::eq(double other) const {
  return leangrad::eq(*this, other);
}
Tensor Tensor::matmul(const Tensor& other) const {
  return leangrad::matmul(*this, other);
}

// ---- Operators -------------------------------------------------------------------------------
Tensor operator+(const Tensor& a, const Tensor& b) {
  return add(a, b);
}
Tensor operator-(const Tensor& a, const Tensor& b) {
  return sub(a, b);
}
Tensor operator*(const Tensor& a, const Tensor& b) {
  return mul(a, b);
}
Tensor operator/(const Tensor& a, const Tensor& b) {
  return div(a, b);
}
Tensor operator+(const Tensor& a, double b) {
  return add(a, b);
}
Tensor operator-(const Tensor& a, double b) {
  return sub(a, b);
}
Tensor operator*(const Tensor& a, double b) {
  return mul(a, b);
}
Tensor operator/(const Tensor& a, double b) {
  return div(a, b);
}
Tensor operator+(double a, const Tensor& b) {
  return add(b, a);
}
Tensor operator-(double a, const Tensor& b) {
  return rsub(b, a);
}
Tensor operator*(double a, const Tensor& b) {
  return mul(b, a);
}
Tensor operator/(double a, const Tensor& b) {
  return rdiv(b, a);
}
Tensor operator-(const Tensor& a) {
  return neg(a);
}

}  // namespace leangrad
