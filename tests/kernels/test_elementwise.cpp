// Tests of the elementwise ops (kernels/ops_elementwise.cpp) and their CPU kernels
// (kernels/cpu/elementwise.cpp, elementwise_range_limited.cpp, kernels/elementwise_geometry.cpp):
// every op and dtype against a plain reference loop in double, with broadcasting, strided and
// expanded inputs, empty and 0-d tensors, dtype promotion, in-place ops on views, and the errors
// bad input must raise. Layout (past 800 lines): reference helpers in double, then one section per
// op family in the order geometry, binary, in place, unary, compare, where, cast and fill.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include <leangrad/core/half.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/elementwise_geometry.h>
#include <leangrad/kernels/ops.h>
#include "kernels/every_unary_op.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

using test::all_close;
using test::make_tensor;
using test::to_vector;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

const DType kAllDTypes[] = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8, kBool};
const DType kNumericDTypes[] = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8};
const DType kFloatingDTypes[] = {kFloat32, kFloat64, kFloat16, kBFloat16};
const BinaryOp kBinaryOps[] = {BinaryOp::Add,      BinaryOp::Sub,         BinaryOp::Mul,
                               BinaryOp::Div,      BinaryOp::Pow,         BinaryOp::Maximum,
                               BinaryOp::Minimum,  BinaryOp::Atan2,       BinaryOp::Remainder,
                               BinaryOp::Fmod,     BinaryOp::FloorDivide, BinaryOp::Hypot,
                               BinaryOp::Copysign, BinaryOp::Fmax,        BinaryOp::Fmin};
// Integral operands only (bool refused).
const BinaryOp kIntegralOps[] = {BinaryOp::Gcd, BinaryOp::Lcm, BinaryOp::LeftShift,
                                 BinaryOp::RightShift};
// The binary ops that compute integral operands in float32.
bool computes_in_float(BinaryOp op) {
  return op == BinaryOp::Div || op == BinaryOp::Atan2 || op == BinaryOp::Hypot ||
         op == BinaryOp::Copysign;
}
// Every UnaryOp (tests/kernels/every_unary_op.h).
constexpr const auto& kUnaryOps = test::kEveryUnaryOp;
// The unary ops whose integral input is computed in float32 (the others keep its dtype).
bool promotes_integral_input(UnaryOp op) {
  return op != UnaryOp::Neg && op != UnaryOp::Abs && op != UnaryOp::Relu && op != UnaryOp::Sign &&
         op != UnaryOp::Floor && op != UnaryOp::Ceil && op != UnaryOp::Round &&
         op != UnaryOp::Trunc;
}
const CompareOp kCompareOps[] = {CompareOp::Gt, CompareOp::Lt, CompareOp::Ge,
                                 CompareOp::Le, CompareOp::Eq, CompareOp::Ne};

struct BroadcastCase {
  Shape a, b, out;
};
const BroadcastCase kBroadcastCases[] = {
    {{3, 1}, {1, 4}, {3, 4}},     // both sides broadcast
    {{2, 3, 4}, {4}, {2, 3, 4}},  // missing leading dims
    {{}, {5}, {5}},               // 0-d with 1-D
    {{5}, {}, {5}},
    {{}, {}, {}},              // 0-d result
    {{2, 3}, {2, 3}, {2, 3}},  // same shape, contiguous
    {{0, 3}, {0, 3}, {0, 3}},  // empty
    {{0, 3}, {3}, {0, 3}},
};

// ---- Reference helpers (plain double math) ---------------------------------------------------

std::int64_t numel_of(const Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t s : shape)
    n *= s;
  return n;
}

// Deterministic values exactly representable in `dtype`: multiples of 0.25 in [-4, 4] for
// floating dtypes, [-5, 5] for signed, [0, 10] for uint8, a pattern of 0/1 for bool.
std::vector<double> sample_values(std::int64_t n, DType dtype, int seed) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t k = i * 7 + seed * 5;
    double x = 0;
    if (is_floating(dtype))
      x = static_cast<double>(k % 33 - 16) * 0.25;
    else if (dtype == kUInt8)
      x = static_cast<double>(k % 11);
    else if (dtype == kBool)
      x = (k % 3 == 0) ? 1 : 0;
    else
      x = static_cast<double>(k % 11 - 5);
    v[static_cast<std::size_t>(i)] = x;
  }
  return v;
}

// Element of `values` (row-major over `in`) that broadcasts to the flat index `i` of `out`.
double broadcast_at(const std::vector<double>& values, const Shape& in, const Shape& out,
                    std::int64_t i) {
  std::int64_t offset = 0;
  std::int64_t stride = 1;
  for (std::size_t d = out.size(); d-- > 0;) {
    const std::int64_t index = i % out[d];
    i /= out[d];
    const std::size_t lead = out.size() - in.size();
    if (d >= lead && in[d - lead] != 1) {
      offset += index * stride;
    }
    if (d >= lead) stride *= in[d - lead];
  }
  return values[static_cast<std::size_t>(offset)];
}

// Integer results wrap modulo 2^bits (Note [Defined integer semantics]).
double wrap_to(double v, DType dtype) {
  const auto i = static_cast<std::int64_t>(v);
  switch (dtype) {
    case DType::UInt8:
      return static_cast<double>(((i % 256) + 256) % 256);
    case DType::Int32:
      return static_cast<double>(static_cast<std::int32_t>(i));
    default:
      return v;
  }
}

double reference_powi(std::int64_t base, std::int64_t exponent) {
  if (exponent < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exponent % 2 != 0) ? -1 : 1;
    return 0;
  }
  double r = 1;
  for (std::int64_t k = 0; k < exponent; ++k)
    r *= static_cast<double>(base);
  return r;
}

// a op b as a result of `dtype` (the compute dtype).
double reference_binary(BinaryOp op, double a, double b, DType dtype) {
  const bool integral = !is_floating(dtype);
  double r = 0;
  switch (op) {
    case BinaryOp::Add:
      r = a + b;
      break;
    case BinaryOp::Sub:
      r = a - b;
      break;
    case BinaryOp::Mul:
      r = a * b;
      break;
    case BinaryOp::Div:
      r = a / b;
      break;
    case BinaryOp::Pow:
      r = integral ? reference_powi(static_cast<std::int64_t>(a), static_cast<std::int64_t>(b))
                   : std::pow(a, b);
      break;
    case BinaryOp::Maximum:
      r = (std::isnan(a) || std::isnan(b)) ? kNaN : std::max(a, b);
      break;
    case BinaryOp::Minimum:
      r = (std::isnan(a) || std::isnan(b)) ? kNaN : std::min(a, b);
      break;
    case BinaryOp::Atan2:
      r = std::atan2(a, b);
      break;
    // The quotient's definitions, with the integer conventions of Note [Defined integer
    // semantics] (x % 0 == x, x // 0 == 0).
    case BinaryOp::Remainder:
      r = integral && b == 0 ? a : a - std::floor(a / b) * b;
      break;
    case BinaryOp::Fmod:
      r = integral ? (b == 0 ? a : a - std::trunc(a / b) * b) : std::fmod(a, b);
      break;
    case BinaryOp::FloorDivide:
      r = integral && b == 0 ? 0 : std::floor(a / b);
      break;
    case BinaryOp::BitwiseAnd:
    case BinaryOp::BitwiseOr:
    case BinaryOp::BitwiseXor: {
      const auto x = static_cast<std::int64_t>(a), y = static_cast<std::int64_t>(b);
      r = static_cast<double>(op == BinaryOp::BitwiseAnd  ? (x & y)
                              : op == BinaryOp::BitwiseOr ? (x | y)
                                                          : (x ^ y));
      break;
    }
    case BinaryOp::Hypot:
      r = std::hypot(a, b);
      break;
    case BinaryOp::Copysign:
      r = std::copysign(a, b);
      break;
    case BinaryOp::Fmax:  // the sign of equal zeros: FmaxFminOfEqualOperandsGiveA
      r = std::fmax(a, b);
      break;
    case BinaryOp::Fmin:
      r = std::fmin(a, b);
      break;
    // The integral-only ops from their definitions on int64 (the shifts as products and floored
    // quotients by 2^b), with the out-of-range counts of Note [Defined integer semantics].
    case BinaryOp::Gcd:
    case BinaryOp::Lcm: {
      const auto x = static_cast<std::int64_t>(a), y = static_cast<std::int64_t>(b);
      r = static_cast<double>(op == BinaryOp::Gcd ? std::gcd(x, y) : std::lcm(x, y));
      break;
    }
    case BinaryOp::LeftShift:
    case BinaryOp::RightShift: {
      const int width = dtype == kUInt8 ? 8 : dtype == kInt32 ? 32 : 64;
      const bool inside = b >= 0 && b < width;
      if (op == BinaryOp::LeftShift)
        r = inside ? a * std::ldexp(1.0, static_cast<int>(b)) : 0;
      else
        r = inside ? std::floor(a / std::ldexp(1.0, static_cast<int>(b))) : (a < 0 ? -1 : 0);
      break;
    }
    case BinaryOp::Zeta:    // not here: tests/autograd/test_special_math.cpp checks it
    case BinaryOp::Igamma:  // tests/autograd/test_pointwise_math.cpp checks these three
    case BinaryOp::Igammac:
    case BinaryOp::Nextafter:
      ADD_FAILURE() << "no reference for " << op_name(op) << " here";
      r = kNaN;
      break;
  }
  return integral ? wrap_to(r, dtype) : r;
}

// digamma in long double, independently of the kernel's double evaluation: the reflection at
// negative x, the recurrence up to x >= 30 and the asymptotic series to B_20 (DLMF 5.5.4, 5.5.2,
// 5.11.2); PyTorch's poles (copysign(inf, -x) at 0, NaN at the negative integers).
double reference_digamma(double a) {
  if (a == 0) return std::copysign(kInf, -a);
  if (std::isnan(a) || (a < 0 && a == std::floor(a))) return kNaN;
  if (a == kInf) return kInf;
  const long double pi = 3.141592653589793238462643383279502884L;
  long double x = a;
  long double shift = 0;
  if (x < 0) {
    shift = -pi / std::tan(pi * (x - std::floor(x)));
    x = 1 - x;
  }
  while (x < 30) {
    shift -= 1 / x;
    x += 1;
  }
  // B_2k / 2k, k = 1 .. 10.
  const long double c[] = {1.0L / 12,        -1.0L / 120,      1.0L / 252, -1.0L / 240,
                           1.0L / 132,       -691.0L / 32760,  1.0L / 12,  -3617.0L / 8160,
                           43867.0L / 14364, -174611.0L / 6600};
  long double series = 0, power = 1 / (x * x), z = power;
  for (long double ck : c) {
    series += ck * power;
    power *= z;
  }
  return static_cast<double>(shift + std::log(x) - 1 / (2 * x) - series);
}

// erfinv by bisection on erfl in long double: the y-th quantile of erf, independently of the
// kernel's Halley steps.
double reference_erfinv(double y) {
  if (std::isnan(y) || std::fabs(y) > 1) return kNaN;
  if (std::fabs(y) == 1) return std::copysign(kInf, y);
  if (y == 0) return y;
  long double lo = 0, hi = 7;  // erf(7) rounds to 1 even in long double
  const long double target = std::fabs(y);
  for (int i = 0; i < 120; ++i) {
    const long double mid = (lo + hi) / 2;
    (std::erf(mid) < target ? lo : hi) = mid;
  }
  return std::copysign(static_cast<double>((lo + hi) / 2), y);
}

