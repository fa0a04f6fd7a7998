// Tensor's computing methods and the arithmetic operators: one-line forwards to the public
// functions of autograd/functions.h, so there is one implementation of each op.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include <leangrad/autograd/activations.h>
#include <leangrad/autograd/advanced_indexing.h>
#include <leangrad/autograd/arithmetic_functions.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/graph.h>
#include <leangrad/autograd/indexing_functions.h>
#include <leangrad/autograd/linalg_decompositions.h>
#include <leangrad/autograd/linalg_functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/autograd/nn_internal.h>
#include <leangrad/autograd/pointwise_functions.h>
#include <leangrad/autograd/reduction_functions.h>
#include <leangrad/autograd/sampling_functions.h>
#include <leangrad/autograd/shape_functions.h>
#include <leangrad/autograd/special_functions.h>
#include <leangrad/autograd/statistics_functions.h>
#include <leangrad/autograd/type_promotion.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/host_sync.h>
#include <leangrad/core/views.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/dispatch.h>
#include <leangrad/kernels/elementwise_geometry.h>
#include <leangrad/kernels/ops.h>

namespace leangrad {

// ---- Conversions -----------------------------------------------------------------------------
Tensor Tensor::to(Device device, bool non_blocking) const {
  return leangrad::to(*this, device, dtype(), non_blocking);
}
Tensor Tensor::to(DType dtype) const {
  return leangrad::to(*this, device(), dtype);
}
Tensor Tensor::to(const TensorOptions& options, bool non_blocking, bool copy) const {
  LG_CHECK(!options.requires_grad(), "to: expects options without requires_grad set true ",
           "(a conversion does not make a leaf; call requires_grad_() on the result)");
  const Device target_device = options.device_opt().value_or(device());
  const DType target_dtype = options.dtype_opt().value_or(dtype());
  if (copy && target_device == device() && target_dtype == dtype()) return leangrad::clone(*this);
  return leangrad::to(*this, target_device, target_dtype, non_blocking);
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

namespace {

// Whether item<T>() may convert `value` to T. As LibTorch's item<T>() (c10::checked_convert), a
// value T cannot hold is refused: a float that is NaN or whose truncation is out of an integer
// type's range (a plain cast of it is undefined behaviour in C++), a finite double beyond float's
// range, an integer beyond T's range. Any value converts to bool (non-zero is true), and a
// negative integer to uint8 wraps as long as its magnitude fits (-1 is 255), as in LibTorch.
template <typename T, typename S>
bool item_converts(S value) {
  if constexpr (std::is_same_v<T, bool> || std::is_same_v<S, bool>) {
    return true;
  } else if constexpr (std::is_floating_point_v<S> && std::is_floating_point_v<T>) {
    return !std::isfinite(value) ||
           (value >= std::numeric_limits<T>::lowest() && value <= std::numeric_limits<T>::max());
  } else if constexpr (std::is_floating_point_v<S>) {
    // [lowest, max + 1): exact bounds, powers of two, for every integer type here.
    const S upper = std::ldexp(S(1), std::numeric_limits<T>::digits);
    const S lower = std::is_signed_v<T> ? -upper : S(0);
    return value >= lower && value < upper;  // false for NaN
  } else if constexpr (std::is_floating_point_v<T>) {
    return true;
  } else if constexpr (std::is_unsigned_v<T> && std::is_signed_v<S>) {
    return value >= 0 ? std::in_range<T>(value)
                      : -static_cast<std::uint64_t>(value) <= std::numeric_limits<T>::max();
  } else {
    return std::in_range<T>(value);
  }
}

}  // namespace

template <typename T>
T Tensor::item() const {
  LG_CHECK_SHAPE(numel() == 1, "item: expected a tensor with one element, got shape ", shape());
  // A host read of a value (core/host_sync.h); a CUDA tensor's counts in its copy to the host.
  if (device().is_cpu()) count_host_sync();
  const Tensor host = cpu();
  return dispatch_all(dtype(), "item", [&]<typename S>() {
    const S stored = *static_cast<const S*>(host.data_ptr());
    using Value =
        std::conditional_t<std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>, float, S>;
    const auto value = static_cast<Value>(stored);
    if constexpr (std::is_integral_v<Value>) {
      LG_CHECK_DTYPE(item_converts<T>(value), "item<", dtype_name(dtype_of<T>), ">: the value ",
                     static_cast<long long>(value), " of a ", dtype(), " tensor does not fit ",
                     dtype_name(dtype_of<T>), " (a conversion would overflow)");
    } else {
      LG_CHECK_DTYPE(item_converts<T>(value), "item<", dtype_name(dtype_of<T>), ">: the value ",
                     static_cast<double>(value), " of a ", dtype(), " tensor does not fit ",
                     dtype_name(dtype_of<T>), " (a conversion would overflow)");
    }
    return static_cast<T>(value);
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
Tensor Tensor::as_strided(const Shape& size, const Strides& stride,
                          std::optional<std::int64_t> storage_offset) const {
  return leangrad::as_strided(*this, size, stride, storage_offset);
}
Tensor Tensor::unfold(std::int64_t dimension, std::int64_t size, std::int64_t step) const {
  const char* op = "unfold";
  LG_CHECK(defined(), op, ": expected a defined tensor, got an undefined Tensor()");
  const std::int64_t d = wrap_dim(dimension, dim(), op);
  const std::int64_t length = dim() == 0 ? 1 : this->size(d);
  const std::int64_t along = dim() == 0 ? 1 : strides()[d];
  LG_CHECK_SHAPE(size >= 0 && size <= length, op, ": size ", size, " is outside [0, ", length,
                 "], the size of dimension ", d, " (shape ", shape(), ")");
  LG_CHECK_SHAPE(step > 0, op, ": expected step > 0, got ", step);
  Shape sizes = shape();
  Strides steps = strides();
  if (dim() > 0) {
    sizes[d] = (length - size) / step + 1;
    steps[d] = checked_mul(along, step, op);
  }
  sizes.push_back(size);
  steps.push_back(along);
  return leangrad::as_strided(*this, sizes, steps, storage_offset());
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
Tensor Tensor::narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const {
  return leangrad::narrow(*this, dim, start, length);
}
std::vector<Tensor> Tensor::split(std::int64_t split_size, std::int64_t dim) const {
  return leangrad::split(*this, split_size, dim);
}
std::vector<Tensor> Tensor::split_with_sizes(const std::vector<std::int64_t>& split_sizes,
                                             std::int64_t dim) const {
  return leangrad::split_with_sizes(*this, split_sizes, dim);
}
std::vector<Tensor> Tensor::chunk(std::int64_t chunks, std::int64_t dim) const {
  return leangrad::chunk(*this, chunks, dim);
}
std::vector<Tensor> Tensor::unbind(std::int64_t dim) const {
  return leangrad::unbind(*this, dim);
}
std::vector<Tensor> Tensor::unsafe_split(std::int64_t split_size, std::int64_t dim) const {
  return split(split_size, dim);
}
std::vector<Tensor> Tensor::unsafe_split_with_sizes(const std::vector<std::int64_t>& split_sizes,
                                                    std::int64_t dim) const {
  return split_with_sizes(split_sizes, dim);
}
std::vector<Tensor> Tensor::unsafe_chunk(std::int64_t chunks, std::int64_t dim) const {
  return chunk(chunks, dim);
}
Tensor Tensor::index_select(std::int64_t dim, const Tensor& index) const {
  return leangrad::index_select(*this, dim, index);
}
Tensor Tensor::gather(std::int64_t dim, const Tensor& index) const {
  return leangrad::gather(*this, dim, index);
}
Tensor Tensor::scatter_add(std::int64_t dim, const Tensor& index, const Tensor& src) const {
  return leangrad::scatter_add(*this, dim, index, src);
}
Tensor Tensor::flip(const std::vector<std::int64_t>& dims) const {
  return leangrad::flip(*this, dims);
}
Tensor Tensor::roll(const DimList& shifts, const DimList& dims) const {
  return leangrad::roll(*this, shifts, dims);
}
Tensor Tensor::repeat(const std::vector<std::int64_t>& repeats) const {
  return leangrad::repeat(*this, repeats);
}
Tensor Tensor::tril(std::int64_t diagonal) const {
  return leangrad::tril(*this, diagonal);
}
Tensor Tensor::triu(std::int64_t diagonal) const {
  return leangrad::triu(*this, diagonal);
}
Tensor Tensor::logsumexp(const DimList& dims, bool keepdim) const {
  return leangrad::logsumexp(*this, dims, keepdim);
}
Tensor Tensor::norm(double p, const DimList& dims, bool keepdim) const {
  return leangrad::norm(*this, p, dims, keepdim);
}
Tensor Tensor::cumsum(std::int64_t dim) const {
  return leangrad::cumsum(*this, dim);
}

Tensor Tensor::prod() const {
  return leangrad::prod(*this);
}

Tensor Tensor::prod(std::int64_t dim, bool keepdim) const {
  return leangrad::prod(*this, dim, keepdim);
}

Tensor Tensor::cumprod(std::int64_t dim) const {
  return leangrad::cumprod(*this, dim);
}

Tensor Tensor::logcumsumexp(std::int64_t dim) const {
  return leangrad::logcumsumexp(*this, dim);
}

std::tuple<Tensor, Tensor> Tensor::cummax(std::int64_t dim) const {
  return leangrad::cummax(*this, dim);
}

std::tuple<Tensor, Tensor> Tensor::cummin(std::int64_t dim) const {
  return leangrad::cummin(*this, dim);
}

Tensor Tensor::median() const {
  return leangrad::median(*this);
}

std::tuple<Tensor, Tensor> Tensor::median(std::int64_t dim, bool keepdim) const {
  return leangrad::median(*this, dim, keepdim);
}

Tensor Tensor::nanmedian() const {
  return leangrad::nanmedian(*this);
}

std::tuple<Tensor, Tensor> Tensor::nanmedian(std::int64_t dim, bool keepdim) const {
  return leangrad::nanmedian(*this, dim, keepdim);
}

std::tuple<Tensor, Tensor> Tensor::kthvalue(std::int64_t k, std::int64_t dim, bool keepdim) const {
  return leangrad::kthvalue(*this, k, dim, keepdim);
}

std::tuple<Tensor, Tensor> Tensor::mode(std::int64_t dim, bool keepdim) const {
  return leangrad::mode(*this, dim, keepdim);
}

Tensor Tensor::quantile(double q, std::optional<std::int64_t> dim, bool keepdim,
                        std::string_view interpolation) const {
  return leangrad::quantile(*this, q, dim, keepdim, interpolation);
}

Tensor Tensor::quantile(const Tensor& q, std::optional<std::int64_t> dim, bool keepdim,
                        std::string_view interpolation) const {
  return leangrad::quantile(*this, q, dim, keepdim, interpolation);
}

Tensor Tensor::nanquantile(double q, std::optional<std::int64_t> dim, bool keepdim,
                           std::string_view interpolation) const {
  return leangrad::nanquantile(*this, q, dim, keepdim, interpolation);
}

Tensor Tensor::nanquantile(const Tensor& q, std::optional<std::int64_t> dim, bool keepdim,
                           std::string_view interpolation) const {
  return leangrad::nanquantile(*this, q, dim, keepdim, interpolation);
}

Tensor Tensor::nansum(const DimList& dims, bool keepdim) const {
  return leangrad::nansum(*this, dims, keepdim);
}

Tensor Tensor::nanmean(const DimList& dims, bool keepdim) const {
  return leangrad::nanmean(*this, dims, keepdim);
}

std::tuple<Tensor, Tensor> Tensor::aminmax(std::optional<std::int64_t> dim, bool keepdim) const {
  return leangrad::aminmax(*this, dim, keepdim);
}

Tensor Tensor::histc(std::int64_t bins, double min, double max) const {
  return leangrad::histc(*this, bins, min, max);
}

std::tuple<Tensor, Tensor, Tensor> Tensor::unique_consecutive(
    bool return_inverse, bool return_counts, std::optional<std::int64_t> dim) const {
  return leangrad::unique_consecutive(*this, return_inverse, return_counts, dim);
}
Tensor Tensor::all(const DimList& dims, bool keepdim) const {
  return leangrad::all(*this, dims, keepdim);
}
Tensor Tensor::any(const DimList& dims, bool keepdim) const {
  return leangrad::any(*this, dims, keepdim);
}
std::tuple<Tensor, Tensor> Tensor::sort(std::int64_t dim, bool descending) const {
  return leangrad::sort(*this, dim, descending);
}
Tensor Tensor::argsort(std::int64_t dim, bool descending) const {
  return leangrad::argsort(*this, dim, descending);
}
std::tuple<Tensor, Tensor> Tensor::topk(std::int64_t k, std::int64_t dim, bool largest,
                                        bool sorted) const {
  return leangrad::topk(*this, k, dim, largest, sorted);
}
Tensor Tensor::bmm(const Tensor& other) const {
  return leangrad::bmm(*this, other);
}
Tensor Tensor::dot(const Tensor& other) const {
  return leangrad::dot(*this, other);
}
Tensor Tensor::outer(const Tensor& other) const {
  return leangrad::outer(*this, other);
}
Tensor Tensor::isnan() const {
  return leangrad::isnan(*this);
}
Tensor Tensor::isinf() const {
  return leangrad::isinf(*this);
}
Tensor Tensor::isfinite() const {
  return leangrad::isfinite(*this);
}
Tensor Tensor::logical_not() const {
  return leangrad::logical_not(*this);
}
Tensor Tensor::logical_and(const Tensor& other) const {
  return leangrad::logical_and(*this, other);
}
Tensor Tensor::logical_or(const Tensor& other) const {
  return leangrad::logical_or(*this, other);
}
Tensor Tensor::logical_xor(const Tensor& other) const {
  return leangrad::logical_xor(*this, other);
}
Tensor Tensor::hardshrink(double lambd) const {
  return leangrad::hardshrink(*this, lambd);
}
Tensor Tensor::prelu(const Tensor& weight) const {
  return leangrad::prelu(*this, weight);
}
std::tuple<Tensor, Tensor> Tensor::histogram(std::int64_t bins,
                                             const std::optional<std::vector<double>>& range,
                                             const std::optional<Tensor>& weight,
                                             bool density) const {
  return leangrad::histogram(*this, bins, range, weight, density);
}
std::tuple<Tensor, Tensor> Tensor::histogram(const Tensor& bin_edges,
                                             const std::optional<Tensor>& weight,
                                             bool density) const {
  return leangrad::histogram(*this, bin_edges, weight, density);
}
Tensor Tensor::angle() const {
  return leangrad::angle(*this);
}
Tensor Tensor::nan_to_num(double nan, std::optional<double> posinf,
                          std::optional<double> neginf) const {
  return leangrad::nan_to_num(*this, nan, posinf, neginf);
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
namespace {
bool holds_tensor(const std::vector<indexing::TensorIndex>& indices) {
  return std::any_of(indices.begin(), indices.end(), [](const indexing::TensorIndex& i) {
    return i.kind() == indexing::TensorIndex::Kind::Tensor;
  });
}
}  // namespace
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
  if (holds_tensor(indices)) return autograd::advanced_index(*this, indices);
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
      case TensorIndex::Kind::Tensor:
        LG_INTERNAL_ASSERT(false, "(tensor indices take advanced_index)");
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
//   (PyTorch's rule). Refused, naming the op: a leaf that requires grad (PyTorch refuses it too:
//   run it under NoGradGuard, as optimizers and initialisers do), a self that is not floating,
//   and the views autograd cannot follow (check_write_through_view in graph.h). A write through a
//   view becomes the history of the view's base, and the base's other views follow it (Note
//   [In-place writes through views] in graph.cpp).
// - Recorded truly in place, as PyTorch's: the kernel writes self's memory (self's version goes
//   up), and a node becomes self's history (record_in_place in graph.h, PyTorch's
//   rebase_history), its edges to self's previous history and to the other operand. Its backward
//   needs at most self's new value and the other operand, so the graph keeps self's memory once:
//   where the out-of-place op leaves an input and an output alive, the in-place one leaves one
//   tensor. The node saves
//     - self after the write (its saved version is the new one): relu_, sigmoid_, tanh_, exp_,
//       sqrt_, expm1_, rsqrt_, reciprocal_, tan_, exp2_ and the activations of activations.h whose
//       gradient PyTorch writes from the output (leaky_relu_ with negative_slope >= 0, elu_ and
//       selu_ with alpha >= 0, hardtanh_, relu6_);
//     - nothing: add_ and sub_ (a tensor or a number), mul_ and div_ by a number, copy_ (its
//       source gets self's gradient, summed to its shape), fill_, zero_ (no gradient for what
//       self held), neg_, and sign_, floor_, ceil_, round_ (with decimals too), trunc_
//       (gradient 0);
//     - the other operand, saved before the write (so a write through an alias of it, as
//       x.mul_(x.detach()), is caught): mul_ and div_ by a tensor that needs no gradient; the
//       mask of masked_fill_ (bool, so never self's memory), whose value gets a gradient too;
//     - a copy of self before the write, for the unary ops whose gradient needs the input and
//       cannot be written from the output (abs_, log_, erf_, log1p_, log2_, log10_, sin_, cos_,
//       asin_, acos_, atan_, sinh_, cosh_, asinh_, acosh_, atanh_, and clamp_, whose mask at a
//       bound the output cannot tell): PyTorch's original_self. atan2_ saves that copy and the
//       other operand (before the write). The copy is a recorded clone (so the gradient
//       differentiates again), and what the graph holds is then the out-of-place op's: self and one
//       copy.
//   ResNet's ReLU(inplace) and `out += identity` train this way.
// - The kernel writes self directly, with no temporary: ops::unary_ (unary's own launcher with
//   self as output and input) for the unary methods (three such passes for round_(decimals)),
//   ops::binary_ for atan2_, ops::activation_ (one fused pass, bitwise the out-of-place
//   composition) for the activations and clamp_, and where's launcher for masked_fill_
//   (ops::masked_fill_). So the op's own peak is self's: it allocates nothing, recorded or not,
//   save the copy above.
// - Out of place and copied in: mul_ and div_ by a tensor that requires grad. Its gradient
//   needs self's value before the write, so the twin computes on a copy of self, which its graph
//   keeps (PyTorch saves a clone of self too; x *= x multiplies the copy by itself); the twin is
//   recorded like any op, its result copied into self, and its node becomes self's history.
// - Otherwise (grad mode off, or nothing requires grad) the kernel writes in place and nothing is
//   recorded. Either way, a tensor saved for backward and written in place afterwards is caught
//   at backward time by the version counter (SavedTensor::unpack names the node that saved it).
namespace autograd {

bool records_inplace(const char* op, const Tensor& self, const Tensor& other) {
  if (!grad_mode_enabled()) return false;
  const bool other_requires_grad = other.defined() && other.requires_grad();
  if (!self.requires_grad() && !other_requires_grad) {
    check_unrecorded_write_through_view(op, self);
    return false;
  }
  LG_CHECK(!(self.requires_grad() && self.is_leaf()), op,
           ": in-place operation on a leaf tensor that requires grad (shape ", self.shape(),
           "); run it under NoGradGuard (initialisation, optimizer steps), or use the "
           "out-of-place op");
  check_write_through_view(op, self);
  LG_CHECK_DTYPE(is_floating(self.dtype()), op, ": writing a tensor that requires grad into a ",
                 self.dtype(), " tensor, which cannot carry a gradient");
  return true;
}

Tensor& unary_in_place(const char* op, Tensor& self,
                       const std::function<void(const Tensor&)>& write,
                       FunctionNode::Backward backward, InPlaceSaves saves) {
  if (!records_inplace(op, self)) {
    write(self);
    return self;
  }
  std::vector<SavedTensor> saved;
  // The copy is recorded (a clone of self's history), so the gradient's own graph reaches x.
  if (saves == InPlaceSaves::Input) saved.emplace_back(leangrad::clone(self));
  write(self);
  if (saves == InPlaceSaves::Output) saved.emplace_back(self, 0);
  record_in_place(op, self, {self}, std::move(saved), std::move(backward));
  return self;
}

}  // namespace autograd

namespace {

using autograd::BackwardContext;
using autograd::records_inplace;
using autograd::SavedTensor;

// Writes the twin's `result` into self and makes its node self's history (Note [In-place ops
// in the graph]): mul_ and div_ by a tensor that requires grad, the ops not done truly in place.
// An in-place op's result must have self's shape: operands broadcast to self, never the other way.
// Its dtype must cast to self's as PyTorch's can_cast allows: not floating into integral, not a
// number into bool.
void check_fits_self(const char* op, const Tensor& self, const Tensor& result) {
  check_writable(op, self);  // not an expanded tensor: named by op, not by the copy_ that writes
  LG_CHECK_SHAPE(result.shape() == self.shape(), op, ": the result of shape ", result.shape(),
                 " does not fit in self of shape ", self.shape(),
                 " (in-place ops do not grow self)");
  LG_CHECK_DTYPE(can_cast(result.dtype(), self.dtype()), op, ": result type ", result.dtype(),
                 " can't be cast to the desired output type ", self.dtype(), " (self of shape ",
                 self.shape(), ")");
}

void write_recorded(const char* op, Tensor& self, Tensor result) {
  LG_INTERNAL_ASSERT(result.requires_grad(), op, ": the twin's result must carry a gradient");
  check_fits_self(op, self, result);
  if (result.dtype() != self.dtype()) result = result.to(self.dtype());
  {
    NoGradGuard no_grad;
    ops::copy_(self, result);
  }
  if (self.impl().view.active()) {
    // Through a view, the base takes the write (Note [In-place writes through views] in
    // graph.cpp): a node that gives result the gradient of self's new value, and self's old
    // value none (the twin's copy of self carries what it contributes).
    autograd::record_in_place(op, self, {self, result}, {},
                              [](const BackwardContext& c) -> std::vector<Tensor> {
                                return {Tensor(), c.grad};
                              });
    return;
  }
  const autograd::Edge edge = autograd::gradient_edge(result);
  autograd::set_history(self, edge.function, edge.input_nr);
}

// Writes that autograd records through copy_ (index_put_, fill_diagonal_): a non-leaf takes the
// write into its history, also through a view (Note [In-place writes through views] in
// graph.cpp); a leaf that requires grad cannot, as PyTorch's.
void check_leaf_write(const char* op, const Tensor& self) {
  LG_CHECK(!(self.requires_grad() && self.is_leaf() && autograd::grad_mode_enabled()), op,
           ": in-place write into a leaf tensor that requires grad (shape ", self.shape(),
           "); run it under NoGradGuard");
}

// An op done truly in place (Note [In-place ops in the graph]): `kernel` writes self, then, when
// autograd records the op, a node with edges to self's previous history and to `other` (if
// defined) becomes self's history. `save_other` saves `other` before the write (mul_ and div_ by
// a tensor); the gradient formulas here need nothing else. `backward` gets the gradient of
// self's new value and returns self's, then other's.
template <typename Kernel>
Tensor& in_place(const char* op, Tensor& self, const Tensor& other, const Kernel& kernel,
                 autograd::FunctionNode::Backward backward, bool save_other = false) {
  if (!records_inplace(op, self, other)) {
    kernel();
    return self;
  }
  std::vector<SavedTensor> saved;
  if (save_other) saved.emplace_back(other);
  kernel();
  std::vector<Tensor> inputs{self};
  if (other.defined()) inputs.push_back(other);
  autograd::record_in_place(op, self, inputs, std::move(saved), std::move(backward));
  return self;
}

// The twin of an op that saves self: computed on a copy of self, so what it saved is the value
// before the write (x *= x multiplies the copy by itself).
template <typename F>
Tensor on_copy_of_self(const Tensor& self, const Tensor& other, const F& f) {
  const Tensor before = leangrad::clone(self);
  return f(before, other.is_same(self) ? before : other);
}

// mul_ and div_ by a tensor. When `other` requires grad, its gradient needs self's value before
// the write: the out-of-place twin on a copy of self. Otherwise truly in place, saving other.
Tensor& mul_or_div_(const char* op, BinaryOp binary_op, Tensor& self, const Tensor& other) {
  const bool other_requires_grad =
      other.defined() && other.requires_grad() && autograd::grad_mode_enabled();
  if (other_requires_grad && records_inplace(op, self, other)) {
    write_recorded(op, self, on_copy_of_self(self, other, [&](const Tensor& a, const Tensor& b) {
                     return binary_op == BinaryOp::Mul ? leangrad::mul(a, b) : leangrad::div(a, b);
                   }));
    return self;
  }
  return in_place(
      op, self, other, [&] { ops::binary_(binary_op, self, other); },
      [binary_op](const BackwardContext& c) -> std::vector<Tensor> {
        // d(self * y)/dself = y, d(self / y)/dself = 1 / y, as the out-of-place formulas.
        const Tensor& y = c.saved[0];
        return {binary_op == BinaryOp::Mul ? c.grad * y : c.grad / y, Tensor()};
      },
      /*save_other=*/true);
}

// The gradient of an operand of add_ / sub_: summed over the dims it was broadcast along.
Tensor operand_grad(const BackwardContext& c, const Tensor& g) {
  return c.needs(1) ? autograd::sum_to(g, c.shape(1)) : Tensor();
}

}  // namespace

Tensor& Tensor::add_(const Tensor& other, double alpha) {
  const Tensor scaled = alpha == 1.0 ? other : leangrad::mul(other, alpha);
  return in_place(
      "add_", *this, scaled, [&] { ops::binary_(BinaryOp::Add, *this, scaled); },
      [](const BackwardContext& c) -> std::vector<Tensor> {
        return {c.grad, operand_grad(c, c.grad)};
      });
}
Tensor& Tensor::add_(double other) {
  return in_place(
      "add_", *this, Tensor(), [&] { ops::binary_(BinaryOp::Add, *this, other); },
      [](const BackwardContext& c) -> std::vector<Tensor> { return {c.grad}; });
}
Tensor& Tensor::mul_(const Tensor& other) {
  return mul_or_div_("mul_", BinaryOp::Mul, *this, other);
}
Tensor& Tensor::mul_(double other) {
  return in_place(
      "mul_", *this, Tensor(), [&] { ops::binary_(BinaryOp::Mul, *this, other); },
      [other](const BackwardContext& c) -> std::vector<Tensor> { return {c.grad * other}; });
}
Tensor& Tensor::sub_(const Tensor& other, double alpha) {
  const Tensor scaled = alpha == 1.0 ? other : leangrad::mul(other, alpha);
  return in_place(
      "sub_", *this, scaled, [&] { ops::binary_(BinaryOp::Sub, *this, scaled); },
      [](const BackwardContext& c) -> std::vector<Tensor> {
        return {c.grad, c.needs(1) ? operand_grad(c, leangrad::neg(c.grad)) : Tensor()};
      });
}
Tensor& Tensor::sub_(double other) {
  return in_place(
      "sub_", *this, Tensor(), [&] { ops::binary_(BinaryOp::Sub, *this, other); },
      [](const BackwardContext& c) -> std::vector<Tensor> { return {c.grad}; });
}
Tensor& Tensor::div_(const Tensor& other) {
  return mul_or_div_("div_", BinaryOp::Div, *this, other);
}
Tensor& Tensor::div_(double other) {
  return in_place(
      "div_", *this, Tensor(), [&] { ops::binary_(BinaryOp::Div, *this, other); },
      [other](const BackwardContext& c) -> std::vector<Tensor> { return {c.grad / other}; });
}
namespace {

using autograd::InPlaceSaves;

// x.op_() for a UnaryOp: ops::unary_ writes self (Note [In-place ops in the graph]); the
// backward formulas are those of the out-of-place functions (autograd/functions.cpp), from the
// saved output or the saved copy of the input as `saves` says.
Tensor& unary_method(const char* op, UnaryOp unary_op, Tensor& self, InPlaceSaves saves,
                     autograd::FunctionNode::Backward backward) {
  return autograd::unary_in_place(
      op, self, [unary_op](const Tensor& t) { ops::unary_(unary_op, t); }, std::move(backward),
      saves);
}

// sign_ and the roundings: the gradient is 0 everywhere, as their out-of-place forms'.
Tensor& piecewise_constant_(const char* op, UnaryOp unary_op, Tensor& self) {
  return unary_method(
      op, unary_op, self, InPlaceSaves::Nothing,
      [](const BackwardContext& c) -> std::vector<Tensor> { return {zeros_like(c.grad)}; });
}

}  // namespace

Tensor& Tensor::relu_() {
  return unary_method("relu_", UnaryOp::Relu, *this, InPlaceSaves::Output,
                      [](const BackwardContext& c) -> std::vector<Tensor> {
                        return {autograd::relu_backward(c.grad, c.saved[0])};
                      });
}
Tensor& Tensor::sigmoid_() {
  autograd::check_floating_input("sigmoid_", *this);
  return unary_method("sigmoid_", UnaryOp::Sigmoid, *this, InPlaceSaves::Output,
                      [](const BackwardContext& c) -> std::vector<Tensor> {
                        const Tensor& y = c.saved[0];
                        return {c.grad * y * rsub(y, 1.0)};
                      });
}
Tensor& Tensor::tanh_() {
  autograd::check_floating_input("tanh_", *this);
  return unary_method("tanh_", UnaryOp::Tanh, *this, InPlaceSaves::Output,
                      [](const BackwardContext& c) -> std::vector<Tensor> {
                        const Tensor& y = c.saved[0];
                        return {c.grad * rsub(y * y, 1.0)};
                      });
}
Tensor& Tensor::neg_() {
  return unary_method(
      "neg_", UnaryOp::Neg, *this, InPlaceSaves::Nothing,
      [](const BackwardContext& c) -> std::vector<Tensor> { return {leangrad::neg(c.grad)}; });
}
Tensor& Tensor::abs_() {
  return unary_method("abs_", UnaryOp::Abs, *this, InPlaceSaves::Input,
                      [](const BackwardContext& c) -> std::vector<Tensor> {
                        return {c.grad * leangrad::sign(c.saved[0])};
                      });
}
Tensor& Tensor::exp_() {
  return unary_method(
      "exp_", UnaryOp::Exp, *this, InPlaceSaves::Output,
      [](const BackwardContext& c) -> std::vector<Tensor> { return {c.grad * c.saved[0]}; });
}
Tensor& Tensor::log_() {
  return unary_method(
      "log_", UnaryOp::Log, *this, InPlaceSaves::Input,
      [](const BackwardContext& c) -> std::vector<Tensor> { return {c.grad / c.saved[0]}; });
}
Tensor& Tensor::sqrt_() {
  return unary_method("sqrt_", UnaryOp::Sqrt, *this, InPlaceSaves::Output,
                      [](const BackwardContext& c) -> std::vector<Tensor> {
                        return {c.grad / (c.saved[0] * 2.0)};
                      });
}
Tensor& Tensor::erf_() {
  return unary_method("erf_", UnaryOp::Erf, *this, InPlaceSaves::Input,
                      [](const BackwardContext& c) -> std::vector<Tensor> {
                        const Tensor& x = c.saved[0];
                        return {c.grad * (leangrad::exp(-(x * x)) * 1.1283791670955126)};
                      });
}
Tensor& Tensor::expm1_() {
  return unary_method("expm1_", UnaryOp::Expm1, *this, InPlaceSaves::Output,
                      [](const BackwardContext& c) -> std::vector<Tensor> {
                        return {c.grad * (c.saved[0] + 1.0)};
                      });
}
Tensor& Tensor::log1p_() {
  return unary_method("log1p_", UnaryOp::Log1p, *this, InPlaceSaves::Input,
                      [](const BackwardContext& c) -> std::vector<Tensor> {
                        return {c.grad / (c.saved[0] + 1.0)};
                      });
}
Tensor& Tensor::log2_() {
  return unary_method("log2_", UnaryOp::Log2, *this, InPlaceSaves::Input,
                      [](const BackwardContext& c) -> std::vector<Tensor> {
                        return {c.grad / (c.saved[0] * 0.6931471805599453)};  // x ln 2
                      });
}
Tensor& Tensor::log10_() {
  return unary_method("log10_", UnaryOp::Log10, *this, InPlaceSaves::Input,
                      [](const BackwardContext& c) -> std::vector<Tensor> {
                        return {c.grad / (c.saved[0] * 2.302585092994046)};  // x ln 10
                      });
}
Tensor& Tensor::sin_() {
  return unary_method("sin_", UnaryOp::Sin, *this, InPlaceSaves::Input,
                      [](const BackwardContext& c) -> std::vector<Tensor> {
                        return {c.grad * leangrad::cos(c.saved[0])};
                      });
}
Tensor& Tensor::cos_() {
  return unary_method("cos_", UnaryOp::Cos, *this, InPlaceSaves::Input,
                      [](const BackwardContext& c) -> std::vector<Tensor> {
                        return {-(c.grad * leangrad::sin(c.saved[0]))};
                      });
}
Tensor& Tensor::rsqrt_() {
  return unary_method("rsqrt_", UnaryOp::Rsqrt, *this, InPlaceSaves::Output,
                      [](const BackwardContext& c) -> std::vector<Tensor> {
                        const Tensor& y = c.saved[0];
                        return {c.grad * (y * y * y) * -0.5};
                      });
}
Tensor& Tensor::reciprocal_() {
  return unary_method("reciprocal_", UnaryOp::Reciprocal, *this, InPlaceSaves::Output,
                      [](const BackwardContext& c) -> std::vector<Tensor> {
                        const Tensor& y = c.saved[0];
                        return {-(c.grad * (y * y))};
                      });
}
Tensor& Tensor::sign_() {
  return piecewise_constant_("sign_", UnaryOp::Sign, *this);
}
Tensor& Tensor::floor_() {
  return piecewise_constant_("floor_", UnaryOp::Floor, *this);
}
Tensor& Tensor::ceil_() {
  return piecewise_constant_("ceil_", UnaryOp::Ceil, *this);
}
Tensor& Tensor::round_() {
  return piecewise_constant_("round_", UnaryOp::Round, *this);
}
Tensor& Tensor::trunc_() {
  return piecewise_constant_("trunc_", UnaryOp::Trunc, *this);
}
// The trigonometric and hyperbolic methods and exp2_: the out-of-place functions' formulas
// (autograd/functions.cpp), tan_ and exp2_ from the output as there, the others from a copy of
// the input.
Tensor& Tensor::tan_() {
  return unary_method("tan_", UnaryOp::Tan, *this, InPlaceSaves::Output,
                      [](const BackwardContext& c) -> std::vector<Tensor> {
                        const Tensor& y = c.saved[0];
                        return {c.grad * (y * y + 1.0)};
                      });
}
Tensor& Tensor::asin_() {
  return unary_method("asin_", UnaryOp::Asin, *this, InPlaceSaves::Input,
                      [](const BackwardContext& c) -> std::vector<Tensor> {
                        const Tensor& x = c.saved[0];
                        return {c.grad * leangrad::rsqrt(1.0 - x * x)};
                      });
}
Tensor& Tensor::acos_() {
  return unary_method("acos_", UnaryOp::Acos, *this, InPlaceSaves::Input,
                      [](const BackwardContext& c) -> std::vector<Tensor> {
                        const Tensor& x = c.saved[0];
                        return {c.grad * -leangrad::rsqrt(1.0 - x * x)};
                      });
}
Tensor& Tensor::atan_() {
  return unary_method("atan_", UnaryOp::Atan, *this, InPlaceSaves::Input,
                      [](const BackwardContext& c) -> std::vector<Tensor> {
                        const Tensor& x = c.saved[0];
                        return {c.grad / (x * x + 1.0)};
                      });
}
Tensor& Tensor::sinh_() {
  return unary_method("sinh_", UnaryOp::Sinh, *this, InPlaceSaves::Input,
                      [](const BackwardContext& c) -> std::vector<Tensor> {
                        return {c.grad * leangrad::cosh(c.saved[0])};
                      });
}
Tensor& Tensor::cosh_() {
  return unary_method("cosh_", UnaryOp::Cosh, *this, InPlaceSaves::Input,
                      [](const BackwardContext& c) -> std::vector<Tensor> {
                        return {c.grad * leangrad::sinh(c.saved[0])};
                      });
}
Tensor& Tensor::asinh_() {
  return unary_method("asinh_", UnaryOp::Asinh, *this, InPlaceSaves::Input,
                      [](const BackwardContext& c) -> std::vector<Tensor> {
                        const Tensor& x = c.saved[0];
                        return {c.grad * leangrad::rsqrt(x * x + 1.0)};
                      });
}
Tensor& Tensor::acosh_() {
  return unary_method("acosh_", UnaryOp::Acosh, *this, InPlaceSaves::Input,
                      [](const BackwardContext& c) -> std::vector<Tensor> {
                        const Tensor& x = c.saved[0];
                        return {c.grad * leangrad::rsqrt(x * x - 1.0)};
                      });
}
Tensor& Tensor::atanh_() {
  return unary_method("atanh_", UnaryOp::Atanh, *this, InPlaceSaves::Input,
                      [](const BackwardContext& c) -> std::vector<Tensor> {
                        const Tensor& x = c.saved[0];
                        return {c.grad / (1.0 - x * x)};
                      });
}
Tensor& Tensor::exp2_() {
  return unary_method("exp2_", UnaryOp::Exp2, *this, InPlaceSaves::Output,
                      [](const BackwardContext& c) -> std::vector<Tensor> {
                        return {c.grad * c.saved[0] * 0.6931471805599453};  // 2^x ln 2
                      });
}
Tensor& Tensor::lgamma_() {
  return unary_method("lgamma_", UnaryOp::Lgamma, *this, InPlaceSaves::Input,
                      [](const BackwardContext& c) -> std::vector<Tensor> {
                        return {c.grad * leangrad::digamma(c.saved[0])};
                      });
}
Tensor& Tensor::digamma_() {
  return unary_method("digamma_", UnaryOp::Digamma, *this, InPlaceSaves::Input,
                      [](const BackwardContext& c) -> std::vector<Tensor> {
                        return {c.grad * leangrad::polygamma(1, c.saved[0])};
                      });
}
Tensor& Tensor::erfinv_() {
  return unary_method("erfinv_", UnaryOp::Erfinv, *this, InPlaceSaves::Output,
                      [](const BackwardContext& c) -> std::vector<Tensor> {
                        const Tensor& y = c.saved[0];  // sqrt(pi) / 2 exp(y^2)
                        return {c.grad * leangrad::exp(y * y) * 0.88622692545275801};
                      });
}

Tensor& Tensor::atan2_(const Tensor& other) {
  const char* op = "atan2_";
  if (!records_inplace(op, *this, other)) {
    ops::binary_(BinaryOp::Atan2, *this, other);
    return *this;
  }
  // Both gradients need self's value before the write: a recorded copy of it (PyTorch's
  // original_self), which also stands for other in x.atan2_(x); other is saved before the write,
  // so a write through an alias of it is caught, as mul_'s.
  const Tensor before = leangrad::clone(*this);
  std::vector<SavedTensor> saved;
  saved.emplace_back(before);
  saved.emplace_back(other.is_same(*this) ? before : other);
  ops::binary_(BinaryOp::Atan2, *this, other);
  // atan2's formula: d/dself = other / (self^2 + other^2), d/dother = -self / (self^2 + other^2).
  autograd::record_in_place(
      op, *this, {*this, other}, std::move(saved),
      [](const BackwardContext& c) -> std::vector<Tensor> {
        const Tensor& x = c.saved[0];
        const Tensor& y = c.saved[1];
        const Tensor r = leangrad::reciprocal(x * x + y * y);
        return {c.needs(0) ? autograd::sum_to(c.grad * y * r, c.shape(0)) : Tensor(),
                c.needs(1) ? autograd::sum_to(c.grad * -x * r, c.shape(1)) : Tensor()};
      });
  return *this;
}

// round(self, decimals) as Note [Rounding to decimals] composes it, each of the three steps
// written into self: the same kernels, so the same bits. Gradient 0, as round_()'s.
Tensor& Tensor::round_(std::int64_t decimals) {
  if (decimals == 0) return round_();
  LG_CHECK_DTYPE(defined() && is_floating(dtype()), "round_: decimals = ", decimals,
                 " expects a floating tensor (float32, float64, float16, bfloat16), got ",
                 defined() ? dtype_name(dtype()) : "an undefined tensor");
  const double t = autograd::power_of_ten_in(dtype(), decimals);
  const BinaryOp first = decimals > 0 ? BinaryOp::Mul : BinaryOp::Div;
  const BinaryOp last = decimals > 0 ? BinaryOp::Div : BinaryOp::Mul;
  return autograd::unary_in_place(
      "round_", *this,
      [t, first, last](const Tensor& v) {
        ops::binary_(first, v, t);
        ops::unary_(UnaryOp::Round, v);
        ops::binary_(last, v, t);
      },
      [](const BackwardContext& c) -> std::vector<Tensor> { return {zeros_like(c.grad)}; },
      InPlaceSaves::Nothing);
}

// clamp() in one pass (ops::activation_), its absent bounds NaN there. The gradient is clamp()'s
// (autograd::clamp_backward): it passes where min <= x <= max and x is not NaN, a mask of the
// input, so the node saves a copy of self before the write (PyTorch's original_self): the output
// cannot tell x = min from x < min.
Tensor& Tensor::clamp_(std::optional<double> min, std::optional<double> max) {
  const char* op = "clamp_";
  LG_CHECK(min.has_value() || max.has_value(), op,
           ": at least one of min and max must be given (shape ", shape(), ")");
  // A NaN bound is not integral: clamp() would give float32, which an integral self cannot hold.
  for (const std::optional<double>& bound : {min, max}) {
    LG_CHECK_DTYPE(!bound.has_value() || !std::isnan(*bound) || is_floating(dtype()), op,
                   ": result type ", DType::Float32, " can't be cast to the desired output type ",
                   dtype(), " (bound nan, shape ", shape(), ")");
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double lo = min.value_or(nan);
  const double hi = max.value_or(nan);
  return autograd::unary_in_place(
      op, *this, [lo, hi](const Tensor& v) { ops::activation_(ActivationOp::Clamp, v, lo, hi); },
      [lo, hi](const BackwardContext& c) -> std::vector<Tensor> {
        return {autograd::clamp_backward(c.grad, c.saved[0], lo, hi)};
      },
      InPlaceSaves::Input);
}
Tensor& Tensor::clamp_min_(double min) {
  return clamp_(min, std::nullopt);
}
Tensor& Tensor::clamp_max_(double max) {
  return clamp_(std::nullopt, max);
}

Tensor& Tensor::masked_fill_(const Tensor& mask, double value) {
  LG_CHECK(!defined() || scalar_fits(value, dtype()), "masked_fill_: value ", value,
           " cannot be converted to dtype ", dtype(), " without overflow");
  return masked_fill_(mask, full({}, value, TensorOptions(dtype()).device(device())));
}
Tensor& Tensor::masked_fill_(const Tensor& mask, const Tensor& value) {
  const char* op = "masked_fill_";
  if (!records_inplace(op, *this, value)) {
    ops::masked_fill_(*this, mask, value);
    return *this;
  }
  ops::masked_fill_(*this, mask, value);
  std::vector<SavedTensor> saved;
  saved.emplace_back(mask);  // bool, so never self's memory: the write left its version alone
  // Self's gradient where the mask is false; the value's, summed where it is true (0-d).
  autograd::record_in_place(op, *this, {*this, value}, std::move(saved),
                            [](const BackwardContext& c) -> std::vector<Tensor> {
                              const Tensor& m = c.saved[0];
                              const Tensor zero = zeros({}, c.grad.options());
                              return {
                                  c.needs(0) ? leangrad::where(m, zero, c.grad) : Tensor(),
                                  c.needs(1) ? leangrad::where(m, c.grad, zero).sum() : Tensor()};
                            });
  return *this;
}

namespace {

// `value` without its leading size-1 dims, as PyTorch's setitem drops them (slicePrefix1sSize):
// a value of shape [1, 3, 4] fits a [3, 4] place.
Tensor without_leading_ones(const Tensor& value) {
  if (!value.defined()) return value;
  const Shape& shape = value.shape();
  const auto lead = std::find_if(shape.begin(), shape.end(), [](std::int64_t s) { return s != 1; });
  if (lead == shape.begin()) return value;
  return value.reshape(Shape(lead, shape.end()));
}

}  // namespace

Tensor& Tensor::index_put_(std::initializer_list<indexing::TensorIndex> indices,
                           const Tensor& value_in, bool accumulate) {
  const char* op = "index_put_";
  check_leaf_write(op, *this);
  check_writable(op, *this);
  const Tensor value = without_leading_ones(value_in);
  const std::vector<indexing::TensorIndex> list(indices);
  if (holds_tensor(list)) return autograd::advanced_index_put_(*this, list, value, accumulate);
  Tensor place = index(list);
  LG_CHECK(value.defined(), op, ": expected a defined value, got an undefined Tensor()");
  LG_CHECK_SHAPE(broadcasts_to(value.shape(), place.shape()), op, ": a value of shape ",
                 value_in.shape(), " cannot be broadcast to the indexed shape ", place.shape());
  if (accumulate) {
    place.add_(value);
  } else {
    place.copy_(value);
  }
  return *this;
}
Tensor& Tensor::fill_diagonal_(double fill_value, bool wrap) {
  const char* op = "fill_diagonal_";
  LG_CHECK(defined(), op, ": expected a defined tensor, got an undefined Tensor()");
  check_leaf_write(op, *this);
  LG_CHECK_SHAPE(dim() >= 2, op, ": expected at least 2 dims, got shape ", shape());
  for (std::int64_t d = 1; d < dim() && dim() > 2; ++d) {
    LG_CHECK_SHAPE(size(d) == size(0), op,
                   ": expected every dim of one size for more than 2 dims, got shape ", shape());
  }
  LG_CHECK(scalar_fits(fill_value, dtype()), op, ": value ", fill_value,
           " cannot be converted to dtype ", dtype(), " without overflow");
  // The diagonal's coordinates, built on the host: (i, i, ...), or for a wrapped 2-d matrix of
  // c columns the places i (c + 1) of its row-major order (row i (c + 1) / c).
  const std::int64_t rows = size(0);
  const std::int64_t cols = size(1);
  const std::int64_t count =
      dim() == 2 && wrap && rows > cols ? (rows * cols + cols) / (cols + 1) : std::min(rows, cols);
  Tensor row_index = empty({count}, TensorOptions(kInt64));
  Tensor col_index = empty({count}, TensorOptions(kInt64));
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t place = i * (cols + 1);
    row_index.data_ptr<std::int64_t>()[i] = dim() == 2 ? place / cols : i;
    col_index.data_ptr<std::int64_t>()[i] = dim() == 2 ? place % cols : i;
  }
  const Tensor diagonal_cols = col_index.to(device());
  std::vector<indexing::TensorIndex> list{row_index.to(device()), diagonal_cols};
  for (std::int64_t d = 2; d < dim(); ++d)
    list.emplace_back(diagonal_cols);
  return autograd::advanced_index_put_(*this, list, full({}, fill_value, options()), false);
}
Tensor& Tensor::index_put_(std::initializer_list<indexing::TensorIndex> indices, double value,
                           bool accumulate) {
  check_leaf_write("index_put_", *this);
  const std::vector<indexing::TensorIndex> list(indices);
  LG_CHECK(scalar_fits(value, dtype()), "index_put_: value ", value,
           " cannot be converted to dtype ", dtype(), " without overflow");
  if (holds_tensor(list)) {
    return autograd::advanced_index_put_(*this, list, full({}, value, options()), accumulate);
  }
  if (accumulate) {
    index(list).add_(value);
  } else {
    index(list).fill_(value);
  }
  return *this;
}

Tensor Tensor::index_put(const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                         bool accumulate) const {
  return leangrad::index_put(*this, indices, values, accumulate);
}
namespace {
// fill_ and zero_: what self held gets no gradient (PyTorch's FillBackward gives zeros), but
// self keeps requiring grad, through a node of its own.
Tensor& fill_named(const char* op, Tensor& self, double value) {
  return in_place(
      op, self, Tensor(), [&] { ops::fill_(self, value); },
      [](const BackwardContext&) -> std::vector<Tensor> { return {Tensor()}; });
}
}  // namespace

Tensor& Tensor::zero_() {
  return fill_named("zero_", *this, 0.0);
}
Tensor& Tensor::fill_(double value) {
  return fill_named("fill_", *this, value);
}
Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) {
  // src's gradient is self's, summed over the dims src was broadcast along; the node casts it to
  // src's dtype and device. What self held gets none.
  return in_place(
      "copy_", *this, src, [&] { ops::copy_(*this, src, non_blocking); },
      [](const BackwardContext& c) -> std::vector<Tensor> {
        return {Tensor(), operand_grad(c, c.grad)};
      });
}

// ---- In-place random fills (Note [In-place samplers] in sampling_functions.cpp) ----------------
namespace {

// `write` fills self; when autograd records it, self keeps requiring grad through a node whose
// gradient is zero (nothing of the old value survives), as fill_'s and PyTorch's.
template <typename Write>
Tensor& sampled_in_place(const char* op, Tensor& self, const Write& write) {
  check_writable(op, self);
  return in_place(op, self, Tensor(), write,
                  [](const BackwardContext&) -> std::vector<Tensor> { return {Tensor()}; });
}

// The same for draws made apart from self and copied in (cast to self's dtype).
template <typename Draw>
Tensor& drawn_in_place(const char* op, Tensor& self, const Draw& draw) {
  return sampled_in_place(op, self, [&] {
    NoGradGuard no_grad;
    const Tensor values = draw();
    ops::copy_(self, values);
  });
}

}  // namespace

Tensor& Tensor::uniform_(double from, double to) {
  return sampled_in_place("uniform_", *this, [&] { detail::sample_uniform_(*this, from, to); });
}
Tensor& Tensor::normal_(double mean, double std) {
  return sampled_in_place("normal_", *this, [&] { detail::sample_normal_(*this, mean, std); });
}
Tensor& Tensor::exponential_(double lambd) {
  return drawn_in_place("exponential_", *this,
                        [&] { return detail::exponential_draws(*this, lambd); });
}
Tensor& Tensor::geometric_(double p) {
  return drawn_in_place("geometric_", *this, [&] { return detail::geometric_draws(*this, p); });
}
Tensor& Tensor::cauchy_(double median, double sigma) {
  return drawn_in_place("cauchy_", *this,
                        [&] { return detail::cauchy_draws(*this, median, sigma); });
}
Tensor& Tensor::log_normal_(double mean, double std) {
  return drawn_in_place("log_normal_", *this,
                        [&] { return detail::log_normal_draws(*this, mean, std); });
}
Tensor& Tensor::bernoulli_(double p) {
  return drawn_in_place("bernoulli_", *this, [&] { return detail::bernoulli_draws(*this, p); });
}
Tensor& Tensor::bernoulli_(const Tensor& p) {
  return drawn_in_place("bernoulli_", *this, [&] { return detail::bernoulli_draws(*this, p); });
}
Tensor& Tensor::random_(std::int64_t from, std::optional<std::int64_t> to) {
  return drawn_in_place("random_", *this, [&] { return detail::random_draws(*this, from, to); });
}
Tensor& Tensor::random_(std::int64_t to) {
  return random_(0, to);
}
Tensor& Tensor::random_() {
  return random_(0, std::nullopt);
}
Tensor Tensor::bernoulli() const {
  return leangrad::bernoulli(*this);
}
Tensor Tensor::bernoulli(double p) const {
  return leangrad::bernoulli(*this, p);
}

// ---- Composed ops as methods -----------------------------------------------------------------
namespace {

// The in-place form of a composed op: `twin` (the out-of-place op of self) written into self,
// bitwise. Recorded as mul_ by a tensor is (Note [In-place ops in the graph]): the twin runs on a
// copy of self, so whatever it saves is the value before the write, and self takes its history.
// Any operand that requires grad makes autograd record it.
template <typename F>
Tensor& composed_in_place(const char* op, Tensor& self, const std::vector<Tensor>& operands,
                          const F& twin) {
  Tensor carrier;  // an operand that requires grad, for records_inplace's checks
  for (const Tensor& operand : operands)
    if (operand.defined() && operand.requires_grad()) carrier = operand;
  if (records_inplace(op, self, carrier)) {
    write_recorded(op, self, twin(leangrad::clone(self)));
    return self;
  }
  Tensor result;
  {
    NoGradGuard no_grad;
    result = twin(self);
  }
  check_fits_self(op, self, result);
  return self.copy_(result);
}

}  // namespace

// ---- Pointwise math (autograd/pointwise_functions.h, special_functions.h) ----------------
Tensor Tensor::logaddexp2(const Tensor& other) const {
  return leangrad::logaddexp2(*this, other);
}
Tensor Tensor::fmax(const Tensor& other) const {
  return leangrad::fmax(*this, other);
}
Tensor Tensor::fmin(const Tensor& other) const {
  return leangrad::fmin(*this, other);
}
Tensor Tensor::positive() const {
  return leangrad::positive(*this);
}
Tensor Tensor::signbit() const {
  return leangrad::signbit(*this);
}
Tensor Tensor::isreal() const {
  return leangrad::isreal(*this);
}
Tensor Tensor::deg2rad() const {
  return leangrad::deg2rad(*this);
}
Tensor& Tensor::deg2rad_() {
  return composed_in_place("deg2rad_", *this, {},
                           [](const Tensor& self) { return leangrad::deg2rad(self); });
}
Tensor Tensor::rad2deg() const {
  return leangrad::rad2deg(*this);
}
Tensor& Tensor::rad2deg_() {
  return composed_in_place("rad2deg_", *this, {},
                           [](const Tensor& self) { return leangrad::rad2deg(self); });
}
Tensor Tensor::frac() const {
  return leangrad::frac(*this);
}
Tensor& Tensor::frac_() {
  return composed_in_place("frac_", *this, {},
                           [](const Tensor& self) { return leangrad::frac(self); });
}
Tensor Tensor::sgn() const {
  return leangrad::sgn(*this);
}
Tensor& Tensor::sgn_() {
  return composed_in_place("sgn_", *this, {},
                           [](const Tensor& self) { return leangrad::sgn(self); });
}
Tensor Tensor::fix() const {
  return leangrad::fix(*this);
}
Tensor& Tensor::fix_() {
  return composed_in_place("fix_", *this, {},
                           [](const Tensor& self) { return leangrad::fix(self); });
}
Tensor Tensor::erfc() const {
  return leangrad::erfc(*this);
}
Tensor& Tensor::erfc_() {
  return composed_in_place("erfc_", *this, {},
                           [](const Tensor& self) { return leangrad::erfc(self); });
}
Tensor Tensor::i0() const {
  return leangrad::i0(*this);
}
Tensor& Tensor::i0_() {
  return composed_in_place("i0_", *this, {}, [](const Tensor& self) { return leangrad::i0(self); });
}
Tensor Tensor::sinc() const {
  return leangrad::sinc(*this);
}
Tensor& Tensor::sinc_() {
  return composed_in_place("sinc_", *this, {},
                           [](const Tensor& self) { return leangrad::sinc(self); });
}
Tensor Tensor::hypot(const Tensor& other) const {
  return leangrad::hypot(*this, other);
}
Tensor& Tensor::hypot_(const Tensor& other) {
  return composed_in_place("hypot_", *this, {other},
                           [&](const Tensor& self) { return leangrad::hypot(self, other); });
}
Tensor Tensor::nextafter(const Tensor& other) const {
  return leangrad::nextafter(*this, other);
}
Tensor& Tensor::nextafter_(const Tensor& other) {
  return composed_in_place("nextafter_", *this, {other},
                           [&](const Tensor& self) { return leangrad::nextafter(self, other); });
}
Tensor Tensor::gcd(const Tensor& other) const {
  return leangrad::gcd(*this, other);
}
Tensor& Tensor::gcd_(const Tensor& other) {
  return composed_in_place("gcd_", *this, {other},
                           [&](const Tensor& self) { return leangrad::gcd(self, other); });
}
Tensor Tensor::lcm(const Tensor& other) const {
  return leangrad::lcm(*this, other);
}
Tensor& Tensor::lcm_(const Tensor& other) {
  return composed_in_place("lcm_", *this, {other},
                           [&](const Tensor& self) { return leangrad::lcm(self, other); });
}
Tensor Tensor::heaviside(const Tensor& other) const {
  return leangrad::heaviside(*this, other);
}
Tensor& Tensor::heaviside_(const Tensor& other) {
  return composed_in_place("heaviside_", *this, {other},
                           [&](const Tensor& self) { return leangrad::heaviside(self, other); });
}
Tensor Tensor::ldexp(const Tensor& other) const {
  return leangrad::ldexp(*this, other);
}
Tensor& Tensor::ldexp_(const Tensor& other) {
  return composed_in_place("ldexp_", *this, {other},
                           [&](const Tensor& self) { return leangrad::ldexp(self, other); });
}
std::tuple<Tensor, Tensor> Tensor::frexp() const {
  return leangrad::frexp(*this);
}
Tensor Tensor::igamma(const Tensor& other) const {
  return leangrad::igamma(*this, other);
}
Tensor& Tensor::igamma_(const Tensor& other) {
  return composed_in_place("igamma_", *this, {other},
                           [&](const Tensor& self) { return leangrad::igamma(self, other); });
}
Tensor Tensor::igammac(const Tensor& other) const {
  return leangrad::igammac(*this, other);
}
Tensor& Tensor::igammac_(const Tensor& other) {
  return composed_in_place("igammac_", *this, {other},
                           [&](const Tensor& self) { return leangrad::igammac(self, other); });
}
Tensor Tensor::copysign(const Tensor& other) const {
  return leangrad::copysign(*this, other);
}
Tensor& Tensor::copysign_(const Tensor& other) {
  return composed_in_place("copysign_", *this, {other},
                           [&](const Tensor& self) { return leangrad::copysign(self, other); });
}
Tensor Tensor::bitwise_left_shift(const Tensor& other) const {
  return leangrad::bitwise_left_shift(*this, other);
}
Tensor& Tensor::bitwise_left_shift_(const Tensor& other) {
  return composed_in_place("bitwise_left_shift_", *this, {other}, [&](const Tensor& self) {
    return leangrad::bitwise_left_shift(self, other);
  });
}
Tensor Tensor::bitwise_right_shift(const Tensor& other) const {
  return leangrad::bitwise_right_shift(*this, other);
}
Tensor& Tensor::bitwise_right_shift_(const Tensor& other) {
  return composed_in_place("bitwise_right_shift_", *this, {other}, [&](const Tensor& self) {
    return leangrad::bitwise_right_shift(self, other);
  });
}
Tensor Tensor::xlogy(const Tensor& other) const {
  return leangrad::xlogy(*this, other);
}
Tensor& Tensor::xlogy_(const Tensor& other) {
  return composed_in_place("xlogy_", *this, {other},
                           [&](const Tensor& self) { return leangrad::xlogy(self, other); });
}
Tensor Tensor::copysign(double other) const {
  return leangrad::copysign(*this, other);
}
Tensor& Tensor::copysign_(double other) {
  return composed_in_place("copysign_", *this, {},
                           [&](const Tensor& self) { return leangrad::copysign(self, other); });
}
Tensor Tensor::bitwise_left_shift(double other) const {
  return leangrad::bitwise_left_shift(*this, other);
}
Tensor& Tensor::bitwise_left_shift_(double other) {
  return composed_in_place("bitwise_left_shift_", *this, {}, [&](const Tensor& self) {
    return leangrad::bitwise_left_shift(self, other);
  });
}
Tensor Tensor::bitwise_right_shift(double other) const {
  return leangrad::bitwise_right_shift(*this, other);
}
Tensor& Tensor::bitwise_right_shift_(double other) {
  return composed_in_place("bitwise_right_shift_", *this, {}, [&](const Tensor& self) {
    return leangrad::bitwise_right_shift(self, other);
  });
}
Tensor Tensor::xlogy(double other) const {
  return leangrad::xlogy(*this, other);
}
Tensor& Tensor::xlogy_(double other) {
  return composed_in_place("xlogy_", *this, {},
                           [&](const Tensor& self) { return leangrad::xlogy(self, other); });
}
Tensor Tensor::float_power(const Tensor& exponent) const {
  return leangrad::float_power(*this, exponent);
}
Tensor Tensor::float_power(double exponent) const {
  return leangrad::float_power(*this, exponent);
}
// PyTorch's float_power_ writes only into a float64 self (the result's dtype).
Tensor& Tensor::float_power_(const Tensor& exponent) {
  LG_CHECK_DTYPE(defined() && dtype() == kFloat64, "float_power_: the base has dtype ",
                 defined() ? dtype_name(dtype()) : "undefined",
                 " but the result is float64; convert self with .to(kFloat64) first");
  return composed_in_place("float_power_", *this, {exponent}, [&](const Tensor& self) {
    return leangrad::float_power(self, exponent);
  });
}
Tensor& Tensor::float_power_(double exponent) {
  LG_CHECK_DTYPE(defined() && dtype() == kFloat64, "float_power_: the base has dtype ",
                 defined() ? dtype_name(dtype()) : "undefined",
                 " but the result is float64; convert self with .to(kFloat64) first");
  return composed_in_place("float_power_", *this, {}, [&](const Tensor& self) {
    return leangrad::float_power(self, exponent);
  });
}
Tensor Tensor::logit(std::optional<double> eps) const {
  return leangrad::logit(*this, eps);
}
Tensor& Tensor::logit_(std::optional<double> eps) {
  return composed_in_place("logit_", *this, {},
                           [&](const Tensor& self) { return leangrad::logit(self, eps); });
}

Tensor Tensor::lerp(const Tensor& end, double weight) const {
  return leangrad::lerp(*this, end, weight);
}
Tensor Tensor::lerp(const Tensor& end, const Tensor& weight) const {
  return leangrad::lerp(*this, end, weight);
}
Tensor& Tensor::lerp_(const Tensor& end, double weight) {
  return composed_in_place("lerp_", *this, {end},
                           [&](const Tensor& self) { return leangrad::lerp(self, end, weight); });
}
Tensor& Tensor::lerp_(const Tensor& end, const Tensor& weight) {
  return composed_in_place("lerp_", *this, {end, weight},
                           [&](const Tensor& self) { return leangrad::lerp(self, end, weight); });
}
Tensor Tensor::addcmul(const Tensor& tensor1, const Tensor& tensor2, double value) const {
  return leangrad::addcmul(*this, tensor1, tensor2, value);
}
Tensor& Tensor::addcmul_(const Tensor& tensor1, const Tensor& tensor2, double value) {
  return composed_in_place("addcmul_", *this, {tensor1, tensor2}, [&](const Tensor& self) {
    return leangrad::addcmul(self, tensor1, tensor2, value);
  });
}
Tensor Tensor::addcdiv(const Tensor& tensor1, const Tensor& tensor2, double value) const {
  return leangrad::addcdiv(*this, tensor1, tensor2, value);
}
Tensor& Tensor::addcdiv_(const Tensor& tensor1, const Tensor& tensor2, double value) {
  return composed_in_place("addcdiv_", *this, {tensor1, tensor2}, [&](const Tensor& self) {
    return leangrad::addcdiv(self, tensor1, tensor2, value);
  });
}
Tensor Tensor::logaddexp(const Tensor& other) const {
  return leangrad::logaddexp(*this, other);
}
Tensor Tensor::index_add(std::int64_t dim, const Tensor& index, const Tensor& source,
                         double alpha) const {
  return leangrad::index_add(*this, dim, index, source, alpha);
}
Tensor& Tensor::index_add_(std::int64_t dim, const Tensor& index, const Tensor& source,
                           double alpha) {
  return composed_in_place("index_add_", *this, {source}, [&](const Tensor& self) {
    return leangrad::index_add(self, dim, index, source, alpha);
  });
}
Tensor& Tensor::scatter_add_(std::int64_t dim, const Tensor& index, const Tensor& src) {
  return composed_in_place("scatter_add_", *this, {src}, [&](const Tensor& self) {
    return leangrad::scatter_add(self, dim, index, src);
  });
}
Tensor Tensor::scatter(std::int64_t dim, const Tensor& index, const Tensor& src) const {
  return leangrad::scatter(*this, dim, index, src);
}
Tensor Tensor::scatter(std::int64_t dim, const Tensor& index, double value) const {
  return leangrad::scatter(*this, dim, index, value);
}
Tensor Tensor::scatter(std::int64_t dim, const Tensor& index, const Tensor& src,
                       std::string_view reduce) const {
  return leangrad::scatter(*this, dim, index, src, reduce);
}
Tensor Tensor::scatter(std::int64_t dim, const Tensor& index, double value,
                       std::string_view reduce) const {
  return leangrad::scatter(*this, dim, index, value, reduce);
}
Tensor& Tensor::scatter_(std::int64_t dim, const Tensor& index, const Tensor& src) {
  return composed_in_place("scatter_", *this, {src}, [&](const Tensor& self) {
    return leangrad::scatter(self, dim, index, src);
  });
}
Tensor& Tensor::scatter_(std::int64_t dim, const Tensor& index, double value) {
  return composed_in_place("scatter_", *this, {}, [&](const Tensor& self) {
    return leangrad::scatter(self, dim, index, value);
  });
}
Tensor& Tensor::scatter_(std::int64_t dim, const Tensor& index, const Tensor& src,
                         std::string_view reduce) {
  return composed_in_place("scatter_", *this, {src}, [&](const Tensor& self) {
    return leangrad::scatter(self, dim, index, src, reduce);
  });
}
Tensor& Tensor::scatter_(std::int64_t dim, const Tensor& index, double value,
                         std::string_view reduce) {
  return composed_in_place("scatter_", *this, {}, [&](const Tensor& self) {
    return leangrad::scatter(self, dim, index, value, reduce);
  });
}
Tensor Tensor::scatter_reduce(std::int64_t dim, const Tensor& index, const Tensor& src,
                              std::string_view reduce, bool include_self) const {
  return leangrad::scatter_reduce(*this, dim, index, src, reduce, include_self);
}
Tensor& Tensor::scatter_reduce_(std::int64_t dim, const Tensor& index, const Tensor& src,
                                std::string_view reduce, bool include_self) {
  return composed_in_place("scatter_reduce_", *this, {src}, [&](const Tensor& self) {
    return leangrad::scatter_reduce(self, dim, index, src, reduce, include_self);
  });
}
Tensor Tensor::index_copy(std::int64_t dim, const Tensor& index, const Tensor& source) const {
  return leangrad::index_copy(*this, dim, index, source);
}
Tensor& Tensor::index_copy_(std::int64_t dim, const Tensor& index, const Tensor& source) {
  return composed_in_place("index_copy_", *this, {source}, [&](const Tensor& self) {
    return leangrad::index_copy(self, dim, index, source);
  });
}
Tensor Tensor::index_reduce(std::int64_t dim, const Tensor& index, const Tensor& source,
                            std::string_view reduce, bool include_self) const {
  return leangrad::index_reduce(*this, dim, index, source, reduce, include_self);
}
Tensor& Tensor::index_reduce_(std::int64_t dim, const Tensor& index, const Tensor& source,
                              std::string_view reduce, bool include_self) {
  return composed_in_place("index_reduce_", *this, {source}, [&](const Tensor& self) {
    return leangrad::index_reduce(self, dim, index, source, reduce, include_self);
  });
}
Tensor& Tensor::polygamma_(std::int64_t n) {
  return composed_in_place("polygamma_", *this, {},
                           [&](const Tensor& self) { return leangrad::polygamma(n, self); });
}
Tensor& Tensor::mvlgamma_(std::int64_t p) {
  return composed_in_place("mvlgamma_", *this, {},
                           [&](const Tensor& self) { return leangrad::mvlgamma(self, p); });
}
Tensor Tensor::index_fill(std::int64_t dim, const Tensor& index, double value) const {
  return leangrad::index_fill(*this, dim, index, value);
}
Tensor& Tensor::index_fill_(std::int64_t dim, const Tensor& index, double value) {
  return composed_in_place("index_fill_", *this, {}, [&](const Tensor& self) {
    return leangrad::index_fill(self, dim, index, value);
  });
}
// The rounding divisions and bitwise ops in place: the out-of-place op written into self
// (recorded on a copy of self when an operand requires grad; integral ones never do).
#define LG_COMPOSED_BINARY_IN_PLACE(name)                                                      \
  Tensor& Tensor::name##_(const Tensor& other) {                                               \
    return composed_in_place(#name "_", *this, {other},                                        \
                             [&](const Tensor& self) { return leangrad::name(self, other); }); \
  }                                                                                            \
  Tensor& Tensor::name##_(double other) {                                                      \
    return composed_in_place(#name "_", *this, {},                                             \
                             [&](const Tensor& self) { return leangrad::name(self, other); }); \
  }
LG_COMPOSED_BINARY_IN_PLACE(remainder)
LG_COMPOSED_BINARY_IN_PLACE(fmod)
LG_COMPOSED_BINARY_IN_PLACE(floor_divide)
LG_COMPOSED_BINARY_IN_PLACE(bitwise_and)
LG_COMPOSED_BINARY_IN_PLACE(bitwise_or)
LG_COMPOSED_BINARY_IN_PLACE(bitwise_xor)
#undef LG_COMPOSED_BINARY_IN_PLACE
Tensor& Tensor::bitwise_not_() {
  return composed_in_place("bitwise_not_", *this, {},
                           [](const Tensor& self) { return leangrad::bitwise_not(self); });
}
Tensor Tensor::movedim(const std::vector<std::int64_t>& source,
                       const std::vector<std::int64_t>& destination) const {
  return leangrad::movedim(*this, source, destination);
}
Tensor Tensor::movedim(std::int64_t source, std::int64_t destination) const {
  return leangrad::movedim(*this, source, destination);
}
Tensor Tensor::moveaxis(std::int64_t source, std::int64_t destination) const {
  return leangrad::moveaxis(*this, source, destination);
}
Tensor Tensor::swapaxes(std::int64_t axis0, std::int64_t axis1) const {
  return leangrad::swapaxes(*this, axis0, axis1);
}
Tensor Tensor::swapdims(std::int64_t dim0, std::int64_t dim1) const {
  return leangrad::swapdims(*this, dim0, dim1);
}
Tensor Tensor::broadcast_to(const Shape& shape) const {
  return leangrad::broadcast_to(*this, shape);
}
Tensor Tensor::fliplr() const {
  return leangrad::fliplr(*this);
}
Tensor Tensor::flipud() const {
  return leangrad::flipud(*this);
}
Tensor Tensor::rot90(std::int64_t k, const std::vector<std::int64_t>& dims) const {
  return leangrad::rot90(*this, k, dims);
}
Tensor Tensor::take_along_dim(const Tensor& indices, std::optional<std::int64_t> dim) const {
  return leangrad::take_along_dim(*this, indices, dim);
}
Tensor Tensor::diag_embed(std::int64_t offset, std::int64_t dim1, std::int64_t dim2) const {
  return leangrad::diag_embed(*this, offset, dim1, dim2);
}
std::vector<Tensor> Tensor::tensor_split(std::int64_t sections, std::int64_t dim) const {
  return leangrad::tensor_split(*this, sections, dim);
}
std::vector<Tensor> Tensor::tensor_split(const std::vector<std::int64_t>& indices,
                                         std::int64_t dim) const {
  return leangrad::tensor_split(*this, indices, dim);
}
Tensor Tensor::isclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return leangrad::isclose(*this, other, rtol, atol, equal_nan);
}
Tensor Tensor::isposinf() const {
  return leangrad::isposinf(*this);
}
Tensor Tensor::isneginf() const {
  return leangrad::isneginf(*this);
}
Tensor Tensor::tile(const std::vector<std::int64_t>& reps) const {
  return leangrad::tile(*this, reps);
}
Tensor Tensor::repeat_interleave(std::int64_t repeats, std::optional<std::int64_t> dim) const {
  return leangrad::repeat_interleave(*this, repeats, dim);
}
Tensor Tensor::nonzero() const {
  return leangrad::nonzero(*this);
}
Tensor Tensor::argwhere() const {
  return leangrad::argwhere(*this);
}
Tensor Tensor::masked_select(const Tensor& mask) const {
  return leangrad::masked_select(*this, mask);
}
Tensor Tensor::count_nonzero(const DimList& dims) const {
  return leangrad::count_nonzero(*this, dims);
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
Tensor Tensor::round(std::int64_t decimals) const {
  return leangrad::round(*this, decimals);
}
Tensor Tensor::tan() const {
  return leangrad::tan(*this);
}
Tensor Tensor::asin() const {
  return leangrad::asin(*this);
}
Tensor Tensor::acos() const {
  return leangrad::acos(*this);
}
Tensor Tensor::atan() const {
  return leangrad::atan(*this);
}
Tensor Tensor::sinh() const {
  return leangrad::sinh(*this);
}
Tensor Tensor::cosh() const {
  return leangrad::cosh(*this);
}
Tensor Tensor::asinh() const {
  return leangrad::asinh(*this);
}
Tensor Tensor::acosh() const {
  return leangrad::acosh(*this);
}
Tensor Tensor::atanh() const {
  return leangrad::atanh(*this);
}
Tensor Tensor::exp2() const {
  return leangrad::exp2(*this);
}
Tensor Tensor::lgamma() const {
  return leangrad::lgamma(*this);
}
Tensor Tensor::digamma() const {
  return leangrad::digamma(*this);
}
Tensor Tensor::erfinv() const {
  return leangrad::erfinv(*this);
}
Tensor Tensor::polygamma(std::int64_t n) const {
  return leangrad::polygamma(n, *this);
}
Tensor Tensor::mvlgamma(std::int64_t p) const {
  return leangrad::mvlgamma(*this, p);
}
Tensor Tensor::atan2(const Tensor& other) const {
  return leangrad::atan2(*this, other);
}
Tensor Tensor::remainder(const Tensor& other) const {
  return leangrad::remainder(*this, other);
}
Tensor Tensor::remainder(double other) const {
  return leangrad::remainder(*this, other);
}
Tensor Tensor::fmod(const Tensor& other) const {
  return leangrad::fmod(*this, other);
}
Tensor Tensor::fmod(double other) const {
  return leangrad::fmod(*this, other);
}
Tensor Tensor::floor_divide(const Tensor& other) const {
  return leangrad::floor_divide(*this, other);
}
Tensor Tensor::floor_divide(double other) const {
  return leangrad::floor_divide(*this, other);
}
Tensor Tensor::bitwise_and(const Tensor& other) const {
  return leangrad::bitwise_and(*this, other);
}
Tensor Tensor::bitwise_and(double other) const {
  return leangrad::bitwise_and(*this, other);
}
Tensor Tensor::bitwise_or(const Tensor& other) const {
  return leangrad::bitwise_or(*this, other);
}
Tensor Tensor::bitwise_or(double other) const {
  return leangrad::bitwise_or(*this, other);
}
Tensor Tensor::bitwise_xor(const Tensor& other) const {
  return leangrad::bitwise_xor(*this, other);
}
Tensor Tensor::bitwise_xor(double other) const {
  return leangrad::bitwise_xor(*this, other);
}
Tensor Tensor::bitwise_not() const {
  return leangrad::bitwise_not(*this);
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
Tensor Tensor::inverse() const {
  return linalg::inv(*this);
}
Tensor Tensor::det() const {
  return linalg::det(*this);
}
Tensor Tensor::logdet() const {
  return leangrad::logdet(*this);
}
std::tuple<Tensor, Tensor> Tensor::slogdet() const {
  return linalg::slogdet(*this);
}
Tensor Tensor::cholesky(bool upper) const {
  return linalg::cholesky(*this, upper);
}
Tensor Tensor::cholesky_solve(const Tensor& factor, bool upper) const {
  return leangrad::cholesky_solve(*this, factor, upper);
}
Tensor Tensor::pinverse(double rcond) const {
  return linalg::pinv(*this, std::nullopt, rcond);
}
Tensor Tensor::matrix_power(std::int64_t n) const {
  return linalg::matrix_power(*this, n);
}
std::tuple<Tensor, Tensor> Tensor::geqrf() const {
  return leangrad::geqrf(*this);
}
Tensor Tensor::orgqr(const Tensor& tau) const {
  return leangrad::orgqr(*this, tau);
}
Tensor Tensor::ormqr(const Tensor& tau, const Tensor& other, bool left, bool transpose) const {
  return leangrad::ormqr(*this, tau, other, left, transpose);
}
Tensor Tensor::lu_solve(const Tensor& LU_data, const Tensor& LU_pivots) const {
  return linalg::lu_solve(LU_data, LU_pivots, *this);
}
std::tuple<Tensor, Tensor> Tensor::triangular_solve(const Tensor& A, bool upper, bool transpose,
                                                    bool unitriangular) const {
  LG_CHECK(A.defined(), "triangular_solve: expected a defined A, got an undefined Tensor()");
  // op(A)'s triangle: the transpose of an upper triangular matrix is lower triangular.
  const Tensor X = transpose ? linalg::solve_triangular(A.mT(), *this, !upper, true, unitriangular)
                             : linalg::solve_triangular(A, *this, upper, true, unitriangular);
  return {X, leangrad::clone(A)};
}
std::tuple<Tensor, Tensor> Tensor::qr(bool some) const {
  return linalg::qr(*this, some ? "reduced" : "complete");
}
std::tuple<Tensor, Tensor, Tensor> Tensor::svd(bool some, bool compute_uv) const {
  if (compute_uv) {
    auto [U, S, Vh] = linalg::svd(*this, /*full_matrices=*/!some);
    return {U, S, Vh.mT()};
  }
  const Tensor S = linalg::svdvals(*this);  // checks the input
  const Shape batch(shape().begin(), shape().end() - 2);
  Shape u_shape = batch;
  u_shape.insert(u_shape.end(), {size(-2), size(-2)});
  Shape v_shape = batch;
  v_shape.insert(v_shape.end(), {size(-1), size(-1)});
  return {zeros(u_shape, options()), S, zeros(v_shape, options())};
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

// ---- LibTorch's arithmetic methods, new_*, type_as, the splits and scatters, and the functions
// of linalg_functions.h and statistics_functions.h ---------------------------------------------
Tensor Tensor::type_as(const Tensor& other) const {
  LG_CHECK(other.defined(), "type_as: expected a defined tensor, got an undefined Tensor()");
  return leangrad::to(*this, other.device(), other.dtype());
}
Tensor Tensor::new_empty(const Shape& size) const {
  return leangrad::empty(size, options());
}
Tensor Tensor::new_empty(const Shape& size, const TensorOptions& options) const {
  return leangrad::empty(size, this->options().merge_in(options));
}
Tensor Tensor::new_zeros(const Shape& size) const {
  return leangrad::zeros(size, options());
}
Tensor Tensor::new_zeros(const Shape& size, const TensorOptions& options) const {
  return leangrad::zeros(size, this->options().merge_in(options));
}
Tensor Tensor::new_ones(const Shape& size) const {
  return leangrad::ones(size, options());
}
Tensor Tensor::new_ones(const Shape& size, const TensorOptions& options) const {
  return leangrad::ones(size, this->options().merge_in(options));
}
Tensor Tensor::new_full(const Shape& size, double value) const {
  return leangrad::full(size, value, options());
}
Tensor Tensor::new_full(const Shape& size, double value, const TensorOptions& options) const {
  return leangrad::full(size, value, this->options().merge_in(options));
}
Tensor Tensor::ravel() const {
  return leangrad::ravel(*this);
}
Tensor Tensor::mT() const {
  LG_CHECK_SHAPE(dim() >= 2, "mT: expected a matrix or a batch of matrices, got shape ", shape());
  return leangrad::transpose(*this, -2, -1);
}
std::vector<Tensor> Tensor::hsplit(std::int64_t sections) const {
  return leangrad::hsplit(*this, sections);
}
std::vector<Tensor> Tensor::hsplit(const std::vector<std::int64_t>& indices) const {
  return leangrad::hsplit(*this, indices);
}
std::vector<Tensor> Tensor::vsplit(std::int64_t sections) const {
  return leangrad::vsplit(*this, sections);
}
std::vector<Tensor> Tensor::vsplit(const std::vector<std::int64_t>& indices) const {
  return leangrad::vsplit(*this, indices);
}
std::vector<Tensor> Tensor::dsplit(std::int64_t sections) const {
  return leangrad::dsplit(*this, sections);
}
std::vector<Tensor> Tensor::dsplit(const std::vector<std::int64_t>& indices) const {
  return leangrad::dsplit(*this, indices);
}
Tensor Tensor::diagflat(std::int64_t offset) const {
  return leangrad::diagflat(*this, offset);
}
Tensor Tensor::msort() const {
  return leangrad::msort(*this);
}
Tensor Tensor::select_scatter(const Tensor& src, std::int64_t dim, std::int64_t index) const {
  return leangrad::select_scatter(*this, src, dim, index);
}
Tensor Tensor::slice_scatter(const Tensor& src, std::int64_t dim, std::optional<std::int64_t> start,
                             std::optional<std::int64_t> end, std::int64_t step) const {
  return leangrad::slice_scatter(*this, src, dim, start, end, step);
}
Tensor Tensor::diagonal_scatter(const Tensor& src, std::int64_t offset, std::int64_t dim1,
                                std::int64_t dim2) const {
  return leangrad::diagonal_scatter(*this, src, offset, dim1, dim2);
}
Tensor Tensor::masked_scatter(const Tensor& mask, const Tensor& source) const {
  return leangrad::masked_scatter(*this, mask, source);
}
Tensor Tensor::add(const Tensor& other, double alpha) const {
  return leangrad::add(*this, other, alpha);
}
Tensor Tensor::add(double other) const {
  return leangrad::add(*this, other);
}
Tensor Tensor::sub(const Tensor& other, double alpha) const {
  return leangrad::sub(*this, other, alpha);
}
Tensor Tensor::sub(double other) const {
  return leangrad::sub(*this, other);
}
Tensor Tensor::mul(const Tensor& other) const {
  return leangrad::mul(*this, other);
}
Tensor Tensor::mul(double other) const {
  return leangrad::mul(*this, other);
}
Tensor Tensor::div(const Tensor& other) const {
  return leangrad::div(*this, other);
}
Tensor Tensor::div(double other) const {
  return leangrad::div(*this, other);
}
Tensor Tensor::div(const Tensor& other, std::optional<std::string_view> rounding_mode) const {
  return leangrad::div(*this, other, rounding_mode);
}
Tensor Tensor::div(double other, std::optional<std::string_view> rounding_mode) const {
  return leangrad::div(*this, other, rounding_mode);
}
Tensor Tensor::mv(const Tensor& vec) const {
  return leangrad::mv(*this, vec);
}
Tensor Tensor::vdot(const Tensor& other) const {
  return leangrad::vdot(*this, other);
}
Tensor Tensor::addr(const Tensor& vec1, const Tensor& vec2, double beta, double alpha) const {
  return leangrad::addr(*this, vec1, vec2, beta, alpha);
}
Tensor Tensor::dist(const Tensor& other, double p) const {
  return leangrad::dist(*this, other, p);
}
Tensor Tensor::renorm(double p, std::int64_t dim, double maxnorm) const {
  return leangrad::renorm(*this, p, dim, maxnorm);
}
Tensor Tensor::cov(std::int64_t correction, const std::optional<Tensor>& fweights,
                   const std::optional<Tensor>& aweights) const {
  return leangrad::cov(*this, correction, fweights, aweights);
}
Tensor Tensor::corrcoef() const {
  return leangrad::corrcoef(*this);
}
Tensor Tensor::cholesky_inverse(bool upper) const {
  return leangrad::cholesky_inverse(*this, upper);
}

// ---- Operators -------------------------------------------------------------------------------
Tensor operator+(const Tensor& a, const Tensor& b) {
  return add(a, b);
}
Tensor operator%(const Tensor& a, const Tensor& b) {
  return remainder(a, b);
}
Tensor operator%(const Tensor& a, double b) {
  return remainder(a, b);
}
Tensor operator&(const Tensor& a, const Tensor& b) {
  return bitwise_and(a, b);
}
Tensor operator&(const Tensor& a, double b) {
  return bitwise_and(a, b);
}
Tensor operator|(const Tensor& a, const Tensor& b) {
  return bitwise_or(a, b);
}
Tensor operator|(const Tensor& a, double b) {
  return bitwise_or(a, b);
}
Tensor operator^(const Tensor& a, const Tensor& b) {
  return bitwise_xor(a, b);
}
Tensor operator^(const Tensor& a, double b) {
  return bitwise_xor(a, b);
}
Tensor operator~(const Tensor& a) {
  return bitwise_not(a);
}
Tensor operator==(const Tensor& a, const Tensor& b) {
  return eq(a, b);
}
Tensor operator!=(const Tensor& a, const Tensor& b) {
  return ne(a, b);
}
Tensor operator<(const Tensor& a, const Tensor& b) {
  return lt(a, b);
}
Tensor operator<=(const Tensor& a, const Tensor& b) {
  return le(a, b);
}
Tensor operator>(const Tensor& a, const Tensor& b) {
  return gt(a, b);
}
Tensor operator>=(const Tensor& a, const Tensor& b) {
  return ge(a, b);
}
Tensor operator==(const Tensor& a, double b) {
  return eq(a, b);
}
Tensor operator!=(const Tensor& a, double b) {
  return ne(a, b);
}
Tensor operator<(const Tensor& a, double b) {
  return lt(a, b);
}
Tensor operator<=(const Tensor& a, double b) {
  return le(a, b);
}
Tensor operator>(const Tensor& a, double b) {
  return gt(a, b);
}
Tensor operator>=(const Tensor& a, double b) {
  return ge(a, b);
}
Tensor operator==(double a, const Tensor& b) {
  return eq(b, a);
}
Tensor operator!=(double a, const Tensor& b) {
  return ne(b, a);
}
Tensor operator<(double a, const Tensor& b) {
  return gt(b, a);
}
Tensor operator<=(double a, const Tensor& b) {
  return ge(b, a);
}
Tensor operator>(double a, const Tensor& b) {
  return lt(b, a);
}
Tensor operator>=(double a, const Tensor& b) {
  return le(b, a);
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

// ---- LibTorch's methods over the free functions, and more composed in-place forms -----------
Tensor& Tensor::tril_(std::int64_t diagonal) {
  return composed_in_place("tril_", *this, {},
                           [&](const Tensor& self) { return leangrad::tril(self, diagonal); });
}
Tensor& Tensor::triu_(std::int64_t diagonal) {
  return composed_in_place("triu_", *this, {},
                           [&](const Tensor& self) { return leangrad::triu(self, diagonal); });
}
Tensor& Tensor::cumsum_(std::int64_t dim) {
  return composed_in_place("cumsum_", *this, {},
                           [&](const Tensor& self) { return leangrad::cumsum(self, dim); });
}
Tensor& Tensor::cumprod_(std::int64_t dim) {
  return composed_in_place("cumprod_", *this, {},
                           [&](const Tensor& self) { return leangrad::cumprod(self, dim); });
}
Tensor& Tensor::nan_to_num_(double nan, std::optional<double> posinf,
                            std::optional<double> neginf) {
  return composed_in_place("nan_to_num_", *this, {}, [&](const Tensor& self) {
    return leangrad::nan_to_num(self, nan, posinf, neginf);
  });
}
Tensor& Tensor::square_() {
  return composed_in_place("square_", *this, {},
                           [](const Tensor& self) { return leangrad::square(self); });
}
Tensor& Tensor::pow_(const Tensor& exponent) {
  return composed_in_place("pow_", *this, {exponent},
                           [&](const Tensor& self) { return leangrad::pow(self, exponent); });
}
Tensor& Tensor::pow_(double exponent) {
  return composed_in_place("pow_", *this, {},
                           [&](const Tensor& self) { return leangrad::pow(self, exponent); });
}
Tensor& Tensor::renorm_(double p, std::int64_t dim, double maxnorm) {
  return composed_in_place("renorm_", *this, {}, [&](const Tensor& self) {
    return leangrad::renorm(self, p, dim, maxnorm);
  });
}
Tensor& Tensor::masked_scatter_(const Tensor& mask, const Tensor& source) {
  return composed_in_place("masked_scatter_", *this, {source}, [&](const Tensor& self) {
    return leangrad::masked_scatter(self, mask, source);
  });
}
Tensor& Tensor::div_(const Tensor& other, std::optional<std::string_view> rounding_mode) {
  return composed_in_place("div_", *this, {other}, [&](const Tensor& self) {
    return leangrad::div(self, other, rounding_mode);
  });
}
Tensor& Tensor::div_(double other, std::optional<std::string_view> rounding_mode) {
  return composed_in_place("div_", *this, {}, [&](const Tensor& self) {
    return leangrad::div(self, other, rounding_mode);
  });
}
Tensor Tensor::addmm(const Tensor& mat1, const Tensor& mat2, double beta, double alpha) const {
  return leangrad::addmm(*this, mat1, mat2, beta, alpha);
}
Tensor Tensor::addmv(const Tensor& mat, const Tensor& vec, double beta, double alpha) const {
  return leangrad::addmv(*this, mat, vec, beta, alpha);
}
Tensor Tensor::addbmm(const Tensor& batch1, const Tensor& batch2, double beta, double alpha) const {
  return leangrad::addbmm(*this, batch1, batch2, beta, alpha);
}
Tensor Tensor::baddbmm(const Tensor& batch1, const Tensor& batch2, double beta,
                       double alpha) const {
  return leangrad::baddbmm(*this, batch1, batch2, beta, alpha);
}
Tensor& Tensor::addmm_(const Tensor& mat1, const Tensor& mat2, double beta, double alpha) {
  return composed_in_place("addmm_", *this, {mat1, mat2}, [&](const Tensor& self) {
    return leangrad::addmm(self, mat1, mat2, beta, alpha);
  });
}
Tensor& Tensor::addmv_(const Tensor& mat, const Tensor& vec, double beta, double alpha) {
  return composed_in_place("addmv_", *this, {mat, vec}, [&](const Tensor& self) {
    return leangrad::addmv(self, mat, vec, beta, alpha);
  });
}
Tensor& Tensor::addr_(const Tensor& vec1, const Tensor& vec2, double beta, double alpha) {
  return composed_in_place("addr_", *this, {vec1, vec2}, [&](const Tensor& self) {
    return leangrad::addr(self, vec1, vec2, beta, alpha);
  });
}
Tensor& Tensor::addbmm_(const Tensor& batch1, const Tensor& batch2, double beta, double alpha) {
  return composed_in_place("addbmm_", *this, {batch1, batch2}, [&](const Tensor& self) {
    return leangrad::addbmm(self, batch1, batch2, beta, alpha);
  });
}
Tensor& Tensor::baddbmm_(const Tensor& batch1, const Tensor& batch2, double beta, double alpha) {
  return composed_in_place("baddbmm_", *this, {batch1, batch2}, [&](const Tensor& self) {
    return leangrad::baddbmm(self, batch1, batch2, beta, alpha);
  });
}
Tensor Tensor::cross(const Tensor& other, std::int64_t dim) const {
  return leangrad::cross(*this, other, dim);
}
Tensor Tensor::diag(std::int64_t diagonal) const {
  return leangrad::diag(*this, diagonal);
}
Tensor Tensor::diagonal(std::int64_t offset, std::int64_t dim1, std::int64_t dim2) const {
  return leangrad::diagonal(*this, offset, dim1, dim2);
}
Tensor Tensor::diff(std::int64_t n, std::int64_t dim) const {
  return leangrad::diff(*this, n, dim);
}
Tensor Tensor::inner(const Tensor& other) const {
  return leangrad::inner(*this, other);
}
Tensor Tensor::kron(const Tensor& other) const {
  return leangrad::kron(*this, other);
}
Tensor Tensor::trace() const {
  return leangrad::trace(*this);
}
Tensor Tensor::matrix_exp() const {
  return leangrad::matrix_exp(*this);
}
Tensor Tensor::maximum(const Tensor& other) const {
  return leangrad::maximum(*this, other);
}
Tensor Tensor::minimum(const Tensor& other) const {
  return leangrad::minimum(*this, other);
}
Tensor Tensor::where(const Tensor& condition, const Tensor& other) const {
  return leangrad::where(condition, *this, other);
}
Tensor Tensor::take(const Tensor& index) const {
  return leangrad::take(*this, index);
}
Tensor Tensor::put(const Tensor& index, const Tensor& source, bool accumulate) const {
  return leangrad::put(*this, index, source, accumulate);
}
Tensor& Tensor::put_(const Tensor& index, const Tensor& source, bool accumulate) {
  return composed_in_place("put_", *this, {source}, [&](const Tensor& self) {
    return leangrad::put(self, index, source, accumulate);
  });
}

// ---- Comparisons and logic written into self ---------------------------------------------------
namespace {

// `predicate(self)` (a Bool tensor, other broadcast to self's shape) written into self as 1 or 0
// of self's dtype, truly in place. Recorded as PyTorch's EqBackward and the rest: a zero gradient
// for self (the value is piecewise constant in it) and for other.
template <typename F>
Tensor& predicate_in_place(const char* op, Tensor& self, const Tensor& other, const F& predicate) {
  LG_CHECK(self.defined(), op, ": expected a defined tensor, got an undefined Tensor()");
  const bool has_other = other.defined();
  return in_place(
      op, self, other,
      [&] {
        Tensor result;
        {
          NoGradGuard no_grad;
          result = predicate(self);
        }
        check_fits_self(op, self, result);
        ops::copy_(self, result);
      },
      [has_other](const BackwardContext& c) -> std::vector<Tensor> {
        std::vector<Tensor> grads{zeros_like(c.grad)};
        if (has_other) grads.push_back(c.needs(1) ? zeros(c.shape(1), c.grad.options()) : Tensor());
        return grads;
      });
}

}  // namespace

#define LG_PREDICATE_IN_PLACE(name)                                                             \
  Tensor& Tensor::name##_(const Tensor& other) {                                                \
    return predicate_in_place(#name "_", *this, other,                                          \
                              [&](const Tensor& self) { return leangrad::name(self, other); }); \
  }                                                                                             \
  Tensor& Tensor::name##_(double other) {                                                       \
    return predicate_in_place(#name "_", *this, Tensor(),                                       \
                              [&](const Tensor& self) { return leangrad::name(self, other); }); \
  }
LG_PREDICATE_IN_PLACE(eq)
LG_PREDICATE_IN_PLACE(ne)
LG_PREDICATE_IN_PLACE(lt)
LG_PREDICATE_IN_PLACE(le)
LG_PREDICATE_IN_PLACE(gt)
LG_PREDICATE_IN_PLACE(ge)
#undef LG_PREDICATE_IN_PLACE

Tensor& Tensor::logical_not_() {
  return predicate_in_place("logical_not_", *this, Tensor(),
                            [](const Tensor& self) { return leangrad::logical_not(self); });
}
Tensor& Tensor::logical_and_(const Tensor& other) {
  return predicate_in_place("logical_and_", *this, other,
                            [&](const Tensor& self) { return leangrad::logical_and(self, other); });
}
Tensor& Tensor::logical_or_(const Tensor& other) {
  return predicate_in_place("logical_or_", *this, other,
                            [&](const Tensor& self) { return leangrad::logical_or(self, other); });
}
Tensor& Tensor::logical_xor_(const Tensor& other) {
  return predicate_in_place("logical_xor_", *this, other,
                            [&](const Tensor& self) { return leangrad::logical_xor(self, other); });
}
Tensor Tensor::multinomial(std::int64_t num_samples, bool replacement) const {
  return leangrad::multinomial(*this, num_samples, replacement);
}
Tensor Tensor::bincount(const Tensor& weights, std::int64_t minlength) const {
  return leangrad::bincount(*this, weights, minlength);
}
Tensor Tensor::sum_to_size(const Shape& size) const {
  LG_CHECK(defined(), "sum_to_size: expected a defined tensor, got an undefined Tensor()");
  LG_CHECK_SHAPE(broadcast_shapes(size, shape(), "sum_to_size") == shape(), "sum_to_size: size ",
                 size, " is not expandable to the tensor's shape ", shape());
  return autograd::sum_to(*this, size);
}
Tensor Tensor::narrow_copy(std::int64_t dim, std::int64_t start, std::int64_t length) const {
  return leangrad::clone(leangrad::narrow(*this, dim, start, length));
}
Tensor Tensor::new_empty_strided(const Shape& size, const Strides& stride,
                                 const TensorOptions& options) const {
  return leangrad::empty_strided(size, stride, this->options().merge_in(options));
}
bool Tensor::is_nonzero() const {
  LG_CHECK_SHAPE(numel() == 1, "is_nonzero: expected a tensor with one element, got shape ",
                 shape());
  return to(kBool).item<bool>();
}

}  // namespace leangrad
