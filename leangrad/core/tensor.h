// Tensor: a cheap shared handle to a strided view of a Storage (copying a Tensor aliases it,
// as in PyTorch). This header holds the data model; the computing methods (arithmetic, views,
// reductions, conversions) are thin forwards to the differentiable functions of
// autograd/functions.h, which call the kernels listed in kernels/ops.h.
#pragma once

#include <atomic>
#include <concepts>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <leangrad/core/accessor.h>
#include <leangrad/core/device.h>
#include <leangrad/core/dtype.h>
#include <leangrad/core/error.h>
#include <leangrad/core/shape.h>
#include <leangrad/core/storage.h>
#include <leangrad/core/tensor_options.h>

namespace leangrad {

namespace indexing {
class TensorIndex;  // core/indexing.h, included at the end: it holds a Tensor
}  // namespace indexing

namespace cuda {
class Stream;
}
namespace autograd {
struct AutogradMeta;  // defined by the autograd layer
class Node;
}  // namespace autograd

// Counts in-place modifications of a tensor's data. Shared by a tensor and all its views, so a
// write through any of them is seen by autograd's saved-tensor checks.
struct TensorImpl;

struct VersionCounter {
  std::atomic<std::uint32_t> version{0};
};

// Held by a view's TensorImpl: the view's root base (the tensor that is not a view at the bottom
// of its chain of views), which autograd needs to record an in-place write through the view.
// Autograd also keeps here which of the base's histories the view's own was made from, and
// whether the view was made outside the graph (Note [In-place writes through views] in
// autograd/graph.cpp).
class ViewRegistration {
 public:
  ViewRegistration() = default;
  ViewRegistration(std::shared_ptr<TensorImpl> base, std::uint32_t base_history, bool outside_graph)
      : base_history(base_history), outside_graph(outside_graph), base_(std::move(base)) {}
  bool active() const { return base_ != nullptr; }
  // The root base (null when not a view).
  const std::shared_ptr<TensorImpl>& base() const { return base_; }

  // Autograd's bookkeeping: the base's TensorImpl::histories when the view's history was made,
  // and whether the view was made, with grad mode off, of a base that requires grad.
  std::uint32_t base_history = 0;
  bool outside_graph = false;

 private:
  std::shared_ptr<TensorImpl> base_;
};

// The state behind a Tensor handle. Plain data but for the geometry: the invariants (sizes and
// strides within the storage) are established by the functions that create tensors and views,
// and the sizes change only through set_geometry, which keeps their product, numel(), beside
// them. Kernels ask for numel() in their loops; it is a load, not a product over the dims.
struct TensorImpl {
  std::shared_ptr<Storage> storage;
  std::int64_t storage_offset = 0;  // in elements
  DType dtype = DType::Float32;
  std::shared_ptr<VersionCounter> version_counter = std::make_shared<VersionCounter>();
  // Null until autograd needs it (requires_grad, grad_fn, grad, hooks).
  std::shared_ptr<autograd::AutogradMeta> autograd_meta;
  ViewRegistration view;  // active when this tensor is a view (views::as_strided)
  // How many times autograd has given this tensor a history (a grad_fn, or none by detach_()):
  // its views compare it with the count their own history was made from.
  std::uint32_t histories = 0;

  const Shape& sizes() const { return sizes_; }
  const Strides& strides() const { return strides_; }  // in elements
  std::int64_t numel() const { return numel_; }
  // Sizes and strides of one rank, already checked against the storage by the caller (their
  // product fits in int64: shape_numel or checked_extent said so).
  void set_geometry(Shape sizes, Strides strides);
  void swap_geometry(TensorImpl& other) noexcept;

 private:
  Shape sizes_;
  Strides strides_;
  std::int64_t numel_ = 1;  // a 0-d tensor holds one element
};

class Tensor {
 public:
  Tensor() = default;  // an undefined tensor ("no tensor": no bias, no gradient yet)
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }

