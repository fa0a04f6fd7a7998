// Tensor's computing methods and the arithmetic operators: one-line forwards to the public
// functions of autograd/functions.h, so there is one implementation of each op.
#include <algorithm>
#include <optional>
#include <tuple>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/host_sync.h>
#include <leangrad/core/views.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/ops.h>

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
Tensor Tensor::t() const {
  return leangrad::t(*this);
}
Tensor Tensor::operator[](std::int64_t index) const {
  return this->index({index});
}
Tensor Tensor::index(std::initializer_list<indexing::TensorIndex> indices) const {
  return index(std::vector<indexing::TensorIndex>(indices));
}
// Note [Basic indexing]
//   Python's rules, by views: an integer selects (its dim goes), a slice keeps its dim with
//   bounds wrapped from the end and clamped to [0, size] (an empty range when stop <= start),
//   None inserts a dim of 1, and one Ellipsis stands for the full slices of the dims the other
//   indices leave. Every step is a differentiable view (select, slice, unsqueeze).
Tensor Tensor::index(const std::vector<indexing::TensorIndex>& indices) const {
  using indexing::TensorIndex;
  std::int64_t consumed = 0;
  int ellipses = 0;
  for (const TensorIndex& i : indices) {
    if (i.kind() == TensorIndex::Kind::Integer || i.kind() == TensorIndex::Kind::Slice) ++consumed;
    if (i.kind() == TensorIndex::Kind::Ellipsis) ++ellipses;
  }
  LG_CHECK(ellipses <= 1, "index: at most one Ellipsis (\"...\") in an index, got ", ellipses);
  LG_CHECK_SHAPE(consumed <= dim(), "index: ", consumed, " indices for a tensor of ", dim(),
                 " dims (shape ", shape(), ")");
  Tensor out = *this;
  std::int64_t d = 0;           // the dim of `out` the next index applies to
  std::int64_t source_dim = 0;  // the dim of *this it came from (for messages)
  for (const TensorIndex& i : indices) {
    switch (i.kind()) {
      case TensorIndex::Kind::Integer: {
        const std::int64_t size = out.size(d);
        const std::int64_t k = i.integer();
        LG_CHECK_SHAPE(k >= -size && k < size, "index: index ", k, " is out of range for dim ",
                       source_dim, " of size ", size, " (shape ", shape(), ")");
        out = out.select(d, k < 0 ? k + size : k);
        ++source_dim;
        break;
      }
      case TensorIndex::Kind::Slice: {
        const std::int64_t size = out.size(d);
        const auto bound = [size](std::optional<std::int64_t> b, std::int64_t absent) {
          if (!b.has_value()) return absent;
          const std::int64_t v = *b < 0 ? *b + size : *b;
          return std::clamp<std::int64_t>(v, 0, size);
        };
        const std::int64_t start = bound(i.slice().start(), 0);
        const std::int64_t stop = std::max(start, bound(i.slice().stop(), size));
        out = out.slice(d, start, stop, i.slice().step());
        ++d;
        ++source_dim;
        break;
      }
      case TensorIndex::Kind::None:
        out = out.unsqueeze(d);
        ++d;
        break;
      case TensorIndex::Kind::Ellipsis:
        d += dim() - consumed;
        source_dim += dim() - consumed;
        break;
    }
  }
  // No index at all still gives a new view, as t[...] does.
  return out.is_same(*this) ? out.view(shape()) : out;
}
Tensor Tensor::flatten(std::int64_t start_dim, std::int64_t end_dim) const {
  return leangrad::flatten(*this, start_dim, end_dim);
}
Tensor Tensor::unflatten(std::int64_t dim, const Shape& sizes) const {
  return leangrad::unflatten(*this, dim, sizes);
}

