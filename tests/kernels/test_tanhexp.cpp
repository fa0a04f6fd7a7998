// TanhExp (kernels/tanhexp_math.h, kernels/ops_tanhexp.cpp, autograd/nn_functions.cpp) on
// the CPU: PyTorch reference values, finiteness at extreme inputs in every floating dtype, the
// NaN that the composed formula produces and the fused op avoids, and the float64 gradcheck.
// The CUDA kernel is checked against this CPU path by the device op table
// (op_table_tanhexp_group_norm.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/error.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/tanhexp_math.h>
#include "testing/gradcheck.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad::test {
namespace {

const std::vector<double> kExtremes = {-1e4, -100, -20, 0, 20, 88, 89, 1e4};

// y = tanhexp(x) and dx for upstream g, through the public function.
std::pair<Tensor, Tensor> forward_backward(const Tensor& x_in, const Tensor& g) {
  Tensor x = x_in.clone().requires_grad_();
  Tensor y = tanhexp(x);
  y.backward(g);
  return {y.detach(), x.grad()};
}

TEST(TanhExp, MatchesPyTorchReference) {
  int checked = 0;
  for (const ReferenceCase& c : load_reference("tanhexp_group_norm.json")) {
    if (c.name.rfind("tanhexp", 0) != 0) continue;
    SCOPED_TRACE(c.name);
    const Tensor& x = c.at("x");
    // PyTorch's default tolerances of torch.testing.assert_close.
    const double rtol = x.dtype() == kBFloat16 ? 1.6e-2 : 1.3e-6;
    const double atol = 1e-5;
    const auto [y, dx] = forward_backward(x, c.at("g"));
    EXPECT_EQ(y.dtype(), x.dtype());
    EXPECT_TRUE(all_close(y, to_vector(c.at("y")), rtol, atol));
    EXPECT_TRUE(all_close(dx, to_vector(c.at("dx")), rtol, atol));
    ++checked;
  }
  EXPECT_EQ(checked, 2);
}

TEST(TanhExp, FiniteForwardAndGradientAtExtremesInEveryDtype) {
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor x = make_tensor(kExtremes, {static_cast<std::int64_t>(kExtremes.size())}, dtype);
    const auto [y, dx] = forward_backward(x, ones_like(x));
    const std::vector<double> yv = to_vector(y);
    const std::vector<double> dxv = to_vector(dx);
    const std::vector<double> xv = to_vector(x);
    for (std::size_t i = 0; i < xv.size(); ++i) {
      SCOPED_TRACE("x = " + std::to_string(xv[i]));
      EXPECT_TRUE(std::isfinite(yv[i]));
      EXPECT_TRUE(std::isfinite(dxv[i]));
    }
    // Saturated: f(x) = x and f'(x) = 1 from x = 20 on; f(0) = 0, f'(0) = tanh(1).
    EXPECT_EQ(yv[4], xv[4]);
    EXPECT_EQ(yv[7], xv[7]);
    EXPECT_EQ(dxv[6], 1.0);
    EXPECT_EQ(dxv[7], 1.0);
    EXPECT_EQ(yv[3], 0.0);
    EXPECT_NEAR(dxv[3], std::tanh(1.0), 4e-3);
    // Very negative: f and f' vanish.
    EXPECT_EQ(yv[0], 0.0);
    EXPECT_EQ(dxv[0], 0.0);
  }
}