double reference_unary(UnaryOp op, double a, DType dtype) {
  switch (op) {
    case UnaryOp::Neg:
      return is_floating(dtype) ? -a : wrap_to(-a, dtype);
    case UnaryOp::Abs:
      return std::fabs(a);
    case UnaryOp::Exp:
      return std::exp(a);
    case UnaryOp::Log:
      return std::log(a);
    case UnaryOp::Sqrt:
      return std::sqrt(a);
    case UnaryOp::Tanh:
      return std::tanh(a);
    case UnaryOp::Sigmoid:
      return 1.0 / (1.0 + std::exp(-a));
    case UnaryOp::Relu:
      return std::isnan(a) ? a : std::max(a, 0.0);
    case UnaryOp::Erf:
      return std::erf(a);
    case UnaryOp::Expm1:
      return std::expm1(a);
    case UnaryOp::Log1p:
      return std::log1p(a);
    case UnaryOp::Sin:
      return std::sin(a);
    case UnaryOp::Cos:
      return std::cos(a);
    case UnaryOp::Rsqrt:
      return 1.0 / std::sqrt(a);
    case UnaryOp::Reciprocal:
      return 1.0 / a;
    case UnaryOp::Sign:
      return a > 0 ? 1.0 : (a < 0 ? -1.0 : 0.0);  // NaN gives 0, as PyTorch
    case UnaryOp::Floor:
      return std::floor(a);
    case UnaryOp::Ceil:
      return std::ceil(a);
    case UnaryOp::Round:
      // Halves to even, written out rather than with the rounding mode the kernel uses.
      if (std::isfinite(a) && std::abs(a - std::trunc(a)) == 0.5) {
        const double down = std::floor(a);
        return std::fmod(down, 2.0) == 0 ? down : down + 1;
      }
      return std::round(a);
    case UnaryOp::Trunc:
      return std::trunc(a);
    case UnaryOp::Log2:
      return std::log2(a);
    case UnaryOp::Log10:
      return std::log10(a);
    case UnaryOp::Tan:
      return std::tan(a);
    case UnaryOp::Asin:
      return std::asin(a);
    case UnaryOp::Acos:
      return std::acos(a);
    case UnaryOp::Atan:
      return std::atan(a);
    case UnaryOp::Sinh:
      return std::sinh(a);
    case UnaryOp::Cosh:
      return std::cosh(a);
    case UnaryOp::Asinh:
      return std::asinh(a);
    case UnaryOp::Acosh:
      return std::acosh(a);
    case UnaryOp::Atanh:
      return std::atanh(a);
    case UnaryOp::Exp2:
      return std::pow(2.0, a);
    case UnaryOp::Lgamma:
      return std::lgamma(a);
    case UnaryOp::Digamma:
      return reference_digamma(a);
    case UnaryOp::Erfinv:
      return reference_erfinv(a);
    // In long double, from the C++ library's own functions (libstdc++'s cyl_bessel_i included).
    case UnaryOp::Erfc:
      return static_cast<double>(std::erfc(static_cast<long double>(a)));
    case UnaryOp::Erfcx: {
      const long double l = a;
      return static_cast<double>(std::exp(l * l) * std::erfc(l));
    }
    case UnaryOp::Sinc: {
      if (a == 0) return 1;
      const long double pi_x = 3.141592653589793238462643383279502884L * a;
      return static_cast<double>(std::sin(pi_x) / pi_x);
    }
    case UnaryOp::I0:
    case UnaryOp::I0e:
    case UnaryOp::I1:
    case UnaryOp::I1e: {
      const bool order_one = op == UnaryOp::I1 || op == UnaryOp::I1e;
      const long double m = std::fabs(static_cast<long double>(a));
      long double v = std::cyl_bessel_il(order_one ? 1.0L : 0.0L, m);
      if (op == UnaryOp::I0e || op == UnaryOp::I1e) v *= std::exp(-m);
      return static_cast<double>(order_one && a < 0 ? -v : v);
    }
    case UnaryOp::Ndtri: {  // bisection on Phi(z) = erfc(-z / sqrt 2) / 2
      if (std::isnan(a) || a < 0 || a > 1) return kNaN;
      if (a == 0 || a == 1) return a == 0 ? -kInf : kInf;
      long double lo = -40, hi = 40;
      for (int i = 0; i < 200; ++i) {
        const long double mid = (lo + hi) / 2;
        (std::erfc(-mid / std::sqrt(2.0L)) / 2 < a ? lo : hi) = mid;
      }
      return static_cast<double>((lo + hi) / 2);
    }
    case UnaryOp::BesselJ0:
    case UnaryOp::BesselJ1: {
      const bool order_one = op == UnaryOp::BesselJ1;
      if (std::isinf(a)) return order_one ? std::copysign(0.0, a) : 0.0;  // the limit
      const long double v = std::cyl_bessel_jl(order_one ? 1.0L : 0.0L, std::fabs(a));
      return static_cast<double>(order_one && a < 0 ? -v : v);
    }
    case UnaryOp::BesselY0:
    case UnaryOp::BesselY1:
      if (!(a >= 0)) return kNaN;
      if (a == 0) return -kInf;
      if (std::isinf(a)) return 0;
      return static_cast<double>(std::cyl_neumannl(op == UnaryOp::BesselY0 ? 0.0L : 1.0L, a));
    case UnaryOp::BesselK0:
    case UnaryOp::BesselK1:
    case UnaryOp::BesselK0e:
    case UnaryOp::BesselK1e: {
      if (!(a >= 0)) return kNaN;
      if (a == 0) return kInf;
      if (std::isinf(a)) return 0;
      const bool order_one = op == UnaryOp::BesselK1 || op == UnaryOp::BesselK1e;
      const bool scaled = op == UnaryOp::BesselK0e || op == UnaryOp::BesselK1e;
      const long double k = std::cyl_bessel_kl(order_one ? 1.0L : 0.0L, a);
      return static_cast<double>(scaled ? std::exp(static_cast<long double>(a)) * k : k);
    }
    case UnaryOp::SphericalBesselJ0:
      if (a == 0) return 1;
      if (std::isinf(a)) return 0;
      return static_cast<double>(std::sin(static_cast<long double>(a)) / a);
    case UnaryOp::AiryAi:
    case UnaryOp::AiryAiPrime: {  // by the Bessel functions of order 1/3 and 2/3 (DLMF 9.6)
      const bool prime = op == UnaryOp::AiryAiPrime;
      if (std::isinf(a)) return a > 0 || !prime ? 0 : kNaN;  // the limits
      if (a == 0) return prime ? -0.25881940379280679840L : 0.35502805388781723926L;
      const long double t = std::fabs(static_cast<long double>(a));
      const long double zeta = 2 * t * std::sqrt(t) / 3, sqrt3 = std::sqrt(3.0L);
      const long double pi = 3.14159265358979323846264338327950288L;
      if (a > 0)  // Ai = sqrt(x / 3) K_{1/3}(zeta) / pi, Ai' = -x K_{2/3}(zeta) / (pi sqrt 3)
        return static_cast<double>(prime ? -t * std::cyl_bessel_kl(2 / 3.0L, zeta) / (pi * sqrt3)
                                         : std::sqrt(t / 3) * std::cyl_bessel_kl(1 / 3.0L, zeta) /
                                               pi);
      // Ai(-t) = sqrt(t) (J_{1/3} - Y_{1/3} / sqrt 3) / 2, Ai'(-t) = t (J_{2/3} + Y_{2/3} / sqrt 3)
      // / 2
      const long double nu = prime ? 2 / 3.0L : 1 / 3.0L;
      const long double j = std::cyl_bessel_jl(nu, zeta), y = std::cyl_neumannl(nu, zeta);
      return static_cast<double>(prime ? t * (j + y / sqrt3) / 2
                                       : std::sqrt(t) * (j - y / sqrt3) / 2);
    }
    case UnaryOp::FrexpMantissa:
    case UnaryOp::FrexpExponent: {  // a = m 2^e, 1/2 <= |m| < 1, by logb and scalbn
      if (!std::isfinite(a) || a == 0) return op == UnaryOp::FrexpMantissa ? a : 0;
      const int e = std::ilogb(a) + 1;
      return op == UnaryOp::FrexpMantissa ? std::scalbn(a, -e) : e;
    }
  }
  return kNaN;
}

bool reference_compare(CompareOp op, double a, double b) {
  switch (op) {
    case CompareOp::Gt:
      return a > b;
    case CompareOp::Lt:
      return a < b;
    case CompareOp::Ge:
      return a >= b;
    case CompareOp::Le:
      return a <= b;
    case CompareOp::Eq:
      return a == b;
    case CompareOp::Ne:
      return a != b;
  }
  return false;
}

// The result dtype of tensor-tensor arithmetic (ops.h): promotion, int / int and atan2(int, int)
// -> float32.
DType binary_dtype(BinaryOp op, DType a, DType b) {
  const DType p = promote_types(a, b);
  return computes_in_float(op) && !is_floating(p) ? kFloat32 : p;
}

std::string trace(const char* what, DType dtype, const Shape& a, const Shape& b) {
  return std::string(what) + " dtype " + dtype_name(dtype) + " shapes " + shape_str(a) + " " +
         shape_str(b);
}

// Expected values of a op b for tensors a, b (already made), broadcast to `out`.
std::vector<double> expected_binary(BinaryOp op, const Tensor& a, const Tensor& b, const Shape& out,
                                    DType dtype) {
  const std::vector<double> va = to_vector(a);
  const std::vector<double> vb = to_vector(b);
  std::vector<double> expected;
  for (std::int64_t i = 0; i < numel_of(out); ++i) {
    expected.push_back(reference_binary(op, broadcast_at(va, a.shape(), out, i),
                                        broadcast_at(vb, b.shape(), out, i), dtype));
  }
  return expected;
}

// ---- Geometry --------------------------------------------------------------------------------

TEST(ElementwiseGeometry, ContiguousMergesToOneDim) {
  const Tensor out = empty({2, 3, 4});
  const Tensor a = empty({2, 3, 4});
  const ElementwiseGeometry g = make_elementwise_geometry("add", out, {&a});
  EXPECT_EQ(g.ndim, 1);
  EXPECT_EQ(g.num_operands, 2);
  EXPECT_EQ(g.numel, 24);
  EXPECT_EQ(g.sizes[0], 24);
  EXPECT_TRUE(g.is_contiguous(0));
  EXPECT_TRUE(g.is_contiguous(1));
}

TEST(ElementwiseGeometry, BroadcastGivesZeroStridesAndDropsSizeOneDims) {
  const Tensor out = empty({3, 1, 4});
  const Tensor a = empty({4});
  const Tensor b = empty({3, 1, 1});
  const ElementwiseGeometry g = make_elementwise_geometry("add", out, {&a, &b});
  ASSERT_EQ(g.ndim, 2);
  EXPECT_EQ(g.sizes[0], 3);
  EXPECT_EQ(g.sizes[1], 4);
  EXPECT_EQ(g.strides[0][0], 4);
  EXPECT_EQ(g.strides[0][1], 1);
  EXPECT_EQ(g.strides[1][0], 0);
  EXPECT_EQ(g.strides[1][1], 1);
  EXPECT_EQ(g.strides[2][0], 1);
  EXPECT_EQ(g.strides[2][1], 0);
  EXPECT_FALSE(g.is_contiguous(1));
}

