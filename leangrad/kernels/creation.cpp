// The filling creation functions (kernels/creation.h): constants, ranges and random numbers,
// written by the kernels of kernels/ops.h on the tensor's device.
#include <leangrad/kernels/creation.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <leangrad/core/generator.h>
#include <leangrad/core/permutation.h>
#include <leangrad/core/views.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/special_math.h>

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

// n values value(i) computed in double on the host, rounded once to options' dtype on its device
// (arange, linspace, logspace, the windows). The host buffer comes from the allocator, so n too
// large for memory is an OutOfMemoryError.
template <typename Value>
Tensor from_host_values(const char* op, std::int64_t n, const TensorOptions& options, Value value) {
  Tensor values = empty_for(op, {n}, kFloat64);
  double* v = values.data_ptr<double>();
  for (std::int64_t i = 0; i < n; ++i)
    v[i] = value(i);
  Tensor t = values.to(options.dtype()).to(options.device());
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

// Value i of linspace(start, end, steps): PyTorch's two-sided formula, start + i step for the
// first half and end - (steps - 1 - i) step for the second, so both ends are exact.
double linspace_value(double start, double end, std::int64_t steps, std::int64_t i) {
  if (steps == 1) return start;  // one value: start, as PyTorch
  const double step = (end - start) / static_cast<double>(steps - 1);
  return i < steps / 2 ? start + step * static_cast<double>(i)
                       : end - step * static_cast<double>(steps - 1 - i);
}

// A window of window_length values: formula(i, N) for the symmetric window of N points (N >= 2),
// the first window_length of the window of window_length + 1 points when periodic (Note
// [Windows]). Lengths 0 and 1 give () and (1).
template <typename Formula>
Tensor window(const char* op, std::int64_t window_length, bool periodic,
              const TensorOptions& options, Formula formula) {
  LG_CHECK_SHAPE(window_length >= 0, op, ": expected window_length >= 0, got ", window_length);
  LG_CHECK_DTYPE(is_floating(options.dtype()), op, ": expected a floating dtype, got ",
                 options.dtype());
  if (window_length <= 1) return filled(op, {window_length}, 1.0, options);
  const std::int64_t points = periodic ? window_length + 1 : window_length;
  return from_host_values(op, window_length, options, [&](std::int64_t i) {
    return formula(static_cast<double>(i), static_cast<double>(points));
  });
}

constexpr double kTwoPi = 6.283185307179586476925286766559;

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
Tensor zeros_like(const Tensor& t, const TensorOptions& options) {
  return zeros(t.shape(), like_options("zeros_like", t, options));
}
Tensor ones_like(const Tensor& t, const TensorOptions& options) {
  return ones(t.shape(), like_options("ones_like", t, options));
}
Tensor full_like(const Tensor& t, double value, const TensorOptions& options) {
  return full(t.shape(), value, like_options("full_like", t, options));
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
  if (n == 0) return from_host_values("arange", 0, options, [](std::int64_t) { return 0.0; });
  // Every value must fit the dtype (the range is monotonic: its ends suffice), else it would wrap
  // or saturate (arange(0, 1e19, 1e18, kInt32)); an int64 range is computed in int64, so values
  // beyond 2^53 are exact (in double, [2^53, 2^53 + 8) repeated some and reached its end).
  const double final_value = first + static_cast<double>(n - 1) * delta;
  // (int64 below 2^63: scalar_fits takes 2^63, INT64_MAX rounded, which fill saturates but a
  // conversion below would not.)
  const auto fits = [&](double v) {
    return options.dtype() == DType::Int64 ? v >= -0x1p63 && v < 0x1p63
                                           : scalar_fits(v, options.dtype());
  };
  LG_CHECK_DTYPE(fits(first) && fits(final_value) && (!integral || fits(delta)), "arange: [", start,
                 ", ", end, ") in steps of ", step, " holds values that do not fit in ",
                 options.dtype());
  if (options.dtype() == DType::Int64) {
    Tensor values = empty_for("arange", {n}, kInt64);
    auto* v = values.data_ptr<std::int64_t>();
    const auto first_i = static_cast<std::int64_t>(first),
               delta_i = static_cast<std::int64_t>(delta);
    // The last value exactly (final_value is rounded near 2^63, and the count was taken in
    // double): every value lies between it and first.
    const __int128 last_i = __int128{first_i} + __int128{n - 1} * delta_i;
    LG_CHECK_DTYPE(last_i >= std::numeric_limits<std::int64_t>::min() &&
                       last_i <= std::numeric_limits<std::int64_t>::max(),
                   "arange: [", start, ", ", end, ") in steps of ", step,
                   " holds values that do not fit in ", options.dtype());
    for (std::int64_t i = 0; i < n; ++i)
      v[i] = static_cast<std::int64_t>(__int128{first_i} + __int128{i} * delta_i);
    return values.to(options.device());
  }
  // Computed in double on the host, then converted: exact for the other integral dtypes.
  return from_host_values("arange", n, options,
                          [&](std::int64_t i) { return first + static_cast<double>(i) * delta; });
}

Tensor linspace(double start, double end, std::int64_t steps, const TensorOptions& options) {
  LG_CHECK_SHAPE(steps >= 0, "linspace: steps must be >= 0, got ", steps);
  LG_CHECK(std::isfinite(start) && std::isfinite(end),
           "linspace: start and end must be finite, got ", start, " and ", end);
  // Its values lie between its ends: both must fit the dtype, as torch checks (linspace(0, 1e10,
  // 3, kInt32) wrapped to [0, 705032704, 1410065408]).
  LG_CHECK_DTYPE(scalar_fits(start, options.dtype()) && scalar_fits(end, options.dtype()),
                 "linspace: start ", start, " and end ", end, " must fit in ", options.dtype());
  return from_host_values("linspace", steps, options,
                          [&](std::int64_t i) { return linspace_value(start, end, steps, i); });
}

Tensor logspace(double start, double end, std::int64_t steps, double base,
                const TensorOptions& options) {
  LG_CHECK_SHAPE(steps >= 0, "logspace: steps must be >= 0, got ", steps);
  LG_CHECK(std::isfinite(start) && std::isfinite(end),
           "logspace: start and end must be finite, got ", start, " and ", end);
  // base to linspace's values (exact at both ends), rounded once.
  return from_host_values("logspace", steps, options, [&](std::int64_t i) {
    return std::pow(base, linspace_value(start, end, steps, i));
  });
}

// Note [Windows]
// Each window is computed in double and rounded once to the dtype; PyTorch computes in the dtype
// (cos of float32 arguments), so its float32 values are within a few units of ours. The periodic
// window of length L is the symmetric window of L + 1 points without its last (PyTorch's rule),
// so it repeats seamlessly (the spectral analysis convention).
Tensor hann_window(std::int64_t window_length, bool periodic, const TensorOptions& options) {
  return window("hann_window", window_length, periodic, options,
                [](double i, double n) { return 0.5 - 0.5 * std::cos(kTwoPi * i / (n - 1.0)); });
}
Tensor hann_window(std::int64_t window_length, const TensorOptions& options) {
  return hann_window(window_length, true, options);
}

Tensor hamming_window(std::int64_t window_length, bool periodic, double alpha, double beta,
                      const TensorOptions& options) {
  return window("hamming_window", window_length, periodic, options, [&](double i, double n) {
    return alpha - beta * std::cos(kTwoPi * i / (n - 1.0));
  });
}
Tensor hamming_window(std::int64_t window_length, const TensorOptions& options) {
  return hamming_window(window_length, true, 0.54, 0.46, options);
}
Tensor hamming_window(std::int64_t window_length, bool periodic, const TensorOptions& options) {
  return hamming_window(window_length, periodic, 0.54, 0.46, options);
}

Tensor blackman_window(std::int64_t window_length, bool periodic, const TensorOptions& options) {
  return window("blackman_window", window_length, periodic, options, [](double i, double n) {
    const double x = kTwoPi * i / (n - 1.0);
    return 0.42 - 0.5 * std::cos(x) + 0.08 * std::cos(2.0 * x);
  });
}
Tensor blackman_window(std::int64_t window_length, const TensorOptions& options) {
  return blackman_window(window_length, true, options);
}

Tensor bartlett_window(std::int64_t window_length, bool periodic, const TensorOptions& options) {
  return window("bartlett_window", window_length, periodic, options,
                [](double i, double n) { return 1.0 - std::fabs(2.0 * i / (n - 1.0) - 1.0); });
}
Tensor bartlett_window(std::int64_t window_length, const TensorOptions& options) {
  return bartlett_window(window_length, true, options);
}

Tensor kaiser_window(std::int64_t window_length, bool periodic, double beta,
                     const TensorOptions& options) {
  LG_CHECK(beta >= 0.0, "kaiser_window: expected beta >= 0, got ", beta);
  // I0(a) / I0(beta) = I0e(a) / I0e(beta) exp(a - beta): no overflow for a large beta.
  const double i0e_beta = kernels::special_math::bessel_i0(beta, /*scaled=*/true);
  return window("kaiser_window", window_length, periodic, options, [&](double i, double n) {
    const double r = 2.0 * i / (n - 1.0) - 1.0;
    const double a = beta * std::sqrt(std::max(0.0, 1.0 - r * r));
    return kernels::special_math::bessel_i0(a, /*scaled=*/true) / i0e_beta * std::exp(a - beta);
  });
}
Tensor kaiser_window(std::int64_t window_length, const TensorOptions& options) {
  return kaiser_window(window_length, true, 12.0, options);
}
Tensor kaiser_window(std::int64_t window_length, bool periodic, const TensorOptions& options) {
  return kaiser_window(window_length, periodic, 12.0, options);
}

Tensor scalar_tensor(double value, const TensorOptions& options) {
  return filled("scalar_tensor", {}, value, options);
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

Tensor rand_like(const Tensor& t, const TensorOptions& options) {
  return rand(t.shape(), like_options("rand_like", t, options));
}

Tensor randn_like(const Tensor& t, const TensorOptions& options) {
  return randn(t.shape(), like_options("randn_like", t, options));
}

Tensor randint(std::int64_t low, std::int64_t high, const Shape& shape,
               const TensorOptions& options) {
  LG_CHECK(low < high, "randint: expected low < high, got low ", low, ", high ", high);
  // high - low in unsigned arithmetic cannot overflow; beyond 2^53 a double cannot hold every
  // value of the range, so the draw would not be uniform.
  const auto range = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
  LG_CHECK(range <= (std::uint64_t{1} << 53), "randint: the range [", low, ", ", high,
           ") has more than 2^53 values");
  // Every value drawn must be an integer the dtype holds (PyTorch checks from and to - 1 so): a
  // uint8 draw in [0, 1000) wrapped mod 256, a float16 one in [0, 100000) reached inf.
  const auto [lowest, highest] = exact_integer_bounds(options.dtype());
  LG_CHECK_DTYPE(low >= lowest && high - 1 <= highest, "randint: values in [", low, ", ", high,
                 ") do not fit dtype ", options.dtype(), ", which holds the integers [", lowest,
                 ", ", highest, "] exactly");
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

Tensor randint_like(const Tensor& t, std::int64_t high, const TensorOptions& options) {
  return randint_like(t, 0, high, options);
}

Tensor randint_like(const Tensor& t, std::int64_t low, std::int64_t high,
                    const TensorOptions& options) {
  return randint(low, high, t.shape(), like_options("randint_like", t, options));
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
