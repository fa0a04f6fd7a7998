// The filling creation functions (kernels/creation.h): constants, ranges and random numbers,
// written by the kernels of kernels/ops.h on the tensor's device.
#include "kernels/creation.h"

#include <cmath>

#include "core/generator.h"
#include "kernels/ops.h"

namespace leangrad {

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
  const double count = std::ceil((end - start) / step);
  // A count past what fits in memory would also be undefined to convert to int64 (1e30).
  LG_CHECK_SHAPE(count <= static_cast<double>(kMaxTensorBytes / 8), "arange: [", start, ", ", end,
                 ") in steps of ", step, " has ", count, " elements, too many for memory");
  const auto n = static_cast<std::int64_t>(count);
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

}  // namespace leangrad