TEST(ElementwiseGeometry, TransposedInputKeepsTwoDims) {
  const Tensor out = empty({3, 4});
  const Tensor a = empty({4, 3}).transpose(0, 1);
  const ElementwiseGeometry g = make_elementwise_geometry("add", out, {&a});
  ASSERT_EQ(g.ndim, 2);
  EXPECT_EQ(g.strides[1][0], 1);
  EXPECT_EQ(g.strides[1][1], 3);
  EXPECT_EQ(g.offset(1, 5), 1 * 1 + 1 * 3);  // element (1, 1)
}

TEST(ElementwiseGeometry, ZeroDimAndSizeOneShapesHaveNoDims) {
  const Tensor out = empty({});
  const Tensor a = empty({1, 1});
  EXPECT_THROW(make_elementwise_geometry("add", out, {&a}), ShapeError);  // more dims than out
  const Tensor b = empty({});
  const ElementwiseGeometry g = make_elementwise_geometry("add", out, {&b});
  EXPECT_EQ(g.ndim, 0);
  EXPECT_EQ(g.numel, 1);
  const Tensor out11 = empty({1, 1});
  const ElementwiseGeometry g11 = make_elementwise_geometry("add", out11, {&b});
  EXPECT_EQ(g11.ndim, 0);
  EXPECT_EQ(g11.numel, 1);
}

TEST(ElementwiseGeometry, EmptyHasZeroNumel) {
  const Tensor out = empty({0, 3});
  const ElementwiseGeometry g = make_elementwise_geometry("add", out, {});
  EXPECT_EQ(g.numel, 0);
}

TEST(ElementwiseGeometry, BadBroadcastNamesOpAndShapes) {
  const Tensor out = empty({4, 3});
  const Tensor a = empty({2, 3});
  try {
    make_elementwise_geometry("add", out, {&a});
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("add: cannot broadcast [2, 3] to [4, 3]"),
              std::string::npos)
        << e.what();
  }
}

TEST(ElementwiseGeometry, TooManyDimsIsShapeError) {
  const Tensor out = empty(Shape(kMaxDims + 1, 1));
  EXPECT_THROW(make_elementwise_geometry("add", out, {}), ShapeError);
}

// ---- Binary ----------------------------------------------------------------------------------

TEST(ElementwiseBinary, EveryOpDTypeAndBroadcastShape) {
  for (BinaryOp op : kBinaryOps) {
    for (DType dtype : kNumericDTypes) {
      for (const BroadcastCase& c : kBroadcastCases) {
        SCOPED_TRACE(trace(op_name(op), dtype, c.a, c.b));
        const Tensor a = make_tensor(sample_values(numel_of(c.a), dtype, 1), c.a, dtype);
        const Tensor b = make_tensor(sample_values(numel_of(c.b), dtype, 2), c.b, dtype);
        const Tensor out = ops::binary(op, a, b);
        const DType out_dtype = binary_dtype(op, dtype, dtype);
        EXPECT_EQ(out.shape(), c.out);
        EXPECT_EQ(out.dtype(), out_dtype);
        EXPECT_TRUE(out.is_contiguous());
        EXPECT_TRUE(all_close(out, expected_binary(op, a, b, c.out, out_dtype)));
      }
    }
  }
}

// gcd, lcm and the shifts over the integral dtypes and every broadcast; shift counts in [0, 10]
// (uint8) or [-5, 5] reach past uint8's width and below 0.
TEST(ElementwiseBinary, IntegralOnlyOpsEveryDTypeAndBroadcastShape) {
  for (BinaryOp op : kIntegralOps) {
    for (DType dtype : {kInt64, kInt32, kUInt8}) {
      for (const BroadcastCase& c : kBroadcastCases) {
        SCOPED_TRACE(trace(op_name(op), dtype, c.a, c.b));
        const Tensor a = make_tensor(sample_values(numel_of(c.a), dtype, 1), c.a, dtype);
        const Tensor b = make_tensor(sample_values(numel_of(c.b), dtype, 2), c.b, dtype);
        const Tensor out = ops::binary(op, a, b);
        EXPECT_EQ(out.shape(), c.out);
        EXPECT_EQ(out.dtype(), dtype);
        std::vector<double> expected = expected_binary(op, a, b, c.out, dtype);
        EXPECT_TRUE(all_close(out, expected));
      }
    }
    SCOPED_TRACE(op_name(op));
    EXPECT_THROW(ops::binary(op, make_tensor({1}, {1}, kBool), make_tensor({1}, {1}, kBool)),
                 DTypeError);
    EXPECT_THROW(ops::binary(op, make_tensor({1}, {1}), make_tensor({1}, {1}, kInt64)), DTypeError);
  }
}

TEST(ElementwiseBinary, StridedAndExpandedInputs) {
  for (BinaryOp op : kBinaryOps) {
    for (DType dtype : {kFloat32, kBFloat16, kInt32}) {
      SCOPED_TRACE(trace(op_name(op), dtype, {3, 4}, {3, 4}));
      const Tensor transposed =
          make_tensor(sample_values(12, dtype, 3), {4, 3}, dtype).transpose(0, 1);
      const Tensor stepped =
          make_tensor(sample_values(24, dtype, 4), {3, 8}, dtype).slice(1, 0, 8, 2);
      const Tensor expanded = make_tensor(sample_values(3, dtype, 5), {3, 1}, dtype).expand({3, 4});
      ASSERT_FALSE(transposed.is_contiguous());
      ASSERT_FALSE(stepped.is_contiguous());
      const DType out_dtype = binary_dtype(op, dtype, dtype);
      for (const auto& [x, y] : {std::pair{transposed, stepped}, std::pair{stepped, expanded},
                                 std::pair{expanded, transposed}}) {
        const Tensor out = ops::binary(op, x, y);
        EXPECT_EQ(out.shape(), (Shape{3, 4}));
        EXPECT_TRUE(all_close(out, expected_binary(op, x, y, {3, 4}, out_dtype)));
      }
    }
  }
}

TEST(ElementwiseBinary, LargeStridedTensorSplitAcrossThreads) {
  // More than two grains of elements, transposed: chunks start in the middle of rows.
  const Shape shape = {301, 257};
  const Tensor a = make_tensor(sample_values(301 * 257, kFloat32, 1), {257, 301}).transpose(0, 1);
  const Tensor b = make_tensor(sample_values(301, kFloat32, 2), {301, 1});
  const Tensor out = ops::binary(BinaryOp::Mul, a, b);
  EXPECT_TRUE(all_close(out, expected_binary(BinaryOp::Mul, a, b, shape, kFloat32)));
  const Tensor c = make_tensor(sample_values(301 * 257, kFloat32, 3), shape);
  const Tensor sum = ops::binary(BinaryOp::Add, c, c);  // contiguous fast path
  EXPECT_TRUE(all_close(sum, expected_binary(BinaryOp::Add, c, c, shape, kFloat32)));
}

// Inputs whose stride-1 dim is not the last (t() views, permutes) are copied to rows before the
// loop (Note [Transposed operands of elementwise ops] in kernels/ops_copy.cpp): with
// contiguous, transposed, permuted and broadcast partners, the results are the plain-double
// reference's (binary) and, bit for bit, those of the same op on contiguous copies (unary,
// activation, tensor-scalar).
TEST(ElementwiseBinary, TransposedAndPermutedInputs) {
  const Tensor transposed =
      make_tensor(sample_values(24 * 16, kFloat32, 1), {24, 16}).transpose(0, 1);  // (16, 24)
  const Tensor rows = make_tensor(sample_values(16 * 24, kFloat32, 2), {16, 24});
  const Tensor column = make_tensor(sample_values(16, kFloat32, 3), {16, 1});
  const Tensor permuted =  // (12, 10, 9), strides (1, 108, 12)
      make_tensor(sample_values(10 * 9 * 12, kFloat32, 4), {10, 9, 12}).permute({2, 0, 1});
  const Tensor cube = make_tensor(sample_values(12 * 10 * 9, kFloat32, 5), {12, 10, 9});
  ASSERT_FALSE(transposed.is_contiguous());
  ASSERT_FALSE(permuted.is_contiguous());
  for (BinaryOp op : kBinaryOps) {
    for (const auto& [x, y] : {std::pair{transposed, rows}, std::pair{rows, transposed},
                               std::pair{transposed, transposed}, std::pair{transposed, column},
                               std::pair{permuted, cube}, std::pair{permuted, permuted}}) {
      SCOPED_TRACE(trace(op_name(op), kFloat32, x.shape(), y.shape()));
      const Tensor out = ops::binary(op, x, y);
      EXPECT_TRUE(out.is_contiguous());
      EXPECT_TRUE(all_close(out, expected_binary(op, x, y, x.shape(), kFloat32)));
    }
  }
  for (const Tensor& x : {transposed, permuted}) {
    SCOPED_TRACE(shape_str(x.shape()));
    const Tensor rows_of_x = ops::contiguous(x);
    const auto same_bits = [](const Tensor& got, const Tensor& want) {
      return test::matches_within_roundoff(got, want, {}, {.bitwise = true});
    };
    for (UnaryOp op : kUnaryOps)
      EXPECT_TRUE(same_bits(ops::unary(op, x), ops::unary(op, rows_of_x))) << op_name(op);
    EXPECT_TRUE(same_bits(ops::activation(ActivationOp::LeakyRelu, x, 0.1),
                          ops::activation(ActivationOp::LeakyRelu, rows_of_x, 0.1)));
    EXPECT_TRUE(same_bits(ops::binary(BinaryOp::Sub, x, 0.75, /*scalar_first=*/true),
                          ops::binary(BinaryOp::Sub, rows_of_x, 0.75, /*scalar_first=*/true)));
  }
}

// Note [Contiguous runs of a strided geometry]: in a geometry that is not contiguous (a row
// expanded over a matrix, whole rows with a step), runs along which every operand steps by 1 take
// the contiguous loop. Each op's bits must be those it gives for the contiguous copy, for runs
// just under, at and past that loop's minimum length (32), in every floating dtype, with signed
// zeros, infinities and NaN among the values; and the casts, float32 to every dtype.
TEST(ElementwiseBinary, ContiguousRunsOfAStridedGeometryGiveTheContiguousBits) {
  const auto same_bits = [](const Tensor& got, const Tensor& want) {
    return test::matches_within_roundoff(got, want, {}, {.bitwise = true});
  };
  for (std::int64_t n : {31, 32, 33, 100}) {
    std::vector<double> values = sample_values(6 * n, kFloat32, 4);
    for (std::int64_t r = 0; r < 6; ++r) {
      values[static_cast<std::size_t>(r * n + 1)] = -0.0;
      values[static_cast<std::size_t>(r * n + 2)] = kNaN;
      values[static_cast<std::size_t>(r * n + n - 1)] = r % 2 == 0 ? kInf : -kInf;
    }
    for (DType dtype : kFloatingDTypes) {
      const Tensor base = make_tensor(values, {6, n}, dtype);
      const Tensor views[] = {base.slice(0, 0, 1, 1).expand({5, n}), base.slice(0, 0, 6, 2)};
      const Tensor other = base.slice(0, 1, 6, 2);  // whole rows with a step, as views[1]
      for (const Tensor& v : views) {
        SCOPED_TRACE(
            trace("runs", dtype, v.shape(), Shape(v.strides().begin(), v.strides().end())));
        ASSERT_FALSE(v.is_contiguous());
        const Tensor c = ops::contiguous(v);
        for (UnaryOp op : kUnaryOps)
          EXPECT_TRUE(same_bits(ops::unary(op, v), ops::unary(op, c))) << op_name(op);
        if (v.shape() == other.shape()) {
          for (BinaryOp op : {BinaryOp::Add, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Atan2}) {
            EXPECT_TRUE(
                same_bits(ops::binary(op, v, other), ops::binary(op, c, ops::contiguous(other))))
                << op_name(op);
          }
        }
        if (dtype == kFloat32) {
          for (DType to : {kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8, kBool})
            EXPECT_TRUE(same_bits(ops::cast(v, to), ops::cast(c, to))) << dtype_name(to);
        }
      }
    }
  }
}