// ---- In-place --------------------------------------------------------------------------------
// Note [In-place ops in the graph]
// - An in-place op is recorded when grad mode is on and self or the other operand requires grad
//   (PyTorch's rule): it runs as its out-of-place twin, recorded like any op (its edges go to
//   self's current history), the result is copied into self's memory (self's version goes up),
//   and self's history becomes the twin's node (PyTorch's rebase_history). ResNet's
//   ReLU(inplace) and `out += identity` train this way.
// - A twin that saves self (mul_ and div_ by a tensor) computes on a copy of self, so what it
//   saved is the value before the write (x *= x multiplies the copy by itself). Twins that save
//   their result (relu_) or nothing (add_, sub_, mul_ and div_ by a number) need no copy.
// - Refused, naming the op: a leaf that requires grad (PyTorch refuses it too: run it under
//   NoGradGuard, as optimizers and initialisers do), and memory that a live view shares (self is
//   a view or has one): the other tensor's history would not follow the rewrite (PyTorch
//   rewrites it, CopySlices; leangrad does not yet). index_put_ on a tensor that requires grad
//   is refused for the same reason (it writes through a view).
// - Otherwise (grad mode off, or nothing requires grad) the kernel writes in place directly;
//   saved tensors written in place are caught at backward time by the version counter.
// - Recorded, an in-place op costs its twin plus a copy: unlike PyTorch's, it saves no memory.
namespace {

// Whether the in-place op `op` on self (with `other`, if any) is recorded; throws where it is
// refused.
bool records_inplace(const char* op, const Tensor& self, const Tensor& other = Tensor()) {
  if (!autograd::grad_mode_enabled()) return false;
  const bool other_requires_grad = other.defined() && other.requires_grad();
  if (!self.requires_grad() && !other_requires_grad) return false;
  LG_CHECK(!(self.requires_grad() && self.is_leaf()), op,
           ": in-place operation on a leaf tensor that requires grad (shape ", self.shape(),
           "); run it under NoGradGuard (initialisation, optimizer steps), or use the "
           "out-of-place op");
  LG_CHECK(!self.impl().view.active() && self.impl().version_counter->live_views.load() == 0, op,
           ": in-place operation recorded by autograd on a tensor (shape ", self.shape(),
           ") whose memory a live view shares; the other tensor's gradient would not follow the "
           "rewrite. Use the out-of-place op, or clone() first");
  LG_CHECK_DTYPE(is_floating(self.dtype()), op, ": writing a tensor that requires grad into a ",
                 self.dtype(), " tensor, which cannot carry a gradient");
  return true;
}

// Writes the twin's `result` into self and makes its node self's history (Note [In-place ops
// in the graph]). A result that needs no gradient (zero_, a copy_ of a constant) still gets a
// node, so self keeps requiring grad, with no gradient for what it held before.
void write_recorded(const char* op, Tensor& self, Tensor result) {
  LG_CHECK_SHAPE(result.shape() == self.shape(), op, ": the result of shape ", result.shape(),
                 " does not fit in self of shape ", self.shape(),
                 " (in-place ops do not grow self)");
  if (result.dtype() != self.dtype()) result = result.to(self.dtype());
  if (!result.requires_grad()) {
    result = autograd::record_op(
        op, views::alias(result), {self}, {},
        [](const autograd::BackwardContext&) -> std::vector<Tensor> { return {Tensor()}; });
  }
  {
    NoGradGuard no_grad;
    ops::copy_(self, result);
  }
  const autograd::Edge edge = autograd::gradient_edge(result);
  autograd::set_history(self, edge.function, edge.input_nr);
}

// In-place ops not recorded at all: refused on a tensor that requires grad while grad mode is on.
void check_inplace(const char* op, const Tensor& self) {
  LG_CHECK(!(self.requires_grad() && autograd::grad_mode_enabled()), op,
           ": in-place operation on a tensor that requires grad (shape ", self.shape(),
           "); run it under NoGradGuard, or use the out-of-place op");
}

}  // namespace

namespace {

// Every in-place op: recorded as its twin when autograd must see it, else the kernel alone
// (Note [In-place ops in the graph]). `other` is the operand that may require grad, if any.
template <typename Twin, typename Kernel>
Tensor& in_place(const char* op, Tensor& self, const Tensor& other, const Twin& twin,
                 const Kernel& kernel) {
  if (records_inplace(op, self, other)) {
    write_recorded(op, self, twin());
  } else {
    kernel();
  }
  return self;
}

// The twin of an op that saves self: computed on a copy of self, so what it saved is the value
// before the write (x *= x multiplies the copy by itself).
template <typename F>
Tensor on_copy_of_self(const Tensor& self, const Tensor& other, const F& f) {
  const Tensor before = leangrad::clone(self);
  return f(before, other.is_same(self) ? before : other);
}

}  // namespace

