// ops::activation and ops::activation_backward, the one-pass kernels of the activations (Note
// [Activations in one pass] in autograd/activations.cpp): every float16 and every bfloat16 value
// (up to 10^4 in magnitude) through f and g f' against the functions in double, each result
// rounded once from float math; float32 and float64 on a grid; leaky_relu, elu and hardtanh out of
// place bitwise their in-place kernels; any strides; bad arguments. Values and gradients against
// PyTorch and the gradchecks of the public functions are in tests/autograd/test_activations.cpp.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <leangrad/autograd/functions.h>
#include <leangrad/core/error.h>
#include <leangrad/core/half.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/elementwise_math.h>
#include <leangrad/kernels/ops.h>
#include "testing/tensor_testing.h"

namespace leangrad::test {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

struct Exact {
  double value;
  double slope;
};

// An activation with its parameters, and whether it has a one-rounding value (leaky_relu, elu
// and hardtanh have only a one-rounding gradient; their values are the in-place kernels').
struct Case {
  ActivationOp op;
  double p0 = 0.0;
  double p1 = 0.0;
  bool one_rounding_value = true;
};

// f(x) and f'(x) in double, written from the definitions (not the kernels' formulas): gelu with
// erfc, which has no cancellation for negative x. Parameters are exact in every dtype (softplus's
// beta a power of two, so beta x is exact and both sides take one side of the threshold; smooth
// l1's beta and huber's delta, so |x| = beta is a value of every dtype, on the linear side; the
// shrinks' lambda and threshold's threshold and value, so the kinks are values of every dtype,
// where PyTorch's side is taken).
Exact exact(const Case& c, double x) {
  const double sigmoid = 1 / (1 + std::exp(-x));
  switch (c.op) {
    case ActivationOp::Gelu: {
      const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
      return {x * cdf, cdf + x * std::exp(-x * x / 2) / std::sqrt(2 * kPi)};
    }
    case ActivationOp::GeluTanh: {
      const double k = std::sqrt(2 / kPi);
      const double t = std::tanh(k * (x + 0.044715 * x * x * x));
      const double sech2 = 1 / (std::cosh(k * (x + 0.044715 * x * x * x)) *
                                std::cosh(k * (x + 0.044715 * x * x * x)));
      return {0.5 * x * (1 + t), 0.5 * (1 + t) + 0.5 * x * sech2 * k * (1 + 3 * 0.044715 * x * x)};
    }
    case ActivationOp::Silu:
      return {x * sigmoid, sigmoid * (1 + x * (1 - sigmoid))};
    case ActivationOp::Mish: {
      const double softplus = x > 30 ? x : std::log1p(std::exp(x));
      const double t = std::tanh(softplus);
      return {x * t, t + x * sigmoid / (std::cosh(softplus) * std::cosh(softplus))};
    }
    case ActivationOp::Softplus: {
      const double z = c.p0 * x;
      if (z > c.p1) return {x, 1.0};
      return {std::log1p(std::exp(z)) / c.p0, 1 / (1 + std::exp(-z))};
    }
    case ActivationOp::SmoothL1: {  // of a difference x; beta = p0
      const double z = std::fabs(x);
      if (z < c.p0) return {0.5 * z * z / c.p0, x / c.p0};
      return {z - 0.5 * c.p0, x > 0 ? 1.0 : -1.0};
    }
    case ActivationOp::Huber: {  // delta = p0
      const double z = std::fabs(x);
      if (z < c.p0) return {0.5 * z * z, x};
      return {c.p0 * (z - 0.5 * c.p0), x > 0 ? c.p0 : -c.p0};
    }
    case ActivationOp::LeakyRelu:
      return {0.0, x > 0 ? 1.0 : c.p0};
    case ActivationOp::Elu:
      return {0.0, x > 0 ? c.p1 : c.p1 * c.p0 * std::exp(x)};
    case ActivationOp::EluResult:  // a gradient of the output: EluGradientFromTheOutput below
      break;
    case ActivationOp::Hardtanh:
      return {0.0, x <= c.p0 || x >= c.p1 ? 0.0 : 1.0};
    case ActivationOp::Clamp:  // the bounds pass the gradient; a NaN bound is absent
      return {0.0, (std::isnan(c.p0) || x >= c.p0) && (std::isnan(c.p1) || x <= c.p1) ? 1.0 : 0.0};
    case ActivationOp::Hardswish: {  // PyTorch's CPU slopes: -3 the middle piece's, 3 the right's
      const double relu6 = std::min(std::max(x + 3, 0.0), 6.0);
      return {x * relu6 / 6, x < -3 ? 0.0 : (x < 3 ? (2 * x + 3) / 6 : 1.0)};
    }
    case ActivationOp::Hardsigmoid:
      return {std::min(std::max(x + 3, 0.0), 6.0) / 6, x > -3 && x < 3 ? 1.0 / 6 : 0.0};
    case ActivationOp::LogSigmoid:  // -log(1 + e^-x), sigmoid(-x)
      return {x < 0 ? x - std::log1p(std::exp(x)) : -std::log1p(std::exp(-x)),
              1 / (1 + std::exp(x))};
    case ActivationOp::Softsign:
      return {x / (1 + std::fabs(x)), 1 / ((1 + std::fabs(x)) * (1 + std::fabs(x)))};
    case ActivationOp::Tanhshrink:
      return {x - std::tanh(x), std::tanh(x) * std::tanh(x)};
    case ActivationOp::Celu:
      return {x > 0 ? x : c.p0 * std::expm1(x / c.p0), x > 0 ? 1.0 : std::exp(x / c.p0)};
    case ActivationOp::Softshrink: {
      const bool inside = std::fabs(x) <= c.p0;
      return {inside ? 0.0 : (x > 0 ? x - c.p0 : x + c.p0), inside ? 0.0 : 1.0};
    }
    case ActivationOp::Hardshrink: {
      const bool inside = std::fabs(x) <= c.p0;
      return {inside ? 0.0 : x, inside ? 0.0 : 1.0};
    }
    case ActivationOp::Threshold:
      return {x <= c.p0 ? c.p1 : x, x <= c.p0 ? 0.0 : 1.0};
  }
  ADD_FAILURE() << "unknown op";
  return {};
}

const Case kCases[] = {
    {ActivationOp::Gelu},
    {ActivationOp::GeluTanh},
    {ActivationOp::Silu},
    {ActivationOp::Mish},
    {ActivationOp::Softplus, 1.0, 20.0},
    {ActivationOp::Softplus, 2.0, 3.0},  // threshold at x = 1.5
    {ActivationOp::SmoothL1, 1.0},
    {ActivationOp::SmoothL1, 0.25},
    {ActivationOp::Huber, 1.0},
    {ActivationOp::Huber, 2.5},
    {ActivationOp::LeakyRelu, 0.25, 0.0, false},
    {ActivationOp::Elu, 1.25, 1.0, false},
    {ActivationOp::Elu, 1.6732632423543772, 1.0507009873554805, false},  // selu
    {ActivationOp::Hardtanh, -0.75, 1.5, false},
    {ActivationOp::Clamp, -0.75, 1.5, false},
    {ActivationOp::Clamp, std::numeric_limits<double>::quiet_NaN(), 0.5, false},   // clamp_max
    {ActivationOp::Clamp, -2.0, std::numeric_limits<double>::quiet_NaN(), false},  // clamp_min
    {ActivationOp::Hardswish},
    {ActivationOp::Hardsigmoid},
    {ActivationOp::LogSigmoid},
    {ActivationOp::Softsign},
    {ActivationOp::Tanhshrink},
    {ActivationOp::Celu, 1.0},
    {ActivationOp::Celu, 0.5},  // a power of two: x / alpha exact
    {ActivationOp::Softshrink, 0.5},
    {ActivationOp::Hardshrink, 1.5},
    {ActivationOp::Threshold, 0.25, -2.0},
};

std::string case_name(const Case& c) {
  return std::string(op_name(c.op)) + "(" + std::to_string(c.p0) + ", " + std::to_string(c.p1) +
         ")";
}

// Every finite value of a 16-bit dtype with |x| <= 10^4.
std::vector<double> every_value(DType dtype) {
  std::vector<double> values;
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const double v = dtype == kFloat16 ? static_cast<float>(Half::from_bits(bits))
                                       : static_cast<float>(BFloat16::from_bits(bits));
    if (std::isfinite(v) && std::fabs(v) <= 1e4) values.push_back(v);
  }
  return values;
}