// Note [One-element operands]: an operand of one element broadcast over the output (0-d, (1, 1),
// a 0-d tensor expanded) runs as a number on the CPU. Each op's bits must be those of the loop
// over two tensors, the element spread into a contiguous operand, on either side and in place,
// in every floating dtype, the element a plain number, pow's shortcut exponents, both zeros,
// infinity or NaN.
TEST(ElementwiseBinary, OneElementOperandsGiveTheTwoTensorLoopsBits) {
  const auto same_bits = [](const Tensor& got, const Tensor& want) {
    return test::matches_within_roundoff(got, want, {}, {.bitwise = true});
  };
  for (DType dtype : kFloatingDTypes) {
    const Tensor x = make_tensor(sample_values(33 * 17, dtype, 7), {33, 17}, dtype);
    std::vector<BinaryOp> ops(std::begin(kBinaryOps), std::end(kBinaryOps));
    ops.insert(ops.end(), {BinaryOp::Zeta, BinaryOp::Igamma, BinaryOp::Igammac});
    for (BinaryOp op : ops) {
      for (double v : {0.75, -2.5, 2.0, 3.0, 0.5, -0.5, -1.0, -0.0, kInf, kNaN}) {
        SCOPED_TRACE(trace(op_name(op), dtype, x.shape(), {}) + " element " + std::to_string(v));
        const Tensor element = make_tensor({v}, {}, dtype);
        const Tensor spread = ops::contiguous(element.expand({33, 17}));
        for (const Tensor& e : {element, element.reshape({1, 1}), element.expand({33, 17})}) {
          EXPECT_TRUE(same_bits(ops::binary(op, x, e), ops::binary(op, x, spread)));
          EXPECT_TRUE(same_bits(ops::binary(op, e, x), ops::binary(op, spread, x)));
        }
        const Tensor in_place = x.clone();
        ops::binary_(op, in_place, element);
        EXPECT_TRUE(same_bits(in_place, ops::binary(op, x, spread)));
      }
    }
  }
}

// Note [Runs with a broadcast operand]: a run in which every operand steps by 1 but one input
// that stays put (a per-channel (C, 1, 1) operand over NCHW, a column against a matrix) takes a
// loop of its own. Its bits must be those of the contiguous loop, the operand spread into a
// contiguous tensor: every floating binary op on either side, the compare ops, where with the
// operand in each place, in every floating dtype, with both zeros, infinities and NaN on both
// sides.
TEST(ElementwiseBinary, RunsWithABroadcastOperandGiveTheContiguousLoopsBits) {
  const auto same_bits = [](const Tensor& got, const Tensor& want) {
    return test::matches_within_roundoff(got, want, {}, {.bitwise = true});
  };
  const Shape nchw = {2, 8, 3, 5};
  std::vector<double> x_values = sample_values(numel_of(nchw), kFloat32, 3);
  for (std::size_t i = 0; i < x_values.size(); i += 7)
    x_values[i] = (i / 7) % 4 == 0   ? -0.0
                  : (i / 7) % 4 == 1 ? kNaN
                  : (i / 7) % 4 == 2 ? 0.0
                                     : -kInf;
  const std::vector<double> channel_values = {0.75, -0.0, 0.0, kNaN, -2.5, kInf, 2.0, -1.0};
  std::vector<BinaryOp> ops(std::begin(kBinaryOps), std::end(kBinaryOps));
  ops.insert(ops.end(), {BinaryOp::Zeta, BinaryOp::Igamma, BinaryOp::Igammac});
  for (DType dtype : kFloatingDTypes) {
    const Tensor x = make_tensor(x_values, nchw, dtype);
    const Tensor matrix = x.reshape({16, 15});
    for (const auto& [big, still] :
         {std::pair{x, make_tensor(channel_values, {8, 1, 1}, dtype)},
          std::pair{matrix, make_tensor(sample_values(16, kFloat32, 5), {16, 1}, dtype)}}) {
      const Tensor spread = ops::contiguous(still.expand(big.shape()));
      for (BinaryOp op : ops) {
        SCOPED_TRACE(trace(op_name(op), dtype, big.shape(), still.shape()));
        EXPECT_TRUE(same_bits(ops::binary(op, big, still), ops::binary(op, big, spread)));
        EXPECT_TRUE(same_bits(ops::binary(op, still, big), ops::binary(op, spread, big)));
      }
      for (CompareOp op : kCompareOps) {
        SCOPED_TRACE(trace("compare", dtype, big.shape(), still.shape()));
        EXPECT_TRUE(same_bits(ops::compare(op, big, still), ops::compare(op, big, spread)));
        EXPECT_TRUE(same_bits(ops::compare(op, still, big), ops::compare(op, spread, big)));
      }
      SCOPED_TRACE(trace("where", dtype, big.shape(), still.shape()));
      const Tensor cond = ops::compare(CompareOp::Gt, big, 0.0);
      const Tensor cond_still = ops::compare(CompareOp::Gt, still, 0.0);
      const Tensor cond_spread = ops::contiguous(cond_still.expand(big.shape()));
      EXPECT_TRUE(same_bits(ops::where(cond, big, still), ops::where(cond, big, spread)));
      EXPECT_TRUE(same_bits(ops::where(cond, still, big), ops::where(cond, spread, big)));
      EXPECT_TRUE(same_bits(ops::where(cond_still, big, ops::binary(BinaryOp::Mul, big, 2.0)),
                            ops::where(cond_spread, big, ops::binary(BinaryOp::Mul, big, 2.0))));
    }
  }
}

// Note [fmax and fmin pick a]: of two equal operands fmax and fmin give a, so fmax(-0, +0) is -0,
// as torch 1.13's (Debian's python3-torch: torch.fmax(torch.tensor([0.0, -0.0, 0.0, -0.0]),
// torch.tensor([-0.0, 0.0, 0.0, -0.0])) is [0.0, -0.0, 0.0, -0.0], fmin's the same), and the other
// operand where one is NaN. In every floating dtype and through every CPU loop: contiguous,
// strided, a broadcast run, a one-element operand and a scalar.
TEST(ElementwiseBinary, FmaxFminOfEqualOperandsGiveA) {
  const auto same_bits = [](const Tensor& got, const Tensor& want) {
    return test::matches_within_roundoff(got, want, {}, {.bitwise = true});
  };
  const std::vector<double> a = {0.0, -0.0, 0.0, -0.0, kNaN, 1.0, kNaN, -kInf};
  const std::vector<double> b = {-0.0, 0.0, 0.0, -0.0, 2.0, kNaN, kNaN, -kInf};
  for (DType dtype : kFloatingDTypes) {
    for (BinaryOp op : {BinaryOp::Fmax, BinaryOp::Fmin}) {
      SCOPED_TRACE(trace(op_name(op), dtype, {8}, {8}));
      const Tensor ta = make_tensor(a, {8}, dtype), tb = make_tensor(b, {8}, dtype);
      const Tensor want = make_tensor({0.0, -0.0, 0.0, -0.0, 2.0, 1.0, kNaN, -kInf}, {8}, dtype);
      EXPECT_TRUE(same_bits(ops::binary(op, ta, tb), want));
      // Strided: every other element of a (16,) tensor.
      const Tensor sa = make_tensor(a, {8, 1}, dtype).expand({8, 2}).reshape({16});
      const Tensor sb = make_tensor(b, {8, 1}, dtype).expand({8, 2}).reshape({16});
      EXPECT_TRUE(same_bits(ops::binary(op, sa.slice(0, 0, 16, 2), sb.slice(0, 0, 16, 2)), want));
      for (double zero : {0.0, -0.0}) {
        SCOPED_TRACE(zero);
        const Tensor zeros = make_tensor(std::vector<double>(8, -zero), {8}, dtype);
        const Tensor expected = make_tensor(std::vector<double>(8, zero), {8}, dtype);
        const Tensor element = make_tensor({zero}, {}, dtype);
        EXPECT_TRUE(same_bits(ops::binary(op, element, zeros), expected));  // one element
        EXPECT_TRUE(same_bits(ops::binary(op, element.expand({8}), zeros), expected));
        EXPECT_TRUE(same_bits(ops::binary(op, zeros, zero, /*scalar_first=*/true), expected));
        const Tensor channel = make_tensor({zero, zero}, {2, 1}, dtype);  // a broadcast run
        EXPECT_TRUE(
            same_bits(ops::binary(op, channel, zeros.reshape({2, 4})), expected.reshape({2, 4})));
      }
    }
  }
}

TEST(ElementwiseBinary, DTypePromotion) {
  struct Case {
    DType a, b;
    BinaryOp op;
    DType out;
  };
  const Case cases[] = {
      {kInt32, kFloat32, BinaryOp::Add, kFloat32},
      {kInt64, kInt64, BinaryOp::Div, kFloat32},
      {kFloat16, kBFloat16, BinaryOp::Mul, kFloat32},
      {kUInt8, kInt32, BinaryOp::Sub, kInt32},
      {kBool, kInt32, BinaryOp::Add, kInt32},
      {kFloat16, kFloat64, BinaryOp::Add, kFloat64},
      {kInt32, kInt64, BinaryOp::Pow, kInt64},
      {kBool, kFloat16, BinaryOp::Maximum, kFloat16},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(trace(op_name(c.op), c.a, {3, 1}, {4}));
    const Tensor a = make_tensor(sample_values(3, c.a, 1), {3, 1}, c.a);
    const Tensor b = make_tensor(sample_values(4, c.b, 2), {4}, c.b);
    const Tensor out = ops::binary(c.op, a, b);
    EXPECT_EQ(out.dtype(), c.out);
    EXPECT_TRUE(all_close(out, expected_binary(c.op, a, b, {3, 4}, c.out)));
  }
}

TEST(ElementwiseBinary, IntegerDivisionIsTrueDivision) {
  const Tensor a = make_tensor({7, -7, 1, 0, 5}, {5}, kInt64);
  const Tensor b = make_tensor({2, 2, 0, 0, -4}, {5}, kInt64);
  const Tensor out = ops::binary(BinaryOp::Div, a, b);
  EXPECT_EQ(out.dtype(), kFloat32);
  EXPECT_TRUE(all_close(out, {3.5, -3.5, kInf, kNaN, -1.25}));
}

TEST(ElementwiseBinary, MaximumMinimumPropagateNaN) {
  for (DType dtype : kFloatingDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor a = make_tensor({kNaN, 1, kNaN, -2, 3}, {5}, dtype);
    const Tensor b = make_tensor({1, kNaN, kNaN, 5, kInf}, {5}, dtype);
    EXPECT_TRUE(all_close(ops::binary(BinaryOp::Maximum, a, b), {kNaN, kNaN, kNaN, 5, kInf}));
    EXPECT_TRUE(all_close(ops::binary(BinaryOp::Minimum, a, b), {kNaN, kNaN, kNaN, -2, 3}));
  }
}

TEST(ElementwiseBinary, HalfPrecisionRoundsOnceFromFloat) {
  // 1 + 2^-11 is not a float16; float math then one rounding to even gives exactly 1.
  const Tensor a = make_tensor({1.0, 2048.0}, {2}, kFloat16);
  const Tensor b = make_tensor({0.00048828125, 1.0}, {2}, kFloat16);
  EXPECT_TRUE(all_close(ops::binary(BinaryOp::Add, a, b), {1.0, 2048.0}, 0, 0));
}