Tensor& Tensor::add_(const Tensor& other, double alpha) {
  const Tensor scaled = alpha == 1.0 ? other : leangrad::mul(other, alpha);
  return in_place(
      "add_", *this, other, [&] { return leangrad::add(*this, scaled); },
      [&] { ops::binary_(BinaryOp::Add, *this, scaled); });
}
Tensor& Tensor::add_(double other) {
  return in_place(
      "add_", *this, Tensor(), [&] { return leangrad::add(*this, other); },
      [&] { ops::binary_(BinaryOp::Add, *this, other); });
}
Tensor& Tensor::mul_(const Tensor& other) {
  return in_place(
      "mul_", *this, other,
      [&] {
        return on_copy_of_self(
            *this, other, [](const Tensor& a, const Tensor& b) { return leangrad::mul(a, b); });
      },
      [&] { ops::binary_(BinaryOp::Mul, *this, other); });
}
Tensor& Tensor::mul_(double other) {
  return in_place(
      "mul_", *this, Tensor(), [&] { return leangrad::mul(*this, other); },
      [&] { ops::binary_(BinaryOp::Mul, *this, other); });
}
Tensor& Tensor::sub_(const Tensor& other, double alpha) {
  const Tensor scaled = alpha == 1.0 ? other : leangrad::mul(other, alpha);
  return in_place(
      "sub_", *this, other, [&] { return leangrad::sub(*this, scaled); },
      [&] { ops::binary_(BinaryOp::Sub, *this, scaled); });
}
Tensor& Tensor::sub_(double other) {
  return in_place(
      "sub_", *this, Tensor(), [&] { return leangrad::sub(*this, other); },
      [&] { ops::binary_(BinaryOp::Sub, *this, other); });
}
Tensor& Tensor::div_(const Tensor& other) {
  return in_place(
      "div_", *this, other,
      [&] {
        return on_copy_of_self(
            *this, other, [](const Tensor& a, const Tensor& b) { return leangrad::div(a, b); });
      },
      [&] { ops::binary_(BinaryOp::Div, *this, other); });
}
Tensor& Tensor::div_(double other) {
  return in_place(
      "div_", *this, Tensor(), [&] { return leangrad::div(*this, other); },
      [&] { ops::binary_(BinaryOp::Div, *this, other); });
}
Tensor& Tensor::relu_() {
  return in_place(
      "relu_", *this, Tensor(), [&] { return leangrad::relu(*this); },
      [&] { ops::copy_(*this, ops::unary(UnaryOp::Relu, *this)); });
}
Tensor& Tensor::index_put_(std::initializer_list<indexing::TensorIndex> indices,
                           const Tensor& value) {
  check_inplace("index_put_", *this);
  index(indices).copy_(value);
  return *this;
}
Tensor& Tensor::index_put_(std::initializer_list<indexing::TensorIndex> indices, double value) {
  check_inplace("index_put_", *this);
  index(indices).fill_(value);
  return *this;
}
namespace {
Tensor& fill_named(const char* op, Tensor& self, double value) {
  return in_place(
      op, self, Tensor(), [&] { return full(self.shape(), value, self.options()); },
      [&] { ops::fill_(self, value); });
}
}  // namespace

Tensor& Tensor::zero_() {
  return fill_named("zero_", *this, 0.0);
}
Tensor& Tensor::fill_(double value) {
  return fill_named("fill_", *this, value);
}
Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) {
  return in_place(
      "copy_", *this, src,
      [&] {
        Tensor converted = src.to(device()).to(dtype());
        if (converted.shape() != shape()) converted = leangrad::expand(converted, shape());
        return leangrad::clone(converted);  // a copy of its own: self's history never aliases src's
      },
      [&] { ops::copy_(*this, src, non_blocking); });
}