// Up to the largest finite value of each dtype: f = x, f' = 1 (and 0, 0 on the negative side).
// (x e^x, formed first, overflowed there for x > ~1e29 in float32 and made the gradient NaN.)
TEST(TanhExp, LimitsAtTheLargestFiniteValueOfEachDtype) {
  const std::vector<std::pair<DType, double>> largest = {
      {kFloat32, 3.4e38}, {kFloat64, 1.7e308}, {kFloat16, 65504.0}, {kBFloat16, 3.38e38}};
  for (const auto& [dtype, big] : largest) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor x = make_tensor({big, 1e30, -1e30, -big}, {4}, dtype);
    const auto [y, dx] = forward_backward(x, ones_like(x));
    const std::vector<double> xv = to_vector(x), yv = to_vector(y), dxv = to_vector(dx);
    for (std::size_t i = 0; i < xv.size(); ++i) {
      SCOPED_TRACE("x = " + std::to_string(xv[i]));
      if (std::isinf(xv[i])) continue;  // 1e30 is beyond float16
      EXPECT_EQ(yv[i], xv[i] > 0 ? xv[i] : 0.0);
      EXPECT_EQ(dxv[i], xv[i] > 0 ? 1.0 : 0.0);
    }
  }
}

// The formula one would compose from PyTorch ops, where(x > 20, x, x * tanh(exp(x))), overflows
// exp at x = 89 in float32: the masked branch's gradient is 0 * inf = NaN. The fused op is finite.
TEST(TanhExp, ComposedFormulaIsNaNAt89InFloat32WhileFusedIsFinite) {
  const Tensor x0 = make_tensor({89.0}, {1}, kFloat32);
  Tensor x = x0.clone().requires_grad_();
  Tensor composed = where(gt(x, 20.0), x, x * tanh(exp(x)));
  composed.backward(ones_like(composed));
  EXPECT_TRUE(std::isnan(to_vector(x.grad())[0])) << "the composed formula's gradient at 89";
  EXPECT_EQ(to_vector(composed)[0], 89.0);

  const auto [y, dx] = forward_backward(x0, ones_like(x0));
  EXPECT_EQ(to_vector(y)[0], 89.0);
  EXPECT_EQ(to_vector(dx)[0], 1.0);
}

TEST(TanhExp, GradcheckFloat64) {
  // Away from nothing special: the function is smooth everywhere.
  const Tensor x = uniform_input({4, 5}, -4.0, 3.0, /*seed=*/7);
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tanhexp(in[0]); }, {x}));
  // Non-contiguous input (a transposed view).
  Tensor xt = uniform_input({5, 3}, -2.0, 2.0, /*seed=*/8).detach().transpose(0, 1);
  xt.requires_grad_();
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tanhexp(in[0]); }, {xt}));
}