// Note [pow with a scalar exponent]: PyTorch's shortcuts. Float32 bit for bit against torch
// 1.13's values at special points (printed by Debian's python3-torch:
// torch.tensor(x).pow(e).tolist()), sign of zero included; then a grid in float32, float64 and
// bfloat16 against the shortcut's definition in the math type, rounded once, and against pow in
// double within its roundings; float16 keeps std::pow (PyTorch's CPU kernel has no shortcut for
// it: pow(-0, 0.5) = +0 and pow(-inf, 0.5) = +inf there).
TEST(ElementwiseBinary, PowScalarShortcutsAsPyTorch) {
  const std::vector<double> x = {-0.0, -kInf, kInf, 0.0, kNaN, -2.0, 1e20, 1e-20, 3.0000002f};
  struct Case {
    double exponent;
    std::vector<double> torch;  // float32
  };
  const Case cases[] = {
      {2, {0, kInf, kInf, 0, kNaN, 4, kInf, 9.99994610111476e-41, 9.000001907348633}},
      {3, {-0.0, -kInf, kInf, 0, kNaN, -8, kInf, 0, 27.00000762939453}},
      {-2, {kInf, 0, 0, kInf, kNaN, 0.25, 0, kInf, 0.11111108958721161}},
      {0.5, {-0.0, kNaN, kInf, 0, kNaN, kNaN, 1e10, 1.000000013351432e-10, 1.732050895690918}},
      {-0.5, {-kInf, kNaN, 0, kInf, kNaN, kNaN, 1.000000013351432e-10, 1e10, 0.5773502588272095}},
      {-1,
       {-kInf, -0.0, 0, kInf, kNaN, -0.5, 9.999999682655225e-21, 1.0000000200408773e+20,
        0.3333333134651184}},
  };
  for (const Case& c : cases) {
    const Tensor out = ops::binary(BinaryOp::Pow, make_tensor(x, {9}), c.exponent);
    const auto* got = static_cast<const float*>(out.data_ptr());
    for (std::size_t i = 0; i < x.size(); ++i) {
      const float want = static_cast<float>(c.torch[i]);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got[i])) << "pow(" << x[i] << ", " << c.exponent << ")";
      } else {
        EXPECT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(want))
            << "pow(" << x[i] << ", " << c.exponent << ") = " << got[i] << ", torch " << want;
      }
    }
  }
  const Tensor half_out =
      ops::binary(BinaryOp::Pow, make_tensor({-0.0, -kInf}, {2}, kFloat16), 0.5);
  const std::vector<double> half_values = to_vector(half_out);
  EXPECT_FALSE(std::signbit(half_values[0]));
  EXPECT_EQ(half_values[1], kInf);

  // The grid: the shortcut in the math type (float, or double for float64), rounded once.
  std::vector<double> grid;
  for (double v = -40.0; v <= 40.0; v += 0.37)
    grid.push_back(v);
  for (const DType dtype : {kFloat32, kFloat64, kBFloat16}) {
    const Tensor base = make_tensor(grid, {static_cast<std::int64_t>(grid.size())}, dtype);
    const std::vector<double> values = to_vector(base);
    for (const double e : {2.0, 3.0, -2.0, 0.5, -0.5, -1.0}) {
      const std::vector<double> got = to_vector(ops::binary(BinaryOp::Pow, base, e));
      for (std::size_t i = 0; i < values.size(); ++i) {
        const auto shortcut = [&](auto m) {
          using M = decltype(m);
          if (e == 2.0) return m * m;
          if (e == 3.0) return m * m * m;
          if (e == -2.0) return M(1) / (m * m);
          if (e == 0.5) return std::sqrt(m);
          if (e == -0.5) return M(1) / std::sqrt(m);
          return M(1) / m;
        };
        double want = dtype == kFloat64
                          ? shortcut(values[i])
                          : static_cast<double>(shortcut(static_cast<float>(values[i])));
        if (dtype == kBFloat16) want = static_cast<double>(BFloat16(static_cast<float>(want)));
        const std::string where = std::string(dtype_name(dtype)) + " pow(" +
                                  std::to_string(values[i]) + ", " + std::to_string(e) + ")";
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(got[i])) << where;
          continue;
        }
        EXPECT_EQ(got[i], want) << where;
        // Within the shortcut's roundings of pow in double: at most two in the math type (u each)
        // and one to the dtype.
        const double u = dtype == kFloat64 ? 0x1p-53 : 0x1p-24;
        const double to_dtype = dtype == kBFloat16 ? 0x1p-8 : 0.0;
        const double exact = std::pow(values[i], e);
        EXPECT_LE(std::fabs(got[i] - exact), (3 * u + to_dtype) * std::fabs(exact)) << where;
      }
    }
  }
}

TEST(ElementwiseBinary, DefinedIntegerSemantics) {
  // See Note [Defined integer semantics] in kernels/elementwise_math.h.
  const double int32_max = std::numeric_limits<std::int32_t>::max();
  const double int32_min = std::numeric_limits<std::int32_t>::min();
  const Tensor big = make_tensor({int32_max, int32_min}, {2}, kInt32);
  const Tensor one = make_tensor({1, 1}, {2}, kInt32);
  EXPECT_TRUE(all_close(ops::binary(BinaryOp::Add, big, one), {int32_min, int32_min + 1}));
  EXPECT_TRUE(all_close(ops::binary(BinaryOp::Sub, big, one), {int32_max - 1, int32_max}));
  EXPECT_TRUE(all_close(ops::unary(UnaryOp::Abs, big), {int32_max, int32_min}));
  EXPECT_TRUE(all_close(ops::unary(UnaryOp::Neg, big), {-int32_max, int32_min}));

  const Tensor base = make_tensor({2, 1, -1, -1, 0, 3, 2}, {7}, kInt64);
  const Tensor exponent = make_tensor({-1, -5, -3, -2, -1, 0, 62}, {7}, kInt64);
  EXPECT_TRUE(all_close(ops::binary(BinaryOp::Pow, base, exponent),
                        {0, 1, -1, 1, 0, 1, 4611686018427387904.0}));

  const Tensor bytes = make_tensor({250, 1, 0}, {3}, kUInt8);
  EXPECT_TRUE(all_close(ops::binary(BinaryOp::Add, bytes, make_tensor({10, 0, 0}, {3}, kUInt8)),
                        {4, 1, 0}));
  EXPECT_TRUE(all_close(ops::unary(UnaryOp::Neg, bytes), {6, 255, 0}));
  EXPECT_TRUE(all_close(
      ops::binary(BinaryOp::Pow, make_tensor({2}, {1}, kUInt8), make_tensor({9}, {1}, kUInt8)),
      {0}));  // 512 mod 256
}

TEST(ElementwiseBinary, ScalarOperand) {
  const double scalars[] = {2.0, 0.5, -1.5};
  for (BinaryOp op : kBinaryOps) {
    for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8}) {
      for (double s : scalars) {
        for (bool scalar_first : {false, true}) {
          SCOPED_TRACE(trace(op_name(op), dtype, {2, 3}, {}) + " scalar " + std::to_string(s) +
                       (scalar_first ? " first" : " second"));
          const Tensor a = make_tensor(sample_values(6, dtype, 1), {2, 3}, dtype);
          const Tensor out = ops::binary(op, a, s, scalar_first);
          DType out_dtype = dtype;
          if (!is_floating(dtype) && s != std::trunc(s)) out_dtype = kFloat32;
          if (computes_in_float(op) && !is_floating(out_dtype)) out_dtype = kFloat32;
          EXPECT_EQ(out.dtype(), out_dtype);
          std::vector<double> expected;
          for (double x : to_vector(a)) {
            expected.push_back(scalar_first ? reference_binary(op, s, x, out_dtype)
                                            : reference_binary(op, x, s, out_dtype));
          }
          EXPECT_TRUE(all_close(out, expected));
        }
      }
    }
  }
}

TEST(ElementwiseBinary, BoolTensorWithScalarPromotes) {
  const Tensor flags = make_tensor({1, 0}, {2}, kBool);
  const Tensor plus_one = ops::binary(BinaryOp::Add, flags, 1.0);
  EXPECT_EQ(plus_one.dtype(), kInt64);
  EXPECT_TRUE(all_close(plus_one, {2, 1}));
  const Tensor half = ops::binary(BinaryOp::Mul, flags, 0.5);
  EXPECT_EQ(half.dtype(), kFloat32);
  EXPECT_TRUE(all_close(half, {0.5, 0}));
}

// Two bool operands: add and maximum are or, mul and minimum and (bool results, as PyTorch);
// sub and pow are refused; div is true division.
TEST(ElementwiseBinary, ArithmeticOnBoolIsLogicalOrDTypeError) {
  const Tensor a = make_tensor({1, 0, 1, 0}, {4}, kBool);
  const Tensor b = make_tensor({1, 1, 0, 0}, {4}, kBool);
  for (BinaryOp op : {BinaryOp::Add, BinaryOp::Maximum}) {
    const Tensor any = ops::binary(op, a, b);
    EXPECT_EQ(any.dtype(), kBool);
    EXPECT_TRUE(all_close(any, {1, 1, 1, 0})) << op_name(op);
  }
  for (BinaryOp op : {BinaryOp::Mul, BinaryOp::Minimum}) {
    const Tensor all = ops::binary(op, a, b);
    EXPECT_EQ(all.dtype(), kBool);
    EXPECT_TRUE(all_close(all, {1, 0, 0, 0})) << op_name(op);
  }
  for (BinaryOp op : {BinaryOp::Sub, BinaryOp::Pow}) {
    try {
      ops::binary(op, a, a);
      FAIL() << "expected DTypeError for " << op_name(op);
    } catch (const DTypeError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(op_name(op)), std::string::npos) << what;
      EXPECT_NE(what.find("bool"), std::string::npos) << what;
    }
  }
  const Tensor quotient =
      ops::binary(BinaryOp::Div, a.slice(0, 0, 2), make_tensor({1, 1}, {2}, kBool));
  EXPECT_EQ(quotient.dtype(), kFloat32);
  EXPECT_TRUE(all_close(quotient, {1, 0}));
  // atan2 of bools is computed in float32, as PyTorch's.
  const Tensor angle = ops::binary(BinaryOp::Atan2, a, b);
  EXPECT_EQ(angle.dtype(), kFloat32);
  EXPECT_TRUE(all_close(angle, {std::atan2(1.0, 1.0), 0, std::atan2(1.0, 0.0), 0}));
}

TEST(ElementwiseBinary, ShapeMismatchNamesBothShapes) {
  const Tensor a = empty({2, 3});
  const Tensor b = empty({4, 3});
  try {
    ops::binary(BinaryOp::Add, a, b);
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("add"), std::string::npos) << what;
    EXPECT_NE(what.find("[2, 3]"), std::string::npos) << what;
    EXPECT_NE(what.find("[4, 3]"), std::string::npos) << what;
  }
}

TEST(ElementwiseBinary, UndefinedTensorIsError) {
  EXPECT_THROW(ops::binary(BinaryOp::Add, Tensor(), empty({2})), Error);
  EXPECT_THROW(ops::unary(UnaryOp::Exp, Tensor()), Error);
}

// ---- In place --------------------------------------------------------------------------------