// The spacing of dtype's values at |v| (its smallest subnormal's below the normal range).
double ulp_of(DType dtype, double v) {
  const int mantissa_bits = dtype == kFloat16 ? 10 : 7;
  const int min_exponent = dtype == kFloat16 ? -14 : -126;
  const int e = v == 0 ? min_exponent : std::max(std::ilogb(std::fabs(v)), min_exponent);
  return std::ldexp(1.0, e - mantissa_bits);
}

// A 16-bit result is the float computation rounded once: within half a 16-bit ulp of the exact
// value, plus the float math's own error, a few tens of float roundoffs (u = 2^-24) of the
// largest intermediate, max(1, |x|) (as tests/autograd/test_activations.cpp's 32 u). Rounding the
// intermediate results to 16 bits, as a composition of ops does, is off by an ulp or more.
TEST(ActivationKernels, SixteenBitResultsAreRoundedOnce) {
  for (const DType dtype : {kFloat16, kBFloat16}) {
    const std::vector<double> xs = every_value(dtype);
    const auto n = static_cast<std::int64_t>(xs.size());
    const Tensor x = make_tensor(xs, {n}, dtype);
    const Tensor ones = full({n}, 1.0, dtype);
    for (const Case& c : kCases) {
      SCOPED_TRACE(case_name(c) + " " + dtype_name(dtype));
      const std::vector<double> y = to_vector(ops::activation(c.op, x, c.p0, c.p1));
      const std::vector<double> dx = to_vector(ops::activation_backward(c.op, ones, x, c.p0, c.p1));
      for (std::int64_t i = 0; i < n; ++i) {
        const Exact e = exact(c, xs[i]);
        const double float_error = 32 * 0x1p-24 * std::max(1.0, std::fabs(xs[i]));
        ASSERT_TRUE(!c.one_rounding_value ||
                    std::fabs(y[i] - e.value) <= ulp_of(dtype, e.value) / 2 + float_error)
            << "f(" << xs[i] << ") = " << y[i] << ", exact " << e.value;
        ASSERT_LE(std::fabs(dx[i] - e.slope), ulp_of(dtype, e.slope) / 2 + float_error)
            << "f'(" << xs[i] << ") = " << dx[i] << ", exact " << e.slope;
      }
    }
  }
}

