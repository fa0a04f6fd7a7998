// The filling creation functions (kernels/creation.h): constants, ranges and random numbers,
// written by the kernels of kernels/ops.h on the tensor's device.
#include <leangrad/kernels/creation.h>

#include <algorithm>
#include <cmath>

#include <leangrad/core/generator.h>
#include <leangrad/core/permutation.h>
#include <leangrad/core/views.h>
#include <leangrad/kernels/ops.h>

namespace leangrad {

namespace {

Tensor filled(const char* op, const Shape& shape, double value, const TensorOptions& options) {
  LG_CHECK(scalar_fits(value, options.dtype()), op, ": value ", value,
           " cannot be converted to dtype ", options.dtype(), " without overflow");
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
Tensor full_like(const Tensor& t, double value) {
  return full(t.shape(), value, t.options());
}

Tensor arange(double end, const TensorOptions& options) {
  return arange(0.0, end, 1.0, options);
}

// Note [arange of an integral dtype]
// PyTorch computes an integral range in int64 (its accumulate type): start, end and step are
// truncated toward zero first, so arange(0, 5, 1.5, kInt64) is 0, 1, 2, 3, 4 and a step that
// truncates to 0 is refused. The count, ceil((end - start) / step), is taken from the truncated
// values for int64 and from the given ones for the other integral dtypes (PyTorch special-cases
// int64 there): arange(0, 5, 1.5, kInt32) has ceil(5 / 1.5) = 4 values, 0, 1, 2, 3.
Tensor arange(double start, double end, double step, const TensorOptions& options) {
  LG_CHECK(std::isfinite(start) && std::isfinite(end) && std::isfinite(step),
           "arange: start, end and step must be finite, got ", start, ", ", end, ", ", step);
  const bool integral = is_integral(options.dtype());
  const double first = integral ? std::trunc(start) : start;
  const double last = integral ? std::trunc(end) : end;
  const double delta = integral ? std::trunc(step) : step;
  LG_CHECK(
      delta != 0.0, "arange: step must be non-zero",
      integral && step != 0.0 ? " (the step of an integral range is truncated to an integer)" : "");
  LG_CHECK((last - first) / delta >= 0 || first == last, "arange: step ", step,
           " moves away from end (start ", start, ", end ", end, ")");
  const double count = options.dtype() == DType::Int64 ? std::ceil((last - first) / delta)
                                                       : std::ceil((end - start) / step);
  // A count past what fits in memory would also be undefined to convert to int64 (1e30).
  LG_CHECK_SHAPE(count <= static_cast<double>(kMaxTensorBytes / 8), "arange: [", start, ", ", end,
                 ") in steps of ", step, " has ", count, " elements, too many for memory");
  const std::int64_t n = std::max<std::int64_t>(static_cast<std::int64_t>(count), 0);
  // Computed in double on the host, then converted: exact for every integer range. The host
  // buffer comes from the allocator, so a range too large for memory is an OutOfMemoryError.
  Tensor values = empty_for("arange", {n}, kFloat64);
  double* v = values.data_ptr<double>();
  for (std::int64_t i = 0; i < n; ++i)
    v[i] = first + static_cast<double>(i) * delta;
  Tensor t = values.to(options.dtype()).to(options.device());
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

Tensor linspace(double start, double end, std::int64_t steps, const TensorOptions& options) {
  LG_CHECK_SHAPE(steps >= 0, "linspace: steps must be >= 0, got ", steps);
  LG_CHECK(std::isfinite(start) && std::isfinite(end),
           "linspace: start and end must be finite, got ", start, " and ", end);
  Tensor values = empty_for("linspace", {steps}, kFloat64);
  double* v = values.data_ptr<double>();
  const double step = steps > 1 ? (end - start) / static_cast<double>(steps - 1) : 0.0;
  const std::int64_t half = steps / 2;
  for (std::int64_t i = 0; i < steps; ++i)
    v[i] = i < half ? start + step * static_cast<double>(i)
                    : end - step * static_cast<double>(steps - 1 - i);
  if (steps == 1) v[0] = start;  // one value: start, as PyTorch
  Tensor t = values.to(options.dtype()).to(options.device());
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

Tensor eye(std::int64_t n, const TensorOptions& options) {
  return eye(n, n, options);
}

Tensor eye(std::int64_t n, std::int64_t m, const TensorOptions& options) {
  LG_CHECK_SHAPE(n >= 0 && m >= 0, "eye: sizes must be >= 0, got ", n, " and ", m);
  Tensor t = empty_for("eye", {n, m}, options.requires_grad(false));
  ops::fill_(t, 0.0);
  // The diagonal is a strided view: element (i, i) is m + 1 elements after (i - 1, i - 1).
  if (n > 0 && m > 0) ops::fill_(views::as_strided(t, {std::min(n, m)}, {m + 1}, 0), 1.0);
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

Tensor rand_like(const Tensor& t) {
  return rand(t.shape(), t.options());
}

Tensor randn_like(const Tensor& t) {
  return randn(t.shape(), t.options());
}

Tensor randint(std::int64_t low, std::int64_t high, const Shape& shape,
               const TensorOptions& options) {
  LG_CHECK(low < high, "randint: expected low < high, got low ", low, ", high ", high);
  // high - low in unsigned arithmetic cannot overflow; beyond 2^53 a double cannot hold every
  // value of the range, so the draw would not be uniform.
  const auto range = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
  LG_CHECK(range <= (std::uint64_t{1} << 53), "randint: the range [", low, ", ", high,
           ") has more than 2^53 values");
  LG_CHECK_DTYPE(options.dtype() != DType::Bool || (low >= 0 && high <= 2), "randint: values in [",
                 low, ", ", high, ") do not fit dtype bool");
  // floor(u * range) for u uniform in [0, 1) in float64, at most range - 1 (u * range may round
  // up to range), plus low: in int64, exact.
  Tensor u = empty_for("randint", shape, options.dtype(kFloat64).requires_grad(false));
  ops::uniform_(u, 0.0, 1.0, default_generator(options.device()));
  ops::binary_(BinaryOp::Mul, u, static_cast<double>(range));
  Tensor k = u.to(kInt64);
  ops::binary_(BinaryOp::Minimum, k, static_cast<double>(range - 1));
  ops::binary_(BinaryOp::Add, k, static_cast<double>(low));
  Tensor t = k.to(options.dtype());
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

Tensor randint(std::int64_t high, const Shape& shape, const TensorOptions& options) {
  return randint(0, high, shape, options);
}

Tensor randperm(std::int64_t n, const TensorOptions& options) {
  LG_CHECK(n >= 0, "randperm: expected n >= 0, got ", n);
  // The largest integer the dtype holds with every integer below it.
  const DType dtype = options.dtype();
  double exact = 0;
  switch (dtype) {
    case DType::Float16:
      exact = 2048;
      break;
    case DType::BFloat16:
      exact = 256;
      break;
    case DType::Float32:
      exact = 16777216;
      break;
    case DType::Float64:
      exact = 9007199254740992.0;
      break;
    case DType::Int64:
      exact = 9223372036854775807.0;
      break;
    case DType::Int32:
      exact = 2147483647;
      break;
    case DType::UInt8:
      exact = 255;
      break;
    case DType::Bool:
      exact = 1;
      break;
  }
  LG_CHECK_DTYPE(n == 0 || static_cast<double>(n - 1) <= exact, "randperm: dtype ", dtype,
                 " cannot hold every index of a permutation of ", n);
  Tensor order = empty_for("randperm", {n}, TensorOptions(kInt64));
  const Generator::State s =
      default_generator(options.device()).reserve(static_cast<std::uint64_t>(n));
  philox_permutation(order.data_ptr<std::int64_t>(), n, s.seed, s.offset, 0);
  Tensor t = order.to(options.device()).to(dtype);
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

}  // namespace leangrad