TEST(ElementwiseInplace, StridedViewChangesOnlyItsElements) {
  for (DType dtype : {kFloat32, kFloat16, kInt64}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor base = make_tensor(sample_values(24, dtype, 1), {4, 6}, dtype);
    const std::vector<double> before = to_vector(base);
    const Tensor view = base.slice(1, 1, 6, 2);  // (4, 3), columns 1, 3, 5
    const Tensor other = make_tensor({1, 2, 3}, {3}, dtype);
    const std::uint32_t version = base.version();
    ops::binary_(BinaryOp::Add, view, other);
    EXPECT_GT(base.version(), version);  // the version counter is shared with the view
    std::vector<double> expected = before;
    for (int r = 0; r < 4; ++r) {
      for (int c = 0; c < 3; ++c)
        expected[static_cast<std::size_t>(r * 6 + 1 + 2 * c)] += c + 1;
    }
    EXPECT_TRUE(all_close(base, expected));
  }
}

TEST(ElementwiseInplace, ScalarOnTransposedView) {
  const Tensor base = make_tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  ops::binary_(BinaryOp::Mul, base.transpose(0, 1), 10.0);
  EXPECT_TRUE(all_close(base, {10, 20, 30, 40, 50, 60}));
  ops::binary_(BinaryOp::Sub, base, 5.0);
  EXPECT_TRUE(all_close(base, {5, 15, 25, 35, 45, 55}));
}

TEST(ElementwiseInplace, ComputesInPromotedDTypeThenCasts) {
  // float16 self + float32 other: computed in float32, rounded once into float16.
  const Tensor self = make_tensor({1.0, 3.0}, {2}, kFloat16);
  // 2^-11 + 2^-22 is not a float16: rounding it first would give 1 + 2^-11, a tie, and 1.0.
  const Tensor other = make_tensor({0.0004885196685791015625, 0.5}, {2}, kFloat32);
  ops::binary_(BinaryOp::Add, self, other);
  EXPECT_EQ(self.dtype(), kFloat16);
  EXPECT_TRUE(all_close(self, {1.0009765625, 3.5}, 0, 0));
  // int self with an int scalar keeps int.
  const Tensor counts = make_tensor({1, 2}, {2}, kInt32);
  ops::binary_(BinaryOp::Add, counts, 3.0);
  EXPECT_TRUE(all_close(counts, {4, 5}));
}

TEST(ElementwiseInplace, OverlappingOtherIsReadBeforeWriting) {
  const Tensor x = make_tensor({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  ops::binary_(BinaryOp::Add, x, x.transpose(0, 1));
  EXPECT_TRUE(all_close(x, {2, 6, 10, 6, 10, 14, 10, 14, 18}));
  ops::binary_(BinaryOp::Mul, x, x);
  EXPECT_TRUE(all_close(x, {4, 36, 100, 36, 100, 196, 100, 196, 324}));
}

TEST(ElementwiseInplace, Errors) {
  const Tensor self = empty({2, 3});
  // other must broadcast to self's shape, not the reverse.
  try {
    ops::binary_(BinaryOp::Add, self, empty({4, 2, 3}));
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("[4, 2, 3]"), std::string::npos) << what;
    EXPECT_NE(what.find("[2, 3]"), std::string::npos) << what;
  }
  EXPECT_THROW(ops::binary_(BinaryOp::Add, empty({1, 3}), empty({2, 3})), ShapeError);
  // float result into an integral tensor, anything into bool.
  EXPECT_THROW(ops::binary_(BinaryOp::Add, zeros({2}, kInt64), zeros({2})), DTypeError);
  EXPECT_THROW(ops::binary_(BinaryOp::Div, zeros({2}, kInt64), zeros({2}, kInt64)), DTypeError);
  EXPECT_THROW(ops::binary_(BinaryOp::Mul, zeros({2}, kInt64), 0.5), DTypeError);
  EXPECT_THROW(ops::binary_(BinaryOp::Add, zeros({2}, kBool), 1.0), DTypeError);
  // An expanded tensor has several elements per memory location.
  EXPECT_THROW(ops::binary_(BinaryOp::Add, zeros({3, 1}).expand({3, 4}), 1.0), Error);
}

TEST(ElementwiseInplace, EmptyTensorBumpsVersion) {
  const Tensor self = empty({0, 3});
  const std::uint32_t version = self.version();
  ops::binary_(BinaryOp::Add, self, empty({3}));
  EXPECT_EQ(self.version(), version + 1);
}

// ---- Unary -----------------------------------------------------------------------------------

TEST(ElementwiseUnary, EveryOpOnFloatingDTypes) {
  const Shape shapes[] = {{2, 3, 4}, {}, {0, 3}};
  for (UnaryOp op : kUnaryOps) {
    for (DType dtype : kFloatingDTypes) {
      for (const Shape& shape : shapes) {
        SCOPED_TRACE(trace(op_name(op), dtype, shape, {}));
        const Tensor a = make_tensor(sample_values(numel_of(shape), dtype, 1), shape, dtype);
        const Tensor out = ops::unary(op, a);
        EXPECT_EQ(out.dtype(), dtype);
        EXPECT_EQ(out.shape(), shape);
        std::vector<double> expected;
        for (double x : to_vector(a)) {
          const double r = reference_unary(op, x, dtype);
          // Past float16's largest finite value (65504, rounding to inf from 65520 on), as erfcx
          // of -4 is.
          const bool overflows = dtype == kFloat16 && std::fabs(r) >= 65520.0;
          expected.push_back(overflows ? std::copysign(kInf, r) : r);
        }
        EXPECT_TRUE(all_close(out, expected));
      }
    }
  }
}

TEST(ElementwiseUnary, StridedInput) {
  const Tensor a = make_tensor(sample_values(24, kFloat32, 2), {4, 6}).slice(1, 0, 6, 2);
  for (UnaryOp op : kUnaryOps) {
    SCOPED_TRACE(op_name(op));
    std::vector<double> expected;
    for (double x : to_vector(a))
      expected.push_back(reference_unary(op, x, kFloat32));
    EXPECT_TRUE(all_close(ops::unary(op, a), expected));
  }
}

TEST(ElementwiseUnary, IntegralInput) {
  for (UnaryOp op : kUnaryOps) {
    for (DType dtype : {kInt64, kInt32, kUInt8, kBool}) {
      SCOPED_TRACE(trace(op_name(op), dtype, {7}, {}));
      const Tensor a = make_tensor(sample_values(7, dtype, 1), {7}, dtype);
      const bool floating_only = promotes_integral_input(op);
      if (dtype == kBool && !floating_only) {
        EXPECT_THROW(ops::unary(op, a), DTypeError);
        continue;
      }
      const Tensor out = ops::unary(op, a);
      const DType out_dtype = floating_only ? kFloat32 : dtype;
      EXPECT_EQ(out.dtype(), out_dtype);
      std::vector<double> expected;
      for (double x : to_vector(a))
        expected.push_back(reference_unary(op, x, out_dtype));
      EXPECT_TRUE(all_close(out, expected));
    }
  }
}

TEST(ElementwiseUnary, ReluKeepsNaN) {
  for (DType dtype : kFloatingDTypes) {
    const Tensor a = make_tensor({kNaN, -1, 2, -kInf}, {4}, dtype);
    EXPECT_TRUE(all_close(ops::unary(UnaryOp::Relu, a), {kNaN, 0, 2, 0}));
  }
}

TEST(ElementwiseUnary, SigmoidIsStableForLargeInputs) {
  const std::vector<double> x = {-1000, -100, -20, 0, 20, 100, 1000};
  for (DType dtype : kFloatingDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    std::vector<double> expected;
    for (double v : x)
      expected.push_back(1.0 / (1.0 + std::exp(-v)));
    const Tensor out = ops::unary(UnaryOp::Sigmoid, make_tensor(x, {7}, dtype));
    // exp(-100) is a float32 subnormal: compare small values absolutely.
    const test::Tolerance tol = test::tolerance_for(dtype);
    EXPECT_TRUE(all_close(out, expected, tol.rtol, std::max(tol.atol, 1e-30)));
    for (double v : to_vector(out))
      EXPECT_FALSE(std::isnan(v));
  }
}

// exp and sigmoid of float32 on the CPU (Note [Polynomial exp on the CPU]) against double, over
// every 9973rd float bit pattern (NaNs and infinities among them), each within its bound: exp
// within 1.02 ulps (Note [Polynomial exp]; an ulp of a subnormal result is 2^-149); sigmoid, with
// e = e^-|x| within 2.04 u relative (u = 2^-24) or 1.02 2^-149 absolute when subnormal, 1 + e
// and the division one rounding each: 1 / (1 + e) within 3.02 u, e / (1 + e) within 5.06 u.
TEST(ElementwiseUnary, ExpAndSigmoidOfFloatWithinTheirBounds) {
  std::vector<double> x;
  for (std::uint64_t bits = 0; bits < (std::uint64_t{1} << 32); bits += 9973) {
    float f;
    const auto b = static_cast<std::uint32_t>(bits);
    std::memcpy(&f, &b, sizeof f);
    x.push_back(f);
  }
  const auto n = static_cast<std::int64_t>(x.size());
  const Tensor input = make_tensor(x, {n}, kFloat32);
  const std::vector<double> e = to_vector(ops::unary(UnaryOp::Exp, input));
  const std::vector<double> s = to_vector(ops::unary(UnaryOp::Sigmoid, input));
  constexpr double kU = 0x1p-24;
  constexpr double kSmallest = 0x1p-149;
  const auto ulp = [](double v) {
    return v < 0x1p-126 ? kSmallest : std::ldexp(1.0, std::ilogb(v) - 23);
  };
  for (std::int64_t i = 0; i < n; ++i) {
    SCOPED_TRACE("x = " + std::to_string(x[i]));
    if (std::isnan(x[i])) {
      ASSERT_TRUE(std::isnan(e[i]) && std::isnan(s[i]));
      continue;
    }
    const double exact_e = std::exp(x[i]);
    if (exact_e > std::numeric_limits<float>::max()) {
      ASSERT_EQ(e[i], INFINITY);
    } else if (exact_e < kSmallest / 2) {
      ASSERT_LE(e[i], kSmallest);  // rounds to 0, or the smallest subnormal at the edge
    } else {
      ASSERT_LE(std::fabs(e[i] - exact_e), 1.02 * ulp(exact_e));
    }
    const double exact_s = 1.0 / (1.0 + std::exp(-x[i]));
    const double bound = x[i] >= 0 ? 3.02 * kU * exact_s : 5.06 * kU * exact_s + 1.02 * kSmallest;
    ASSERT_LE(std::fabs(s[i] - exact_s), bound + kSmallest / 2) << s[i] << " vs " << exact_s;
  }
}

// ---- Compare ---------------------------------------------------------------------------------

TEST(ElementwiseCompare, EveryOpDTypeAndBroadcastShape) {
  // b from another seed than a (floating values then never meet a's), and from a's own seed (equal
  // pairs wherever the broadcast lines the same element up), so that == and >= are told apart.
  std::int64_t equal_pairs = 0;
  for (CompareOp op : kCompareOps) {
    for (DType dtype : kAllDTypes) {
      for (const BroadcastCase& c : kBroadcastCases) {
        for (int b_seed : {4, 1}) {
          SCOPED_TRACE(trace(op_name(op), dtype, c.a, c.b) + ", b seed " + std::to_string(b_seed));
          const Tensor a = make_tensor(sample_values(numel_of(c.a), dtype, 1), c.a, dtype);
          const Tensor b = make_tensor(sample_values(numel_of(c.b), dtype, b_seed), c.b, dtype);
          const Tensor out = ops::compare(op, a, b);
          EXPECT_EQ(out.dtype(), kBool);
          EXPECT_EQ(out.shape(), c.out);
          const std::vector<double> va = to_vector(a);
          const std::vector<double> vb = to_vector(b);
          std::vector<double> expected;
          for (std::int64_t i = 0; i < numel_of(c.out); ++i) {
            const double x = broadcast_at(va, c.a, c.out, i), y = broadcast_at(vb, c.b, c.out, i);
            expected.push_back(reference_compare(op, x, y));
            if (is_floating(dtype) && x == y) ++equal_pairs;
          }
          EXPECT_TRUE(all_close(out, expected));
        }
      }
    }
  }
  EXPECT_GT(equal_pairs, 0) << "no floating case compares equal values";
}

TEST(ElementwiseCompare, PromotesMixedDTypesAndHandlesNaN) {
  const Tensor ints = make_tensor({1, 2, 3}, {3}, kInt32);
  const Tensor floats = make_tensor({1.5, 2, kNaN}, {3}, kFloat32);
  EXPECT_TRUE(all_close(ops::compare(CompareOp::Lt, ints, floats), {1, 0, 0}));
  EXPECT_TRUE(all_close(ops::compare(CompareOp::Eq, ints, floats), {0, 1, 0}));
  EXPECT_TRUE(all_close(ops::compare(CompareOp::Ne, ints, floats), {1, 0, 1}));
  EXPECT_TRUE(all_close(ops::compare(CompareOp::Ge, ints, floats), {0, 1, 0}));
  const Tensor strided = make_tensor({1, 9, 2, 9, 3, 9}, {6}, kInt64).slice(0, 0, 6, 2);
  EXPECT_TRUE(all_close(ops::compare(CompareOp::Eq, strided, ints), {1, 1, 1}));
}

TEST(ElementwiseCompare, Scalar) {
  // A float32 tensor holding 0.1 equals the scalar 0.1 (the scalar is rounded to float32).
  EXPECT_TRUE(all_close(ops::compare(CompareOp::Eq, make_tensor({0.1}, {1}), 0.1), {1}));
  EXPECT_TRUE(all_close(ops::compare(CompareOp::Eq, make_tensor({0.1}, {1}, kFloat16), 0.1), {1}));
  const Tensor ints = make_tensor({2, 3}, {2}, kInt32);
  EXPECT_TRUE(all_close(ops::compare(CompareOp::Lt, ints, 2.5), {1, 0}));
  EXPECT_TRUE(all_close(ops::compare(CompareOp::Gt, ints, 2.5), {0, 1}));
  EXPECT_TRUE(all_close(ops::compare(CompareOp::Ge, ints, 3.0), {0, 1}));
  const Tensor bytes = make_tensor({255, 0}, {2}, kUInt8);
  EXPECT_TRUE(all_close(ops::compare(CompareOp::Lt, bytes, 300.0), {1, 1}));
  EXPECT_TRUE(all_close(ops::compare(CompareOp::Gt, bytes, -1.0), {1, 1}));
  const Tensor flags = make_tensor({1, 0}, {2}, kBool);
  EXPECT_TRUE(all_close(ops::compare(CompareOp::Eq, flags, 1.0), {1, 0}));
  EXPECT_TRUE(all_close(ops::compare(CompareOp::Lt, flags, 0.5), {0, 1}));
  const Tensor big = make_tensor({9e18, -9e18}, {2}, kInt64);
  EXPECT_TRUE(all_close(ops::compare(CompareOp::Lt, big, 1e19), {1, 1}));
  EXPECT_TRUE(all_close(ops::compare(CompareOp::Ne, make_tensor({kNaN}, {1}), kNaN), {1}));
  EXPECT_TRUE(all_close(ops::compare(CompareOp::Eq, empty({0, 2}), 1.0), std::vector<double>{}));
}

// ---- Where -----------------------------------------------------------------------------------

TEST(ElementwiseWhere, BroadcastsAllThreeAndPromotes) {
  const Tensor cond = make_tensor({1, 0, 1}, {3, 1}, kBool);
  const Tensor a = make_tensor({1, 2, 3, 4}, {1, 4}, kInt32);
  const Tensor b = make_tensor({-0.5}, {}, kFloat32);
  const Tensor out = ops::where(cond, a, b);
  EXPECT_EQ(out.dtype(), kFloat32);
  EXPECT_EQ(out.shape(), (Shape{3, 4}));
  EXPECT_TRUE(all_close(out, {1, 2, 3, 4, -0.5, -0.5, -0.5, -0.5, 1, 2, 3, 4}));
}

TEST(ElementwiseWhere, EveryDTypeWithStridedInputs) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor cond = make_tensor({1, 0, 0, 1, 1, 0}, {2, 3}, kBool).transpose(0, 1);  // (3, 2)
    const Tensor a = make_tensor(sample_values(6, dtype, 1), {3, 2}, dtype);
    const Tensor b = make_tensor(sample_values(12, dtype, 2), {3, 4}, dtype).slice(1, 0, 4, 2);
    const Tensor out = ops::where(cond, a, b);
    EXPECT_EQ(out.dtype(), dtype);
    const std::vector<double> vc = to_vector(cond);
    const std::vector<double> va = to_vector(a);
    const std::vector<double> vb = to_vector(b);
    std::vector<double> expected;
    for (std::size_t i = 0; i < 6; ++i)
      expected.push_back(vc[i] != 0 ? va[i] : vb[i]);
    EXPECT_TRUE(all_close(out, expected, 0, 0));
  }
  EXPECT_EQ(ops::where(empty({0}, kBool), empty({0}), empty({})).shape(), (Shape{0}));
}