// float32 and float64 on a grid over [-12, 12], within 32 roundoffs of max(1, |x|); the
// backward's upstream gradient multiplies in with one more rounding.
TEST(ActivationKernels, Float32AndFloat64MatchTheDefinitions) {
  std::vector<double> xs;
  for (int i = -1200; i <= 1200; ++i)
    xs.push_back(i / 100.0 + 0.003);
  const auto n = static_cast<std::int64_t>(xs.size());
  for (const DType dtype : {kFloat32, kFloat64}) {
    const double u = dtype == kFloat32 ? 0x1p-24 : 0x1p-53;
    const Tensor x = make_tensor(xs, {n}, dtype);
    const Tensor g = full({n}, -1.5, dtype);
    for (const Case& c : kCases) {
      SCOPED_TRACE(case_name(c) + " " + dtype_name(dtype));
      const std::vector<double> xr = to_vector(x);  // the inputs as rounded to dtype
      const std::vector<double> y = to_vector(ops::activation(c.op, x, c.p0, c.p1));
      const std::vector<double> dx = to_vector(ops::activation_backward(c.op, g, x, c.p0, c.p1));
      for (std::int64_t i = 0; i < n; ++i) {
        const Exact e = exact(c, xr[i]);
        const double bound = 32 * u * std::max(1.0, std::fabs(xr[i]));
        if (c.one_rounding_value) {
          ASSERT_NEAR(y[i], e.value, bound) << "x = " << xr[i];
        }
        ASSERT_NEAR(dx[i], -1.5 * e.slope, 1.5 * bound) << "x = " << xr[i];
      }
    }
  }
}