// ---- Reductions ------------------------------------------------------------------------------
Tensor Tensor::sum() const {
  return leangrad::sum(*this);
}
Tensor Tensor::sum(const DimList& dims, bool keepdim) const {
  return leangrad::sum(*this, dims, keepdim);
}
Tensor Tensor::mean() const {
  return leangrad::mean(*this);
}
Tensor Tensor::mean(const DimList& dims, bool keepdim) const {
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
std::tuple<Tensor, Tensor> Tensor::max(std::int64_t dim, bool keepdim) const {
  return leangrad::max(*this, dim, keepdim);
}
Tensor Tensor::min() const {
  return leangrad::min(*this);
}
std::tuple<Tensor, Tensor> Tensor::min(std::int64_t dim, bool keepdim) const {
  return leangrad::min(*this, dim, keepdim);
}
Tensor Tensor::amax(const std::vector<std::int64_t>& dims, bool keepdim) const {
  return leangrad::amax(*this, dims, keepdim);
}
Tensor Tensor::amin(const std::vector<std::int64_t>& dims, bool keepdim) const {
  return leangrad::amin(*this, dims, keepdim);
}
Tensor Tensor::argmin() const {
  return leangrad::argmin(*this);
}
Tensor Tensor::argmin(std::int64_t dim, bool keepdim) const {
  return leangrad::argmin(*this, dim, keepdim);
}
Tensor Tensor::var(const DimList& dims, bool unbiased, bool keepdim) const {
  return leangrad::var(*this, dims, unbiased, keepdim);
}
Tensor Tensor::std(const DimList& dims, bool unbiased, bool keepdim) const {
  return leangrad::std(*this, dims, unbiased, keepdim);
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
Tensor Tensor::erf() const {
  return leangrad::erf(*this);
}
Tensor Tensor::expm1() const {
  return leangrad::expm1(*this);
}
Tensor Tensor::log1p() const {
  return leangrad::log1p(*this);
}
Tensor Tensor::log2() const {
  return leangrad::log2(*this);
}
Tensor Tensor::log10() const {
  return leangrad::log10(*this);
}
Tensor Tensor::sin() const {
  return leangrad::sin(*this);
}
Tensor Tensor::cos() const {
  return leangrad::cos(*this);
}
Tensor Tensor::rsqrt() const {
  return leangrad::rsqrt(*this);
}
Tensor Tensor::reciprocal() const {
  return leangrad::reciprocal(*this);
}
Tensor Tensor::sign() const {
  return leangrad::sign(*this);
}
Tensor Tensor::floor() const {
  return leangrad::floor(*this);
}
Tensor Tensor::ceil() const {
  return leangrad::ceil(*this);
}
Tensor Tensor::round() const {
  return leangrad::round(*this);
}
Tensor Tensor::trunc() const {
  return leangrad::trunc(*this);
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
Tensor Tensor::mm(const Tensor& other) const {
  return leangrad::mm(*this, other);
}
Tensor Tensor::square() const {
  return leangrad::square(*this);
}
Tensor Tensor::clamp(std::optional<double> min, std::optional<double> max) const {
  return leangrad::clamp(*this, min, max);
}
Tensor Tensor::clamp_min(double min) const {
  return leangrad::clamp_min(*this, min);
}
Tensor Tensor::clamp_max(double max) const {
  return leangrad::clamp_max(*this, max);
}
Tensor Tensor::masked_fill(const Tensor& mask, double value) const {
  return leangrad::masked_fill(*this, mask, value);
}
Tensor Tensor::masked_fill(const Tensor& mask, const Tensor& value) const {
  return leangrad::masked_fill(*this, mask, value);
}
Tensor Tensor::ne(const Tensor& other) const {
  return leangrad::ne(*this, other);
}
Tensor Tensor::ne(double other) const {
  return leangrad::ne(*this, other);
}
Tensor Tensor::softmax(std::int64_t dim) const {
  return leangrad::softmax(*this, dim);
}
Tensor Tensor::log_softmax(std::int64_t dim) const {
  return leangrad::log_softmax(*this, dim);
}
bool Tensor::allclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return leangrad::allclose(*this, other, rtol, atol, equal_nan);
}
bool Tensor::equal(const Tensor& other) const {
  return leangrad::equal(*this, other);
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
