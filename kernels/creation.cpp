// The filling creation functions (kernels/creation.h): constants, ranges and random numbers,
// written by the kernels of kernels/ops.h on the tensor's device.
#include "kernels/creation.h"

#include <algorithm>
#include <cmath>

#include "core/generator.h"
#include "kernels/ops.h"

namespace leangrad {

namespace {

Tensor filled(const char* op, const Shape& shape, double value, const TensorOptions& options) {
  Tensor t = empty_for(op, shape, options.requires_grad(false));
  ops::fill_(t, value);
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

// A tensor of random numbers: `fill` is ops::uniform_ or ops::normal_ with their parameters.
template <typename Fill>
Tensor random(const char* op, const Shape& shape, const TensorOptions& options, Fill fill) {
  LG_CHECK_DTYPE(is_floating(options.dtype()), op, ": expected a floating dtype, got ",
                 options.dtype());
  Tensor t = empty_for(op, shape, options.requires_grad(false));
  fill(t, default_generator(options.device()));
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

}  // namespace

Tensor full(const Shape& shape, double value, const TensorOptions& options) {
  return filled("full", shape, value, options);
}
Tensor zeros(const Shape& shape, const TensorOptions& options) {
  return filled("zeros", shape, 0.0, options);
}
Tensor ones(const Shape& shape, const TensorOptions& options) {
  return filled("ones", shape, 1.0, options);
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
  const std::int64_t n = std::max<std::int64_t>(static_cast<std::int64_t>(count), 0);
  // Computed in double on the host, then converted: exact for every integer range. The host
  // buffer comes from the allocator, so a range too large for memory is an OutOfMemoryError.
  Tensor values = empty_for("arange", {n}, kFloat64);
  double* v = values.data_ptr<double>();
  for (std::int64_t i = 0; i < n; ++i)
    v[i] = start + static_cast<double>(i) * step;
  Tensor t = values.to(options.dtype()).to(options.device());
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

Tensor rand(const Shape& shape, const TensorOptions& options) {
  return random("rand", shape, options,
                [](const Tensor& t, Generator& gen) { ops::uniform_(t, 0.0, 1.0, gen); });
}

Tensor randn(const Shape& shape, const TensorOptions& options) {
  return random("randn", shape, options,
                [](const Tensor& t, Generator& gen) { ops::normal_(t, 0.0, 1.0, gen); });
}

}  // namespace leangrad