// leaky_relu, elu (selu), hardtanh and clamp out of place write the bits of their in-place
// kernels, which tests/kernels/test_elementwise_inplace.cpp and
// tests/autograd/test_inplace_unary.cpp check against the compositions, so elu(x) and elu_(x)
// agree.
TEST(ActivationKernels, OutOfPlaceWritesTheInPlaceBits) {
  for (const DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    const Tensor x = mul(randn({1000}), 4.0).to(dtype);
    for (const Case& c : kCases) {
      if (c.one_rounding_value) continue;
      SCOPED_TRACE(case_name(c) + " " + dtype_name(dtype));
      const Tensor in_place = x.clone();
      ops::activation_(c.op, in_place, c.p0, c.p1);
      EXPECT_TRUE(equal(ops::activation(c.op, x, c.p0, c.p1), in_place));
    }
  }
}

// op(p0, p1) of x (every_sixteen_bit_value's 65,536 values), bitwise `want`: out of place, in place
// on a copy, and through a strided input, a transposed (256, 256) view of x, whose result
// transposed back is in x's order.
void expect_bits_out_of_place_in_place_and_strided(ActivationOp op, const Tensor& x, double p0,
                                                   double p1,
                                                   const std::vector<std::uint16_t>& want) {
  EXPECT_EQ(sixteen_bit_patterns(ops::activation(op, x, p0, p1)), want);
  const Tensor in_place = x.clone();
  ops::activation_(op, in_place, p0, p1);
  EXPECT_EQ(sixteen_bit_patterns(in_place), want);
  const Tensor transposed = x.view({256, 256}).t();
  EXPECT_EQ(sixteen_bit_patterns(ops::activation(op, transposed, p0, p1).t()), want);
}

// hardtanh and clamp of float16 and bfloat16 (Note [16-bit hardtanh and clamp in float lanes] in
// kernels/cpu/elementwise_activation.cpp) against their element functors of
// kernels/elementwise_math.h, the specification CUDA runs, applied here one value at a time: every
// bit pattern (both signs of NaN with every payload, the infinities, the subnormals), bitwise, out
// of place, in place, and through a strided input.
TEST(ActivationKernels, SixteenBitBoundsGiveTheElementFunctorsBits) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<std::pair<double, double>> bounds = {
      {-0.75, 1.5}, {-1.0, 1.0}, {0.0, 6.0}, {1.5, -0.75}, {nan, 0.5}, {-2.0, nan}, {nan, nan}};
  const auto run = [&]<typename T>(DType dtype) {
    const Tensor x = every_sixteen_bit_value(dtype);
    const T* px = static_cast<const T*>(x.data_ptr());
    for (const auto& [low, high] : bounds) {
      for (const ActivationOp op : {ActivationOp::Hardtanh, ActivationOp::Clamp}) {
        if (op == ActivationOp::Hardtanh && (std::isnan(low) || std::isnan(high))) continue;
        SCOPED_TRACE(std::string(op_name(op)) + "(" + std::to_string(low) + ", " +
                     std::to_string(high) + ") " + dtype_name(dtype));
        std::vector<std::uint16_t> want(65536);
        for (std::uint32_t b = 0; b < 65536; ++b) {
          const T r = op == ActivationOp::Hardtanh
                          ? kernels::HardtanhElement<T>{kernels::cast_value<T>(low),
                                                        kernels::cast_value<T>(high)}(px[b])
                          : kernels::make_clamp_element<T>(low, high)(px[b]);
          want[b] = r.bits;
        }
        expect_bits_out_of_place_in_place_and_strided(op, x, low, high, want);
      }
    }
  };
  run.operator()<Half>(kFloat16);
  run.operator()<BFloat16>(kBFloat16);
}

// elu of float16 (Note [float16 elu in float lanes] in kernels/cpu/elementwise_activation.cpp)
// against EluElement<Half> applied one value at a time: every bit pattern, for elu, selu and elu
// with other alphas and scales, bitwise, out of place, in place and through a strided input.
TEST(ActivationKernels, Float16EluGivesTheElementFunctorsBits) {
  const Tensor x = every_sixteen_bit_value(kFloat16);
  const Half* px = static_cast<const Half*>(x.data_ptr());
  for (const auto& [alpha, scale] : std::vector<std::pair<double, double>>{
           {1.0, 1.0}, {kSeluAlpha, kSeluScale}, {0.5, 2.0}, {1.25, 1.0}, {3.0, 0.1}}) {
    SCOPED_TRACE("alpha " + std::to_string(alpha) + ", scale " + std::to_string(scale));
    const kernels::EluElement<Half> element{static_cast<float>(alpha), static_cast<float>(scale)};
    std::vector<std::uint16_t> want(65536);
    for (std::uint32_t b = 0; b < 65536; ++b)
      want[b] = element(px[b]).bits;
    expect_bits_out_of_place_in_place_and_strided(ActivationOp::Elu, x, alpha, scale, want);
  }
}

