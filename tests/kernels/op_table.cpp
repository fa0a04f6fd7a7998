// The rows of the device op table (see op_table.h) for the foundation ops: every elementwise
// family, casts, fills and copies, broadcasting and strided layouts, cat/stack, reductions, matmul
// and the random fills, each through the public API. Sections follow kernels/ops.h; each is a
// short table, and a small generator turns it into rows. The elementwise ops and the reductions
// are grids: every op crossed with every floating dtype (named <op>_<dtype>, e.g. "div_bf16"),
// every reduction with every dim (e.g. "mean_dim0_keepdim"); the rows that test one thing
// (integer ranges, broadcasting, layouts) are spelled out. Shapes are odd on purpose (33 x 65,
// 1001): vector loads leave tails, blocks are partly filled.
#include "kernels/op_table.h"

#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include <leangrad/autograd/activations.h>
#include <leangrad/autograd/einsum.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/linalg_functions.h>
#include <leangrad/autograd/orthogonal_polynomials.h>
#include <leangrad/autograd/pointwise_functions.h>
#include <leangrad/autograd/special_functions.h>
#include <leangrad/core/error.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

namespace leangrad::test {
namespace {

constexpr Layout kTransposed = Layout::Transposed;
constexpr Layout kStepSliced = Layout::StepSliced;
constexpr Layout kOffset = Layout::Offset;
constexpr Layout kExpanded = Layout::Expanded;

const Shape kMatrix = {33, 65};        // 2145 elements: not a multiple of the vector width
const Shape kVector = {1001};          // a vector tail, and a partly filled last block
const Shape kReduceShape = {37, 129};  // neither dim a multiple of a warp or of a block

using RowFn = std::function<Outputs(const Inputs&)>;

// Where an input's values are drawn from: uniform in [low, high).
struct Range {
  double low = -1.0;
  double high = 1.0;
};
constexpr Range kUnit{-1.0, 1.0};

// An op of the elementwise tables: row names start with `name`.
struct Op {
  const char* name;
  Outputs (*apply)(const Inputs&);
};

// ---- The elementwise ops, applied to a row's inputs ---------------------------------------------
constexpr Op kAdd{"add", [](const Inputs& x) { return Outputs{x[0] + x[1]}; }};
constexpr Op kSub{"sub", [](const Inputs& x) { return Outputs{x[0] - x[1]}; }};
constexpr Op kMul{"mul", [](const Inputs& x) { return Outputs{x[0] * x[1]}; }};
constexpr Op kDiv{"div", [](const Inputs& x) { return Outputs{x[0] / x[1]}; }};
constexpr Op kPow{"pow", [](const Inputs& x) { return Outputs{pow(x[0], x[1])}; }};
constexpr Op kMaximum{"maximum", [](const Inputs& x) { return Outputs{maximum(x[0], x[1])}; }};
constexpr Op kMinimum{"minimum", [](const Inputs& x) { return Outputs{minimum(x[0], x[1])}; }};
constexpr Op kNeg{"neg", [](const Inputs& x) { return Outputs{neg(x[0])}; }};
constexpr Op kAbs{"abs", [](const Inputs& x) { return Outputs{abs(x[0])}; }};
constexpr Op kExp{"exp", [](const Inputs& x) { return Outputs{exp(x[0])}; }};
constexpr Op kLog{"log", [](const Inputs& x) { return Outputs{log(x[0])}; }};
constexpr Op kSqrt{"sqrt", [](const Inputs& x) { return Outputs{sqrt(x[0])}; }};
constexpr Op kTanh{"tanh", [](const Inputs& x) { return Outputs{tanh(x[0])}; }};
constexpr Op kSigmoid{"sigmoid", [](const Inputs& x) { return Outputs{sigmoid(x[0])}; }};
constexpr Op kRelu{"relu", [](const Inputs& x) { return Outputs{relu(x[0])}; }};
constexpr Op kTan{"tan", [](const Inputs& x) { return Outputs{tan(x[0])}; }};
constexpr Op kAsin{"asin", [](const Inputs& x) { return Outputs{asin(x[0])}; }};
constexpr Op kAcos{"acos", [](const Inputs& x) { return Outputs{acos(x[0])}; }};
constexpr Op kAtan{"atan", [](const Inputs& x) { return Outputs{atan(x[0])}; }};
constexpr Op kSinh{"sinh", [](const Inputs& x) { return Outputs{sinh(x[0])}; }};
constexpr Op kCosh{"cosh", [](const Inputs& x) { return Outputs{cosh(x[0])}; }};
constexpr Op kAsinh{"asinh", [](const Inputs& x) { return Outputs{asinh(x[0])}; }};
constexpr Op kAcosh{"acosh", [](const Inputs& x) { return Outputs{acosh(x[0])}; }};
constexpr Op kAtanh{"atanh", [](const Inputs& x) { return Outputs{atanh(x[0])}; }};
constexpr Op kExp2{"exp2", [](const Inputs& x) { return Outputs{exp2(x[0])}; }};
constexpr Op kAtan2{"atan2", [](const Inputs& x) { return Outputs{atan2(x[0], x[1])}; }};
constexpr Op kLgamma{"lgamma", [](const Inputs& x) { return Outputs{lgamma(x[0])}; }};
constexpr Op kDigamma{"digamma", [](const Inputs& x) { return Outputs{digamma(x[0])}; }};
constexpr Op kErfinv{"erfinv", [](const Inputs& x) { return Outputs{erfinv(x[0])}; }};
constexpr Op kZeta{"special_zeta",
                   [](const Inputs& x) { return Outputs{special_zeta(x[0], x[1])}; }};
constexpr Op kErfc{"erfc", [](const Inputs& x) { return Outputs{erfc(x[0])}; }};
constexpr Op kErfcx{"special_erfcx", [](const Inputs& x) { return Outputs{special_erfcx(x[0])}; }};
constexpr Op kSinc{"sinc", [](const Inputs& x) { return Outputs{sinc(x[0])}; }};
constexpr Op kI0{"i0", [](const Inputs& x) { return Outputs{i0(x[0])}; }};
constexpr Op kI0e{"special_i0e", [](const Inputs& x) { return Outputs{special_i0e(x[0])}; }};
constexpr Op kI1{"special_i1", [](const Inputs& x) { return Outputs{special_i1(x[0])}; }};
constexpr Op kI1e{"special_i1e", [](const Inputs& x) { return Outputs{special_i1e(x[0])}; }};
constexpr Op kNdtri{"special_ndtri", [](const Inputs& x) { return Outputs{special_ndtri(x[0])}; }};
// The orthogonal polynomials (kernels/orthogonal_polynomials.h), x and the degree n.
constexpr Op kChebyshevT{"special_chebyshev_polynomial_t", [](const Inputs& x) {
                           return Outputs{special_chebyshev_polynomial_t(x[0], x[1])};
                         }};
constexpr Op kChebyshevV{"special_chebyshev_polynomial_v", [](const Inputs& x) {
                           return Outputs{special_chebyshev_polynomial_v(x[0], x[1])};
                         }};
constexpr Op kShiftedChebyshevW{
    "special_shifted_chebyshev_polynomial_w",
    [](const Inputs& x) { return Outputs{special_shifted_chebyshev_polynomial_w(x[0], x[1])}; }};
constexpr Op kHermiteH{"special_hermite_polynomial_h", [](const Inputs& x) {
                         return Outputs{special_hermite_polynomial_h(x[0], x[1])};
                       }};
constexpr Op kLaguerreL{"special_laguerre_polynomial_l", [](const Inputs& x) {
                          return Outputs{special_laguerre_polynomial_l(x[0], x[1])};
                        }};
constexpr Op kLegendreP{"special_legendre_polynomial_p", [](const Inputs& x) {
                          return Outputs{special_legendre_polynomial_p(x[0], x[1])};
                        }};
constexpr Op kAiryAi{"special_airy_ai",
                     [](const Inputs& x) { return Outputs{special_airy_ai(x[0])}; }};
constexpr Op kBesselJ0{"special_bessel_j0",
                       [](const Inputs& x) { return Outputs{special_bessel_j0(x[0])}; }};
constexpr Op kBesselJ1{"special_bessel_j1",
                       [](const Inputs& x) { return Outputs{special_bessel_j1(x[0])}; }};
constexpr Op kBesselY0{"special_bessel_y0",
                       [](const Inputs& x) { return Outputs{special_bessel_y0(x[0])}; }};
constexpr Op kBesselY1{"special_bessel_y1",
                       [](const Inputs& x) { return Outputs{special_bessel_y1(x[0])}; }};
constexpr Op kBesselK0{"special_modified_bessel_k0",
                       [](const Inputs& x) { return Outputs{special_modified_bessel_k0(x[0])}; }};
constexpr Op kBesselK1{"special_modified_bessel_k1",
                       [](const Inputs& x) { return Outputs{special_modified_bessel_k1(x[0])}; }};
constexpr Op kBesselK0e{"special_scaled_modified_bessel_k0", [](const Inputs& x) {
                          return Outputs{special_scaled_modified_bessel_k0(x[0])};
                        }};
constexpr Op kBesselK1e{"special_scaled_modified_bessel_k1", [](const Inputs& x) {
                          return Outputs{special_scaled_modified_bessel_k1(x[0])};
                        }};
constexpr Op kSphericalJ0{"special_spherical_bessel_j0", [](const Inputs& x) {
                            return Outputs{special_spherical_bessel_j0(x[0])};
                          }};
constexpr Op kFrexp{"frexp", [](const Inputs& x) {
                      auto [m, e] = frexp(x[0]);
                      return Outputs{m, e};
                    }};
constexpr Op kIgamma{"igamma", [](const Inputs& x) { return Outputs{igamma(x[0], x[1])}; }};
constexpr Op kIgammac{"igammac", [](const Inputs& x) { return Outputs{igammac(x[0], x[1])}; }};
constexpr Op kIgammaTemme{"igamma_temme",
                          [](const Inputs& x) { return Outputs{igamma(x[0], x[1])}; }};
constexpr Op kIgammacTemme{"igammac_temme",
                           [](const Inputs& x) { return Outputs{igammac(x[0], x[1])}; }};
constexpr Op kHypot{"hypot", [](const Inputs& x) { return Outputs{hypot(x[0], x[1])}; }};
constexpr Op kCopysign{"copysign", [](const Inputs& x) { return Outputs{copysign(x[0], x[1])}; }};
constexpr Op kFmax{"fmax", [](const Inputs& x) { return Outputs{fmax(x[0], x[1])}; }};
constexpr Op kFmin{"fmin", [](const Inputs& x) { return Outputs{fmin(x[0], x[1])}; }};
constexpr Op kGcd{"gcd", [](const Inputs& x) { return Outputs{gcd(x[0], x[1])}; }};
constexpr Op kLcm{"lcm", [](const Inputs& x) { return Outputs{lcm(x[0], x[1])}; }};
constexpr Op kLeftShift{"bitwise_left_shift",
                        [](const Inputs& x) { return Outputs{bitwise_left_shift(x[0], x[1])}; }};
constexpr Op kRightShift{"bitwise_right_shift",
                         [](const Inputs& x) { return Outputs{bitwise_right_shift(x[0], x[1])}; }};
constexpr Op kGt{"gt", [](const Inputs& x) { return Outputs{gt(x[0], x[1])}; }};
constexpr Op kLt{"lt", [](const Inputs& x) { return Outputs{lt(x[0], x[1])}; }};
constexpr Op kEq{"eq", [](const Inputs& x) { return Outputs{eq(x[0], x[1])}; }};
constexpr Op kNe{"ne", [](const Inputs& x) { return Outputs{ne(x[0], x[1])}; }};
constexpr Op kWhere{"where", [](const Inputs& x) { return Outputs{where(x[0], x[1], x[2])}; }};

// `op` on inputs of one shape and dtype, input i drawn from ranges[i]; named
// <op>_<dtype><suffix>.
OpCase elementwise_row(const Op& op, DType dtype, const Shape& shape,
                       const std::vector<Range>& ranges, Tolerance tolerance,
                       const std::string& suffix = "") {
  std::vector<InputSpec> inputs;
  for (const Range& r : ranges)
    inputs.push_back(input(shape, dtype, r.low, r.high));
  return {std::string(op.name) + "_" + dtype_suffix(dtype) + suffix, op.apply, inputs, tolerance};
}

// ---- Elementwise, every floating dtype ----------------------------------------------------------
// An op and its inputs' ranges, which keep it away from domain edges and saturation: divisors
// and pow's base in [0.5, 2), log and sqrt of positive numbers, exp and tanh in [-3, 3). An
// `exact` op returns one of its inputs' values, so both devices agree to the bit; the others
// round in the dtype (elementwise_tolerance).
struct FloatingOp {
  Op op;
  std::vector<Range> ranges;  // one per input
  bool exact = false;
};

// Every op of `ops` on every floating dtype, on inputs of `shape`.
void add_floating_grid(std::vector<OpCase>& c, const std::vector<FloatingOp>& ops,
                       const Shape& shape) {
  for (DType dtype : kFloatingDTypes) {
    for (const FloatingOp& f : ops) {
      const Tolerance tolerance = f.exact ? kTolExact : elementwise_tolerance(dtype);
      c.push_back(elementwise_row(f.op, dtype, shape, f.ranges, tolerance));
    }
  }
}

std::vector<OpCase> floating_elementwise_cases() {
  const std::vector<FloatingOp> binary = {
      {kAdd, {kUnit, kUnit}},
      {kSub, {kUnit, kUnit}},
      {kMul, {kUnit, kUnit}},
      {kDiv, {kUnit, {0.5, 2.0}}},
      {kPow, {{0.5, 2.0}, {-2.0, 2.0}}},
      {kMaximum, {kUnit, kUnit}, /*exact=*/true},
      {kMinimum, {kUnit, kUnit}, /*exact=*/true},
  };
  const std::vector<FloatingOp> unary = {
      {kNeg, {kUnit}, /*exact=*/true},
      {kAbs, {kUnit}, /*exact=*/true},
      {kExp, {{-3, 3}}},
      {kLog, {{0.1, 10}}},
      {kSqrt, {{0.01, 10}}},
      {kTanh, {{-3, 3}}},
      {kSigmoid, {{-8, 8}}},
      {kRelu, {kUnit}, /*exact=*/true},
  };
  // The trigonometric and hyperbolic functions and exp2 (2026-11-29, written without a GPU:
  // docs/gpu-pass.md), inside their domains and away from tan's poles.
  const std::vector<FloatingOp> math = {
      {kTan, {{-1.4, 1.4}}},
      {kAsin, {{-0.99, 0.99}}},
      {kAcos, {{-0.99, 0.99}}},
      {kAtan, {{-5, 5}}},
      {kSinh, {{-5, 5}}},
      {kCosh, {{-5, 5}}},
      {kAsinh, {{-20, 20}}},
      {kAcosh, {{1.01, 20}}},
      {kAtanh, {{-0.99, 0.99}}},
      {kExp2, {{-10, 10}}},
      {kAtan2, {kUnit, kUnit}},
      // The special functions (2026-12-04, kernels/special_math.h, in double on both devices;
      // CUDA's lgamma against glibc's): negative arguments reflect, away from the poles.
      {kLgamma, {{-4.9, 20}}},
      {kDigamma, {{-4.9, 20}}},
      {kErfinv, {{-0.999, 0.999}}},
      {kZeta, {{1.5, 6}, {0.1, 30}}},
      // Session 53's pointwise math (kernels/special_math.h and elementwise_math.h): the Bessel
      // functions across their fits' switch at 8 (I0 and I1 below float16's overflow), igamma on
      // both of its branches.
      {kErfc, {{-5, 9}}},
      {kErfcx, {{-3, 30}}},
      {kSinc, {{-6, 6}}},
      {kI0, {{-12, 12}}},
      {kI0e, {{-40, 40}}},
      {kI1, {{-12, 12}}},
      {kI1e, {{-40, 40}}},
      {kNdtri, {{0.001, 0.999}}},
      // Session 54's Bessel functions across their fits' switches (2 for K, 5 for J and Y) and
      // frexp (its exponent an int32 output).
      {kBesselJ0, {{-30, 30}}},
      {kBesselJ1, {{-30, 30}}},
      {kBesselY0, {{0.05, 30}}},
      {kBesselY1, {{0.05, 30}}},
      {kBesselK0, {{0.05, 12}}},
      {kBesselK1, {{0.05, 12}}},
      {kBesselK0e, {{0.05, 60}}},
      {kBesselK1e, {{0.05, 60}}},
      {kSphericalJ0, {{-30, 30}}},
      {kFrexp, {{-1e4, 1e4}}},
      {kIgamma, {{0.1, 20}, {0.01, 40}}},
      {kIgammac, {{0.1, 20}, {0.01, 40}}},
      // Session 77's Temme expansion: a > 20 and |x - a| <= 0.3 a for every pair.
      {kIgammaTemme, {{100, 110}, {80, 130}}},
      {kIgammacTemme, {{100, 110}, {80, 130}}},
      // Session 58's Airy function across its fits' ends at -2 and 1.
      {kAiryAi, {{-12, 8}}},
      // Session 58's orthogonal polynomials: degrees 0 to 90 through the recurrences and
      // Chebyshev's closed forms (n > 6 inside [-1, 1], n > 64 beyond), x inside and beyond.
      {kChebyshevT, {{-1.2, 1.2}, {0, 90}}},
      {kChebyshevV, {{-1.2, 1.2}, {0, 90}}},
      {kShiftedChebyshevW, {{-0.1, 1.1}, {0, 90}}},
      {kHermiteH, {{-3, 3}, {0, 12}}},
      {kLaguerreL, {{0, 20}, {0, 40}}},
      {kLegendreP, {{-1.2, 1.2}, {0, 90}}},
      {kHypot, {{-1e3, 1e3}, {-1e3, 1e3}}},
      {kCopysign, {kUnit, kUnit}, /*exact=*/true},
      {kFmax, {kUnit, kUnit}, /*exact=*/true},
      {kFmin, {kUnit, kUnit}, /*exact=*/true},
  };
  std::vector<OpCase> c;
  add_floating_grid(c, binary, kMatrix);
  add_floating_grid(c, unary, kVector);
  add_floating_grid(c, math, kVector);
  // Their gradients (the formulas are compositions of the kernels above), atan2's broadcast, and
  // round(decimals)'s three roundings, which both devices perform alike: exact.
  c.push_back({"trig_gradients_f64",
               grads_of([](const Inputs& v) {
                 return tan(v[0]) + asin(v[0]) + acos(v[0]) + atan(v[0]) + sinh(v[0]) + cosh(v[0]) +
                        asinh(v[0]) + acosh(v[0] + 2.0) + atanh(v[0]) + exp2(v[0]);
               }),
               {input(kVector, kFloat64, -0.9, 0.9)},
               kTolF64});
  // The special functions' gradients: digamma, polygamma (through zeta) and erfinv's output.
  c.push_back({"special_gradients_f64",
               grads_of([](const Inputs& v) {
                 return lgamma(v[0]) + digamma(v[0]) + polygamma(2, v[0]) + erfinv(v[1]) +
                        mvlgamma(v[0], 3);
               }),
               {input(kVector, kFloat64, 1.2, 9.0), input(kVector, kFloat64, -0.9, 0.9)},
               kTolF64});
  c.push_back({"pointwise_gradients_f64",
               grads_of([](const Inputs& v) {
                 return erfc(v[0]) + special_erfcx(v[0]) + special_log_ndtr(v[0]) + i0(v[0]) +
                        special_i0e(v[0]) + special_i1(v[0]) + special_i1e(v[0]) + sinc(v[0]) +
                        special_ndtri(v[1]) + igamma(v[1].detach() * 3.0 + 1.0, v[0].abs() + 0.5) +
                        xlogy(v[0], v[1]) + logit(v[1]) + hypot(v[0], v[1]) +
                        logaddexp2(v[0], v[1]);
               }),
               {input(kVector, kFloat64, -4.0, 4.0), input(kVector, kFloat64, 0.05, 0.95)},
               kTolF64});
  c.push_back({"atan2_broadcast_gradients_f64",
               grads_of([](const Inputs& v) { return atan2(v[0], v[1]); }),
               {input({33, 1}, kFloat64), input({65}, kFloat64, 0.5, 2.0)},
               kTolF64});
  for (DType dtype : {kFloat32, kFloat64, kBFloat16, kFloat16}) {
    c.push_back({std::string("round_decimals_") + dtype_suffix(dtype),
                 [](const Inputs& x) {
                   return Outputs{round(x[0], 2), round(x[0], -1)};
                 },
                 {input(kVector, dtype, -300, 300)},
                 kTolExact});
  }
  c.push_back({"tanh_f32_3d",
               [](const Inputs& x) { return Outputs{x[0].tanh()}; },
               {input({5, 7, 11}, kFloat32, -3, 3)},
               kTolF32});
  return c;
}

// ---- Elementwise rows spelled out: integer dtypes, comparisons ----------------------------------
// `op` on `dtype` inputs, input i drawn from ranges[i]; named <op>_<dtype><suffix>.
struct ElementwiseRow {
  Op op;
  DType dtype;
  std::vector<Range> ranges;  // one per input
  Tolerance tolerance = kTolExact;
  const char* suffix = "";
};

void add_rows(std::vector<OpCase>& c, const std::vector<ElementwiseRow>& rows, const Shape& shape) {
  for (const ElementwiseRow& r : rows)
    c.push_back(elementwise_row(r.op, r.dtype, shape, r.ranges, r.tolerance, r.suffix));
}

// Integer ranges keep the results inside the dtype, except in the rows named *_wraps, where both
// devices must wrap alike. Division and the floating ops of integers compute in float32.
std::vector<OpCase> integer_and_compare_cases() {
  const std::vector<ElementwiseRow> binary = {
      {kAdd, kInt32, {{-1000, 1000}, {-1000, 1000}}},
      {kSub, kInt64, {{-1e9, 1e9}, {-1e9, 1e9}}},
      {kMul, kInt64, {{-1e5, 1e5}, {-1e5, 1e5}}},
      {kMul, kUInt8, {{0, 255}, {0, 255}}, kTolExact, "_wraps"},
      {kPow, kInt64, {{-4, 5}, {0, 6}}},
      {kMaximum, kInt32, {{-50, 50}, {-50, 50}}},
      {kMinimum, kUInt8, {{0, 255}, {0, 255}}},
      {kDiv, kInt32, {{-100, 100}, {1, 10}}, kTolF32},
      // Comparisons; small integer ranges make equal pairs common.
      {kGt, kFloat32, {kUnit, kUnit}},
      {kLt, kFloat32, {kUnit, kUnit}},
      {kEq, kInt32, {{0, 3}, {0, 3}}},
      {kNe, kInt64, {{0, 3}, {0, 3}}},
      {kEq, kBool, {kUnit, kUnit}},
      // gcd, lcm and the shifts (session 53); counts past the width and below 0.
      {kGcd, kInt64, {{-1e6, 1e6}, {-1e6, 1e6}}},
      {kLcm, kInt32, {{-1000, 1000}, {-1000, 1000}}},
      {kLeftShift, kInt64, {{-1e6, 1e6}, {-3, 70}}},
      {kRightShift, kInt32, {{-1e6, 1e6}, {-3, 40}}},
      {kRightShift, kUInt8, {{0, 255}, {0, 12}}},
  };
  const std::vector<ElementwiseRow> unary = {
      {kNeg, kInt64, {{-1e6, 1e6}}},      {kAbs, kInt32, {{-1e6, 1e6}}},
      {kRelu, kInt32, {{-100, 100}}},     {kRelu, kUInt8, {{0, 255}}},
      {kExp, kInt64, {{-5, 5}}, kTolF32}, {kSqrt, kInt32, {{0, 100}}, kTolF32},
  };
  std::vector<OpCase> c;
  add_rows(c, binary, kMatrix);
  add_rows(c, unary, kVector);
  return c;
}

// ---- Tensor op scalar, scalar op tensor (rsub, rdiv) --------------------------------------------
struct ScalarRow {
  const char* name;
  Tensor (*apply)(const Tensor&, double);
  double scalar;
  InputSpec input;
  Tolerance tolerance;
};

std::vector<OpCase> scalar_cases() {
  const ScalarRow rows[] = {
      {"add_scalar_f32", [](const Tensor& t, double s) { return t + s; }, 0.5, input(kMatrix),
       kTolF32},
      {"rsub_scalar_f32", [](const Tensor& t, double s) { return s - t; }, 2.0, input(kMatrix),
       kTolF32},
      {"rdiv_scalar_f32", [](const Tensor& t, double s) { return s / t; }, 1.0,
       input(kMatrix, kFloat32, 0.5, 2.0), kTolF32},
      {"pow_scalar_f32", [](const Tensor& t, double s) { return pow(t, s); }, 2.5,
       input(kMatrix, kFloat32, 0.1, 2.0), kTolF32},
      // Note [pow with a scalar exponent]: the shortcuts, a cube and a square root.
      {"pow_cube_f32", [](const Tensor& t, double s) { return pow(t, s); }, 3.0,
       input(kMatrix, kFloat32, -2.0, 2.0), kTolF32},
      {"pow_half_bf16", [](const Tensor& t, double s) { return pow(t, s); }, 0.5,
       input(kMatrix, kBFloat16, 0.1, 2.0), kTolBF16},
      {"mul_scalar_f16", [](const Tensor& t, double s) { return t * s; }, 3.0,
       input(kMatrix, kFloat16), kTolF16},
      {"sub_scalar_bf16", [](const Tensor& t, double s) { return t - s; }, 0.3,
       input(kMatrix, kBFloat16), kTolBF16},
      {"add_scalar_i32", [](const Tensor& t, double s) { return t + s; }, 3.0,
       input(kMatrix, kInt32, -100, 100), kTolExact},
      // A fractional scalar makes the integer result float32.
      {"mul_scalar_i64_fractional", [](const Tensor& t, double s) { return t * s; }, 0.5,
       input(kMatrix, kInt64, -100, 100), kTolF32},
      // Comparisons with a scalar.
      {"gt_scalar_f32", [](const Tensor& t, double s) { return gt(t, s); }, 0.25, input(kMatrix),
       kTolExact},
      {"le_scalar_f16", [](const Tensor& t, double s) { return le(t, s); }, 0.1,
       input(kMatrix, kFloat16), kTolExact},
      {"eq_scalar_i64", [](const Tensor& t, double s) { return eq(t, s); }, 2.0,
       input(kMatrix, kInt64, 0, 4), kTolExact},
      {"ne_scalar_bf16", [](const Tensor& t, double s) { return ne(t, s); }, 0.5,
       input(kMatrix, kBFloat16, 0, 2), kTolExact},
      {"lt_scalar_u8", [](const Tensor& t, double s) { return lt(t, s); }, 100.0,
       input(kMatrix, kUInt8, 0, 255), kTolExact},
      {"ge_scalar_transposed", [](const Tensor& t, double s) { return ge(t, s); }, 0.0,
       input({30, 20}, kFloat32, -1, 1, kTransposed), kTolExact},
  };
  std::vector<OpCase> c;
  for (const ScalarRow& r : rows) {
    const auto apply = r.apply;
    const double scalar = r.scalar;
    c.push_back({r.name,
                 [apply, scalar](const Inputs& x) { return Outputs{apply(x[0], scalar)}; },
                 {r.input},
                 r.tolerance});
  }
  return c;
}

// ---- Broadcasting, non-contiguous and misaligned inputs, large tensors --------------------------
std::vector<OpCase> broadcast_and_layout_cases() {
  return {
      {"add_broadcast_3d", kAdd.apply, {input({4, 1, 6}), input({5, 1})}, kTolF32},
      {"mul_broadcast_outer", kMul.apply, {input({31, 1}), input({1, 43})}, kTolF32},
      {"sub_broadcast_0d", kSub.apply, {input({}), input({7})}, kTolF32},
      {"add_broadcast_row_f16",
       kAdd.apply,
       {input({8, 16}, kFloat16), input({16}, kFloat16)},
       kTolF16},
      {"add_0d_0d", kAdd.apply, {input({}), input({})}, kTolF32},
      {"add_empty", kAdd.apply, {input({0, 3}), input({3})}, kTolExact},
      {"add_transposed",
       kAdd.apply,
       {input({48, 40}, kFloat32, -1, 1, kTransposed), input({48, 40})},
       kTolF32},
      {"mul_step_sliced",
       kMul.apply,
       {input({20, 30}, kFloat32, -1, 1, kStepSliced),
        input({20, 30}, kFloat32, -1, 1, kTransposed)},
       kTolF32},
      {"add_offset_1d",
       kAdd.apply,
       {input({1001}, kFloat32, -1, 1, kOffset), input({1001})},
       kTolF32},
      {"add_expanded",
       kAdd.apply,
       {input({6, 50}, kFloat32, -1, 1, kExpanded), input({6, 50})},
       kTolF32},
      {"add_transposed_4d",
       kAdd.apply,
       {input({2, 3, 8, 5}, kFloat32, -1, 1, kTransposed), input({3, 1, 5})},
       kTolF32},
      {"exp_step_sliced", kExp.apply, {input({17, 19}, kFloat32, -3, 3, kStepSliced)}, kTolF32},
      {"sub_offset_f16",
       kSub.apply,
       {input({9, 7}, kFloat16, -1, 1, kOffset), input({7}, kFloat16)},
       kTolF16},
      // Grid-stride loops run several rounds.
      {"add_large_f32", kAdd.apply, {input({(1 << 22) + 3}), input({(1 << 22) + 3})}, kTolF32},
  };
}

// ---- Compare (ties, broadcasting), where --------------------------------------------------------
std::vector<OpCase> compare_and_where_cases() {
  return {
      // Integer-valued floats, so that equal pairs are common.
      {"ge_f32_ties",
       [](const Inputs& x) { return Outputs{ge(x[0].to(kFloat32), x[1].to(kFloat32))}; },
       {input(kMatrix, kInt32, 0, 3), input(kMatrix, kInt32, 0, 3)},
       kTolExact},
      {"le_f16_ties",
       [](const Inputs& x) { return Outputs{le(x[0].to(kFloat16), x[1].to(kFloat16))}; },
       {input(kMatrix, kInt32, 0, 3), input(kMatrix, kInt32, 0, 3)},
       kTolExact},
      {"gt_broadcast_bf16",
       kGt.apply,
       {input({12, 9}, kBFloat16), input({9}, kBFloat16)},
       kTolExact},
      {"where_f32", kWhere.apply, {input({4, 5}, kBool), input({4, 5}), input({5})}, kTolExact},
      {"where_f16_broadcast_cond",
       kWhere.apply,
       {input({7, 1}, kBool), input({7, 9}, kFloat16), input({7, 9}, kFloat16)},
       kTolExact},
      {"where_i64_strided",
       kWhere.apply,
       {input({10, 12}, kBool, -1, 1, kExpanded), input({10, 12}, kInt64, -100, 100, kTransposed),
        input({}, kInt64, -100, 100)},
       kTolExact},
      {"where_large",
       kWhere.apply,
       {input({100003}, kBool), input({100003}), input({100003})},
       kTolExact},
  };
}

// ---- Cast (Tensor::to(DType)): one shared conversion function, so results are identical ---------
std::vector<OpCase> cast_cases() {
  struct CastRow {
    const char* name;
    DType from, to;
    double low, high;
  };
  const CastRow casts[] = {
      {"cast_f32_to_f16", kFloat32, kFloat16, -70000, 70000},  // overflows to inf at the ends
      {"cast_f16_to_f32", kFloat16, kFloat32, -100, 100},
      {"cast_f32_to_bf16", kFloat32, kBFloat16, -1e5, 1e5},
      {"cast_bf16_to_f32", kBFloat16, kFloat32, -100, 100},
      {"cast_f16_to_bf16", kFloat16, kBFloat16, -100, 100},
      {"cast_f64_to_f16", kFloat64, kFloat16, -1, 1},
      {"cast_f64_to_f32", kFloat64, kFloat32, -1e3, 1e3},
      {"cast_f32_to_f64", kFloat32, kFloat64, -1e3, 1e3},
      {"cast_f32_to_i32", kFloat32, kInt32, -1000, 1000},
      {"cast_f32_to_u8_wraps", kFloat32, kUInt8, -300, 300},
      {"cast_f16_to_i64", kFloat16, kInt64, -1000, 1000},
      {"cast_i64_to_f32", kInt64, kFloat32, -1e9, 1e9},
      {"cast_i64_to_f16", kInt64, kFloat16, -1e5, 1e5},
      {"cast_i32_to_i64", kInt32, kInt64, -1e9, 1e9},
      {"cast_i64_to_i32_wraps", kInt64, kInt32, -1e12, 1e12},
      {"cast_u8_to_i64", kUInt8, kInt64, 0, 255},
      {"cast_i32_to_bool", kInt32, kBool, -2, 3},
      {"cast_f32_to_bool", kFloat32, kBool, -1, 1},
      {"cast_bool_to_f32", kBool, kFloat32, 0, 1},
      {"cast_bool_to_i64", kBool, kInt64, 0, 1},
  };
  std::vector<OpCase> c;
  for (const CastRow& row : casts) {
    const DType to = row.to;
    c.push_back({row.name,
                 [to](const Inputs& x) { return Outputs{x[0].to(to)}; },
                 {input(kMatrix, row.from, row.low, row.high)},
                 kTolExact});
  }
  c.push_back({"cast_transposed_f32_to_f16",
               [](const Inputs& x) { return Outputs{x[0].to(kFloat16)}; },
               {input({40, 24}, kFloat32, -10, 10, kTransposed)},
               kTolExact});
  return c;
}

// ---- In place, fill, copy -----------------------------------------------------------------------
// `change` applied in place to a copy of x[0]: the row's output.
template <typename F>
RowFn on_copy(F change) {
  return [change](const Inputs& x) {
    Tensor t = x[0].clone();
    change(t, x);
    return Outputs{t};
  };
}

// `write` applied to a copy of x[0] (to its transpose, so the strided kernel, when `transposed`),
// beside whether each element it wrote equals `out_of_place` of the same input on the same device
// (bool: the in-place kernels are bitwise the out-of-place ops, test_elementwise_inplace.cpp;
// NaN compares unequal on both devices alike).
RowFn in_place_beside_out_of_place(std::function<void(Tensor&)> write,
                                   std::function<Tensor(const Tensor&)> out_of_place,
                                   bool transposed) {
  return [write, out_of_place, transposed](const Inputs& x) {
    Tensor t = x[0].clone();
    Tensor self = transposed ? t.transpose(0, 1) : t;
    const Tensor want = out_of_place(transposed ? x[0].transpose(0, 1) : x[0]);
    write(self);
    return Outputs{t, eq(self, want)};
  };
}

// ops::unary_ of every UnaryOp (op_name names each one, and nothing past the last), in every
// floating dtype and on a transposed float32 view, on [0.5, 2): inside every op's domain.
// ops::activation_ through the public in-place activations, on [-3, 3) (both sides of the kinks).
void add_unary_and_activation_in_place_rows(std::vector<OpCase>& c) {
  for (int k = 0; k < 256; ++k) {
    const auto op = static_cast<UnaryOp>(k);
    const std::string name = op_name(op);
    if (name == "unknown_unary_op") break;
    const auto write = [op](Tensor& t) { ops::unary_(op, t); };
    const auto out_of_place = [op](const Tensor& t) { return ops::unary(op, t); };
    for (DType dtype : kFloatingDTypes) {
      c.push_back({name + "_inplace_" + dtype_suffix(dtype),
                   in_place_beside_out_of_place(write, out_of_place, false),
                   {input(kMatrix, dtype, 0.5, 2.0)},
                   elementwise_tolerance(dtype)});
    }
    c.push_back({name + "_inplace_transposed_f32",
                 in_place_beside_out_of_place(write, out_of_place, true),
                 {input(kMatrix, kFloat32, 0.5, 2.0)},
                 kTolF32});
  }
  struct ActivationRow {
    const char* name;
    std::function<void(Tensor&)> write;
    std::function<Tensor(const Tensor&)> out_of_place;
  };
  const ActivationRow activations[] = {
      {"leaky_relu", [](Tensor& t) { leaky_relu_(t, 0.2); },
       [](const Tensor& t) { return leaky_relu(t, 0.2); }},
      {"elu", [](Tensor& t) { elu_(t, 1.0); }, [](const Tensor& t) { return elu(t, 1.0); }},
      {"selu", [](Tensor& t) { selu_(t); }, [](const Tensor& t) { return selu(t); }},
      {"hardtanh", [](Tensor& t) { hardtanh_(t, -0.5, 0.7); },
       [](const Tensor& t) { return hardtanh(t, -0.5, 0.7); }},
      {"clamp", [](Tensor& t) { t.clamp_(-0.5, 0.7); },
       [](const Tensor& t) { return clamp(t, -0.5, 0.7); }},
  };
  for (const ActivationRow& row : activations) {
    for (DType dtype : kFloatingDTypes) {
      c.push_back({std::string(row.name) + "_inplace_" + dtype_suffix(dtype),
                   in_place_beside_out_of_place(row.write, row.out_of_place, false),
                   {input(kMatrix, dtype, -3.0, 3.0)},
                   elementwise_tolerance(dtype)});
    }
    c.push_back({std::string(row.name) + "_inplace_transposed_f32",
                 in_place_beside_out_of_place(row.write, row.out_of_place, true),
                 {input(kMatrix, kFloat32, -3.0, 3.0)},
                 kTolF32});
  }
}

std::vector<OpCase> inplace_cases() {
  const auto add_ = on_copy([](Tensor& t, const Inputs& x) { t.add_(x[1]); });
  std::vector<OpCase> c = {
      {"add_inplace_f32", add_, {input(kMatrix), input(kMatrix)}, kTolF32},
      {"add_inplace_broadcast", add_, {input({4, 5}), input({5})}, kTolF32},
      {"mul_inplace_scalar_f16",
       on_copy([](Tensor& t, const Inputs&) { t.mul_(0.5); }),
       {input(kMatrix, kFloat16)},
       kTolF16},
      {"add_inplace_into_view",
       on_copy([](Tensor& t, const Inputs& x) { t.transpose(0, 1).add_(x[1]); }),
       {input({6, 9}), input({9, 6})},
       kTolF32},
  };
  add_unary_and_activation_in_place_rows(c);
  // clamp_ of integers (ActivationOp::Clamp's integral elements) and masked_fill_ (where's
  // launcher writing self), a broadcast mask, into a transposed view.
  for (DType dtype : {kInt64, kInt32, kUInt8}) {
    c.push_back({std::string("clamp_inplace_") + dtype_suffix(dtype),
                 on_copy([](Tensor& t, const Inputs&) { t.clamp_(-1.0, 40.0); }),
                 {input(kMatrix, dtype, 0.0, 100.0)},
                 kTolExact});
  }
  const auto masked_fill_ = [](bool transposed) {
    return on_copy([transposed](Tensor& t, const Inputs& x) {
      Tensor self = transposed ? t.transpose(0, 1) : t;
      self.masked_fill_(gt(x[1], 0.0), -2.5);
    });
  };
  c.push_back({"masked_fill_inplace_broadcast_mask",
               masked_fill_(false),
               {input({6, 9}), input({9})},
               kTolExact});
  c.push_back({"masked_fill_inplace_transposed_view",
               masked_fill_(true),
               {input({6, 9}, kFloat16), input({9, 6})},
               kTolExact});
  return c;
}

std::vector<OpCase> fill_cases() {
  struct FillRow {
    const char* name;
    DType dtype;
    double value;
  };
  const FillRow fills[] = {{"fill_f32", kFloat32, 2.5}, {"fill_f64", kFloat64, -1.25},
                           {"fill_f16", kFloat16, 0.1}, {"fill_bf16", kBFloat16, 3.3},
                           {"fill_i64", kInt64, -7},    {"fill_i32", kInt32, 123456},
                           {"fill_u8", kUInt8, 200},    {"fill_bool", kBool, 1}};
  std::vector<OpCase> c;
  for (const FillRow& row : fills) {
    const double value = row.value;
    c.push_back({row.name,
                 on_copy([value](Tensor& t, const Inputs&) { t.fill_(value); }),
                 {input(kMatrix, row.dtype)},
                 kTolExact});
  }
  c.push_back({"fill_transposed_view",
               on_copy([](Tensor& t, const Inputs&) { t.transpose(0, 1).fill_(3.0); }),
               {input({13, 17})},
               kTolExact});
  c.push_back({"fill_step_sliced_view",
               on_copy([](Tensor& t, const Inputs&) { t.slice(1, 0, 17, 2).fill_(-1.0); }),
               {input({13, 17}, kFloat16)},
               kTolExact});
  return c;
}

// Options for a tensor created inside a row, on the device the row runs on.
TensorOptions on_device_of(const Tensor& t, DType dtype) {
  return TensorOptions(dtype).device(t.device());
}

std::vector<OpCase> copy_cases() {
  return {
      {"contiguous_of_transposed",
       [](const Inputs& x) { return Outputs{x[0].contiguous()}; },
       {input({64, 48}, kFloat32, -1, 1, kTransposed)},
       kTolExact},
      {"clone_step_sliced_i64",
       [](const Inputs& x) { return Outputs{x[0].clone()}; },
       {input({9, 31}, kInt64, -100, 100, kStepSliced)},
       kTolExact},
      {"copy_broadcast",
       [](const Inputs& x) {
         Tensor dst = zeros({4, 5}, on_device_of(x[0], kFloat32));
         dst.copy_(x[0]);
         return Outputs{dst};
       },
       {input({5})},
       kTolExact},
      {"copy_cast_into_transposed_view",
       [](const Inputs& x) {
         Tensor dst = zeros({6, 8}, on_device_of(x[0], kFloat16));
         dst.transpose(0, 1).copy_(x[0]);
         return Outputs{dst};
       },
       {input({8, 6})},
       kTolExact},
  };
}

// ---- cat, stack: all of a row's inputs along `dim` ----------------------------------------------
RowFn cat_along(std::int64_t dim) {
  return [dim](const Inputs& x) { return Outputs{cat(x, dim)}; };
}
RowFn stack_along(std::int64_t dim) {
  return [dim](const Inputs& x) { return Outputs{stack(x, dim)}; };
}

std::vector<OpCase> cat_stack_cases() {
  return {
      {"cat_dim0", cat_along(0), {input({3, 5}), input({4, 5})}, kTolExact},
      {"cat_dim1_three", cat_along(1), {input({3, 2}), input({3, 7}), input({3, 1})}, kTolExact},
      {"cat_f16_transposed",
       cat_along(1),
       {input({6, 4}, kFloat16, -1, 1, kTransposed), input({6, 3}, kFloat16)},
       kTolExact},
      {"cat_i64_3d_last",
       cat_along(2),
       {input({2, 3, 4}, kInt64, -9, 9), input({2, 3, 5}, kInt64, -9, 9)},
       kTolExact},
      {"stack_dim0", stack_along(0), {input({3, 4}), input({3, 4}), input({3, 4})}, kTolExact},
      {"stack_dim2",
       stack_along(2),
       {input({3, 4}, kBFloat16), input({3, 4}, kBFloat16, -1, 1, kTransposed)},
       kTolExact},
  };
}

// ---- Reductions ---------------------------------------------------------------------------------
// A reduction over one dim (keepdim or not) or over all elements. Sums and means add in a
// different order on each device (kTolF32Sum); max and argmax pick an element (exact).
struct ReduceOp {
  const char* name;
  Tensor (*over_dim)(const Tensor&, std::int64_t dim, bool keepdim);
  Tensor (*over_all)(const Tensor&);
  Tolerance tolerance;  // for float32
};

constexpr ReduceOp kSum{"sum",
                        [](const Tensor& t, std::int64_t d, bool k) { return t.sum({d}, k); },
                        [](const Tensor& t) { return t.sum(); }, kTolF32Sum};
constexpr ReduceOp kMean{"mean",
                         [](const Tensor& t, std::int64_t d, bool k) { return t.mean({d}, k); },
                         [](const Tensor& t) { return t.mean(); }, kTolF32Sum};
constexpr ReduceOp kMax{"max",
                        [](const Tensor& t, std::int64_t d, bool k) { return t.amax({d}, k); },
                        [](const Tensor& t) { return t.max(); }, kTolExact};
constexpr ReduceOp kArgmax{"argmax",
                           [](const Tensor& t, std::int64_t d, bool k) { return t.argmax(d, k); },
                           [](const Tensor& t) { return t.argmax(); }, kTolExact};

// x[0] reduced by `r` over `dim`, or over all elements when dim is nullopt.
RowFn reduce(const ReduceOp& r, std::optional<std::int64_t> dim, bool keepdim = false) {
  const auto over_dim = r.over_dim;
  const auto over_all = r.over_all;
  return [over_dim, over_all, dim, keepdim](const Inputs& x) {
    return Outputs{dim ? over_dim(x[0], *dim, keepdim) : over_all(x[0])};
  };
}

// Every reduction over dim 0, dim 1 (each with and without keepdim) and everything.
void add_reduction_grid(std::vector<OpCase>& c) {
  for (const ReduceOp* r : {&kSum, &kMean, &kMax, &kArgmax}) {
    const std::string name = r->name;
    for (std::int64_t dim : {0, 1}) {
      const std::string over = name + "_dim" + std::to_string(dim);
      c.push_back({over, reduce(*r, dim), {input(kReduceShape)}, r->tolerance});
      c.push_back({over + "_keepdim", reduce(*r, dim, true), {input(kReduceShape)}, r->tolerance});
    }
    c.push_back({name + "_all", reduce(*r, std::nullopt), {input(kReduceShape)}, r->tolerance});
  }
}

// The gradients of the max family on inputs with ties and NaNs: the rules of docs/api-notes.md
// are composed of ops that run on each device, checked here with what they meet there. Each
// input has everything above 0.5 made 0.5 (ties) and what was above 0.99 made NaN (about half
// the rows of 129 hold one) before it becomes the leaf that fn differentiates.
OpCase tie_and_nan_gradient_row(std::string name, int arity,
                                std::function<Tensor(const Inputs&)> fn) {
  const auto row = [fn](const Inputs& x) {
    Inputs prepared;
    for (const Tensor& t : x)
      prepared.push_back(
          masked_fill(t.clamp_max(0.5), gt(t, 0.99), std::numeric_limits<double>::quiet_NaN()));
    return with_grads(prepared, fn);
  };
  return {std::move(name), row,
          std::vector<InputSpec>(static_cast<std::size_t>(arity), input(kReduceShape)), kTolF32};
}

std::vector<OpCase> extremum_gradient_cases() {
  return {
      tie_and_nan_gradient_row("max_all_grad_ties_nans", 1,
                               [](const Inputs& x) { return x[0].max(); }),
      tie_and_nan_gradient_row("amax_dim1_grad_ties_nans", 1,
                               [](const Inputs& x) { return x[0].amax({1}); }),
      tie_and_nan_gradient_row("amin_dim0_grad_ties_nans", 1,
                               [](const Inputs& x) { return neg(x[0]).amin({0}); }),
      tie_and_nan_gradient_row("max_dim1_values_grad_ties_nans", 1,
                               [](const Inputs& x) { return std::get<0>(x[0].max(1)); }),
      tie_and_nan_gradient_row("min_dim0_keepdim_values_grad_ties_nans", 1,
                               [](const Inputs& x) { return std::get<0>(neg(x[0]).min(0, true)); }),
      tie_and_nan_gradient_row("maximum_grad_ties_nans", 2,
                               [](const Inputs& x) { return maximum(x[0], x[1]); }),
      tie_and_nan_gradient_row("minimum_grad_ties_nans", 2,
                               [](const Inputs& x) { return minimum(neg(x[0]), neg(x[1])); }),
  };
}

std::vector<OpCase> reduction_cases() {
  std::vector<OpCase> c;
  add_reduction_grid(c);
  const std::vector<OpCase> gradients = extremum_gradient_cases();
  c.insert(c.end(), gradients.begin(), gradients.end());
  const std::vector<OpCase> rows = {
      {"sum_dims02_3d",
       [](const Inputs& x) {
         return Outputs{x[0].sum({0, 2})};
       },
       {input({6, 7, 8})},
       kTolF32Sum},
      {"sum_transposed",
       reduce(kSum, 1),
       {input({50, 40}, kFloat32, -1, 1, kTransposed)},
       kTolF32Sum},
      {"sum_i32_to_i64", reduce(kSum, 1), {input(kReduceShape, kInt32, -1000, 1000)}, kTolExact},
      // int64 sums that wrap around (Reduce.Int64SumsWrapAround), along runs and down columns.
      {"sum_i64_wraps", reduce(kSum, 1), {input(kReduceShape, kInt64, -9e18, 9e18)}, kTolExact},
      {"sum_i64_wraps_dim0",
       reduce(kSum, 0),
       {input(kReduceShape, kInt64, -9e18, 9e18)},
       kTolExact},
      {"sum_f16", reduce(kSum, 1), {input({16, 100}, kFloat16)}, kTolF16},
      {"sum_f64_all", reduce(kSum, std::nullopt), {input(kReduceShape, kFloat64)}, kTolF64},
      {"sum_large", reduce(kSum, std::nullopt), {input({1 << 22}, kFloat32, 0, 1)}, kTolF32Sum},
      {"mean_large", reduce(kMean, std::nullopt), {input({1 << 22}, kFloat32, 0, 1)}, kTolF32Sum},
      {"max_i64_dim1", reduce(kMax, 1), {input(kReduceShape, kInt64, -1e6, 1e6)}, kTolExact},
      {"max_bf16_all", reduce(kMax, std::nullopt), {input({1000}, kBFloat16)}, kTolExact},
      {"argmax_3d_dim1", reduce(kArgmax, 1), {input({5, 33, 7})}, kTolExact},
      // Many ties: the first maximum wins on both devices.
      {"argmax_ties_i32", reduce(kArgmax, 1), {input({40, 50}, kInt32, 0, 3)}, kTolExact},
  };
  c.insert(c.end(), rows.begin(), rows.end());
  return c;
}

// ---- Matmul (f32; TF32 is off by default) -------------------------------------------------------
std::vector<OpCase> matmul_cases() {
  const RowFn mm = [](const Inputs& x) { return Outputs{matmul(x[0], x[1])}; };
  return {
      {"matmul_2d", mm, {input({64, 96}), input({96, 80})}, kTolF32Gemm},
      {"matmul_2d_odd", mm, {input({33, 17}), input({17, 45})}, kTolF32Gemm},
      {"matmul_3d", mm, {input({4, 32, 48}), input({4, 48, 24})}, kTolF32Gemm},
      {"matmul_3d_2d", mm, {input({3, 20, 30}), input({30, 10})}, kTolF32Gemm},
      {"matmul_transposed_operands",
       mm,
       {input({40, 50}, kFloat32, -1, 1, kTransposed),
        input({50, 30}, kFloat32, -1, 1, kTransposed)},
       kTolF32Gemm},
      // einsum: its batched products, a diagonal and a sum over "...", through autograd's
      // compositions (autograd/einsum.cpp).
      {"einsum_attention_scores",
       [](const Inputs& x) { return Outputs{einsum("bhqd,bhkd->bhqk", x)}; },
       {input({2, 3, 16, 32}), input({2, 3, 24, 32})},
       kTolF32Gemm},
      {"einsum_three_operands",
       [](const Inputs& x) { return Outputs{einsum("abc,cd,de->abe", x)}; },
       {input({4, 5, 24}), input({24, 16}), input({16, 8})},
       kTolF32Gemm},
      // autograd/linalg_functions.h: compositions of matmul, einsum, views and index_select.
      {"addmm_baddbmm_tensordot",
       [](const Inputs& x) {
         return Outputs{addmm(x[0], x[1], x[2], 0.5, -2.0), baddbmm(x[0], x[3], x[4], 1.0, 0.25),
                        tensordot(x[3], x[4], {0, 2}, {0, 1})};
       },
       {input({24}), input({20, 32}), input({32, 24}), input({3, 20, 16}), input({3, 16, 24})},
       kTolF32Gemm},
      {"kron_diag_trace_cross_diff",
       [](const Inputs& x) {
         return Outputs{kron(x[0], x[1]), diag(x[2], -1),       diagonal(x[0], 2, 1, 0),
                        trace(x[0]),      cross(x[3], x[4], 0), diff(x[0], 2, 1)};
       },
       {input({5, 7}), input({3, 2}), input({6}), input({3, 9}), input({3, 9})},
       kTolF32Gemm},
      {"cdist_products_and_differences",
       [](const Inputs& x) {
         return Outputs{cdist(x[0], x[1]), cdist(x[2], x[1], 1.0)};
       },
       {input({40, 8}), input({30, 8}), input({5, 8})},
       kTolF32Gemm},
      {"einsum_diagonal_ellipsis",
       [](const Inputs& x) { return Outputs{einsum("...ii->i", x)}; },
       {input({3, 5, 17, 17})},
       kTolF32Gemm},
  };
}

// ---- Random: the same seed gives the same numbers on every device -------------------------------
// The input only tells the row which device it runs on.
std::vector<OpCase> random_cases() {
  struct RandomRow {
    const char* name;
    bool normal;
    DType dtype;
    Tolerance tolerance;
  };
  const RandomRow randoms[] = {
      {"rand_f32", false, kFloat32, kTolExact},
      {"randn_f32", true, kFloat32, kTolExact},
      {"rand_f64", false, kFloat64, kTolExact},
      {"rand_f16", false, kFloat16, kTolExact},
      {"rand_bf16", false, kBFloat16, kTolExact},
      {"randn_bf16", true, kBFloat16, kTolExact},
      // Box-Muller in double: log/sin/cos may differ by an ulp between libm and CUDA.
      {"randn_f64", true, kFloat64, {1e-14, 1e-15}},
  };
  std::vector<OpCase> c;
  for (const RandomRow& row : randoms) {
    const bool normal = row.normal;
    const DType dtype = row.dtype;
    c.push_back({row.name,
                 [normal, dtype](const Inputs& x) {
                   manual_seed(1234);
                   const TensorOptions options = on_device_of(x[0], dtype);
                   return Outputs{normal ? randn({1001, 3}, options) : rand({1001, 3}, options)};
                 },
                 {input({1})},
                 row.tolerance});
  }
  c.push_back({"rand_then_randn_offsets",
               [](const Inputs& x) {
                 manual_seed(99);
                 Tensor a = rand({37}, on_device_of(x[0], kFloat32));
                 Tensor b = randn({5, 11}, on_device_of(x[0], kFloat32));
                 Tensor d = rand({3}, on_device_of(x[0], kFloat64));
                 return Outputs{a, b, d};
               },
               {input({1})},
               kTolExact});
  return c;
}

}  // namespace

InputSpec input(Shape shape, DType dtype, double low, double high, Layout layout) {
  return InputSpec{std::move(shape), dtype, low, high, layout};
}

Tolerance elementwise_tolerance(DType dtype) {
  switch (dtype) {
    case kFloat32:
      return kTolF32;
    case kFloat64:
      return kTolF64;
    case kFloat16:
      return kTolF16;
    case kBFloat16:
      return kTolBF16;
    default:
      return kTolExact;
  }
}

const char* dtype_suffix(DType dtype) {
  switch (dtype) {
    case kFloat32:
      return "f32";
    case kFloat64:
      return "f64";
    case kFloat16:
      return "f16";
    case kBFloat16:
      return "bf16";
    case kInt64:
      return "i64";
    case kInt32:
      return "i32";
    case kUInt8:
      return "u8";
    case kBool:
      return "bool";
  }
  LG_THROW(Error, "op table: unknown dtype");
}

const std::vector<OpCase>& device_op_cases() {
  static const std::vector<OpCase> cases = [] {
    std::vector<OpCase> all;
    for (auto section :
         {floating_elementwise_cases, integer_and_compare_cases, scalar_cases,
          broadcast_and_layout_cases, compare_and_where_cases, cast_cases, inplace_cases,
          fill_cases, copy_cases, cat_stack_cases, reduction_cases, matmul_cases, random_cases,
          tanhexp_group_norm_op_cases, conv_op_cases, layer_op_cases, nn_layer_op_cases}) {
      for (OpCase& c : section())
        all.push_back(std::move(c));
    }
    return all;
  }();
  return cases;
}

namespace {

// The shape of the contiguous data behind the layout's view.
Shape storage_shape(const InputSpec& spec) {
  Shape shape = spec.shape;
  const std::size_t ndim = shape.size();
  LG_CHECK(spec.layout == Layout::Contiguous || ndim >= 1,
           "op table: a 0-d input must be contiguous");
  switch (spec.layout) {
    case Layout::Contiguous:
      break;
    case Layout::Transposed:
      LG_CHECK(ndim >= 2, "op table: a transposed input needs 2 or more dims, got ", spec.shape);
      std::swap(shape[ndim - 2], shape[ndim - 1]);
      break;
    case Layout::StepSliced:
      shape[ndim - 1] *= 2;
      break;
    case Layout::Offset:
      shape[ndim - 1] += 1;
      break;
    case Layout::Expanded:
      shape[0] = 1;
      break;
  }
  return shape;
}

}  // namespace

Tensor make_input_storage(const InputSpec& spec, std::uint64_t seed) {
  Generator generator(seed);
  Tensor values = empty(storage_shape(spec), TensorOptions(kFloat64));
  ops::uniform_(values, spec.low, spec.high, generator);
  if (spec.dtype == kBool) return lt(values, (spec.low + spec.high) / 2);
  return values.to(spec.dtype);
}

Tensor apply_layout(const Tensor& storage, const InputSpec& spec) {
  const std::int64_t last = storage.dim() - 1;
  switch (spec.layout) {
    case Layout::Contiguous:
      return storage;
    case Layout::Transposed:
      return storage.transpose(last - 1, last);
    case Layout::StepSliced:
      return storage.slice(last, 0, storage.size(last), 2);
    case Layout::Offset:
      return storage.slice(last, 1, storage.size(last));
    case Layout::Expanded:
      return storage.expand(spec.shape);
  }
  LG_THROW(Error, "op table: unknown layout");
}

}  // namespace leangrad::test
