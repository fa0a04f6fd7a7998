// Tensor metadata: sizes, strides, contiguity, raw pointers, and construction of new tensors.
#include <leangrad/core/tensor.h>

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include <leangrad/core/cuda.h>
#include <leangrad/core/views.h>

namespace leangrad {

Tensor make_tensor(std::shared_ptr<Storage> storage, DType dtype, Shape sizes, Strides strides,
                   std::int64_t storage_offset) {
  // Every tensor's elements lie inside its storage: numel() and the kernels' offsets can then be
  // computed without overflow checks.
  const std::int64_t extent =
      checked_extent(sizes, strides, storage_offset, element_size(dtype), "tensor");
  LG_CHECK_SHAPE(storage == nullptr ||
                     static_cast<std::size_t>(extent) * element_size(dtype) <= storage->nbytes(),
                 "tensor of shape ", sizes, " (strides ", shape_str(strides), ", offset ",
                 storage_offset, ") reaches past its storage of ", storage->nbytes(), " bytes");
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::move(storage);
  impl->storage_offset = storage_offset;
  impl->set_geometry(std::move(sizes), std::move(strides));
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

std::int64_t Tensor::size(std::int64_t dim) const {
  return shape()[wrap_dim(dim, this->dim(), "size")];
}

std::int64_t Tensor::stride(std::int64_t dim) const {
  return strides()[wrap_dim(dim, this->dim(), "stride")];
}

void TensorImpl::set_geometry(Shape sizes, Strides strides) {
  std::int64_t numel = 1;
  for (const std::int64_t size : sizes)
    numel *= size;  // the caller checked the product: no overflow
  sizes_ = std::move(sizes);
  strides_ = std::move(strides);
  numel_ = numel;
}

void TensorImpl::swap_geometry(TensorImpl& other) noexcept {
  std::swap(sizes_, other.sizes_);
  std::swap(strides_, other.strides_);
  std::swap(numel_, other.numel_);
}

bool Tensor::is_contiguous() const {
  return leangrad::is_contiguous(shape(), strides());
}

bool Tensor::shares_storage(const Tensor& other) const {
  return defined() && other.defined() && storage() == other.storage();
}

bool Tensor::is_signed() const {
  return dtype() != kUInt8 && dtype() != kBool;
}

bool Tensor::is_set_to(const Tensor& other) const {
  return shares_storage(other) && storage_offset() == other.storage_offset() &&
         shape() == other.shape() && strides() == other.strides();
}

bool Tensor::is_non_overlapping_and_dense() const {
  // Sorted by stride (size-1 dims anywhere), each stride must be the product of the sizes below.
  if (numel() == 0) return true;
  std::vector<std::int64_t> dims;
  for (std::int64_t d = 0; d < dim(); ++d)
    if (shape()[d] != 1) dims.push_back(d);
  std::sort(dims.begin(), dims.end(),
            [&](std::int64_t a, std::int64_t b) { return strides()[a] < strides()[b]; });
  std::int64_t expected = 1;
  for (const std::int64_t d : dims) {
    if (strides()[d] != expected) return false;
    expected *= shape()[d];  // bounded by numel
  }
  return true;
}

namespace detail {

void check_accessor(const Tensor& t, DType dtype, std::size_t dims, const char* op, bool on_host,
                    bool int32_offsets) {
  LG_CHECK(t.defined(), op, ": expected a defined tensor, got an undefined Tensor()");
  LG_CHECK_DTYPE(t.dtype() == dtype, op, "<", dtype_name(dtype), ", ", dims,
                 ">: the tensor has dtype ", t.dtype(), " (shape ", t.shape(), ")");
  LG_CHECK_SHAPE(static_cast<std::size_t>(t.dim()) == dims, op, "<", dtype_name(dtype), ", ", dims,
                 ">: expected a ", dims, "-d tensor, got shape ", t.shape());
  LG_CHECK_DEVICE(!on_host || t.is_cpu(), op,
                  ": expected a CPU tensor (the accessor reads memory on the host), got one on ",
                  t.device(), "; packed_accessor64 gives an accessor for a CUDA kernel");
  if (int32_offsets) {
    // The largest offset any subscript reaches, and every size and stride, fit int32.
    constexpr std::int64_t limit = std::numeric_limits<std::int32_t>::max();
    std::int64_t reach = 0;
    bool fits = true;
    for (std::int64_t d = 0; d < t.dim(); ++d) {
      fits = fits && t.size(d) <= limit && t.stride(d) <= limit;
      if (t.size(d) > 0) reach += (t.size(d) - 1) * t.stride(d);  // within the storage
    }
    LG_CHECK_SHAPE(fits && reach <= limit, op, ": a tensor of shape ", t.shape(), " (strides ",
                   shape_str(t.strides()), ") has offsets beyond int32; use packed_accessor64");
  }
}

}  // namespace detail

Tensor Tensor::variable_data() const {
  Tensor out = views::alias(*this);
  out.impl().version_counter = std::make_shared<VersionCounter>();
  return out;
}

Tensor Tensor::tensor_data() const {
  return views::alias(*this);
}

void* Tensor::data_ptr() const {
  auto* base = static_cast<char*>(storage()->data());
  if (base == nullptr) {
    LG_CHECK(storage()->has_memory(), "a tensor of shape ", shape(), " on ", device(),
             " refers to memory that was given back (an offloaded parameter's device copy used "
             "outside the forward or backward of its module: call the module as module(x), not "
             "module.forward(x), so that ParameterOffload's hooks run; keep the ParameterOffload "
             "alive until backward has run; a unit's second result kept aside, not returned, is "
             "differentiated before the unit's parameters come back)");
    return nullptr;
  }
  return base + storage_offset() * static_cast<std::int64_t>(element_size());
}

void Tensor::set_data(const Tensor& other) const {
  LG_CHECK(other.defined(), "set_data: expected a defined tensor");
  TensorImpl& self = impl();
  const TensorImpl& source = other.impl();
  self.storage = source.storage;
  self.storage_offset = source.storage_offset;
  self.set_geometry(source.sizes(), source.strides());
  self.dtype = source.dtype;
  bump_version();
}

void Tensor::swap_data(const Tensor& other) const noexcept {
  TensorImpl& self = *impl_;
  TensorImpl& source = *other.impl_;
  std::swap(self.storage, source.storage);
  std::swap(self.storage_offset, source.storage_offset);
  self.swap_geometry(source);
  std::swap(self.dtype, source.dtype);
  self.version_counter->version.fetch_add(1);
  source.version_counter->version.fetch_add(1);
}

void Tensor::record_stream(const cuda::Stream& stream) const {
  LG_CHECK_DEVICE(is_cuda() || is_pinned(),
                  "record_stream: expected a CUDA tensor or a pinned CPU tensor, got a tensor on ",
                  device());
  const DataPtr& data = storage()->data_ptr();
  if (!data) return;
  CachingAllocator& allocator = is_pinned() ? pinned_allocator() : allocator_for(device());
  allocator.record_stream(data, stream.ref());
}

}  // namespace leangrad