// elu's gradient from its output y (ActivationOp::EluResult, elu_'s and selu_'s backward) against
// the exact derivative at x, scale alpha e^x for x <= 0 and scale above, in every floating dtype:
// every 16-bit value of |x| <= 10^4, a grid over [-12, 12] in float32 and float64. The bound
// follows the operations: y carries the forward's roundings to the dtype, which rounds where
// PyTorch's definition composes (expm1, times alpha, times scale: 3 u_T |y|, u_T the dtype's unit
// roundoff), and its float error (a few u_M scale alpha, u_M of the math type); y + scale
// alpha and the product with g each round in the math type; the result rounds once to the dtype
// (u_T of it, or half the smallest subnormal). At NaN the gradient is g scale, as PyTorch's.
TEST(ActivationKernels, EluGradientFromTheOutput) {
  for (const DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    const double u_t = dtype == kFloat16    ? 0x1p-11
                       : dtype == kBFloat16 ? 0x1p-8
                       : dtype == kFloat32  ? 0x1p-24
                                            : 0x1p-53;
    const double u_m = dtype == kFloat64 ? 0x1p-53 : 0x1p-24;
    const double tiny = dtype == kFloat16 ? 0x1p-25 : 0.0;  // half float16's smallest subnormal
    std::vector<double> xs;
    if (dtype == kFloat16 || dtype == kBFloat16) {
      xs = every_value(dtype);
    } else {
      for (int i = -1200; i <= 1200; ++i)
        xs.push_back(i / 100.0 + 0.003);
      xs.push_back(0.0);
    }
    const auto n = static_cast<std::int64_t>(xs.size());
    const Tensor x = make_tensor(xs, {n}, dtype);
    const Tensor g = full({n}, -1.5, dtype);
    for (const auto& [alpha, scale] : {std::pair{1.25, 1.0}, std::pair{kSeluAlpha, kSeluScale}}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " alpha " + std::to_string(alpha));
      const Tensor y = ops::activation(ActivationOp::Elu, x, alpha, scale);
      const std::vector<double> xr = to_vector(x);
      const std::vector<double> yr = to_vector(y);
      const std::vector<double> dx =
          to_vector(ops::activation_backward(ActivationOp::EluResult, g, y, alpha, scale));
      for (std::int64_t i = 0; i < n; ++i) {
        const double exact = -1.5 * (xr[i] > 0 ? scale : scale * alpha * std::exp(xr[i]));
        const double bound =
            1.5 * (3 * u_t * std::fabs(yr[i]) + 64 * u_m * scale * alpha * std::max(1.0, -xr[i])) +
            2 * u_t * std::fabs(exact) + tiny;
        ASSERT_NEAR(dx[i], exact, bound) << "x = " << xr[i] << ", y = " << yr[i];
      }
      const Tensor nan = full({1}, std::numeric_limits<double>::quiet_NaN(), dtype);
      const Tensor one = full({1}, 1.0, dtype);
      const double at_nan =
          to_vector(ops::activation_backward(ActivationOp::EluResult, one, nan, alpha, scale))[0];
      EXPECT_EQ(at_nan, to_vector(full({1}, scale, dtype))[0]);
      EXPECT_EQ(to_vector(ops::activation_backward(ActivationOp::Elu, one, nan, alpha, scale))[0],
                at_nan);
    }
  }
}