  // ---- Metadata ----------------------------------------------------------------------------
  const Shape& shape() const { return impl().sizes(); }
  const Shape& sizes() const { return impl().sizes(); }
  std::int64_t size(std::int64_t dim) const;
  const Strides& strides() const { return impl().strides(); }
  std::int64_t stride(std::int64_t dim) const;
  std::int64_t dim() const { return static_cast<std::int64_t>(impl().sizes().size()); }
  std::int64_t numel() const { return impl().numel(); }
  DType dtype() const { return impl().dtype; }
  Device device() const { return impl().storage->device(); }
  TensorOptions options() const { return TensorOptions(dtype()).device(device()); }
  std::int64_t storage_offset() const { return impl().storage_offset; }
  std::size_t element_size() const { return leangrad::element_size(dtype()); }
  std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * element_size(); }
  bool is_contiguous() const;
  bool is_cuda() const { return device().is_cuda(); }
  bool is_pinned() const { return impl().storage->is_pinned(); }
  const std::shared_ptr<Storage>& storage() const { return impl().storage; }
  // Same TensorImpl (not merely equal values).
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }
  // True when both view the same storage.
  bool shares_storage(const Tensor& other) const;
  // LibTorch's other names and tests of the metadata: scalar_type() is dtype(), itemsize()
  // element_size(), is_alias_of(other) shares_storage(other); is_signed() is true for the
  // floating dtypes and the signed integers; is_view() says whether this tensor is counted as a
  // view of memory another tensor owns (views::as_strided); is_set_to(other) whether both have the
  // same storage, offset, sizes and strides. leangrad's dtypes are real: is_complex(), is_conj()
  // and is_neg() are false.
  DType scalar_type() const { return dtype(); }
  std::size_t itemsize() const { return element_size(); }
  bool is_floating_point() const { return is_floating(dtype()); }
  bool is_signed() const;
  bool is_complex() const { return false; }
  bool is_conj() const { return false; }
  bool is_neg() const { return false; }
  bool is_cpu() const { return device().is_cpu(); }
  bool has_storage() const { return defined() && impl_->storage != nullptr; }
  bool is_alias_of(const Tensor& other) const { return shares_storage(other); }
  bool is_view() const { return impl().view.active(); }
  bool is_set_to(const Tensor& other) const;
  // Whether the elements cover a block of memory exactly once, in some order of the dims.
  bool is_non_overlapping_and_dense() const;

  // ---- Raw data ----------------------------------------------------------------------------
  // Address of element 0 of this view. data_ptr<T>() checks that T matches dtype().
  void* data_ptr() const;
  template <typename T>
  T* data_ptr() const {
    LG_CHECK_DTYPE(dtype_of<T> == dtype(), "data_ptr<", dtype_name(dtype_of<T>),
                   ">: tensor has dtype ", dtype());
    return static_cast<T*>(data_ptr());
  }
  // Subscripted access to the elements as T, LibTorch's (core/accessor.h): a[i][j] for
  // t.accessor<float, 2>(). Checks that T is the dtype and N the number of dims; accessor()
  // wants a CPU tensor (its memory is read on the host), the packed forms any device (they are
  // passed by value to CUDA kernels), packed_accessor32 offsets that fit int32. Not on a
  // temporary: the accessor reads the tensor's sizes and strides, or its memory, after the call.
  template <typename T, std::size_t N>
  TensorAccessor<T, N> accessor() const&;
  template <typename T, std::size_t N>
  TensorAccessor<T, N> accessor() && = delete;
  template <typename T, std::size_t N>
  PackedTensorAccessor64<T, N> packed_accessor64() const&;
  template <typename T, std::size_t N>
  PackedTensorAccessor64<T, N> packed_accessor64() && = delete;
  template <typename T, std::size_t N>
  PackedTensorAccessor32<T, N> packed_accessor32() const&;
  template <typename T, std::size_t N>
  PackedTensorAccessor32<T, N> packed_accessor32() && = delete;
  // The value of a one-element tensor (copied to the host if needed), converted to T.
  template <typename T>
  T item() const;

  // ---- Conversions (copy when needed, return *this otherwise) ------------------------------
  Tensor to(Device device, bool non_blocking = false) const;
  // The dtype and device options set (the others this tensor's), as LibTorch's to(options):
  // this tensor itself when nothing changes, unless copy. requires_grad set true is an Error, as
  // LibTorch's; pinned_memory is not taken.
  Tensor to(const TensorOptions& options, bool non_blocking = false, bool copy = false) const;
  Tensor to(DeviceType type) const { return to(Device(type)); }
  Tensor to(DType dtype) const;
  Tensor cpu() const { return to(Device::cpu()); }
  Tensor cuda(int index = 0) const { return to(Device::cuda(index)); }
  Tensor contiguous() const;
  Tensor clone() const;
  // A copy (when needed) with other's dtype and on other's device, as LibTorch's type_as.
  Tensor type_as(const Tensor& other) const;
  // New tensors with this one's dtype and device unless options set them (the fields options
  // set override this one's: x.new_zeros(s, kFloat64) stays on x's device), as LibTorch's
  // new_empty, new_zeros, new_ones and new_full.
  Tensor new_empty(const Shape& size) const;
  Tensor new_empty(const Shape& size, const TensorOptions& options) const;
  Tensor new_zeros(const Shape& size) const;
  Tensor new_zeros(const Shape& size, const TensorOptions& options) const;
  Tensor new_ones(const Shape& size) const;
  Tensor new_ones(const Shape& size, const TensorOptions& options) const;
  Tensor new_full(const Shape& size, double value) const;
  Tensor new_full(const Shape& size, double value, const TensorOptions& options) const;
  // A copy in the pinned host pool (CPU tensors only).
  Tensor pin_memory() const;
  // Makes this tensor hold `other`'s data (storage, sizes, strides, dtype) while keeping its
  // identity and autograd state: every handle to it sees the new data (PyTorch's t.data = other;
  // Module::to does the same with swap_data, so that the parameters an optimizer holds move with
  // the module). Bumps the version.
  void set_data(const Tensor& other) const;
  // This tensor's memory under a new TensorImpl with no autograd state and a version counter of
  // its own, as LibTorch's variable_data() and data() (Python's x.data): writes through it are
  // not seen by autograd's saved-tensor checks. tensor_data() shares this tensor's counter.
  Tensor variable_data() const;
  Tensor data() const { return variable_data(); }
  Tensor tensor_data() const;
  // Exchanges this tensor's data with `other`'s (both defined), each keeping its identity and
  // autograd state; bumps both versions. Cannot throw: Module::to makes every converted tensor
  // first, then installs them all with this (Note [Module::to changes all or nothing]).
  void swap_data(const Tensor& other) const noexcept;
  // Tells the allocator this tensor's memory is used by work queued on `stream` (as in torch).
  void record_stream(const cuda::Stream& stream) const;

  // ---- Views (share storage; no data is copied) --------------------------------------------
  Tensor view(const Shape& shape) const;
  Tensor reshape(const Shape& shape) const;  // a view when possible, else a copy
  Tensor permute(const std::vector<std::int64_t>& dims) const;
  Tensor transpose(std::int64_t dim0, std::int64_t dim1) const;
  Tensor slice(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step = 1) const;
  Tensor select(std::int64_t dim, std::int64_t index) const;
  Tensor unsqueeze(std::int64_t dim) const;
  Tensor squeeze() const;
  Tensor squeeze(std::int64_t dim) const;
  Tensor expand(const Shape& shape) const;
  Tensor expand_as(const Tensor& other) const { return expand(other.shape()); }
  Tensor view_as(const Tensor& other) const { return view(other.shape()); }
  Tensor reshape_as(const Tensor& other) const { return reshape(other.shape()); }
  Tensor ravel() const;  // reshape({-1})
  // A view of the storage with these sizes, strides and offset (this one's offset by default),
  // as LibTorch's as_strided (leangrad::as_strided, autograd/shape_functions.h).
  Tensor as_strided(const Shape& size, const Strides& stride,
                    std::optional<std::int64_t> storage_offset = std::nullopt) const;
  // The slices of `size` elements along `dimension`, every `step` (> 0) elements, as a new last
  // dim: a view of shape (..., (n - size) / step + 1, ..., size), as LibTorch's Tensor::unfold
  // (torch.nn.functional.unfold, the image patches, is leangrad::unfold).
  Tensor unfold(std::int64_t dimension, std::int64_t size, std::int64_t step) const;
  // The last two dims swapped (at least 2 dims), as LibTorch's mT; mH and adjoint are the same
  // for the real dtypes leangrad has (the conjugate of a real tensor is itself).
  Tensor mT() const;
  Tensor mH() const { return mT(); }
  Tensor adjoint() const { return mT(); }
  Tensor flatten(std::int64_t start_dim = 0, std::int64_t end_dim = -1) const;
  Tensor unflatten(std::int64_t dim, const Shape& sizes) const;
  // The transpose of a matrix (0-d and 1-d tensors are returned as they are; more dims refused).
  Tensor t() const;
  // The view ops done in place, as LibTorch's: this tensor takes the view's sizes, strides and
  // offset (the same memory; its version is unchanged) and, when autograd records the view, the
  // view's history (Note [In-place view ops] in autograd/tensor_methods.cpp). Under grad mode a
  // leaf that requires grad is refused, as for in-place ops, and so is a tensor that requires
  // grad while grad mode is off (its history would no longer match its shape).
  Tensor& t_();
  Tensor& transpose_(std::int64_t dim0, std::int64_t dim1);
  Tensor& swapdims_(std::int64_t dim0, std::int64_t dim1);
  Tensor& swapaxes_(std::int64_t axis0, std::int64_t axis1);
  Tensor& squeeze_();
  Tensor& squeeze_(std::int64_t dim);
  Tensor& unsqueeze_(std::int64_t dim);
  Tensor& as_strided_(const Shape& size, const Strides& stride,
                      std::optional<std::int64_t> storage_offset = std::nullopt);
  // A view of the whole tensor, as LibTorch's alias(): the same memory and geometry under a
  // TensorImpl of its own, recorded by autograd as view() is.
  Tensor alias() const;
  // Basic indexing (core/indexing.h): t.index({Slice(0, 2), 1}) is Python's t[0:2, 1], a view.
  Tensor index(std::initializer_list<indexing::TensorIndex> indices) const;
  Tensor index(const std::vector<indexing::TensorIndex>& indices) const;
  // t[i]: select(0, i).
  Tensor operator[](std::int64_t index) const;
  // Views along one dim (autograd/indexing_functions.h): narrow(dim, start, length) is
  // slice(dim, start, start + length) with a negative start counted from the end; split,
  // split_with_sizes, chunk and unbind cut dim into pieces, as torch's.
  Tensor narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const;
  std::vector<Tensor> split(std::int64_t split_size, std::int64_t dim = 0) const;
  std::vector<Tensor> split_with_sizes(const std::vector<std::int64_t>& split_sizes,
                                       std::int64_t dim = 0) const;
  std::vector<Tensor> chunk(std::int64_t chunks, std::int64_t dim = 0) const;
  std::vector<Tensor> unbind(std::int64_t dim = 0) const;
  // LibTorch's unsafe_split, unsafe_split_with_sizes and unsafe_chunk. LibTorch's skip the
  // checks that in-place writes to the pieces would take as writes to views; leangrad's pieces
  // are views either way, so these are split, split_with_sizes and chunk.
  std::vector<Tensor> unsafe_split(std::int64_t split_size, std::int64_t dim = 0) const;
  std::vector<Tensor> unsafe_split_with_sizes(const std::vector<std::int64_t>& split_sizes,
                                              std::int64_t dim = 0) const;
  std::vector<Tensor> unsafe_chunk(std::int64_t chunks, std::int64_t dim = 0) const;
  // Indexing by int64 tensors (copies; autograd/indexing_functions.h): index_select (int32
  // indices too), gather, and the scatters; the in-place forms write the out-of-place result
  // into self, as index_add_ does (below).
  Tensor index_select(std::int64_t dim, const Tensor& index) const;
  Tensor gather(std::int64_t dim, const Tensor& index) const;
  Tensor scatter_add(std::int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor& scatter_add_(std::int64_t dim, const Tensor& index, const Tensor& src);
  Tensor scatter(std::int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor scatter(std::int64_t dim, const Tensor& index, double value) const;
  Tensor scatter(std::int64_t dim, const Tensor& index, const Tensor& src,
                 std::string_view reduce) const;
  Tensor scatter(std::int64_t dim, const Tensor& index, double value,
                 std::string_view reduce) const;
  Tensor& scatter_(std::int64_t dim, const Tensor& index, const Tensor& src);
  Tensor& scatter_(std::int64_t dim, const Tensor& index, double value);
  Tensor& scatter_(std::int64_t dim, const Tensor& index, const Tensor& src,
                   std::string_view reduce);
  Tensor& scatter_(std::int64_t dim, const Tensor& index, double value, std::string_view reduce);
  Tensor scatter_reduce(std::int64_t dim, const Tensor& index, const Tensor& src,
                        std::string_view reduce, bool include_self = true) const;
  Tensor& scatter_reduce_(std::int64_t dim, const Tensor& index, const Tensor& src,
                          std::string_view reduce, bool include_self = true);
  // Rearranging copies (autograd/indexing_functions.h): the order of dims reversed (flip), the
  // elements rolled by shifts along dims (no dims: over the flattened tensor), tiled (repeat),
  // the lower or upper triangle of the last two dims with the rest zeroed (tril, triu).
  Tensor flip(const std::vector<std::int64_t>& dims) const;
  Tensor roll(const DimList& shifts, const DimList& dims = {}) const;
  Tensor repeat(const std::vector<std::int64_t>& repeats) const;
  Tensor tril(std::int64_t diagonal = 0) const;
  Tensor triu(std::int64_t diagonal = 0) const;
  Tensor& tril_(std::int64_t diagonal = 0);
  Tensor& triu_(std::int64_t diagonal = 0);
  // torch's composed ops as methods (autograd/arithmetic_functions.h, indexing_functions.h):
  // x.lerp(end, w) is lerp(x, end, w), and so on. The in-place forms (lerp_, addcmul_, addcdiv_,
  // index_add_, index_fill_) write the out-of-place op's result into self, bitwise, and refuse a
  // result of another shape (operands broadcast to self's shape, never the other way); they are
  // compositions, so they use one temporary of self's size. See docs/api-notes.md.
  Tensor lerp(const Tensor& end, double weight) const;
  Tensor lerp(const Tensor& end, const Tensor& weight) const;
  Tensor& lerp_(const Tensor& end, double weight);
  Tensor& lerp_(const Tensor& end, const Tensor& weight);
  Tensor addcmul(const Tensor& tensor1, const Tensor& tensor2, double value = 1.0) const;
  Tensor& addcmul_(const Tensor& tensor1, const Tensor& tensor2, double value = 1.0);
  Tensor addcdiv(const Tensor& tensor1, const Tensor& tensor2, double value = 1.0) const;
  Tensor& addcdiv_(const Tensor& tensor1, const Tensor& tensor2, double value = 1.0);
  Tensor logaddexp(const Tensor& other) const;
  // The pointwise math of autograd/pointwise_functions.h and autograd/special_functions.h as
  // LibTorch's methods; the in-place forms are composed (the out-of-place op written into self,
  // whose dtype must hold the result: erfc_ of an integer tensor is refused, float_power_ needs a
  // float64 self, as PyTorch's).
  Tensor logaddexp2(const Tensor& other) const;
  Tensor hypot(const Tensor& other) const;
  Tensor& hypot_(const Tensor& other);
  Tensor copysign(const Tensor& other) const;
  Tensor copysign(double other) const;
  Tensor& copysign_(const Tensor& other);
  Tensor& copysign_(double other);
  Tensor nextafter(const Tensor& other) const;
  Tensor& nextafter_(const Tensor& other);
  Tensor fmax(const Tensor& other) const;
  Tensor fmin(const Tensor& other) const;
  Tensor gcd(const Tensor& other) const;
  Tensor& gcd_(const Tensor& other);
  Tensor lcm(const Tensor& other) const;
  Tensor& lcm_(const Tensor& other);
  Tensor bitwise_left_shift(const Tensor& other) const;
  Tensor bitwise_left_shift(double other) const;
  Tensor& bitwise_left_shift_(const Tensor& other);
  Tensor& bitwise_left_shift_(double other);
  Tensor bitwise_right_shift(const Tensor& other) const;
  Tensor bitwise_right_shift(double other) const;
  Tensor& bitwise_right_shift_(const Tensor& other);
  Tensor& bitwise_right_shift_(double other);
  Tensor heaviside(const Tensor& values) const;
  Tensor& heaviside_(const Tensor& values);
  Tensor float_power(const Tensor& exponent) const;
  Tensor float_power(double exponent) const;
  Tensor& float_power_(const Tensor& exponent);
  Tensor& float_power_(double exponent);
  Tensor ldexp(const Tensor& other) const;
  Tensor& ldexp_(const Tensor& other);
  std::tuple<Tensor, Tensor> frexp() const;  // (mantissa, int32 exponent)
  Tensor deg2rad() const;
  Tensor& deg2rad_();
  Tensor rad2deg() const;
  Tensor& rad2deg_();
  Tensor frac() const;
  Tensor& frac_();
  Tensor sgn() const;
  Tensor& sgn_();
  Tensor fix() const;
  Tensor& fix_();
  Tensor positive() const;
  Tensor signbit() const;
  Tensor isreal() const;
  Tensor erfc() const;
  Tensor& erfc_();
  Tensor i0() const;
  Tensor& i0_();
  Tensor sinc() const;
  Tensor& sinc_();
  Tensor igamma(const Tensor& other) const;
  Tensor& igamma_(const Tensor& other);
  Tensor igammac(const Tensor& other) const;
  Tensor& igammac_(const Tensor& other);
  Tensor xlogy(const Tensor& other) const;
  Tensor xlogy(double other) const;
  Tensor& xlogy_(const Tensor& other);
  Tensor& xlogy_(double other);
  Tensor logit(std::optional<double> eps = std::nullopt) const;
  Tensor& logit_(std::optional<double> eps = std::nullopt);
  Tensor index_add(std::int64_t dim, const Tensor& index, const Tensor& source,
                   double alpha = 1.0) const;
  Tensor& index_add_(std::int64_t dim, const Tensor& index, const Tensor& source,
                     double alpha = 1.0);
  Tensor index_fill(std::int64_t dim, const Tensor& index, double value) const;
  Tensor& index_fill_(std::int64_t dim, const Tensor& index, double value);
  Tensor index_copy(std::int64_t dim, const Tensor& index, const Tensor& source) const;
  Tensor& index_copy_(std::int64_t dim, const Tensor& index, const Tensor& source);
  Tensor index_reduce(std::int64_t dim, const Tensor& index, const Tensor& source,
                      std::string_view reduce, bool include_self = true) const;
  Tensor& index_reduce_(std::int64_t dim, const Tensor& index, const Tensor& source,
                        std::string_view reduce, bool include_self = true);
  Tensor tile(const std::vector<std::int64_t>& reps) const;
  Tensor repeat_interleave(std::int64_t repeats,
                           std::optional<std::int64_t> dim = std::nullopt) const;
  Tensor nonzero() const;
  Tensor argwhere() const;
  Tensor masked_select(const Tensor& mask) const;
  Tensor count_nonzero(const DimList& dims = {}) const;
  // The rearranging functions of autograd/shape_functions.h and the tests of functions.h as
  // methods, torch's: x.movedim(0, -1), x.rot90(1, {0, 1}), x.take_along_dim(i, 1), ...
  Tensor movedim(const std::vector<std::int64_t>& source,
                 const std::vector<std::int64_t>& destination) const;
  Tensor movedim(std::int64_t source, std::int64_t destination) const;
  Tensor moveaxis(std::int64_t source, std::int64_t destination) const;
  Tensor swapaxes(std::int64_t axis0, std::int64_t axis1) const;
  Tensor swapdims(std::int64_t dim0, std::int64_t dim1) const;
  Tensor broadcast_to(const Shape& shape) const;
  Tensor fliplr() const;
  Tensor flipud() const;
  Tensor rot90(std::int64_t k = 1, const std::vector<std::int64_t>& dims = {0, 1}) const;
  Tensor take_along_dim(const Tensor& indices,
                        std::optional<std::int64_t> dim = std::nullopt) const;
  Tensor diag_embed(std::int64_t offset = 0, std::int64_t dim1 = -2, std::int64_t dim2 = -1) const;
  std::vector<Tensor> tensor_split(std::int64_t sections, std::int64_t dim = 0) const;
  std::vector<Tensor> tensor_split(const std::vector<std::int64_t>& indices,
                                   std::int64_t dim = 0) const;
  std::vector<Tensor> hsplit(std::int64_t sections) const;
  std::vector<Tensor> hsplit(const std::vector<std::int64_t>& indices) const;
  std::vector<Tensor> vsplit(std::int64_t sections) const;
  std::vector<Tensor> vsplit(const std::vector<std::int64_t>& indices) const;
  std::vector<Tensor> dsplit(std::int64_t sections) const;
  std::vector<Tensor> dsplit(const std::vector<std::int64_t>& indices) const;
  Tensor diagflat(std::int64_t offset = 0) const;
  Tensor msort() const;
  // Copies with a part replaced (autograd/shape_functions.h, indexing_functions.h).
  Tensor select_scatter(const Tensor& src, std::int64_t dim, std::int64_t index) const;
  Tensor slice_scatter(const Tensor& src, std::int64_t dim = 0,
                       std::optional<std::int64_t> start = std::nullopt,
                       std::optional<std::int64_t> end = std::nullopt, std::int64_t step = 1) const;
  Tensor diagonal_scatter(const Tensor& src, std::int64_t offset = 0, std::int64_t dim1 = 0,
                          std::int64_t dim2 = 1) const;
  Tensor masked_scatter(const Tensor& mask, const Tensor& source) const;
  Tensor& masked_scatter_(const Tensor& mask, const Tensor& source);
  Tensor isclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8,
                 bool equal_nan = false) const;
  Tensor isposinf() const;
  Tensor isneginf() const;

  // ---- In-place (bump the version counter) -------------------------------------------------
  Tensor& add_(const Tensor& other, double alpha = 1.0);
  Tensor& add_(double other);
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(double other);
  Tensor& zero_();
  Tensor& fill_(double value);
  // Copies src into this tensor: any dtype, any device, broadcasting src to this shape.
  Tensor& copy_(const Tensor& src, bool non_blocking = false);
  Tensor& sub_(const Tensor& other, double alpha = 1.0);
  Tensor& sub_(double other);
  Tensor& div_(const Tensor& other);
  Tensor& div_(double other);
  Tensor& relu_();
  // sigmoid and tanh written into self (floating self only); recorded from the output, truly in
  // place (Note [In-place ops in the graph] in autograd/tensor_methods.cpp).
  Tensor& sigmoid_();
  Tensor& tanh_();
  // The other unary ops written into self, PyTorch's in-place methods (ops::unary_: self's own
  // memory, no temporary, bitwise the out-of-place op). Self keeps its dtype: exp_, log_, sqrt_,
  // erf_, expm1_, log1p_, log2_, log10_, sin_, cos_, rsqrt_ and reciprocal_ of an integral tensor
  // are refused (their result would be float32), neg_, abs_, sign_ and the roundings take
  // integers too. Recorded by autograd (Note [In-place ops in the graph]).
  Tensor& neg_();
  Tensor& abs_();
  Tensor& exp_();
  Tensor& log_();
  Tensor& sqrt_();
  Tensor& erf_();
  Tensor& expm1_();
  Tensor& log1p_();
  Tensor& log2_();
  Tensor& log10_();
  Tensor& sin_();
  Tensor& cos_();
  Tensor& rsqrt_();
  Tensor& reciprocal_();
  Tensor& sign_();
  Tensor& floor_();
  Tensor& ceil_();
  Tensor& round_();
  Tensor& trunc_();
  // The trigonometric and hyperbolic methods and exp2_, written into self as the ones above
  // (floating self only: the out-of-place ops give float32 for integers).
  Tensor& tan_();
  Tensor& asin_();
  Tensor& acos_();
  Tensor& atan_();
  Tensor& sinh_();
  Tensor& cosh_();
  Tensor& asinh_();
  Tensor& acosh_();
  Tensor& atanh_();
  Tensor& exp2_();
  // The special functions (autograd/special_functions.h) written into self, floating self only:
  // lgamma_, digamma_ and erfinv_ in place as the ones above, polygamma_ and mvlgamma_ as the
  // composed in-place forms below.
  Tensor& lgamma_();
  Tensor& digamma_();
  Tensor& erfinv_();
  Tensor& polygamma_(std::int64_t n);
  Tensor& mvlgamma_(std::int64_t p);
  // atan2(self, other) written into self, other broadcast to self's shape (floating self).
  Tensor& atan2_(const Tensor& other);
  // The same written into self (other broadcast to self's shape; the result must fit self's
  // dtype), bitwise the out-of-place op.
  Tensor& remainder_(const Tensor& other);
  Tensor& remainder_(double other);
  Tensor& fmod_(const Tensor& other);
  Tensor& fmod_(double other);
  Tensor& floor_divide_(const Tensor& other);
  Tensor& floor_divide_(double other);
  Tensor& bitwise_and_(const Tensor& other);
  Tensor& bitwise_and_(double other);
  Tensor& bitwise_or_(const Tensor& other);
  Tensor& bitwise_or_(double other);
  Tensor& bitwise_xor_(const Tensor& other);
  Tensor& bitwise_xor_(double other);
  Tensor& bitwise_not_();
  // round(self, decimals) written into self (floating self unless decimals is 0), bitwise the
  // out-of-place op.
  Tensor& round_(std::int64_t decimals);
  // clamp written into self in one pass (ops::activation_), bitwise clamp(); integral self too,
  // with integral bounds (a fractional one would make the result float32, which self cannot
  // hold: refused, as PyTorch).
  Tensor& clamp_(std::optional<double> min, std::optional<double> max = std::nullopt);
  Tensor& clamp_min_(double min);
  Tensor& clamp_max_(double max);
  // value where mask is true, written into self; mask (bool) broadcast to self's shape, never
  // the other way (PyTorch's rule for in-place ops); value a number or a 0-d tensor, which then
  // gets the gradient of the elements it filled.
  Tensor& masked_fill_(const Tensor& mask, double value);
  Tensor& masked_fill_(const Tensor& mask, const Tensor& value);
  Tensor& operator+=(const Tensor& other) { return add_(other); }
  Tensor& operator+=(double other) { return add_(other); }
  Tensor& operator-=(const Tensor& other) { return sub_(other); }
  Tensor& operator-=(double other) { return sub_(other); }
  Tensor& operator*=(const Tensor& other) { return mul_(other); }
  Tensor& operator*=(double other) { return mul_(other); }
  Tensor& operator/=(const Tensor& other) { return div_(other); }
  Tensor& operator/=(double other) { return div_(other); }
  Tensor& operator%=(const Tensor& other) { return remainder_(other); }
  Tensor& operator%=(double other) { return remainder_(other); }
  Tensor& operator&=(const Tensor& other) { return bitwise_and_(other); }
  Tensor& operator&=(double other) { return bitwise_and_(other); }
  Tensor& operator|=(const Tensor& other) { return bitwise_or_(other); }
  Tensor& operator|=(double other) { return bitwise_or_(other); }
  Tensor& operator^=(const Tensor& other) { return bitwise_xor_(other); }
  Tensor& operator^=(double other) { return bitwise_xor_(other); }
  // t.index_put_({Slice(), 0}, v): copies v (broadcast) into the view t.index(indices); with
  // accumulate, adds it (torch.index_put_'s accumulate: a position named twice gets both).
  // value written on the main diagonal, as LibTorch's fill_diagonal_: a 2-d self (any shape),
  // or every dim of one size; with wrap, a tall matrix's diagonal starts again every
  // (columns + 1) rows, as NumPy's fill_diagonal. Differentiable in self (0 on the diagonal).
  Tensor& fill_diagonal_(double fill_value, bool wrap = false);
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& value,
                     bool accumulate = false);
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, double value,
                     bool accumulate = false);
  // Out of place, with LibTorch's list of optional index tensors (std::nullopt takes a whole
  // dim): a copy of self with values written or, with accumulate, added (torch::index_put).
  Tensor index_put(const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                   bool accumulate = false) const;

  // self as if flattened (row-major) with source's elements written at the flat positions
  // `index` (int64, any shape, negative from the end, as many as source has), or added with
  // accumulate, as LibTorch's put (autograd/indexing_functions.h); put_ writes self.
  Tensor put(const Tensor& index, const Tensor& source, bool accumulate = false) const;
  Tensor& put_(const Tensor& index, const Tensor& source, bool accumulate = false);
  // This tensor made contiguous of `size` over its memory from its offset, as LibTorch's
  // resize_: the same sizes keep their strides; a storage too small is grown to fit (its bytes
  // kept, the new ones uninitialised; every tensor sharing the storage sees the grown memory).
  // resize_as_(other) takes other's sizes. Refused on a tensor that requires grad, as
  // LibTorch's.
  Tensor& resize_(const Shape& size);
  Tensor& resize_as_(const Tensor& other);
  // set_(source): this tensor views source's storage with source's geometry (the same dtype),
  // as LibTorch's; set_() an empty storage, size {0}. Each bumps the version. While grad mode is
  // on, refused when either tensor requires grad (under NoGradGuard a parameter may be set_).
  Tensor& set_(const Tensor& source);
  Tensor& set_();
  // ---- In-place random fills (autograd/sampling_functions.h; Note [In-place samplers]) -----
  // LibTorch's: each draws from the default generator of self's device (manual_seed covers it)
  // and writes every element of self, a view's elements only; self keeps requiring grad with a
  // zero gradient, as PyTorch's, and a leaf that requires grad is refused.
  //   torch::empty({3, 4}).uniform_(-1, 1);   w.normal_(0, 0.02);   t.random_(0, 10);
  Tensor& uniform_(double from = 0.0, double to = 1.0);  // [from, to), floating self
  Tensor& normal_(double mean = 0.0, double std = 1.0);  // floating self
  Tensor& exponential_(double lambd = 1.0);              // rate lambd > 0: values > 0
  Tensor& geometric_(double p);                          // trials to a success: 1, 2, ...
  Tensor& cauchy_(double median = 0.0, double sigma = 1.0);
  Tensor& log_normal_(double mean = 1.0, double std = 2.0);  // exp of N(mean, std^2)
  Tensor& bernoulli_(double p = 0.5);                        // 1 with probability p, any dtype
  Tensor& bernoulli_(const Tensor& p);                       // p broadcast to self's shape
  // Integers uniform in [from, to) (to empty: up to the largest value of self's dtype, for a
  // floating dtype 2^digits), [0, to), and with no argument [0, that largest value]; any real
  // dtype, each bound exactly representable in it.
  Tensor& random_(std::int64_t from, std::optional<std::int64_t> to);
  Tensor& random_(std::int64_t to);
  Tensor& random_();
  // Out of place: self as the probabilities (torch's x.bernoulli()), or p for every element.
  Tensor bernoulli() const;
  Tensor bernoulli(double p) const;

  // ---- Reductions --------------------------------------------------------------------------
  Tensor sum() const;
  Tensor sum(const DimList& dims, bool keepdim = false) const;  // sum(1), sum({0, 1})
  Tensor mean() const;
  Tensor mean(const DimList& dims, bool keepdim = false) const;
  // max() and min() of all elements; max(dims) and amax(dims) the maxima over dims (values
  // only; no dims: over all), amin the minima; max(dim) and min(dim) LibTorch's (values,
  // indices) pair of one dim (indices as argmax/argmin: the first extremum).
  Tensor max() const;
  Tensor max(const std::vector<std::int64_t>& dims, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> max(std::int64_t dim, bool keepdim = false) const;
  Tensor min() const;
  std::tuple<Tensor, Tensor> min(std::int64_t dim, bool keepdim = false) const;
  Tensor amax(const std::vector<std::int64_t>& dims = {}, bool keepdim = false) const;
  Tensor amin(const std::vector<std::int64_t>& dims = {}, bool keepdim = false) const;
  Tensor argmax() const;  // index into the flattened tensor
  Tensor argmax(std::int64_t dim, bool keepdim = false) const;
  Tensor argmin() const;
  Tensor argmin(std::int64_t dim, bool keepdim = false) const;
  // Variance and standard deviation over dims (none: all), divided by N - 1 (unbiased, the
  // default) or N. LibTorch's spellings: var(), var(false), var(1), var({0, 1}, true, true).
  Tensor var(const DimList& dims = {}, bool unbiased = true, bool keepdim = false) const;
  template <typename B>
  requires std::same_as<B, bool>  // var(false) means "biased", not dim 0
      Tensor var(B unbiased)
  const { return var(DimList(), unbiased, false); }
  Tensor std(const DimList& dims = {}, bool unbiased = true, bool keepdim = false) const;
  template <typename B>
  requires std::same_as<B, bool> Tensor std(B unbiased)
  const { return std(DimList(), unbiased, false); }
  // log(sum(exp(x))) over dims without overflow; the vector p-norm over dims (none: all; p = inf
  // is the largest |x|); the running sum along dim (autograd/reduction_functions.h).
  Tensor logsumexp(const DimList& dims, bool keepdim = false) const;
  Tensor norm(double p = 2.0, const DimList& dims = {}, bool keepdim = false) const;
  Tensor cumsum(std::int64_t dim) const;
  Tensor& cumsum_(std::int64_t dim);
  // The product of all elements or along dim; the running product, log-sum-exp, maximum and
  // minimum along dim (autograd/reduction_functions.h).
  Tensor prod() const;
  Tensor prod(std::int64_t dim, bool keepdim = false) const;
  Tensor cumprod(std::int64_t dim) const;
  Tensor& cumprod_(std::int64_t dim);
  Tensor logcumsumexp(std::int64_t dim) const;
  std::tuple<Tensor, Tensor> cummax(std::int64_t dim) const;
  std::tuple<Tensor, Tensor> cummin(std::int64_t dim) const;
  // Order statistics and the reductions that skip NaN (autograd/statistics_functions.h).
  Tensor median() const;
  std::tuple<Tensor, Tensor> median(std::int64_t dim, bool keepdim = false) const;
  Tensor nanmedian() const;
  std::tuple<Tensor, Tensor> nanmedian(std::int64_t dim, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> kthvalue(std::int64_t k, std::int64_t dim = -1,
                                      bool keepdim = false) const;
  std::tuple<Tensor, Tensor> mode(std::int64_t dim = -1, bool keepdim = false) const;
  Tensor quantile(double q, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false,
                  std::string_view interpolation = "linear") const;
  Tensor quantile(const Tensor& q, std::optional<std::int64_t> dim = std::nullopt,
                  bool keepdim = false, std::string_view interpolation = "linear") const;
  Tensor nanquantile(double q, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false,
                     std::string_view interpolation = "linear") const;
  Tensor nanquantile(const Tensor& q, std::optional<std::int64_t> dim = std::nullopt,
                     bool keepdim = false, std::string_view interpolation = "linear") const;
  Tensor nansum(const DimList& dims = {}, bool keepdim = false) const;
  Tensor nanmean(const DimList& dims = {}, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> aminmax(std::optional<std::int64_t> dim = std::nullopt,
                                     bool keepdim = false) const;
  Tensor histc(std::int64_t bins = 100, double min = 0.0, double max = 0.0) const;
  std::tuple<Tensor, Tensor, Tensor> unique_consecutive(
      bool return_inverse = false, bool return_counts = false,
      std::optional<std::int64_t> dim = std::nullopt) const;
  // Whether every / some element over dims (none: all) is non-zero, Bool (autograd/functions.h).
  Tensor all(const DimList& dims = {}, bool keepdim = false) const;
  Tensor any(const DimList& dims = {}, bool keepdim = false) const;
  // (values, indices) sorted along dim (stable; NaN the largest), the positions alone, and the k
  // largest or smallest (autograd/functions.h).
  std::tuple<Tensor, Tensor> sort(std::int64_t dim = -1, bool descending = false) const;
  Tensor argsort(std::int64_t dim = -1, bool descending = false) const;
  std::tuple<Tensor, Tensor> topk(std::int64_t k, std::int64_t dim = -1, bool largest = true,
                                  bool sorted = true) const;

  // ---- Elementwise -------------------------------------------------------------------------
  // this + alpha other, this - alpha other, this * other, this / other, broadcasting with
  // PyTorch's promotion (autograd/functions.h), as LibTorch's methods; subtract, multiply,
  // divide and true_divide are their other names.
  Tensor add(const Tensor& other, double alpha = 1.0) const;
  Tensor add(double other) const;
  Tensor sub(const Tensor& other, double alpha = 1.0) const;
  Tensor sub(double other) const;
  Tensor mul(const Tensor& other) const;
  Tensor mul(double other) const;
  Tensor div(const Tensor& other) const;
  Tensor div(double other) const;
  // Rounded division ("trunc" or "floor"; none: true division), as div(a, b, rounding_mode).
  Tensor div(const Tensor& other, std::optional<std::string_view> rounding_mode) const;
  Tensor div(double other, std::optional<std::string_view> rounding_mode) const;
  Tensor& div_(const Tensor& other, std::optional<std::string_view> rounding_mode);
  Tensor& div_(double other, std::optional<std::string_view> rounding_mode);
  // LibTorch's methods over the free functions of autograd/linalg_functions.h,
  // linalg_decompositions.h, functions.h, indexing_functions.h, statistics_functions.h and
  // sampling_functions.h: x.addmm(m1, m2) is addmm(x, m1, m2), x.where(cond, y) is where(cond,
  // x, y), x.take(index) is take(x, index), and so on.
  Tensor addmm(const Tensor& mat1, const Tensor& mat2, double beta = 1.0, double alpha = 1.0) const;
  Tensor addmv(const Tensor& mat, const Tensor& vec, double beta = 1.0, double alpha = 1.0) const;
  Tensor addbmm(const Tensor& batch1, const Tensor& batch2, double beta = 1.0,
                double alpha = 1.0) const;
  Tensor baddbmm(const Tensor& batch1, const Tensor& batch2, double beta = 1.0,
                 double alpha = 1.0) const;
  // The same written into self (the result must have self's shape), as LibTorch's.
  Tensor& addmm_(const Tensor& mat1, const Tensor& mat2, double beta = 1.0, double alpha = 1.0);
  Tensor& addmv_(const Tensor& mat, const Tensor& vec, double beta = 1.0, double alpha = 1.0);
  Tensor& addr_(const Tensor& vec1, const Tensor& vec2, double beta = 1.0, double alpha = 1.0);
  Tensor& addbmm_(const Tensor& batch1, const Tensor& batch2, double beta = 1.0,
                  double alpha = 1.0);
  Tensor& baddbmm_(const Tensor& batch1, const Tensor& batch2, double beta = 1.0,
                   double alpha = 1.0);
  Tensor cross(const Tensor& other, std::int64_t dim = -1) const;
  Tensor diag(std::int64_t diagonal = 0) const;
  Tensor diagonal(std::int64_t offset = 0, std::int64_t dim1 = 0, std::int64_t dim2 = 1) const;
  Tensor diff(std::int64_t n = 1, std::int64_t dim = -1) const;
  Tensor inner(const Tensor& other) const;
  Tensor kron(const Tensor& other) const;
  Tensor trace() const;
  Tensor matrix_exp() const;
  Tensor maximum(const Tensor& other) const;
  Tensor minimum(const Tensor& other) const;
  Tensor where(const Tensor& condition, const Tensor& other) const;
  Tensor take(const Tensor& index) const;
  Tensor multinomial(std::int64_t num_samples, bool replacement = false) const;
  Tensor bincount(const Tensor& weights = Tensor(), std::int64_t minlength = 0) const;
  // The sum of this tensor's elements broadcast onto `size`, as LibTorch's sum_to_size (size
  // must broadcast to this tensor's shape).
  Tensor sum_to_size(const Shape& size) const;
  // A copy of narrow(dim, start, length), as LibTorch's narrow_copy.
  Tensor narrow_copy(std::int64_t dim, std::int64_t start, std::int64_t length) const;
  // empty_strided with this tensor's dtype and device unless options set them.
  Tensor new_empty_strided(const Shape& size, const Strides& stride,
                           const TensorOptions& options = {}) const;
  bool is_same_size(const Tensor& other) const { return shape() == other.shape(); }
  // The value of a one-element tensor as a bool (!= 0), as LibTorch's is_nonzero; another
  // number of elements is an Error.
  bool is_nonzero() const;
  Tensor subtract(const Tensor& other, double alpha = 1.0) const { return sub(other, alpha); }
  Tensor subtract(double other) const { return sub(other); }
  Tensor multiply(const Tensor& other) const { return mul(other); }
  Tensor multiply(double other) const { return mul(other); }
  Tensor divide(const Tensor& other) const { return div(other); }
  Tensor divide(double other) const { return div(other); }
  Tensor divide(const Tensor& other, std::optional<std::string_view> rounding_mode) const {
    return div(other, rounding_mode);
  }
  Tensor divide(double other, std::optional<std::string_view> rounding_mode) const {
    return div(other, rounding_mode);
  }
  Tensor true_divide(const Tensor& other) const { return div(other); }
  Tensor true_divide(double other) const { return div(other); }
  Tensor exp() const;
  Tensor log() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor relu() const;
  Tensor sqrt() const;
  Tensor abs() const;
  Tensor neg() const;
  Tensor erf() const;
  Tensor expm1() const;
  Tensor log1p() const;
  Tensor log2() const;
  Tensor log10() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor rsqrt() const;
  Tensor reciprocal() const;
  Tensor sign() const;
  Tensor floor() const;
  Tensor ceil() const;
  Tensor round() const;
  Tensor trunc() const;
  Tensor round(std::int64_t decimals) const;  // PyTorch's round(decimals=...)
  Tensor tan() const;
  Tensor asin() const;
  Tensor acos() const;
  Tensor atan() const;
  Tensor sinh() const;
  Tensor cosh() const;
  Tensor asinh() const;
  Tensor acosh() const;
  Tensor atanh() const;
  Tensor exp2() const;
  Tensor lgamma() const;
  Tensor digamma() const;
  Tensor erfinv() const;
  Tensor polygamma(std::int64_t n) const;  // torch's x.polygamma(n), polygamma(n, x)
  Tensor mvlgamma(std::int64_t p) const;
  Tensor atan2(const Tensor& other) const;
  // remainder, fmod, floor_divide and the bitwise ops (autograd/functions.h); x % y, x & y,
  // x | y, x ^ y and ~x are the operators below.
  Tensor remainder(const Tensor& other) const;
  Tensor remainder(double other) const;
  Tensor fmod(const Tensor& other) const;
  Tensor fmod(double other) const;
  Tensor floor_divide(const Tensor& other) const;
  Tensor floor_divide(double other) const;
  Tensor bitwise_and(const Tensor& other) const;
  Tensor bitwise_and(double other) const;
  Tensor bitwise_or(const Tensor& other) const;
  Tensor bitwise_or(double other) const;
  Tensor bitwise_xor(const Tensor& other) const;
  Tensor bitwise_xor(double other) const;
  Tensor bitwise_not() const;
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(double exponent) const;
  Tensor gt(const Tensor& other) const;
  Tensor gt(double other) const;
  Tensor lt(const Tensor& other) const;
  Tensor lt(double other) const;
  Tensor ge(const Tensor& other) const;
  Tensor ge(double other) const;
  Tensor le(const Tensor& other) const;
  Tensor le(double other) const;
  Tensor eq(const Tensor& other) const;
  Tensor eq(double other) const;
  Tensor matmul(const Tensor& other) const;
  Tensor mm(const Tensor& other) const;     // matrices only
  Tensor bmm(const Tensor& other) const;    // batches of one size only
  Tensor dot(const Tensor& other) const;    // 1-d
  Tensor outer(const Tensor& other) const;  // 1-d
  Tensor ger(const Tensor& other) const { return outer(other); }
  // autograd/linalg_functions.h and statistics_functions.h as methods: x.mv(v) is mv(x, v),
  // x.addr(v1, v2) is addr(x, v1, v2), x.cov() is cov(x), ...
  Tensor mv(const Tensor& vec) const;
  Tensor vdot(const Tensor& other) const;
  Tensor addr(const Tensor& vec1, const Tensor& vec2, double beta = 1.0, double alpha = 1.0) const;
  Tensor dist(const Tensor& other, double p = 2.0) const;
  Tensor renorm(double p, std::int64_t dim, double maxnorm) const;
  Tensor& renorm_(double p, std::int64_t dim, double maxnorm);
  Tensor cov(std::int64_t correction = 1, const std::optional<Tensor>& fweights = std::nullopt,
             const std::optional<Tensor>& aweights = std::nullopt) const;
  Tensor corrcoef() const;
  // Linear algebra on batches of matrices (*, m, n), LibTorch's methods over the functions of
  // autograd/linalg_decompositions.h: x.inverse() is linalg::inv, x.pinverse(rcond) linalg::pinv
  // with rtol rcond, x.cholesky_solve(L) is cholesky_solve(x, L).
  Tensor inverse() const;
  Tensor det() const;
  Tensor logdet() const;
  std::tuple<Tensor, Tensor> slogdet() const;
  Tensor cholesky(bool upper = false) const;
  Tensor cholesky_solve(const Tensor& factor, bool upper = false) const;
  Tensor cholesky_inverse(bool upper = false) const;
  Tensor pinverse(double rcond = 1e-15) const;
  Tensor matrix_power(std::int64_t n) const;
  // LibTorch's methods over linalg's decompositions: geqrf() and orgqr(tau) (geqrf,
  // householder_product), ormqr(tau, other, left, transpose) (ormqr), b.lu_solve(LU, pivots)
  // (linalg::lu_solve(LU, pivots, b)), and the deprecated spellings torch keeps:
  // b.triangular_solve(A, upper, transpose, unitriangular) gives (X, a copy of A) with
  // op(A) X = b; qr(some) is linalg::qr in mode "reduced" or "complete"; svd(some, compute_uv)
  // gives (U, S, V) with V (not V^T), reduced when some, and U and V zero-filled (m x m, n x n)
  // without compute_uv (S is then linalg::svdvals', so it is still differentiable).
  std::tuple<Tensor, Tensor> geqrf() const;
  Tensor orgqr(const Tensor& tau) const;
  Tensor ormqr(const Tensor& tau, const Tensor& other, bool left = true,
               bool transpose = false) const;
  Tensor lu_solve(const Tensor& LU_data, const Tensor& LU_pivots) const;
  std::tuple<Tensor, Tensor> triangular_solve(const Tensor& A, bool upper = true,
                                              bool transpose = false,
                                              bool unitriangular = false) const;
  std::tuple<Tensor, Tensor> qr(bool some = true) const;
  std::tuple<Tensor, Tensor, Tensor> svd(bool some = true, bool compute_uv = true) const;
  // NaN / an infinity / neither, and logic on non-zero elements: Bool results.
  Tensor isnan() const;
  Tensor isinf() const;
  Tensor isfinite() const;
  Tensor logical_not() const;
  Tensor logical_and(const Tensor& other) const;
  Tensor logical_or(const Tensor& other) const;
  Tensor logical_xor(const Tensor& other) const;
  // The comparisons and the logic written into self, 1 or 0 in self's dtype (other broadcast to
  // self's shape), as LibTorch's eq_ ... logical_not_; recorded with a zero gradient, as
  // PyTorch's.
  Tensor& eq_(const Tensor& other);
  Tensor& eq_(double other);
  Tensor& ne_(const Tensor& other);
  Tensor& ne_(double other);
  Tensor& lt_(const Tensor& other);
  Tensor& lt_(double other);
  Tensor& le_(const Tensor& other);
  Tensor& le_(double other);
  Tensor& gt_(const Tensor& other);
  Tensor& gt_(double other);
  Tensor& ge_(const Tensor& other);
  Tensor& ge_(double other);
  Tensor& not_equal_(const Tensor& other) { return ne_(other); }
  Tensor& not_equal_(double other) { return ne_(other); }
  Tensor& less_(const Tensor& other) { return lt_(other); }
  Tensor& less_(double other) { return lt_(other); }
  Tensor& less_equal_(const Tensor& other) { return le_(other); }
  Tensor& less_equal_(double other) { return le_(other); }
  Tensor& greater_(const Tensor& other) { return gt_(other); }
  Tensor& greater_(double other) { return gt_(other); }
  Tensor& greater_equal_(const Tensor& other) { return ge_(other); }
  Tensor& greater_equal_(double other) { return ge_(other); }
  Tensor& logical_not_();
  Tensor& logical_and_(const Tensor& other);
  Tensor& logical_or_(const Tensor& other);
  Tensor& logical_xor_(const Tensor& other);
  // Activations and statistics of autograd/activations.h and statistics_functions.h.
  Tensor hardshrink(double lambd = 0.5) const;
  Tensor prelu(const Tensor& weight) const;
  std::tuple<Tensor, Tensor> histogram(
      std::int64_t bins = 100, const std::optional<std::vector<double>>& range = std::nullopt,
      const std::optional<Tensor>& weight = std::nullopt, bool density = false) const;
  std::tuple<Tensor, Tensor> histogram(const Tensor& bin_edges,
                                       const std::optional<Tensor>& weight = std::nullopt,
                                       bool density = false) const;
  // The argument of each element as a complex number (pi for negative ones, 0 otherwise, NaN
  // kept; integers give float32), as angle(); the conjugates of a real tensor are the tensor
  // itself (conj_physical_ leaves it as it is), as LibTorch's for real dtypes.
  Tensor angle() const;
  Tensor conj() const { return *this; }
  Tensor conj_physical() const { return *this; }
  Tensor& conj_physical_() { return *this; }
  Tensor resolve_conj() const { return *this; }
  Tensor resolve_neg() const { return *this; }
  Tensor nan_to_num(double nan = 0.0, std::optional<double> posinf = std::nullopt,
                    std::optional<double> neginf = std::nullopt) const;
  Tensor& nan_to_num_(double nan = 0.0, std::optional<double> posinf = std::nullopt,
                      std::optional<double> neginf = std::nullopt);
  Tensor square() const;
  Tensor& square_();
  Tensor& pow_(const Tensor& exponent);
  Tensor& pow_(double exponent);
  // Each element limited to [min, max] (either bound may be absent); NaN stays NaN.
  Tensor clamp(std::optional<double> min, std::optional<double> max = std::nullopt) const;
  Tensor clamp_min(double min) const;
  Tensor clamp_max(double max) const;
  // value where mask (bool) is true, this tensor's element elsewhere; the shape of this tensor
  // and mask broadcast together (see masked_fill in autograd/functions.h).
  Tensor masked_fill(const Tensor& mask, double value) const;
  Tensor masked_fill(const Tensor& mask, const Tensor& value) const;
  Tensor ne(const Tensor& other) const;
  Tensor ne(double other) const;
  // NumPy's names of the functions above, as LibTorch's methods.
  Tensor arcsin() const { return asin(); }
  Tensor arccos() const { return acos(); }
  Tensor arctan() const { return atan(); }
  Tensor arcsinh() const { return asinh(); }
  Tensor arccosh() const { return acosh(); }
  Tensor arctanh() const { return atanh(); }
  Tensor arctan2(const Tensor& other) const { return atan2(other); }
  Tensor absolute() const { return abs(); }
  Tensor negative() const { return neg(); }
  Tensor clip(std::optional<double> min, std::optional<double> max = std::nullopt) const {
    return clamp(min, max);
  }
  Tensor& clip_(std::optional<double> min, std::optional<double> max = std::nullopt) {
    return clamp_(min, max);
  }
  Tensor& arcsin_() { return asin_(); }
  Tensor& arccos_() { return acos_(); }
  Tensor& arctan_() { return atan_(); }
  Tensor& arcsinh_() { return asinh_(); }
  Tensor& arccosh_() { return acosh_(); }
  Tensor& arctanh_() { return atanh_(); }
  Tensor& arctan2_(const Tensor& other) { return atan2_(other); }
  Tensor& absolute_() { return abs_(); }
  Tensor& negative_() { return neg_(); }
  Tensor& multiply_(const Tensor& other) { return mul_(other); }
  Tensor& multiply_(double other) { return mul_(other); }
  Tensor& subtract_(const Tensor& other, double alpha = 1.0) { return sub_(other, alpha); }
  Tensor& subtract_(double other) { return sub_(other); }
  Tensor& divide_(const Tensor& other) { return div_(other); }
  Tensor& divide_(double other) { return div_(other); }
  Tensor& true_divide_(const Tensor& other) { return div_(other); }
  Tensor& true_divide_(double other) { return div_(other); }
  Tensor greater(const Tensor& other) const { return gt(other); }
  Tensor greater(double other) const { return gt(other); }
  Tensor greater_equal(const Tensor& other) const { return ge(other); }
  Tensor greater_equal(double other) const { return ge(other); }
  Tensor less(const Tensor& other) const { return lt(other); }
  Tensor less(double other) const { return lt(other); }
  Tensor less_equal(const Tensor& other) const { return le(other); }
  Tensor less_equal(double other) const { return le(other); }
  Tensor not_equal(const Tensor& other) const { return ne(other); }
  Tensor not_equal(double other) const { return ne(other); }
  Tensor softmax(std::int64_t dim) const;
  Tensor log_softmax(std::int64_t dim) const;
  // |this - other| <= atol + rtol |other| everywhere (NaNs equal when equal_nan), broadcasting,
  // as torch.allclose. equal: same shape and the same values (NaN is not equal to NaN).
  bool allclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8,
                bool equal_nan = false) const;
  bool equal(const Tensor& other) const;

  // ---- Autograd (autograd/tensor_autograd.cpp; the engine is autograd/engine.cpp) -----------
  bool requires_grad() const;
  // Leaves only (a tensor with a grad_fn gets requires_grad from its inputs).
  Tensor& requires_grad_(bool requires_grad = true);
  // A tensor sharing this one's data (and version counter) that autograd does not track.
  Tensor detach() const;
  // Makes this tensor a leaf that does not require grad, as LibTorch's detach_() (a view too,
  // which PyTorch refuses: leangrad records no in-place write through a view, so no base's
  // history depends on the view's).
  Tensor& detach_();
  // Backpropagates into the leaves' .grad (torch's Tensor::backward): `grad` is the gradient of
  // some scalar with respect to this tensor, and may be omitted (ones) for a one-element tensor;
  // retain_graph defaults to create_graph; create_graph records the backward so the gradients
  // can be differentiated again.
  void backward(const Tensor& grad = Tensor(), std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false) const;
  // The accumulated gradient of a leaf (undefined until a backward reaches it). It is undefined
  // or has this tensor's shape, dtype and device: set_grad refuses anything else, and what is
  // assigned through mutable_grad() (a handle into the shared state, unchecked as in LibTorch)
  // is checked by the next backward and optimizer step (Note [What .grad holds]).
  Tensor grad() const;
  Tensor& mutable_grad() const;
  void set_grad(const Tensor& grad) const;
  // The node that produced this tensor (null for leaves and tensors that need no grad).
  std::shared_ptr<autograd::Node> grad_fn() const;
  bool is_leaf() const;
  // A hook on this tensor's gradient: `hook(grad)` runs when the gradient is computed and may
  // return a replacement (or nothing: a hook returning void, or an undefined Tensor, keeps it).
  // Returns the hook's position for remove_hook, as LibTorch's.
  template <typename F>
  unsigned register_hook(F&& hook) {
    if constexpr (std::is_void_v<std::invoke_result_t<F, const Tensor&>>) {
      return add_grad_hook([h = std::forward<F>(hook)](const Tensor& g) {
        h(g);
        return Tensor();
      });
    } else {
      return add_grad_hook(std::forward<F>(hook));
    }
  }
  // Removes the hook register_hook put at `position`; it does not run again, also in a backward
  // that is running (Note [Removing hooks]).
  void remove_hook(unsigned position) const;
  // A non-leaf keeps its gradient in .grad from the next backward on, accumulating as a leaf's
  // does (Note [Retained gradients]); no effect on a leaf. retains_grad() says whether it does.
  void retain_grad() const;
  bool retains_grad() const;
  // Leaves only: `hook(tensor)` runs once grad() is final for the current backward.
  void register_post_accumulate_grad_hook(std::function<void(const Tensor&)> hook);

  // ---- Versions ----------------------------------------------------------------------------
  std::uint32_t version() const { return impl().version_counter->version.load(); }
  void bump_version() const { impl().version_counter->version.fetch_add(1); }

  // ---- Access to the implementation (for the library's own layers) -------------------------
  TensorImpl& impl() const {
    LG_CHECK(impl_ != nullptr, "operation on an undefined tensor (Tensor())");
    return *impl_;
  }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

  // PyTorch's repr: "tensor([ 1.5000, -2.0000], dtype=float64)", large tensors summarised
  // (Note [PyTorch's print format] in core/tensor_print.cpp).
  std::string str() const;

 private:
  unsigned add_grad_hook(std::function<Tensor(const Tensor&)> hook);

  std::shared_ptr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& out, const Tensor& t);

// Arithmetic operators: broadcasting, dtype promotion as in PyTorch.
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, double b);
Tensor operator-(const Tensor& a, double b);
Tensor operator*(const Tensor& a, double b);
Tensor operator/(const Tensor& a, double b);
Tensor operator+(double a, const Tensor& b);
Tensor operator-(double a, const Tensor& b);
Tensor operator*(double a, const Tensor& b);
Tensor operator/(double a, const Tensor& b);
Tensor operator-(const Tensor& a);
// remainder (the sign of b, Python's %) and the bitwise ops, as LibTorch's operators.
Tensor operator%(const Tensor& a, const Tensor& b);
Tensor operator%(const Tensor& a, double b);
Tensor operator&(const Tensor& a, const Tensor& b);
Tensor operator&(const Tensor& a, double b);
Tensor operator|(const Tensor& a, const Tensor& b);
Tensor operator|(const Tensor& a, double b);
Tensor operator^(const Tensor& a, const Tensor& b);
Tensor operator^(const Tensor& a, double b);
Tensor operator~(const Tensor& a);
// The comparisons, elementwise, as LibTorch's operators: Bool tensors (eq, ne, lt, le, gt, ge,
// broadcasting, not differentiable). A number on the left compares as the mirrored op: 2 < t is
// t > 2. Masks read as in PyTorch: t.index_put_({t < 0}, 0.0).
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, double b);
Tensor operator!=(const Tensor& a, double b);
Tensor operator<(const Tensor& a, double b);
Tensor operator<=(const Tensor& a, double b);
Tensor operator>(const Tensor& a, double b);
Tensor operator>=(const Tensor& a, double b);
Tensor operator==(double a, const Tensor& b);
Tensor operator!=(double a, const Tensor& b);
Tensor operator<(double a, const Tensor& b);
Tensor operator<=(double a, const Tensor& b);
Tensor operator>(double a, const Tensor& b);
Tensor operator>=(double a, const Tensor& b);

