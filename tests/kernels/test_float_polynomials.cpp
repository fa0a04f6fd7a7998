// kernels/cpu/float_polynomials.h: e^x - 1, tanh, log, log(1 + x), erf, erfc, sinh, cosh, asinh,
// acosh, atanh, sin, cos, tan, asin, acos, atan, atan2, and GELU with its derivative, of float
// against the C library's functions in double, within the bounds the header states (Note [Float
// polynomials]); and the elementwise ops and activations that take them, with the special functions
// whose central forms run in lanes the same way (Note [Range-limited elementwise ops] in
// kernels/cpu/elementwise_range_limited.cpp) and the incomplete gamma functions' lockstep lanes
// (Note [Incomplete gamma in lanes]).
//
// The bounds were measured over all 2^32 floats; CI checks every 257th. To check every float again
// (a few minutes; after changing a coefficient or a step):
//   LEANGRAD_TEST_EVERY_FLOAT=1 build/tests/leangrad_tests --gtest_filter='FloatPolynomials.*'
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <leangrad/kernels/cpu/float_polynomials.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/special_math.h>
#include "testing/float_sweep.h"
#include "testing/sanitized.h"
#include "testing/tensor_testing.h"

namespace leangrad::test {
namespace {

using leangrad::UnaryOp;
namespace cpu = kernels::cpu;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr double kPi = 3.14159265358979323846;

struct Function {
  const char* name;
  float (*polynomial)(float);
  double (*exact)(double);  // the C library's, in double: within an ulp of double
  double max_ulps;
  UnaryOp op;
};

const Function kFunctions[] = {
    {"expm1", cpu::expm1_polynomial, [](double x) { return std::expm1(x); },
     cpu::kExpm1PolynomialMaxUlps, UnaryOp::Expm1},
    {"tanh", cpu::tanh_polynomial, [](double x) { return std::tanh(x); },
     cpu::kTanhPolynomialMaxUlps, UnaryOp::Tanh},
    {"log", cpu::log_polynomial, [](double x) { return std::log(x); }, cpu::kLogPolynomialMaxUlps,
     UnaryOp::Log},
    {"log1p", cpu::log1p_polynomial, [](double x) { return std::log1p(x); },
     cpu::kLog1pPolynomialMaxUlps, UnaryOp::Log1p},
    {"erf", cpu::erf_polynomial, [](double x) { return std::erf(x); }, cpu::kErfPolynomialMaxUlps,
     UnaryOp::Erf},
    {"sinh", cpu::sinh_polynomial, [](double x) { return std::sinh(x); },
     cpu::kSinhPolynomialMaxUlps, UnaryOp::Sinh},
    {"cosh", cpu::cosh_polynomial, [](double x) { return std::cosh(x); },
     cpu::kCoshPolynomialMaxUlps, UnaryOp::Cosh},
    {"sin", cpu::sin_polynomial, [](double x) { return std::sin(x); }, cpu::kSinPolynomialMaxUlps,
     UnaryOp::Sin},
    {"cos", cpu::cos_polynomial, [](double x) { return std::cos(x); }, cpu::kCosPolynomialMaxUlps,
     UnaryOp::Cos},
    {"tan", cpu::tan_polynomial, [](double x) { return std::tan(x); }, cpu::kTanPolynomialMaxUlps,
     UnaryOp::Tan},
    {"atan", cpu::atan_polynomial, [](double x) { return std::atan(x); },
     cpu::kAtanPolynomialMaxUlps, UnaryOp::Atan},
    {"erfc", cpu::erfc_polynomial, [](double x) { return std::erfc(x); },
     cpu::kErfcPolynomialMaxUlps, UnaryOp::Erfc},
    {"asinh", cpu::asinh_polynomial, [](double x) { return std::asinh(x); },
     cpu::kAsinhPolynomialMaxUlps, UnaryOp::Asinh},
    {"acosh", cpu::acosh_polynomial, [](double x) { return std::acosh(x); },
     cpu::kAcoshPolynomialMaxUlps, UnaryOp::Acosh},
    {"atanh", cpu::atanh_polynomial, [](double x) { return std::atanh(x); },
     cpu::kAtanhPolynomialMaxUlps, UnaryOp::Atanh},
    {"asin", cpu::asin_polynomial, [](double x) { return std::asin(x); },
     cpu::kAsinPolynomialMaxUlps, UnaryOp::Asin},
    {"acos", cpu::acos_polynomial, [](double x) { return std::acos(x); },
     cpu::kAcosPolynomialMaxUlps, UnaryOp::Acos},
    {"log2", cpu::log2_polynomial, [](double x) { return std::log2(x); },
     cpu::kLog2PolynomialMaxUlps, UnaryOp::Log2},
    {"log10", cpu::log10_polynomial, [](double x) { return std::log10(x); },
     cpu::kLog10PolynomialMaxUlps, UnaryOp::Log10},
};

// An ulp of float at the exact value v: the spacing of the floats at |v|, never below the smallest
// subnormal's.
double float_ulp(double v) {
  const double a = std::fabs(v);
  if (a < 0x1p-126) return 0x1p-149;
  return std::ldexp(1.0, std::ilogb(a) - 23);
}

// What went wrong with y as f(x) of float, or an empty string: NaN exactly where the exact value
// is NaN, the rounded infinity where it overflows float, else within max_ulps.
std::string check_value(float y, double exact, double max_ulps) {
  if (std::isnan(exact) || std::isnan(y)) return std::isnan(exact) == std::isnan(y) ? "" : "NaN";
  if (std::fabs(exact) > std::numeric_limits<float>::max() || std::isinf(y))
    return y == static_cast<float>(exact) ? "" : "infinity";
  const double ulps = std::fabs(y - exact) / float_ulp(exact);
  return ulps <= max_ulps ? "" : std::to_string(ulps) + " ulps";
}

// GELU's distribution function Phi and density phi at x, in double: erfc has no cancellation for
// negative x, where 1 + erf does.
struct NormalAt {
  double cdf;
  double pdf;
};
NormalAt normal_at(double x) {
  return {0.5 * std::erfc(-x / std::sqrt(2.0)), std::exp(-x * x / 2) / std::sqrt(2 * kPi)};
}

// GELU x Phi(x) in double.
double exact_gelu(double x) {
  return x * normal_at(x).cdf;
}

// What went wrong with dy as GELU's derivative Phi(x) + x phi(x) at x, or an empty string: NaN
// exactly where the exact value is NaN, else within max_ulps of the larger of its two terms (the
// terms cancel near x = -0.75, where the derivative is 0).
std::string check_gelu_gradient(float dy, double x, double max_ulps) {
  const NormalAt n = normal_at(x);
  const double exact = n.cdf + x * n.pdf;
  if (std::isnan(exact) || std::isnan(dy)) return std::isnan(exact) == std::isnan(dy) ? "" : "NaN";
  const double ulps = std::fabs(dy - exact) / float_ulp(std::max(n.cdf, std::fabs(x) * n.pdf));
  return ulps <= max_ulps ? "" : std::to_string(ulps) + " ulps";
}

// Calls check(x) for float i * step, i over all threads (testing/float_sweep.h), step 1 with
// LEANGRAD_TEST_EVERY_FLOAT set, else 257; under a sanitizer every test::kSweepStride-th run of
// them. check returns whether x passed.
template <typename Check>
void expect_every_float_passes(const Check& check) {
  const bool every_float = std::getenv("LEANGRAD_TEST_EVERY_FLOAT") != nullptr;
  const std::uint64_t step = every_float ? 1 : 257;
  test::expect_float_sweep(
      ((std::uint64_t{1} << 32) + step - 1) / step, 4096, test::kSweepStride,
      [&](std::uint64_t first, std::uint64_t n, test::SweepFailures& failures) {
        for (std::uint64_t i = first; i < first + n; ++i) {
          const auto bits = static_cast<std::uint32_t>(i * step);
          if (!check(std::bit_cast<float>(bits))) failures.add(bits);
        }
      });
}

TEST(FloatPolynomials, WithinTheirBoundsOverTheFloats) {
  for (const Function& f : kFunctions) {
    SCOPED_TRACE(f.name);
    expect_every_float_passes(
        [&](float x) { return check_value(f.polynomial(x), f.exact(x), f.max_ulps).empty(); });
  }
  SCOPED_TRACE("gelu");
  expect_every_float_passes([](float x) {
    return check_value(cpu::gelu_polynomial(x), exact_gelu(x), cpu::kGeluPolynomialMaxUlps).empty();
  });
  SCOPED_TRACE("gelu's derivative");
  expect_every_float_passes([](float x) {
    return check_gelu_gradient(cpu::gelu_gradient_polynomial(1.0f, x), x,
                               cpu::kGeluGradientPolynomialMaxUlps)
        .empty();
  });
}

float gelu_derivative(float x) {
  return cpu::gelu_gradient_polynomial(1.0f, x);
}

// The ends of each domain and the signed zeros, exactly.
TEST(FloatPolynomials, SpecialValues) {
  const auto same = [](float a, float b) {
    return std::isnan(a) ? std::isnan(b) : (a == b && std::signbit(a) == std::signbit(b));
  };
  struct Case {
    float (*f)(float);
    const char* name;
    float x, y;
  };
  const Case cases[] = {
      {cpu::expm1_polynomial, "expm1", 0.0f, 0.0f},
      {cpu::expm1_polynomial, "expm1", -0.0f, -0.0f},
      {cpu::expm1_polynomial, "expm1", kInf, kInf},
      {cpu::expm1_polynomial, "expm1", 88.73f, kInf},  // e^88.73 > FLT_MAX
      {cpu::expm1_polynomial, "expm1", -kInf, -1.0f},
      {cpu::expm1_polynomial, "expm1", -20.0f, -1.0f},  // e^-20 is below half an ulp of 1
      {cpu::expm1_polynomial, "expm1", kNaN, kNaN},
      {cpu::tanh_polynomial, "tanh", 0.0f, 0.0f},
      {cpu::tanh_polynomial, "tanh", -0.0f, -0.0f},
      {cpu::tanh_polynomial, "tanh", kInf, 1.0f},
      {cpu::tanh_polynomial, "tanh", -kInf, -1.0f},
      {cpu::tanh_polynomial, "tanh", 100.0f, 1.0f},
      {cpu::tanh_polynomial, "tanh", kNaN, kNaN},
      {cpu::log_polynomial, "log", 1.0f, 0.0f},
      {cpu::log_polynomial, "log", 0.0f, -kInf},
      {cpu::log_polynomial, "log", -0.0f, -kInf},
      {cpu::log_polynomial, "log", -1.0f, kNaN},
      {cpu::log_polynomial, "log", -kInf, kNaN},
      {cpu::log_polynomial, "log", kInf, kInf},
      {cpu::log_polynomial, "log", kNaN, kNaN},
      {cpu::log1p_polynomial, "log1p", 0.0f, 0.0f},
      {cpu::log1p_polynomial, "log1p", -0.0f, -0.0f},
      {cpu::log1p_polynomial, "log1p", -1.0f, -kInf},
      {cpu::log1p_polynomial, "log1p", -2.0f, kNaN},
      {cpu::log1p_polynomial, "log1p", kInf, kInf},
      {cpu::log1p_polynomial, "log1p", kNaN, kNaN},
      {cpu::erf_polynomial, "erf", 0.0f, 0.0f},
      {cpu::erf_polynomial, "erf", -0.0f, -0.0f},
      {cpu::erf_polynomial, "erf", kInf, 1.0f},
      {cpu::erf_polynomial, "erf", -kInf, -1.0f},
      {cpu::erf_polynomial, "erf", 4.0f, 1.0f},
      {cpu::erf_polynomial, "erf", kNaN, kNaN},
      // sinh and cosh: e^|x| / 2 overflows from 89.42 on (sinh's sign kept), where e^|x| alone
      // would from 88.73.
      {cpu::sinh_polynomial, "sinh", 0.0f, 0.0f},
      {cpu::sinh_polynomial, "sinh", -0.0f, -0.0f},
      {cpu::sinh_polynomial, "sinh", kInf, kInf},
      {cpu::sinh_polynomial, "sinh", -kInf, -kInf},
      {cpu::sinh_polynomial, "sinh", 89.5f, kInf},
      {cpu::sinh_polynomial, "sinh", -89.5f, -kInf},
      {cpu::sinh_polynomial, "sinh", kNaN, kNaN},
      {cpu::cosh_polynomial, "cosh", 0.0f, 1.0f},
      {cpu::cosh_polynomial, "cosh", -0.0f, 1.0f},
      {cpu::cosh_polynomial, "cosh", kInf, kInf},
      {cpu::cosh_polynomial, "cosh", -kInf, kInf},
      {cpu::cosh_polynomial, "cosh", -89.5f, kInf},
      {cpu::cosh_polynomial, "cosh", kNaN, kNaN},
      // GELU and its derivative: -inf and +inf as x/2 (1 + erf(x / sqrt 2)) gives them (infinity
      // times 0 is NaN), and beyond |x| = 15, where the tail is taken at 15.
      {cpu::gelu_polynomial, "gelu", 0.0f, 0.0f},
      {cpu::gelu_polynomial, "gelu", -0.0f, -0.0f},
      {cpu::gelu_polynomial, "gelu", kInf, kInf},
      {cpu::gelu_polynomial, "gelu", -kInf, kNaN},
      {cpu::gelu_polynomial, "gelu", 20.0f, 20.0f},
      {cpu::gelu_polynomial, "gelu", -20.0f, -0.0f},
      {cpu::gelu_polynomial, "gelu", kNaN, kNaN},
      {gelu_derivative, "gelu'", 0.0f, 0.5f},
      {gelu_derivative, "gelu'", kInf, kNaN},
      {gelu_derivative, "gelu'", -kInf, kNaN},
      {gelu_derivative, "gelu'", 20.0f, 1.0f},
      {gelu_derivative, "gelu'", -20.0f, -0.0f},
      {gelu_derivative, "gelu'", kNaN, kNaN},
      // sin, cos and tan: the signed zeros, and NaN at +-inf, from the C library's branch.
      {cpu::sin_polynomial, "sin", 0.0f, 0.0f},
      {cpu::sin_polynomial, "sin", -0.0f, -0.0f},
      {cpu::sin_polynomial, "sin", kInf, kNaN},
      {cpu::sin_polynomial, "sin", -kInf, kNaN},
      {cpu::sin_polynomial, "sin", kNaN, kNaN},
      {cpu::cos_polynomial, "cos", 0.0f, 1.0f},
      {cpu::cos_polynomial, "cos", -0.0f, 1.0f},
      {cpu::cos_polynomial, "cos", kInf, kNaN},
      {cpu::cos_polynomial, "cos", kNaN, kNaN},
      {cpu::tan_polynomial, "tan", 0.0f, 0.0f},
      {cpu::tan_polynomial, "tan", -0.0f, -0.0f},
      {cpu::tan_polynomial, "tan", -kInf, kNaN},
      {cpu::tan_polynomial, "tan", kNaN, kNaN},
      {cpu::atan_polynomial, "atan", 0.0f, 0.0f},
      {cpu::atan_polynomial, "atan", -0.0f, -0.0f},
      {cpu::atan_polynomial, "atan", 1.0f, static_cast<float>(kPi / 4)},
      {cpu::atan_polynomial, "atan", kInf, static_cast<float>(kPi / 2)},
      {cpu::atan_polynomial, "atan", -kInf, static_cast<float>(-kPi / 2)},
      {cpu::atan_polynomial, "atan", kNaN, kNaN},
      // erfc: its ends, and where it rounds to 0 (and 2).
      {cpu::erfc_polynomial, "erfc", 0.0f, 1.0f},
      {cpu::erfc_polynomial, "erfc", -0.0f, 1.0f},
      {cpu::erfc_polynomial, "erfc", kInf, 0.0f},
      {cpu::erfc_polynomial, "erfc", -kInf, 2.0f},
      {cpu::erfc_polynomial, "erfc", 10.1f, 0.0f},
      {cpu::erfc_polynomial, "erfc", -10.1f, 2.0f},
      {cpu::erfc_polynomial, "erfc", -4.0f, 2.0f},
      {cpu::erfc_polynomial, "erfc", kNaN, kNaN},
      // asinh, acosh and atanh: the signed zeros, the ends of their domains, the infinities.
      {cpu::asinh_polynomial, "asinh", 0.0f, 0.0f},
      {cpu::asinh_polynomial, "asinh", -0.0f, -0.0f},
      {cpu::asinh_polynomial, "asinh", kInf, kInf},
      {cpu::asinh_polynomial, "asinh", -kInf, -kInf},
      {cpu::asinh_polynomial, "asinh", kNaN, kNaN},
      {cpu::acosh_polynomial, "acosh", 1.0f, 0.0f},
      {cpu::acosh_polynomial, "acosh", std::nextafter(1.0f, 0.0f), kNaN},
      {cpu::acosh_polynomial, "acosh", -1.0f, kNaN},
      {cpu::acosh_polynomial, "acosh", -kInf, kNaN},
      {cpu::acosh_polynomial, "acosh", kInf, kInf},
      {cpu::acosh_polynomial, "acosh", kNaN, kNaN},
      {cpu::atanh_polynomial, "atanh", 0.0f, 0.0f},
      {cpu::atanh_polynomial, "atanh", -0.0f, -0.0f},
      {cpu::atanh_polynomial, "atanh", 1.0f, kInf},
      {cpu::atanh_polynomial, "atanh", -1.0f, -kInf},
      {cpu::atanh_polynomial, "atanh", std::nextafter(1.0f, 2.0f), kNaN},
      {cpu::atanh_polynomial, "atanh", -kInf, kNaN},
      {cpu::atanh_polynomial, "atanh", kNaN, kNaN},
      // asin and acos: the signed zeros, the ends of the domain, NaN beyond it.
      {cpu::asin_polynomial, "asin", 0.0f, 0.0f},
      {cpu::asin_polynomial, "asin", -0.0f, -0.0f},
      {cpu::asin_polynomial, "asin", 1.0f, static_cast<float>(kPi / 2)},
      {cpu::asin_polynomial, "asin", -1.0f, static_cast<float>(-kPi / 2)},
      {cpu::asin_polynomial, "asin", 0.5f, static_cast<float>(kPi / 6)},
      {cpu::asin_polynomial, "asin", std::nextafter(1.0f, 2.0f), kNaN},
      {cpu::asin_polynomial, "asin", -kInf, kNaN},
      {cpu::asin_polynomial, "asin", kNaN, kNaN},
      {cpu::acos_polynomial, "acos", 1.0f, 0.0f},
      {cpu::acos_polynomial, "acos", -1.0f, static_cast<float>(kPi)},
      {cpu::acos_polynomial, "acos", 0.0f, static_cast<float>(kPi / 2)},
      {cpu::acos_polynomial, "acos", -0.0f, static_cast<float>(kPi / 2)},
      {cpu::acos_polynomial, "acos", 0.5f, static_cast<float>(kPi / 3)},
      {cpu::acos_polynomial, "acos", -0.5f, static_cast<float>(2 * kPi / 3)},
      {cpu::acos_polynomial, "acos", std::nextafter(-1.0f, -2.0f), kNaN},
      {cpu::acos_polynomial, "acos", kInf, kNaN},
      {cpu::acos_polynomial, "acos", kNaN, kNaN},
  };
  for (const Case& c : cases)
    EXPECT_TRUE(same(c.f(c.x), c.y))
        << c.name << "(" << c.x << ") = " << c.f(c.x) << ", not " << c.y;
}

// The elementwise ops of float take these functions: ops::unary over every 997th float, each value
// within the function's bound (and exactly what the function gives, lane or tail alike: the op
// runs whole vectors and a scalar remainder).
TEST(FloatPolynomials, ElementwiseOpsOfFloatAreWithinTheBounds) {
  std::vector<double> xs;
  for (std::uint64_t bits = 0; bits <= 0xffffffffull; bits += 997)
    xs.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
  const auto n = static_cast<std::int64_t>(xs.size());
  const Tensor input = make_tensor(xs, {n}, kFloat32);
  for (const Function& f : kFunctions) {
    SCOPED_TRACE(f.name);
    const std::vector<double> ys = to_vector(ops::unary(f.op, input));
    for (std::int64_t i = 0; i < n; ++i) {
      const auto x = static_cast<float>(xs[i]);
      const auto y = static_cast<float>(ys[i]);
      ASSERT_EQ(check_value(y, f.exact(x), f.max_ulps), "") << std::hexfloat << x;
      ASSERT_TRUE(y == f.polynomial(x) || (std::isnan(y) && std::isnan(f.polynomial(x))))
          << std::hexfloat << x;
    }
  }
}

// gelu's kernels of float take gelu_polynomial and gelu_gradient_polynomial: ops::activation and
// ops::activation_backward over every 997th float, upstream gradients of a few magnitudes, each
// result within the bounds and exactly what the functions give.
TEST(FloatPolynomials, GeluKernelsOfFloatAreWithinTheBounds) {
  std::vector<double> xs;
  std::vector<double> gs;
  const double kUpstream[] = {1.0, -0.375, 1e30, 3e-5};
  for (std::uint64_t bits = 0; bits <= 0xffffffffull; bits += 997) {
    xs.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
    gs.push_back(kUpstream[xs.size() % 4]);
  }
  const auto n = static_cast<std::int64_t>(xs.size());
  const Tensor x = make_tensor(xs, {n}, kFloat32);
  const std::vector<double> ys = to_vector(ops::activation(ActivationOp::Gelu, x));
  const std::vector<double> dxs =
      to_vector(ops::activation_backward(ActivationOp::Gelu, make_tensor(gs, {n}, kFloat32), x));
  const auto same = [](float a, float b) { return a == b || (std::isnan(a) && std::isnan(b)); };
  for (std::int64_t i = 0; i < n; ++i) {
    const auto xi = static_cast<float>(xs[i]);
    const auto g = static_cast<float>(gs[i]);
    const auto y = static_cast<float>(ys[i]);
    const auto dx = static_cast<float>(dxs[i]);
    ASSERT_EQ(check_value(y, exact_gelu(xi), cpu::kGeluPolynomialMaxUlps), "")
        << std::hexfloat << xi;
    ASSERT_TRUE(same(y, cpu::gelu_polynomial(xi))) << std::hexfloat << xi;
    ASSERT_TRUE(same(dx, cpu::gelu_gradient_polynomial(g, xi))) << std::hexfloat << xi;
    // The product with g rounds once more (to a normal float: half an ulp more).
    if (std::isnormal(dx)) {
      ASSERT_EQ(check_gelu_gradient(dx / g, xi, cpu::kGeluGradientPolynomialMaxUlps + 0.5), "")
          << std::hexfloat << xi << ", g = " << g;
    }
  }
}

// atan2 has too many argument pairs to check each: a sample of pairs over every magnitude, both
// signs and the ends of the range (10^6 in CI; LEANGRAD_TEST_EVERY_FLOAT makes it 10^8, the
// sample kAtan2PolynomialMaxUlps was measured on), each within the bound.
TEST(FloatPolynomials, Atan2WithinItsBoundOverASample) {
  const bool many = std::getenv("LEANGRAD_TEST_EVERY_FLOAT") != nullptr;
  const std::uint64_t pairs = many ? 100'000'000 : 1'000'000;
  test::expect_float_sweep(
      pairs, 4096, test::kSweepStride,
      [](std::uint64_t first, std::uint64_t n, test::SweepFailures& failures) {
        for (std::uint64_t i = first; i < first + n; ++i) {
          // Two floats from a 64-bit mix of i (splitmix64's finaliser): odd i take any bits, so
          // every magnitude; even i take exponents within 2^+-20 of each other's, where neither
          // quotient over- or underflows and the result is far from 0 and pi/2.
          std::uint64_t z = (i + 1) * 0x9e3779b97f4a7c15ull;
          z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
          z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
          z ^= z >> 31;
          auto y_bits = static_cast<std::uint32_t>(z);
          auto x_bits = static_cast<std::uint32_t>(z >> 32);
          if (i % 2 == 0) {
            const std::uint32_t exponent = 107 + (x_bits >> 26);  // 2^-20 .. 2^43
            x_bits = (x_bits & 0x807fffffu) | (exponent << 23);
            y_bits = (y_bits & 0x807fffffu) | ((exponent - 20 + ((y_bits >> 23) % 41)) << 23);
          }
          const float y = std::bit_cast<float>(y_bits);
          const float x = std::bit_cast<float>(x_bits);
          const double exact = std::atan2(static_cast<double>(y), static_cast<double>(x));
          if (!check_value(cpu::atan2_polynomial(y, x), exact, cpu::kAtan2PolynomialMaxUlps)
                   .empty())
            failures.add(y_bits);
        }
      });
}

// atan2's special cases, C's (and PyTorch's): the bits of the C library's atan2 of float, rounded
// from double, at signed zeros, infinities, NaN and their mixtures with finite values.
TEST(FloatPolynomials, Atan2SpecialValuesAreTheCLibrarys) {
  const float values[] = {0.0f, -0.0f, kInf, -kInf, kNaN, 1.0f, -1.0f, 3e-42f, -3e38f};
  for (const float y : values) {
    for (const float x : values) {
      const auto expected = static_cast<float>(std::atan2(static_cast<double>(y), x));
      const float got = cpu::atan2_polynomial(y, x);
      const bool same = std::isnan(expected)
                            ? std::isnan(got)
                            : (got == expected && std::signbit(got) == std::signbit(expected));
      EXPECT_TRUE(same) << "atan2(" << y << ", " << x << ") = " << got << ", not " << expected;
    }
  }
}

// atan2's kernel of float takes atan2_polynomial: ops::binary over broadcast pairs, each value
// exactly the function's.
TEST(FloatPolynomials, Atan2KernelOfFloatIsThePolynomial) {
  std::vector<double> ys;
  std::vector<double> xs;
  for (int i = 0; i < 64; ++i) {
    ys.push_back(std::ldexp(1.0 + i / 64.0, i % 13 - 6) * (i % 3 == 0 ? -1 : 1));
    xs.push_back(std::ldexp(1.5 - i / 128.0, i % 7 - 3) * (i % 5 == 0 ? -1 : 1));
  }
  const Tensor y = make_tensor(ys, {64, 1}, kFloat32);
  const Tensor x = make_tensor(xs, {1, 64}, kFloat32);
  const std::vector<double> out = to_vector(ops::binary(BinaryOp::Atan2, y, x));
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 64; ++j)
      ASSERT_EQ(static_cast<float>(out[i * 64 + j]),
                cpu::atan2_polynomial(static_cast<float>(ys[i]), static_cast<float>(xs[j])))
          << i << ", " << j;
}

// hypot of float in double (hypot_of_float): within 0.5 + 2^-28 ulps of the exact value (the C
// library's hypot in double, within an ulp of double) over pairs of every magnitude, squares that
// would overflow or underflow float among them, through the elementwise op; +inf for an infinite
// operand even beside a NaN, NaN for a NaN beside a finite one, as C's hypotf.
TEST(FloatPolynomials, HypotOfFloatIsCorrectlyRoundedBut2ToTheMinus28) {
  std::vector<double> as;
  std::vector<double> bs;
  for (std::uint64_t bits = 0; bits < 0x7f800000ull; bits += 65537) {
    const float a = std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    for (const float ratio : {0.0f, 1e-30f, 0.001f, 0.7071f, 1.0f, 3.5f, 1e20f}) {
      as.push_back(a);
      bs.push_back(static_cast<double>(a) * ratio * (bits % 3 == 0 ? -1 : 1));
    }
  }
  const auto n = static_cast<std::int64_t>(as.size());
  const std::vector<double> out = to_vector(
      ops::binary(BinaryOp::Hypot, make_tensor(as, {n}, kFloat32), make_tensor(bs, {n}, kFloat32)));
  for (std::int64_t i = 0; i < n; ++i) {
    const auto a = static_cast<float>(as[i]);
    const auto b = static_cast<float>(bs[i]);
    ASSERT_EQ(
        check_value(static_cast<float>(out[i]), std::hypot(double{a}, double{b}), 0.5 + 0x1p-28),
        "")
        << std::hexfloat << a << ", " << b;
  }
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(cpu::hypot_of_float(kInf, kNaN), kInf);
  EXPECT_EQ(cpu::hypot_of_float(kNaN, -kInf), kInf);
  EXPECT_TRUE(std::isnan(cpu::hypot_of_float(kNaN, 1.0f)));
  EXPECT_EQ(cpu::hypot_of_float(-0.0f, 0.0f), 0.0f);
  EXPECT_FALSE(std::signbit(cpu::hypot_of_float(-0.0f, -0.0f)));
  EXPECT_EQ(cpu::hypot_of_float(3e38f, 3e38f), kInf);  // 4.24e38 overflows float
  EXPECT_EQ(cpu::hypot_of_float(3e-45f, 4e-45f), std::hypot(3e-45f, 4e-45f));
}

// 4,096 values: runs of central values (central(i)), and from element 1,500 on one of `outside`
// every 97 elements, so that some of the kernel's chunks of 512 hold both kinds and most hold one.
std::vector<double> chunk_mix(const std::function<double(int)>& central,
                              const std::vector<double>& outside) {
  std::vector<double> values;
  for (int i = 0; i < 4096; ++i)
    values.push_back(i >= 1500 && i % 97 == 0 ? outside[i % outside.size()] : central(i));
  return values;
}

bool same_values(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
  return true;
}

// op over `values` in dtype through the kernel, contiguous, strided (every second element of a
// tensor twice as long) and, for float and double, in place, against expected(op, dtype).
void expect_element_values(UnaryOp op, const std::vector<DType>& dtypes,
                           const std::vector<double>& values,
                           const std::function<std::vector<double>(DType)>& expected_as) {
  for (const DType dtype : dtypes) {
    SCOPED_TRACE(dtype_name(dtype));
    const std::vector<double> expected = expected_as(dtype);
    EXPECT_TRUE(
        same_values(to_vector(ops::unary(op, make_tensor(values, {4096}, dtype))), expected));
    std::vector<double> spaced(2 * values.size(), 0.5);
    for (std::size_t i = 0; i < values.size(); ++i)
      spaced[2 * i] = values[i];
    const Tensor strided = make_tensor(spaced, {8192}, dtype).slice(0, 0, 8192, 2);
    EXPECT_TRUE(same_values(to_vector(ops::unary(op, strided)), expected));
    if (dtype == kFloat32 || dtype == kFloat64) {
      Tensor x = make_tensor(values, {4096}, dtype);
      ops::unary_(op, x);
      EXPECT_TRUE(same_values(to_vector(x), expected));
    }
  }
}

// values rounded to dtype, then to float (exact).
float as_float_operand(double v, DType dtype) {
  return static_cast<float>(to_vector(make_tensor({v}, {1}, dtype).to(kFloat32))[0]);
}

// y (a float) rounded to dtype.
double rounded_to(float y, DType dtype) {
  return to_vector(make_tensor({y}, {1}, kFloat32).to(dtype))[0];
}

// sin, cos and tan compute in lanes below 2^20, and element by element from there on (Note
// [Range-limited elementwise ops]): each value is the element function's, whatever else its chunk
// holds, for float in place and strided, float16 and bfloat16.
TEST(FloatPolynomials, RangeLimitedOpsGiveTheElementFunctionsValues) {
  const std::vector<double> values = chunk_mix(
      [](int i) { return std::ldexp(1.0 + (i % 101) / 101.0, i % 23 - 3) * (i % 2 ? -1 : 1); },
      {1048576.0, -3.5e7, 1e30, kInf, kNaN});
  for (const UnaryOp op : {UnaryOp::Sin, UnaryOp::Cos, UnaryOp::Tan}) {
    SCOPED_TRACE(static_cast<int>(op));
    expect_element_values(op, {kFloat32, kFloat16, kBFloat16}, values, [&](DType dtype) {
      std::vector<double> expected;
      for (const double v : values) {
        const float x = as_float_operand(v, dtype);
        const float y = op == UnaryOp::Sin   ? cpu::sin_polynomial(x)
                        : op == UnaryOp::Cos ? cpu::cos_polynomial(x)
                                             : cpu::tan_polynomial(x);
        expected.push_back(rounded_to(y, dtype));
      }
      return expected;
    });
  }
}

// The CPU lanes' log and exp (Note [Double polynomials]), as special_math's functions take them.
struct LanesLog {
  double operator()(double v) const { return cpu::log_of_positive_normal(v); }
};
struct LanesExp {
  double operator()(double v) const { return cpu::exp_of_double(v); }
};

// I_nu and K_nu (scaled or not) as the CPU computes them: in lanes where finite (K: where
// bessel_k_of_positive applies), the scalar function elsewhere.
double i_value(int nu, double x, bool scaled) {
  namespace sm = kernels::special_math;
  if (std::isfinite(x)) return sm::bessel_i_of_finite(nu, x, scaled, LanesExp{});
  return nu == 0 ? sm::bessel_i0(x, scaled) : sm::bessel_i1(x, scaled);
}
double k_value(int nu, double x, bool scaled) {
  namespace sm = kernels::special_math;
  if (sm::bessel_k_of_positive_applies(x))
    return sm::bessel_k_of_positive(nu, x, scaled, LanesLog{}, LanesExp{});
  return sm::bessel_k(nu, x, scaled);
}

// J0, J1, I0, I1, Ai and Ai', log|Gamma| and digamma compute their central ranges in lanes and
// the rest element by element (Note [Special functions in lanes]): each value is special_math's
// function's, in double and rounded once, whatever else its chunk holds, for every floating
// dtype.
TEST(FloatPolynomials, SpecialFunctionsInLanesGiveTheElementFunctionsValues) {
  namespace sm = kernels::special_math;
  struct Case {
    UnaryOp op;
    double (*f)(double);
    double low, high;  // the central range
  };
  const Case cases[] = {
      {UnaryOp::BesselJ0, [](double x) { return sm::bessel_j0(x); }, -5.0, 5.0},
      {UnaryOp::BesselJ1, [](double x) { return sm::bessel_j1(x); }, -5.0, 5.0},
      // I and K with the lanes' exp and log where finite (K: positive, x / 2 normal).
      {UnaryOp::I0, [](double x) { return i_value(0, x, false); }, -8.0, 8.0},
      {UnaryOp::I1, [](double x) { return i_value(1, x, false); }, -8.0, 8.0},
      {UnaryOp::I0e, [](double x) { return i_value(0, x, true); }, -12.0, 12.0},
      {UnaryOp::I1e, [](double x) { return i_value(1, x, true); }, -12.0, 12.0},
      {UnaryOp::BesselK0, [](double x) { return k_value(0, x, false); }, -1.0, 12.0},
      {UnaryOp::BesselK1, [](double x) { return k_value(1, x, false); }, -1.0, 12.0},
      {UnaryOp::BesselK0e, [](double x) { return k_value(0, x, true); }, -1.0, 12.0},
      {UnaryOp::BesselK1e, [](double x) { return k_value(1, x, true); }, -1.0, 12.0},
      {UnaryOp::AiryAi, [](double x) { return sm::airy(x, false); }, -2.0, 1.0},
      {UnaryOp::AiryAiPrime, [](double x) { return sm::airy(x, true); }, -2.0, 1.0},
      // The positive x with the lanes' log (Note [Log-gamma], Note [Digamma]), libm's function
      // for the rest; the range's negative half takes the scalar function.
      {UnaryOp::Lgamma,
       [](double x) {
         return sm::lgamma_of_positive_applies(x) ? sm::lgamma_of_positive(x, LanesLog{})
                                                  : sm::lgamma(x);
       },
       -3.0, 12.0},
      {UnaryOp::Digamma,
       [](double x) {
         return sm::digamma_of_positive_applies(x) ? sm::digamma_of_positive(x, LanesLog{})
                                                   : sm::digamma(x);
       },
       -3.0, 12.0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(static_cast<int>(c.op));
    // The central range's ends included; outside it both sides of the line, far, inf and NaN.
    const double width = c.high - c.low;
    const std::vector<double> values =
        chunk_mix([&](int i) { return c.low + width * (i % 257) / 256.0; },
                  {c.high + 0.25, c.low - 0.25, c.high * 40.0 + 3.0, c.low * 40.0 - 3.0, kInf,
                   -kInf, kNaN, 1e-310, -1e-310, 0x1p-1021});
    expect_element_values(c.op, {kFloat32, kFloat64, kFloat16, kBFloat16}, values,
                          [&](DType dtype) {
                            std::vector<double> expected;
                            for (const double v : values) {
                              if (dtype == kFloat64) {
                                expected.push_back(c.f(v));
                              } else {
                                const double x = as_float_operand(v, dtype);
                                expected.push_back(rounded_to(static_cast<float>(c.f(x)), dtype));
                              }
                            }
                            return expected;
                          });
  }
}

// P(a, x) and Q(a, x) run their series and continued fraction in lockstep lanes, and the prefactor
// in lanes, where incomplete_gamma_of_positive applies, and incomplete_gamma elsewhere (Note
// [Incomplete gamma in lanes]): each value is incomplete_gamma_of_positive's with the lanes' log
// and exp, or incomplete_gamma's, whatever else its chunk and its group of lanes hold, in every
// floating dtype, with both operands contiguous, one strided and one broadcast.
TEST(FloatPolynomials, IncompleteGammaInLanesGivesTheElementFunctionsValues) {
  namespace sm = kernels::special_math;
  const auto value = [](double a, double x, bool lower) {
    return sm::incomplete_gamma_of_positive_applies(a, x)
               ? sm::incomplete_gamma_of_positive(a, x, lower, LanesLog{}, LanesExp{})
               : sm::incomplete_gamma(a, x, lower);
  };
  // a and x from 1/16 to about 80 on both sides of x = a + 1, so that a group of lanes mixes
  // short loops with long ones; from pair 1,500 on every 97th an edge: zeros, negatives,
  // infinities, NaN, subnormals, a beyond 2^1000, a large a just outside Temme's range (Note
  // [Temme's expansion]), whose loops run a hundred steps, one inside it, and x = a + 1 exactly
  // (the fraction's side). 27 slots for the 21 edges.
  const double edges[][2] = {{0.0, 2.0},      {2.0, 0.0},    {-1.0, 2.0},          {2.0, -1.0},
                             {kInf, 2.0},     {2.0, kInf},   {kNaN, 2.0},          {2.0, kNaN},
                             {1e-310, 2.0},   {2.0, 1e-310}, {0x1p1001, 0x1p1001}, {0x1p-1022, 0.5},
                             {1e5, 6.9e4},    {1e5, 1.31e5}, {kInf, kInf},         {0.0, 0.0},
                             {1.0, 2.0},      {0.5, 1.5},    {3.0, 4.0},           {2.5, 3.5},
                             {1e5, 1e5 - 3.0}};
  const int num_edges = static_cast<int>(std::size(edges));
  std::vector<double> a_values;
  std::vector<double> x_values;
  for (int i = 0; i < 4096; ++i) {
    if (i >= 1500 && i % 97 == 0) {
      a_values.push_back(edges[(i / 97) % num_edges][0]);
      x_values.push_back(edges[(i / 97) % num_edges][1]);
    } else {
      a_values.push_back(std::ldexp(1.0 + (i % 13) / 13.0, i % 11 - 4));
      x_values.push_back(std::ldexp(1.0 + (i % 17) / 17.0, (i / 11) % 11 - 4));
    }
  }
  const double broadcast_a = 2.75;
  for (const bool lower : {true, false}) {
    const BinaryOp op = lower ? BinaryOp::Igamma : BinaryOp::Igammac;
    for (const DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
      SCOPED_TRACE(std::string(lower ? "igamma " : "igammac ") + dtype_name(dtype));
      // The expected values from the operands as the dtype holds them.
      const auto expected_of = [&](const std::vector<double>& as, const std::vector<double>& xs) {
        std::vector<double> expected;
        for (std::size_t i = 0; i < xs.size(); ++i) {
          const double a = as[as.size() == 1 ? 0 : i];
          if (dtype == kFloat64) {
            expected.push_back(value(a, xs[i], lower));
          } else {
            const float y = static_cast<float>(
                value(as_float_operand(a, dtype), as_float_operand(xs[i], dtype), lower));
            expected.push_back(rounded_to(y, dtype));
          }
        }
        return expected;
      };
      const std::vector<double> expected = expected_of(a_values, x_values);
      const Tensor a = make_tensor(a_values, {4096}, dtype);
      const Tensor x = make_tensor(x_values, {4096}, dtype);
      EXPECT_TRUE(same_values(to_vector(ops::binary(op, a, x)), expected));
      // a strided: every second element of a tensor twice as long.
      std::vector<double> spaced(8192, 0.5);
      for (std::size_t i = 0; i < a_values.size(); ++i)
        spaced[2 * i] = a_values[i];
      const Tensor strided_a = make_tensor(spaced, {8192}, dtype).slice(0, 0, 8192, 2);
      EXPECT_TRUE(same_values(to_vector(ops::binary(op, strided_a, x)), expected));
      // a broadcast (stride 0) against every x.
      const Tensor one_a = make_tensor({broadcast_a}, {1}, dtype);
      EXPECT_TRUE(
          same_values(to_vector(ops::binary(op, one_a, x)), expected_of({broadcast_a}, x_values)));
    }
  }
}

}  // namespace
}  // namespace leangrad::test