// A transposed input and upstream gradient give the bits of their contiguous copies.
TEST(ActivationKernels, AnyStrides) {
  const Tensor x = randn({37, 29}).t();
  const Tensor g = randn({37, 29}).t();
  for (const Case& c : kCases) {
    SCOPED_TRACE(case_name(c));
    EXPECT_TRUE(equal(ops::activation(c.op, x, c.p0, c.p1),
                      ops::activation(c.op, x.contiguous(), c.p0, c.p1)));
    EXPECT_TRUE(equal(ops::activation_backward(c.op, g, x, c.p0, c.p1),
                      ops::activation_backward(c.op, g.contiguous(), x.contiguous(), c.p0, c.p1)));
  }
}

// clamp of integers out of place, as clamp_ in place (integral bounds compared exactly): values by
// hand.
TEST(ActivationKernels, ClampOfIntegersOutOfPlace) {
  const Tensor x = make_tensor({-7, -2, 0, 3, 9}, {5}, kInt64);
  const Tensor y = ops::activation(ActivationOp::Clamp, x, -2.0, 4.0);
  EXPECT_EQ(y.dtype(), kInt64);
  expect_close(y, {-2, -2, 0, 3, 4}, 0.0, 0.0);
  const Tensor u = ops::activation(ActivationOp::Clamp, x.to(kUInt8), std::nan(""), 100.0);
  EXPECT_EQ(u.dtype(), kUInt8);
  expect_close(u, {100, 100, 0, 3, 9}, 0.0, 0.0);  // uint8 wraps -7 and -2 to 249 and 254
}

// clamp's gradient through autograd, by hand: the bounds pass it (PyTorch's clamp_backward mask is
// min <= x <= max), a NaN gets 0, and an infinite upstream gradient where the mask is false gives
// 0, not NaN (a select, not a multiplication by 0).
TEST(ActivationKernels, ClampGradientPassesAtTheBoundsAndNotAtNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (const DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor x = make_tensor({-1.0, -0.5, 0.0, 0.5, 1.0, nan}, {6}, dtype).requires_grad_();
    clamp(x, -0.5, 0.5).backward(make_tensor({inf, 2.0, 3.0, 4.0, -inf, 5.0}, {6}, dtype));
    expect_close(x.grad(), {0, 2, 3, 4, 0, 0}, 0.0, 0.0);
    const Tensor z = make_tensor({-1.0, 0.5, 1.0}, {3}, dtype).requires_grad_();
    clamp_max(z, 0.5).backward(ones({3}, dtype));
    expect_close(z.grad(), {1, 1, 0}, 0.0, 0.0);
  }
  // The bounds are rounded to x's dtype, as the forward compares with them: float16 0.1 is
  // 0.0999755859375, below the double 0.1 but equal to the bound rounded, so it passes.
  const Tensor h = make_tensor({0.1, 0.05}, {2}, kFloat16).requires_grad_();
  const Tensor y = clamp(h, 0.1, 1.0);
  y.backward(ones({2}, kFloat16));
  EXPECT_TRUE(equal(y, make_tensor({0.1, 0.1}, {2}, kFloat16)));
  expect_close(h.grad(), {1, 0}, 0.0, 0.0);
}

// relu's gradient (PyTorch's threshold_backward, from the output, in one pass): 0 where the output
// is <= 0, even under an infinite upstream gradient, the gradient elsewhere, a NaN or infinite
// output included; relu_ the same. By hand, in every floating dtype.
TEST(ActivationKernels, ReluGradientCutsAtZeroAndPassesNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (const DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor values = make_tensor({-1.0, 0.0, -0.0, 2.0, nan, inf}, {6}, dtype);
    const Tensor g = make_tensor({inf, 5.0, -inf, 3.0, 4.0, 6.0}, {6}, dtype);
    const Tensor x = values.clone().requires_grad_();
    relu(x).backward(g);
    expect_close(x.grad(), {0, 0, 0, 3, 4, 6}, 0.0, 0.0);
    const Tensor leaf = values.clone().requires_grad_();
    Tensor y = leaf * 1.0;
    y.relu_();
    y.backward(g);
    expect_close(leaf.grad(), {0, 0, 0, 3, 4, 6}, 0.0, 0.0);
  }
}