// where copies the chosen operand's bytes (the CPU launcher selects on unsigned integers of the
// element's width): NaN payloads, -0 and subnormals come through unchanged, in every dtype, for
// contiguous operands (1,003 elements: vector tails), a 0-d operand broadcast, and a transposed
// one.
TEST(ElementwiseWhere, CopiesTheChosenOperandsBytes) {
  constexpr std::int64_t kRows = 17, kCols = 59;  // 1,003 elements
  constexpr std::int64_t kCount = kRows * kCols;
  // Element i of a contiguous tensor of `dtype` holding bytes from `seed` (0 or 1 for bool).
  const auto filled = [](DType dtype, const Shape& shape, std::uint32_t seed) {
    Tensor t = zeros(shape, dtype);
    auto* bytes = static_cast<std::uint8_t*>(t.data_ptr());
    std::uint32_t state = seed;
    for (std::size_t i = 0; i < t.nbytes(); ++i) {
      state = state * 1664525u + 1013904223u;  // any bytes: NaN payloads, -0, subnormals
      bytes[i] = dtype == kBool ? static_cast<std::uint8_t>((state >> 20) & 1u)
                                : static_cast<std::uint8_t>(state >> 24);
    }
    return t;
  };
  const Tensor cond = filled(kBool, {kRows, kCols}, 7);
  const auto* c = static_cast<const std::uint8_t*>(cond.data_ptr());
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    const std::size_t size = element_size(dtype);
    const Tensor a = filled(dtype, {kRows, kCols}, 1);
    const Tensor b = filled(dtype, {kRows, kCols}, 2);
    const Tensor b_transposed = filled(dtype, {kCols, kRows}, 3);
    const Tensor scalar = filled(dtype, {}, 4);
    // Bytes of element (row, col) of a (kRows, kCols) operand stored row-major (or transposed).
    const auto at = [&](const Tensor& t, std::int64_t i, bool transposed) {
      const std::int64_t k = transposed ? (i % kCols) * kRows + i / kCols : i;
      return static_cast<const std::uint8_t*>(t.data_ptr()) + k * static_cast<std::int64_t>(size);
    };
    struct Case {
      const char* name;
      Tensor out;
      const Tensor* x;
      bool x_scalar;
      const Tensor* y;
      bool y_transposed;
    };
    const Case cases[] = {
        {"contiguous", ops::where(cond, a, b), &a, false, &b, false},
        {"0-d first", ops::where(cond, scalar, b), &scalar, true, &b, false},
        {"transposed second", ops::where(cond, a, b_transposed.transpose(0, 1)), &a, false,
         &b_transposed, true},
    };
    for (const Case& k : cases) {
      SCOPED_TRACE(k.name);
      ASSERT_EQ(k.out.dtype(), dtype);
      std::int64_t mismatches = 0;
      for (std::int64_t i = 0; i < kCount; ++i) {
        const std::uint8_t* want = c[i] != 0
                                       ? (k.x_scalar ? at(*k.x, 0, false) : at(*k.x, i, false))
                                       : at(*k.y, i, k.y_transposed);
        mismatches += std::memcmp(at(k.out, i, false), want, size) != 0;
      }
      EXPECT_EQ(mismatches, 0);
    }
  }
}

