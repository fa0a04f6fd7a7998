// Creation functions. Memory comes from the device's caching allocator; fills and random numbers
// go through the kernels of kernels/ops.h, so they run on the tensor's device.
#include "core/creation.h"

#include <cmath>

#include "core/generator.h"
#include "kernels/ops.h"

namespace leangrad {

Tensor empty(const Shape& shape, const TensorOptions& options) {
  const std::int64_t numel = shape_numel(shape);
  const std::size_t nbytes = static_cast<std::size_t>(numel) * element_size(options.dtype());
  auto storage = Storage::allocate(nbytes, options.device(), options.pinned_memory());
  Tensor t = make_tensor(std::move(storage), options.dtype(), shape, contiguous_strides(shape));
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

Tensor full(const Shape& shape, double value, const TensorOptions& options) {
  Tensor t = empty(shape, options.requires_grad(false));
  ops::fill_(t, value);
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

Tensor zeros(const Shape& shape, const TensorOptions& options) {
  return full(shape, 0.0, options);
}
Tensor ones(const Shape& shape, const TensorOptions& options) {
  return full(shape, 1.0, options);
}
Tensor empty_like(const Tensor& t) {
  return empty(t.shape(), t.options());
}
Tensor zeros_like(const Tensor& t) {
  return zeros(t.shape(), t.options());
}
Tensor ones_like(const Tensor& t) {
  return ones(t.shape(), t.options());
}

Tensor arange(double end, const TensorOptions& options) {
  return arange(0.0, end, 1.0, options);
}

Tensor arange(double start, double end, double step, const TensorOptions& options) {
  LG_CHECK(step != 0.0, "arange: step must be non-zero");
  LG_CHECK(std::isfinite(start) && std::isfinite(end) && std::isfinite(step),
           "arange: start, end and step must be finite, got ", start, ", ", end, ", ", step);
  LG_CHECK((end - start) / step >= 0 || start == end, "arange: step ", step,
           " moves away from end (start ", start, ", end ", end, ")");
  const auto n = static_cast<std::int64_t>(std::ceil((end - start) / step));
  // Computed in double on the host, then converted: exact for every integer range.
  std::vector<double> values(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)));
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = start + static_cast<double>(i) * step;
  Tensor t = tensor(values).to(options.dtype()).to(options.device());
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

Tensor rand(const Shape& shape, const TensorOptions& options) {
  Tensor t = empty(shape, options.requires_grad(false));
  ops::uniform_(t, 0.0, 1.0, default_generator(options.device()));
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

Tensor randn(const Shape& shape, const TensorOptions& options) {
  Tensor t = empty(shape, options.requires_grad(false));
  ops::normal_(t, 0.0, 1.0, default_generator(options.device()));
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
  const std::int64_t numel = shape_numel(shape);
  LG_CHECK(data != nullptr || numel == 0, "from_blob: null data pointer for shape ", shape);
  const std::size_t nbytes = static_cast<std::size_t>(numel) * element_size(options.dtype());
  DataPtr ptr(data, new BlobContext{std::move(deleter)}, &delete_blob, options.device());
  auto storage = std::make_shared<Storage>(std::move(ptr), nbytes, options.device(), false);
  Tensor t = make_tensor(std::move(storage), options.dtype(), shape, contiguous_strides(shape));
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

template <typename T>
Tensor tensor(const std::vector<T>& values, const Shape& shape, const TensorOptions& options) {
  const Shape final_shape = shape.empty() ? Shape{static_cast<std::int64_t>(values.size())} : shape;
  LG_CHECK_SHAPE(shape_numel(final_shape) == static_cast<std::int64_t>(values.size()),
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