TEST(ActivationKernels, BadArguments) {
  const Tensor x = randn({4, 3});
  EXPECT_THROW(ops::activation(ActivationOp::Gelu, zeros({3}, kInt64)), DTypeError);
  EXPECT_THROW(ops::activation(ActivationOp::Softplus, zeros({3}, kInt64), 1.0, 20.0), DTypeError);
  // clamp takes integers forward (integral bounds that fit), not backward.
  EXPECT_THROW(ops::activation(ActivationOp::Clamp, zeros({3}, kInt64), 0.5, 2.0), DTypeError);
  EXPECT_THROW(ops::activation(ActivationOp::Clamp, zeros({3}, kUInt8), 0.0, 300.0), Error);
  EXPECT_THROW(ops::activation(ActivationOp::Clamp, zeros({3}, kBool), 0.0, 1.0), DTypeError);
  const std::string clamp_backward = error_message([&] {
    ops::activation_backward(ActivationOp::Clamp, zeros({3}, kInt64), zeros({3}, kInt64), 0, 1);
  });
  EXPECT_NE(clamp_backward.find("clamp_backward"), std::string::npos) << clamp_backward;
  EXPECT_NE(clamp_backward.find("int64"), std::string::npos) << clamp_backward;
  EXPECT_THROW(ops::activation_(ActivationOp::Silu, x, 0.0), Error);  // no in-place kernel
  EXPECT_THROW(ops::activation_(ActivationOp::Softplus, x, 1.0, 20.0), Error);
  const std::string beta =
      error_message([&] { ops::activation_backward(ActivationOp::Softplus, x, x, 0.0, 20.0); });
  EXPECT_NE(beta.find("softplus_backward"), std::string::npos) << beta;
  EXPECT_NE(beta.find("beta > 0"), std::string::npos) << beta;
  EXPECT_THROW(ops::activation(ActivationOp::Softplus, x, std::nan(""), 20.0), Error);
  // smooth_l1's beta divides (beta 0, l1_loss, is smooth_l1_loss's own case), huber's delta > 0.
  const std::string smooth_beta =
      error_message([&] { ops::activation_backward(ActivationOp::SmoothL1, x, x, 0.0); });
  EXPECT_NE(smooth_beta.find("smooth_l1_loss_backward"), std::string::npos) << smooth_beta;
  EXPECT_NE(smooth_beta.find("beta > 0"), std::string::npos) << smooth_beta;
  EXPECT_THROW(ops::activation(ActivationOp::SmoothL1, x, std::nan("")), Error);
  const std::string delta = error_message([&] { ops::activation(ActivationOp::Huber, x, -1.0); });
  EXPECT_NE(delta.find("huber_loss"), std::string::npos) << delta;
  EXPECT_NE(delta.find("delta > 0, got -1"), std::string::npos) << delta;
  EXPECT_THROW(ops::activation_(ActivationOp::Huber, x, 1.0), Error);  // no in-place kernel
  // hardtanh's bounds must fit the dtype, as in place.
  const std::string bound =
      error_message([&] { ops::activation(ActivationOp::Hardtanh, x.to(kFloat16), -1.0, 1e6); });
  EXPECT_NE(bound.find("hardtanh"), std::string::npos) << bound;
  EXPECT_NE(bound.find("1e+06"), std::string::npos) << bound;
  EXPECT_THROW(
      ops::activation_backward(ActivationOp::Hardtanh, x.to(kFloat16), x.to(kFloat16), -1.0, 1e6),
      Error);
  const std::string shape = error_message([&] {
    ops::activation_backward(ActivationOp::Mish, randn({3, 4}), x);
  });
  EXPECT_NE(shape.find("mish_backward"), std::string::npos) << shape;
  EXPECT_NE(shape.find("[3, 4]"), std::string::npos) << shape;
  EXPECT_NE(shape.find("[4, 3]"), std::string::npos) << shape;
  EXPECT_THROW(ops::activation_backward(ActivationOp::Silu, randn({4, 3}, kFloat64), x),
               DTypeError);
  // An empty input gives an empty result.
  EXPECT_EQ(ops::activation(ActivationOp::GeluTanh, empty({0, 5})).shape(), (Shape{0, 5}));
  EXPECT_EQ(ops::activation(ActivationOp::Elu, empty({0, 5}), 1.0, 1.0).shape(), (Shape{0, 5}));
}

}  // namespace
}  // namespace leangrad::test