TEST(ElementwiseWhere, NonBoolConditionIsDTypeError) {
  try {
    ops::where(zeros({2}, kInt32), zeros({2}), zeros({2}));
    FAIL() << "expected DTypeError";
  } catch (const DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("int32"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ops::where(zeros({2}, kBool), zeros({2}), zeros({3})), ShapeError);
}

// ---- Cast and fill (ops_copy.cpp drives the CPU cast and fill kernels) -----------------------

// What cast_value does to one double (Note [Defined integer semantics]).
double reference_cast(double v, DType to) {
  if (to == kBool) return v != 0 ? 1 : 0;  // NaN != 0
  if (is_floating(to)) return v;
  if (std::isnan(v)) return 0;
  double t = std::trunc(v);
  if (to == kInt64) return std::clamp(t, -9223372036854775808.0, 9223372036854775807.0);
  return wrap_to(t, to);
}

// FastDivmod (the strided CUDA kernels' 32-bit index division) against / and % for every
// divisor up to 2^16, powers of two and their neighbours up to 2^31, and numerators at 0, around
// multiples of the divisor and at the top of the 31-bit range, plus a sweep.
TEST(FastDivmod, EqualsDivisionForNumeratorsBelow2To31) {
  std::vector<std::uint32_t> divisors;
  for (std::uint32_t d = 1; d <= 65536; ++d)
    divisors.push_back(d);
  for (int shift = 17; shift <= 31; ++shift)
    for (std::int64_t delta : {-1, 0, 1})
      divisors.push_back(static_cast<std::uint32_t>((std::int64_t{1} << shift) + delta));
  divisors.push_back(3 * 7 * 11 * 13 * 17 * 19 * 23);  // large odd divisors
  divisors.push_back(2147483647u);
  constexpr std::uint32_t kTop = 0x7fffffffu;
  for (std::uint32_t d : divisors) {
    if (d > kTop) continue;
    const FastDivmod fast(d);
    std::vector<std::uint32_t> numerators = {0, 1, d - 1, d, kTop, kTop - 1, kTop - d + 1};
    for (std::uint32_t m : {2u, 3u, 1000u, kTop / d})
      if (static_cast<std::uint64_t>(m) * d + 1 <= kTop) {
        numerators.push_back(m * d - 1);
        numerators.push_back(m * d);
        numerators.push_back(m * d + 1);
      }
    for (std::uint32_t n = 0; n < kTop - 982451653u; n += 982451653u)
      numerators.push_back(n + (d % 977));
    for (std::uint32_t n : numerators) {
      if (n > kTop) continue;
      const std::uint32_t q = fast.div(n);
      ASSERT_EQ(q, n / d) << n << " / " << d;
      ASSERT_EQ(fast.mod(n, q), n % d) << n << " % " << d;
    }
  }
}

TEST(ElementwiseCast, EveryPairOfDTypes) {
  for (DType from : kAllDTypes) {
    // Values representable in `from`; fractional and negative ones where `from` has them.
    std::vector<double> values = {0, 1, 3, 100};
    if (is_floating(from))
      values.insert(values.end(), {-2.75, 3.5, -0.75, 0.25});
    else if (from != kUInt8 && from != kBool)
      values.insert(values.end(), {-2, -100, 7, 42});
    if (from == kBool) values = {0, 1, 1, 0};
    for (DType to : kAllDTypes) {
      SCOPED_TRACE(std::string(dtype_name(from)) + " -> " + dtype_name(to));
      const Tensor src =
          make_tensor(values, {2, static_cast<std::int64_t>(values.size() / 2)}, from)
              .transpose(0, 1);
      const Tensor out = ops::cast(src, to);
      EXPECT_EQ(out.dtype(), to);
      EXPECT_EQ(out.shape(), src.shape());
      std::vector<double> expected;
      for (double v : to_vector(src))
        expected.push_back(reference_cast(v, to));
      EXPECT_TRUE(all_close(out, expected));
    }
  }
}

TEST(ElementwiseCast, SpecialValues) {
  const Tensor special = make_tensor({kNaN, kInf, -kInf, 1e20, -1.0, -0.5, 255.9}, {7}, kFloat64);
  const double int64_max = 9223372036854775807.0;
  EXPECT_TRUE(
      all_close(ops::cast(special, kInt64), {0, int64_max, -int64_max - 1, int64_max, -1, 0, 255}));
  EXPECT_TRUE(all_close(ops::cast(special, kUInt8), {0, 255, 0, 255, 255, 0, 255}));
  EXPECT_TRUE(all_close(ops::cast(special, kBool), {1, 1, 1, 1, 1, 1, 1}));
  // Beyond float16's range: infinity; NaN stays NaN.
  EXPECT_TRUE(all_close(ops::cast(special, kFloat16),
                        {kNaN, kInf, -kInf, kInf, -1.0, -0.5, 255.875}, 0, 0));
  EXPECT_TRUE(
      all_close(ops::cast(make_tensor({70000.0, 65519.0}, {2}), kFloat16), {kInf, 65504}, 0, 0));
}

// The bits of a float32 tensor's elements (any strides), in logical row-major order.
std::vector<std::uint32_t> float_patterns(const Tensor& t) {
  const Tensor dense = t.contiguous();
  std::vector<std::uint32_t> bits(static_cast<std::size_t>(dense.numel()));
  std::memcpy(bits.data(), dense.data_ptr(), bits.size() * sizeof(std::uint32_t));
  return bits;
}

// A contiguous float32 tensor holding `bits`, NaN payloads as they are.
Tensor floats_of_bits(const std::vector<std::uint32_t>& bits) {
  Tensor t = empty({static_cast<std::int64_t>(bits.size())});
  std::memcpy(t.data_ptr(), bits.data(), bits.size() * sizeof(std::uint32_t));
  return t;
}

// The layouts a cast can meet, each holding `values` (a 1-d tensor of n elements) in logical
// order, none contiguous: every other element of a larger tensor; the transposed (n / 8, 8)
// view; and each of the first 3 values repeated 700 times along a stride-0 dim, which is longer
// than a chunk of kernels/cpu/elementwise_loops.h (kHalfChunk, 512).
std::vector<std::pair<const char*, Tensor>> strided_layouts(const Tensor& values) {
  const std::int64_t n = values.numel();
  const Tensor spaced = zeros({n, 2}, values.dtype());
  spaced.select(1, 0).copy_(values);
  const Tensor columns = values.reshape({8, n / 8}).t().contiguous().t();
  return {{"every other element", spaced.select(1, 0)},
          {"transposed", columns},
          {"stride 0", values.slice(0, 0, 3).unsqueeze(1).expand({3, 700})}};
}

// Note [16-bit casts in lanes]: float32 <-> float16 and bfloat16 in lanes over any layout, read
// from a strided input or written through copy_ into a strided output, give core/half.h's
// one-value conversion of each element, bit for bit: every 16-bit value widened, and every one
// narrowed from beside it (the float itself, half a 16-bit ulp above it, where ties go to even,
// and one float ulp either side of that midpoint), NaNs among them.
TEST(ElementwiseCast, SixteenBitCastsOfEveryLayoutGiveTheOneValueConversionsBits) {
  for (DType half : {kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(half));
    const bool is_half = half == kFloat16;
    const auto widen_one = [&](std::uint16_t b) {
      return std::bit_cast<std::uint32_t>(is_half ? detail::half_bits_to_float(b)
                                                  : detail::bfloat16_bits_to_float(b));
    };
    const auto narrow_one = [&](std::uint32_t b) {
      const float x = std::bit_cast<float>(b);
      return is_half ? detail::float_to_half_bits(x) : detail::float_to_bfloat16_bits(x);
    };

    const Tensor every = test::every_sixteen_bit_value(half);
    std::vector<std::uint32_t> near;  // the floats to narrow
    const std::uint32_t midpoint = is_half ? 1u << 12 : 1u << 15;
    for (std::uint32_t b = 0; b < 65536; ++b)
      for (std::uint32_t offset : {0u, midpoint - 1, midpoint, midpoint + 1})
        near.push_back(widen_one(static_cast<std::uint16_t>(b)) + offset);
    const Tensor floats = floats_of_bits(near);

    for (const auto& [layout, in] : strided_layouts(every)) {
      SCOPED_TRACE(std::string("widening, ") + layout);
      const std::vector<std::uint16_t> in_bits = test::sixteen_bit_patterns(in);
      std::vector<std::uint32_t> expected;
      for (std::uint16_t b : in_bits)
        expected.push_back(widen_one(b));
      EXPECT_EQ(float_patterns(ops::cast(in, kFloat32)), expected);
      const Tensor out = zeros({in.numel(), 2});  // copy_ into every other element
      Tensor out_view = out.select(1, 0).reshape(in.shape());
      ASSERT_FALSE(out_view.is_contiguous());
      out_view.copy_(in);
      EXPECT_EQ(float_patterns(out_view), expected);
    }
    for (const auto& [layout, in] : strided_layouts(floats)) {
      SCOPED_TRACE(std::string("narrowing, ") + layout);
      std::vector<std::uint16_t> expected;
      for (std::uint32_t b : float_patterns(in))
        expected.push_back(narrow_one(b));
      EXPECT_EQ(test::sixteen_bit_patterns(ops::cast(in, half)), expected);
      const Tensor out = zeros({in.numel(), 2}, half);
      Tensor out_view = out.select(1, 0).reshape(in.shape());
      ASSERT_FALSE(out_view.is_contiguous());
      out_view.copy_(in);
      EXPECT_EQ(test::sixteen_bit_patterns(out_view), expected);
    }
  }
}

// The other launchers that read a transposed input in rows (Note [Transposed operands of
// elementwise ops] in kernels/ops_copy.cpp): comparisons, where, masked_fill_'s mask, an
// activation's gradient and a cast that converts, each with transposed and permuted operands,
// against a loop over the operands' logical elements (the gradient: bit for bit the same op on
// contiguous copies, as ElementwiseBinary.TransposedAndPermutedInputs checks the forward ops).
TEST(ElementwiseCompareWhereCast, TransposedAndPermutedInputs) {
  const Tensor transposed =
      make_tensor(sample_values(24 * 16, kFloat32, 1), {24, 16}).transpose(0, 1);  // (16, 24)
  const Tensor rows = make_tensor(sample_values(16 * 24, kFloat32, 2), {16, 24});
  const Tensor permuted =  // (12, 10, 9), strides (1, 108, 12)
      make_tensor(sample_values(10 * 9 * 12, kFloat32, 4), {10, 9, 12}).permute({2, 0, 1});
  const Tensor cube = make_tensor(sample_values(12 * 10 * 9, kFloat32, 5), {12, 10, 9});
  for (const auto& [x, y] : {std::pair{transposed, rows}, std::pair{rows, transposed},
                             std::pair{permuted, cube}, std::pair{cube, permuted}}) {
    SCOPED_TRACE(shape_str(x.shape()) + (x.is_contiguous() ? " rows first" : " rows second"));
    const std::vector<double> xv = to_vector(x), yv = to_vector(y);
    std::vector<double> less, where_expected, filled, cast_back;
    for (std::size_t i = 0; i < xv.size(); ++i) {
      less.push_back(xv[i] < yv[i]);
      where_expected.push_back(xv[i] > 0 ? xv[i] : yv[i]);
      filled.push_back(yv[i] > 0.25 ? -7.0 : xv[i]);
    }
    EXPECT_TRUE(all_close(ops::compare(CompareOp::Lt, x, y), less));
    std::vector<double> above;
    for (double v : xv)
      above.push_back(v >= 0.25);
    EXPECT_TRUE(all_close(ops::compare(CompareOp::Ge, x, 0.25), above));
    // A comparison's result is rows: the same values with their stride-1 dim first too.
    const auto first_dim_fastest = [](const Tensor& t) {
      return t.dim() == 2 ? ops::contiguous(t.t()).t()
                          : ops::contiguous(t.permute({1, 2, 0})).permute({2, 0, 1});
    };
    const Tensor positive = ops::compare(CompareOp::Gt, x, 0.0);
    for (const Tensor& cond : {positive, first_dim_fastest(positive)})
      EXPECT_TRUE(all_close(ops::where(cond, x, y), where_expected));
    const Tensor mask = ops::compare(CompareOp::Gt, y, 0.25);
    for (const Tensor& m : {mask, first_dim_fastest(mask)}) {
      const Tensor self = x.clone();  // rows, never x itself
      ops::masked_fill_(self, m, make_tensor({-7.0}, {}));
      EXPECT_TRUE(all_close(self, filled));
    }
    for (DType to : {kFloat64, kFloat16, kBFloat16, kInt32, kInt64, kUInt8, kBool}) {
      std::vector<double> expected;
      for (double v : xv)
        expected.push_back(reference_cast(v, to));
      EXPECT_TRUE(all_close(ops::cast(x, to), expected)) << dtype_name(to);
    }
    const auto same_bits = [](const Tensor& got, const Tensor& want) {
      return test::matches_within_roundoff(got, want, {}, {.bitwise = true});
    };
    for (ActivationOp op : {ActivationOp::LeakyRelu, ActivationOp::Gelu, ActivationOp::Silu}) {
      EXPECT_TRUE(
          same_bits(ops::activation_backward(op, y, x, 0.1, 0),
                    ops::activation_backward(op, ops::contiguous(y), ops::contiguous(x), 0.1, 0)))
          << op_name(op);
    }
  }
}

TEST(ElementwiseFill, EveryDTypeOnStridedView) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor base = zeros({3, 4}, dtype);
    ops::fill_(base.slice(1, 0, 4, 3), 2.0);  // columns 0 and 3
    const double v = dtype == kBool ? 1 : 2;
    EXPECT_TRUE(all_close(base, {v, 0, 0, v, v, 0, 0, v, v, 0, 0, v}));
  }
  // A value the dtype cannot hold is refused, as PyTorch's, and nothing is written.
  const Tensor ints = zeros({2}, kInt32);
  EXPECT_THROW(ops::fill_(ints, kNaN), Error);
  EXPECT_THROW(ops::fill_(ints, 3e9), Error);
  EXPECT_TRUE(all_close(ints, {0, 0}));
  const Tensor scalar = zeros({}, kBFloat16);
  ops::fill_(scalar, 1.5);
  EXPECT_TRUE(all_close(scalar, {1.5}));
}

}  // namespace
}  // namespace leangrad