// Named tensors in a fixed order: state dicts (registration order, depth first), optimizer
// states, checkpoint files.
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// Internal: a new tensor viewing `storage` (used by creation functions and views).
Tensor make_tensor(std::shared_ptr<Storage> storage, DType dtype, Shape sizes, Strides strides,
                   std::int64_t storage_offset = 0);

namespace detail {
// The checks of Tensor::accessor and the packed accessors (core/tensor.cpp): defined, T's dtype,
// N dims, a CPU tensor for accessor() (`on_host`), offsets within int32 for packed_accessor32.
void check_accessor(const Tensor& t, DType dtype, std::size_t dims, const char* op, bool on_host,
                    bool int32_offsets);
}  // namespace detail

template <typename T, std::size_t N>
TensorAccessor<T, N> Tensor::accessor() const& {
  detail::check_accessor(*this, dtype_of<T>, N, "accessor", true, false);
  return TensorAccessor<T, N>(data_ptr<T>(), impl().sizes().data(), impl().strides().data());
}
template <typename T, std::size_t N>
PackedTensorAccessor64<T, N> Tensor::packed_accessor64() const& {
  detail::check_accessor(*this, dtype_of<T>, N, "packed_accessor64", false, false);
  return PackedTensorAccessor64<T, N>(data_ptr<T>(), impl().sizes().data(),
                                      impl().strides().data());
}
template <typename T, std::size_t N>
PackedTensorAccessor32<T, N> Tensor::packed_accessor32() const& {
  detail::check_accessor(*this, dtype_of<T>, N, "packed_accessor32", false, true);
  return PackedTensorAccessor32<T, N>(data_ptr<T>(), impl().sizes().data(),
                                      impl().strides().data());
}

namespace autograd {
// Internal: the name of t's grad_fn ("MulBackward"), empty for a leaf; printing's grad_fn=<...>.
// Defined by the autograd layer (autograd/tensor_autograd.cpp), as Tensor's autograd methods are.
std::string grad_fn_name(const Tensor& t);
}  // namespace autograd

}  // namespace leangrad

// TensorIndex holds a Tensor, so it is defined once Tensor is complete; every user of Tensor::index
// gets it from here, as before.
#include <leangrad/core/indexing.h>