TEST(TanhExp, SixteenBitDtypesRoundTheFloat64ResultOnce) {
  const Tensor x64 = uniform_input({257}, -6.0, 6.0, /*seed=*/3).detach();
  for (DType dtype : {kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor x = x64.to(dtype);
    const Tensor expected = ops::tanhexp(x.to(kFloat64)).to(dtype);
    EXPECT_TRUE(all_close(ops::tanhexp(x), to_vector(expected)));
    const Tensor g = ones_like(x);
    const Tensor expected_dx = ops::tanhexp_backward(g.to(kFloat64), x.to(kFloat64)).to(dtype);
    EXPECT_TRUE(all_close(ops::tanhexp_backward(g, x), to_vector(expected_dx)));
  }
}

TEST(TanhExp, StridedInputEqualsContiguous) {
  const Tensor base = uniform_input({6, 8}, -3.0, 3.0, /*seed=*/5).detach().to(kFloat32);
  const Tensor strided = base.transpose(0, 1);
  ASSERT_FALSE(strided.is_contiguous());
  EXPECT_TRUE(
      all_close(ops::tanhexp(strided), to_vector(ops::tanhexp(strided.contiguous())), 0, 0));
}

TEST(TanhExp, SharedMathMatchesTheDefinitionInFloat64) {
  for (double x : {-30.0, -5.0, -1.0, -0.1, 0.0, 0.2, 1.0, 2.0, 3.0}) {
    const double u = std::exp(x);
    EXPECT_NEAR(kernels::tanhexp_forward_math(x), x * std::tanh(u), 1e-15);
    const double t = std::tanh(u);
    EXPECT_NEAR(kernels::tanhexp_derivative_math(x), t - x * u * (t * t - 1.0), 1e-12);
  }
}

// The former formulas (tanhf of e^x; sech^2 from its own exp and division), kept here as the
// baseline the one-exp rewrite of Note [Stable TanhExp] is held to.
float tanhexp_forward_tanhf(float x) {
  return x * std::tanh(kernels::tanhexp_clamped_exp(x));
}
float tanhexp_derivative_tanhf(float x) {
  const float u = kernels::tanhexp_clamped_exp(x);
  const float t = std::exp(-2.0f * u);
  return std::tanh(u) + x * (u * (4.0f * t / ((1.0f + t) * (1.0f + t))));
}

// The ulp of float at |v| (the spacing of floats there).
double float_ulp(double v) {
  const float a = static_cast<float>(std::fabs(v));
  return static_cast<double>(std::nextafter(a, INFINITY)) - a;
}

// Every 97th float32 from -87 up (below, e^x is subnormal and every formula loses the same
// digits of it), against the definition in double: f within 5 ulps of |f|, f' within 5 ulps of
// |tanh(u)| + |x u sech^2(u)| (the size of its terms: f' crosses 0 near x = -1.08, where a
// bound relative to f' itself means nothing). The tanhf-based baseline is held to the same
// bound, and the largest errors of both are printed.
TEST(TanhExp, OneExpFormulasAreAsAccurateAsTanhfOnFloat32) {
  constexpr double kMaxUlps = 5.0;
  double worst_new_f = 0, worst_old_f = 0, worst_new_d = 0, worst_old_d = 0;
  std::int64_t checked = 0;
  for (std::uint64_t bits = 0; bits <= 0xffffffffull; bits += 97) {
    const float x = std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    if (!std::isfinite(x) || x < -87.0f) continue;
    ++checked;
    const double xd = x;
    const double u = std::exp(std::min(xd, kernels::kTanhExpMaxExponent));
    const double th = std::tanh(u);
    const double t = std::exp(-2.0 * u);
    const double slope = xd * (u * (4.0 * t / ((1.0 + t) * (1.0 + t))));
    const double f = xd * th;
    const double ulp_f = std::max(float_ulp(f), 1e-45);
    const double ulp_d = std::max(float_ulp(std::fabs(th) + std::fabs(slope)), 1e-45);
    const double new_f = std::fabs(kernels::tanhexp_forward_math(x) - f) / ulp_f;
    const double old_f = std::fabs(tanhexp_forward_tanhf(x) - f) / ulp_f;
    const double new_d = std::fabs(kernels::tanhexp_derivative_math(x) - (th + slope)) / ulp_d;
    const double old_d = std::fabs(tanhexp_derivative_tanhf(x) - (th + slope)) / ulp_d;
    ASSERT_LE(new_f, kMaxUlps) << "f at x = " << x;
    ASSERT_LE(new_d, kMaxUlps) << "f' at x = " << x;
    worst_new_f = std::max(worst_new_f, new_f);
    worst_old_f = std::max(worst_old_f, old_f);
    worst_new_d = std::max(worst_new_d, new_d);
    worst_old_d = std::max(worst_old_d, old_d);
  }
  EXPECT_LE(worst_old_f, kMaxUlps);
  EXPECT_LE(worst_old_d, kMaxUlps);
  std::cout << "[ TanhExp ] " << checked << " floats: f within " << worst_new_f
            << " ulps (tanhf formula " << worst_old_f << "), f' within " << worst_new_d
            << " ulps (tanhf formula " << worst_old_d << ")\n";
}

TEST(TanhExp, RejectsNonFloatingInput) {
  const Tensor x = make_tensor({1, 2, 3}, {3}, kInt64);
  EXPECT_THROW(ops::tanhexp(x), DTypeError);
  EXPECT_THROW(ops::tanhexp_backward(make_tensor({1, 2}, {2}), make_tensor({1, 2, 3}, {3})),
               ShapeError);
}

}  // namespace
}  // namespace leangrad::test
