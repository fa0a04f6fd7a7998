// The creation functions of core: empty, empty_like, from_blob and tensor(values). Memory comes
// from the device's caching allocator. The ones that fill (zeros, full, arange, rand, ...) need
// kernels and live a layer up, in kernels/creation.cpp.
#include <leangrad/core/creation.h>

#include <leangrad/core/cuda.h>

namespace leangrad {

Tensor empty(const Shape& shape, const TensorOptions& options) {
  return empty_for("empty", shape, options);
}

Tensor empty_for(const char* op, const Shape& shape, const TensorOptions& options) {
  const std::int64_t numel = shape_numel(shape, op);
  const auto element_bytes = static_cast<std::int64_t>(element_size(options.dtype()));
  LG_CHECK_SHAPE(numel <= kMaxTensorBytes / element_bytes, op, ": a ", options.dtype(),
                 " tensor of shape ", shape, " needs more bytes than any memory (2^62 at most)");
  const std::size_t nbytes = checked_nbytes(numel, element_size(options.dtype()), op);
  const Device device = options.device();
  LG_CHECK_DEVICE(device.is_cpu() || (device.index >= 0 && device.index < cuda::device_count()), op,
                  ": cannot make a tensor on ", device, ": ", cuda::device_count(),
                  " CUDA device(s) visible (no GPU, or leangrad was built without CUDA)");
  auto storage = Storage::allocate(nbytes, options.device(), options.pinned_memory());
  Tensor t = make_tensor(std::move(storage), options.dtype(), shape, contiguous_strides(shape));
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

TensorOptions like_options(const char* op, const Tensor& t, const TensorOptions& options) {
  LG_CHECK(t.defined(), op, ": expected a defined tensor, got an undefined Tensor()");
  return t.options().merge_in(options);
}

Tensor empty_like(const Tensor& t, const TensorOptions& options) {
  return empty(t.shape(), like_options("empty_like", t, options));
}

Tensor empty_strided(const Shape& size, const Strides& stride, const TensorOptions& options) {
  const char* op = "empty_strided";
  LG_CHECK_SHAPE(size.size() == stride.size(), op, ": expected one stride per dim, got size ", size,
                 " and stride ", shape_str(stride));
  for (std::size_t d = 0; d < size.size(); ++d) {
    LG_CHECK_SHAPE(size[d] >= 0 && stride[d] >= 0, op,
                   ": expected sizes and strides >= 0, got size ", size, " and stride ",
                   shape_str(stride));
  }
  // The storage holds the elements up to the last one addressed (none for an empty size).
  const std::int64_t extent = checked_extent(size, stride, 0, element_size(options.dtype()), op);
  Tensor storage_owner = empty_for(op, {extent}, options.requires_grad(false));
  Tensor t = make_tensor(storage_owner.storage(), options.dtype(), size, stride);
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

namespace {
struct BlobContext {
  std::function<void(void*)> deleter;
};
void delete_blob(void* context, void* ptr) {
  auto* blob = static_cast<BlobContext*>(context);
  if (blob->deleter) blob->deleter(ptr);
  delete blob;
}
}  // namespace

Tensor from_blob(void* data, const Shape& shape, const TensorOptions& options,
                 std::function<void(void*)> deleter) {
  const std::int64_t numel = shape_numel(shape, "from_blob");
  LG_CHECK(data != nullptr || numel == 0, "from_blob: null data pointer for shape ", shape);
  const std::size_t nbytes = checked_nbytes(numel, element_size(options.dtype()), "from_blob");
  DataPtr ptr(data, new BlobContext{std::move(deleter)}, &delete_blob, options.device());
  auto storage = std::make_shared<Storage>(std::move(ptr), nbytes, options.device(), false);
  Tensor t = make_tensor(std::move(storage), options.dtype(), shape, contiguous_strides(shape));
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

template <typename T>
Tensor tensor(const std::vector<T>& values, const Shape& shape, const TensorOptions& options) {
  const Shape final_shape = shape.empty() ? Shape{static_cast<std::int64_t>(values.size())} : shape;
  LG_CHECK_SHAPE(shape_numel(final_shape, "tensor") == static_cast<std::int64_t>(values.size()),
                 "tensor: ", values.size(), " values do not fill shape ", final_shape);
  Tensor t = empty(final_shape, TensorOptions(dtype_of<T>));
  T* out = t.data_ptr<T>();
  for (std::size_t i = 0; i < values.size(); ++i)
    out[i] = values[i];  // vector<bool> too
  t = t.to(options.device());
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

template Tensor tensor(const std::vector<float>&, const Shape&, const TensorOptions&);
template Tensor tensor(const std::vector<double>&, const Shape&, const TensorOptions&);
template Tensor tensor(const std::vector<Half>&, const Shape&, const TensorOptions&);
template Tensor tensor(const std::vector<BFloat16>&, const Shape&, const TensorOptions&);
template Tensor tensor(const std::vector<std::int64_t>&, const Shape&, const TensorOptions&);
template Tensor tensor(const std::vector<std::int32_t>&, const Shape&, const TensorOptions&);
template Tensor tensor(const std::vector<std::uint8_t>&, const Shape&, const TensorOptions&);
template Tensor tensor(const std::vector<bool>&, const Shape&, const TensorOptions&);

}  // namespace leangrad
