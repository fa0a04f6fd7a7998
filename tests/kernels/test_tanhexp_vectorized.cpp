// TanhExp's vectorised CPU launchers (kernels/cpu/tanhexp_vectorized.cpp, what the library runs)
// against the reference loops (kernels/cpu/tanhexp_reference.h) and against double precision:
// the polynomial exp within its stated bound (Note [Polynomial exp]) over the float range, f and
// f' within the bounds Note [Vectorised TanhExp] derives from it, every dtype at sizes around the
// vector widths and the threading grain, non-contiguous inputs, NaN and infinities, and results
// that do not depend on the thread count, on where a range starts or on the vector width (the
// AVX-512 copy of the loops against the AVX2 one).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <leangrad/core/dtype.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/cpu/exp_polynomial.h>
#include <leangrad/kernels/cpu/parallel_for.h>
#include <leangrad/kernels/cpu/tanhexp_reference.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>
#include <leangrad/kernels/tanhexp_math.h>
#include "testing/avx512_copies.h"
#include "testing/tensor_testing.h"
#include "testing/thread_count.h"

namespace leangrad::test {
namespace {

// The reference loop's bound against double (test_tanhexp.cpp), and what the polynomial exp's
// error can add to it (Note [Vectorised TanhExp]): 2 ulps of f per ulp of each of the two exps;
// f' 2 ulps per exp ulp through t and 4 through u.
constexpr double kReferenceUlps = 5.0;
constexpr double kForwardUlps = kReferenceUlps + 4 * kernels::cpu::kExpPolynomialMaxUlps;
constexpr double kDerivativeUlps = kReferenceUlps + 6 * kernels::cpu::kExpPolynomialMaxUlps;

// Sizes around the vector widths (8, 16 floats), the 16-bit conversion block (512) and the
// threading grain (32768).
const std::vector<std::int64_t> kSizes = {1, 7, 8, 9, 15, 16, 17, 31, 33, 511, 513, 32767, 70001};

// The ulp of float at |v|.
double float_ulp(double v) {
  const float a = static_cast<float>(std::fabs(v));
  if (a >= std::numeric_limits<float>::max()) return std::ldexp(1.0, 104);
  return static_cast<double>(std::nextafter(a, INFINITY)) - a;
}

// Every 97th float x in `lo <= x <= hi`.
std::vector<float> every_97th_float(float lo, float hi) {
  std::vector<float> xs;
  for (std::uint64_t bits = 0; bits <= 0xffffffffull; bits += 97) {
    const float x = std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    if (x >= lo && x <= hi) xs.push_back(x);
  }
  return xs;
}

TEST(ExpPolynomial, WithinItsStatedBoundOverTheFloatRange) {
  // Every 97th float with a finite, non-zero e^x (subnormal results included).
  const std::vector<float> xs = every_97th_float(-104.0f, 88.72f);
  double worst = 0;
  for (float x : xs) {
    const double e = std::exp(static_cast<double>(x));
    const double ulps =
        std::fabs(kernels::cpu::exp_polynomial(x) - e) / std::max(float_ulp(e), 0x1p-149);
    ASSERT_LE(ulps, kernels::cpu::kExpPolynomialMaxUlps) << "x = " << x;
    worst = std::max(worst, ulps);
  }
  std::cout << "[ ExpPolynomial ] " << xs.size() << " floats: within " << worst << " ulps\n";
}

TEST(ExpPolynomial, EdgesOfTheRange) {
  using kernels::cpu::exp_polynomial;
  EXPECT_EQ(exp_polynomial(0.0f), 1.0f);
  EXPECT_EQ(exp_polynomial(-0.0f), 1.0f);
  EXPECT_EQ(exp_polynomial(88.73f), INFINITY);
  EXPECT_EQ(exp_polynomial(1e30f), INFINITY);
  EXPECT_EQ(exp_polynomial(INFINITY), INFINITY);
  EXPECT_EQ(exp_polynomial(-104.5f), 0.0f);
  EXPECT_EQ(exp_polynomial(-INFINITY), 0.0f);
  EXPECT_GT(exp_polynomial(-103.0f), 0.0f);  // subnormal, not flushed
  EXPECT_TRUE(std::isnan(exp_polynomial(std::numeric_limits<float>::quiet_NaN())));
}

// Below -104, where e^x rounds to +0, no step of exp_polynomial has a subnormal result or
// underflows (Note [Polynomial exp]): on x86 such a step costs a microcode assist, and a vector
// with one such lane ran 3 times slower. IEEE 754 raises the underflow flag for every tiny inexact
// result, on any CPU, so the flag after the calls tells whether one was computed.
TEST(ExpPolynomial, NoStepUnderflowsBelowItsRange) {
  using kernels::cpu::exp_polynomial;
  std::vector<float> xs = {-104.0001f, -1e4f, -1e30f, -std::numeric_limits<float>::max(),
                           -INFINITY};
  for (float x = -104.01f; x > -300.0f; x -= 0.37f)
    xs.push_back(x);
  std::feclearexcept(FE_ALL_EXCEPT);
  for (const float x : xs)
    EXPECT_EQ(std::bit_cast<std::uint32_t>(exp_polynomial(x)), 0u) << x;
  EXPECT_FALSE(std::fetestexcept(FE_UNDERFLOW));
  // A subnormal result raises it (the input is volatile, so not folded at compile time).
  volatile float subnormal_input = -100.0f;
  EXPECT_GT(exp_polynomial(subnormal_input), 0.0f);
  EXPECT_TRUE(std::fetestexcept(FE_UNDERFLOW));
}

// Runs the vectorised (or reference) float32 launchers over xs.
std::vector<float> forward_f32(const std::vector<float>& xs, bool reference) {
  std::vector<float> y(xs.size());
  const auto n = static_cast<std::int64_t>(xs.size());
  if (reference) {
    kernels::cpu::reference::tanhexp_forward(kFloat32, n, y.data(), xs.data());
  } else {
    kernels::cpu::tanhexp_forward(kFloat32, n, y.data(), xs.data());
  }
  return y;
}

std::vector<float> derivative_f32(const std::vector<float>& xs, bool reference) {
  const std::vector<float> ones(xs.size(), 1.0f);
  std::vector<float> dx(xs.size());
  const auto n = static_cast<std::int64_t>(xs.size());
  if (reference) {
    kernels::cpu::reference::tanhexp_backward(kFloat32, n, dx.data(), ones.data(), xs.data());
  } else {
    kernels::cpu::tanhexp_backward(kFloat32, n, dx.data(), ones.data(), xs.data());
  }
  return dx;
}

// f and f' of the vectorised launchers against the definition in double, every 97th float32
// above -87 (as TanhExp.OneExpFormulasAreAsAccurateAsTanhfOnFloat32 holds the reference loop):
// f within kForwardUlps of |f|, f' within kDerivativeUlps of |tanh(u)| + |x u sech^2(u)|.
TEST(TanhExpVectorized, WithinTheDerivedBoundOfDoubleOnFloat32) {
  const std::vector<float> xs = every_97th_float(-87.0f, std::numeric_limits<float>::max());
  const std::vector<float> y = forward_f32(xs, false);
  const std::vector<float> d = derivative_f32(xs, false);
  double worst_f = 0, worst_d = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double x = xs[i];
    const double u = std::exp(std::min(x, kernels::kTanhExpMaxExponent));
    const double th = std::tanh(u);
    const double t = std::exp(-2.0 * u);
    const double slope = x * (u * (4.0 * t / ((1.0 + t) * (1.0 + t))));
    const double ulps_f = std::fabs(y[i] - x * th) / std::max(float_ulp(x * th), 1e-45);
    const double ulps_d = std::fabs(d[i] - (th + slope)) /
                          std::max(float_ulp(std::fabs(th) + std::fabs(slope)), 1e-45);
    ASSERT_LE(ulps_f, kForwardUlps) << "f at x = " << xs[i];
    ASSERT_LE(ulps_d, kDerivativeUlps) << "f' at x = " << xs[i];
    worst_f = std::max(worst_f, ulps_f);
    worst_d = std::max(worst_d, ulps_d);
  }
  std::cout << "[ TanhExpVectorized ] " << xs.size() << " floats: f within " << worst_f
            << " ulps (bound " << kForwardUlps << "), f' within " << worst_d << " ulps (bound "
            << kDerivativeUlps << ")\n";
}

// From x = 3.96 on, t = e^(-2 e^x) is below e^-104 (Note [Stable TanhExp]): tanh(e^x) rounds to
// 1, so f = x and f' = 1 exactly in float, and no step of either launcher underflows (Note
// [Polynomial exp]; before, t was rounded to 0 through a subnormal product, and TanhExp over
// [4, 10] ran 2.4 times slower than over [-2, 2]). Fewer elements than the threading grain: the
// calling thread computes them all, and its underflow flag is the one read.
TEST(TanhExpVectorized, LargeInputsGiveXAndOneWithoutAnUnderflow) {
  std::vector<float> xs;
  for (float x = 3.96f; x < 1e30f; x *= 1.01f)
    xs.push_back(x);
  xs.push_back(std::numeric_limits<float>::max());
  ASSERT_LT(static_cast<std::int64_t>(xs.size()), kernels::cpu::kElementwiseGrain);
  for (const bool wide : {false, true}) {
    const Avx512Copies copies(wide);
    std::feclearexcept(FE_ALL_EXCEPT);
    const std::vector<float> y = forward_f32(xs, /*reference=*/false);
    const std::vector<float> dx = derivative_f32(xs, /*reference=*/false);
    EXPECT_FALSE(std::fetestexcept(FE_UNDERFLOW)) << "AVX-512 copies allowed: " << wide;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      EXPECT_EQ(y[i], xs[i]) << xs[i];
      EXPECT_EQ(dx[i], 1.0f) << xs[i];
    }
  }
}

// On a CPU with AVX-512 the launchers run a second copy of their loops compiled for it (Note
// [AVX-512 at run time] in kernels/cpu/avx512.h); it must give the x86-64-v3 loops' bits for
// every input: every 97th float (NaN and infinities included), f and f' with an upstream gradient
// that is not 1. Without AVX-512 (or in a build that has only one copy) there is nothing to
// compare: SKIPPED.
TEST(TanhExpVectorized, Avx512CopyGivesTheBitsOfTheAvx2Loop) {
  if (!Avx512Copies::exist())
    GTEST_SKIP() << "no AVX-512 copies here (CPU without AVX-512, or a build that targets it)";
  std::vector<float> xs;
  for (std::uint64_t bits = 0; bits <= 0xffffffffull; bits += 97)
    xs.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
  std::vector<float> dy(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i)
    dy[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.375f;
  const auto n = static_cast<std::int64_t>(xs.size());
  std::vector<float> y[2], dx[2];
  for (int wide : {0, 1}) {
    const Avx512Copies copies(wide == 1);
    y[wide].resize(xs.size());
    dx[wide].resize(xs.size());
    kernels::cpu::tanhexp_forward(kFloat32, n, y[wide].data(), xs.data());
    kernels::cpu::tanhexp_backward(kFloat32, n, dx[wide].data(), dy.data(), xs.data());
  }
  for (std::size_t i = 0; i < xs.size(); ++i) {
    ASSERT_EQ(std::bit_cast<std::uint32_t>(y[1][i]), std::bit_cast<std::uint32_t>(y[0][i]))
        << "f at x = " << xs[i];
    ASSERT_EQ(std::bit_cast<std::uint32_t>(dx[1][i]), std::bit_cast<std::uint32_t>(dx[0][i]))
        << "f' at x = " << xs[i];
  }
}

// Inputs of `dtype` (N(0, 3^2) with a few extremes and specials) and upstream gradients N(0, 1).
Tensor sample_input(std::int64_t n, DType dtype, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, 3.0);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v)
    x = normal(rng);
  const std::vector<double> specials = {0.0, -0.0, 20.0,     25.0,      -90.0,
                                        1e4, -1e4, INFINITY, -INFINITY, NAN};
  for (std::size_t k = 0; k < specials.size() && k * 7 < v.size(); ++k)
    v[k * 7] = specials[k];
  return make_tensor(v, {n}, dtype);
}

// Same value, or both NaN.
bool same(double a, double b) {
  return a == b || (std::isnan(a) && std::isnan(b));
}

// Same value (infinities and NaN included), or finite and within tol.
bool close(double a, double b, double tol) {
  return same(a, b) || (std::isfinite(a) && std::isfinite(b) && std::fabs(a - b) <= tol);
}

// The 16-bit dtypes: the vectorised launcher rounds the float path's value once. So it equals
// the vectorised float32 launcher on the widened input, rounded; and it is within one 16-bit ulp
// of the reference (both round float values a few float ulps apart).
TEST(TanhExpVectorized, MatchesTheReferenceInEveryDtype) {
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    for (std::int64_t n : kSizes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + ", n = " + std::to_string(n));
      const Tensor x = sample_input(n, dtype, static_cast<std::uint32_t>(n));
      const Tensor dy = sample_input(n, dtype, static_cast<std::uint32_t>(n) + 1);
      Tensor y = empty({n}, dtype), y_ref = empty({n}, dtype);
      Tensor dx = empty({n}, dtype), dx_ref = empty({n}, dtype);
      kernels::cpu::tanhexp_forward(dtype, n, y.data_ptr(), x.data_ptr());
      kernels::cpu::reference::tanhexp_forward(dtype, n, y_ref.data_ptr(), x.data_ptr());
      kernels::cpu::tanhexp_backward(dtype, n, dx.data_ptr(), dy.data_ptr(), x.data_ptr());
      kernels::cpu::reference::tanhexp_backward(dtype, n, dx_ref.data_ptr(), dy.data_ptr(),
                                                x.data_ptr());
      const std::vector<double> xv = to_vector(x), dyv = to_vector(dy);
      const std::vector<double> yv = to_vector(y), yr = to_vector(y_ref);
      const std::vector<double> dxv = to_vector(dx), dxr = to_vector(dx_ref);
      // The float path on the widened values (for the 16-bit dtypes).
      std::vector<float> xf(xv.begin(), xv.end()), dyf(dyv.begin(), dyv.end());
      std::vector<float> yf(xf.size()), dxf(xf.size());
      kernels::cpu::tanhexp_forward(kFloat32, n, yf.data(), xf.data());
      kernels::cpu::tanhexp_backward(kFloat32, n, dxf.data(), dyf.data(), xf.data());
      const Tensor yf_rounded = make_tensor(std::vector<double>(yf.begin(), yf.end()), {n}, dtype);
      const Tensor dxf_rounded =
          make_tensor(std::vector<double>(dxf.begin(), dxf.end()), {n}, dtype);
      const std::vector<double> yf16 = to_vector(yf_rounded), dxf16 = to_vector(dxf_rounded);
      // The spacing of the dtype's values relative to their size, and float16's subnormal step.
      const double type_eps = dtype == kFloat16 ? 0x1p-10 : dtype == kBFloat16 ? 0x1p-7 : 0x1p-23;
      const double half_subnormal_step = dtype == kFloat16 ? 0x1p-24 : 0.0;
      for (std::int64_t i = 0; i < n; ++i) {
        SCOPED_TRACE("x = " + std::to_string(xv[i]) + ", dy = " + std::to_string(dyv[i]));
        if (dtype == kFloat64) {  // the reference loop itself
          ASSERT_TRUE(same(yv[i], yr[i]));
          ASSERT_TRUE(same(dxv[i], dxr[i]));
          continue;
        }
        if (dtype != kFloat32) {
          ASSERT_TRUE(same(yv[i], yf16[i])) << yv[i] << " vs " << yf16[i];
          ASSERT_TRUE(same(dxv[i], dxf16[i])) << dxv[i] << " vs " << dxf16[i];
        }
        // Against the reference: the two kernels' bounds against double, added, in ulps of the
        // exact value (at most twice the ulp of a result a few ulps from it); f' on the scale of
        // its terms (|tanh(u)| + |x u sech^2(u)| < 1.5), times |dy|, plus the rounding of
        // dy * f'. Below x = -87.3, e^x is subnormal, within 2^-149 absolute in both: f and f'
        // may differ by (1 + |x|) 2^-149 more. Then each kernel rounds to the dtype once.
        const double subnormal = (1.0 + std::fabs(xv[i])) * 0x1p-148;
        const double rounding_f =
            dtype == kFloat32 ? 0.0 : type_eps * std::fabs(yr[i]) + half_subnormal_step;
        const double rounding_d =
            dtype == kFloat32 ? 0.0 : type_eps * std::fabs(dxr[i]) + half_subnormal_step;
        const double tol_f = (kForwardUlps + kReferenceUlps) * 2 *
                                 float_ulp(std::max(std::fabs(yv[i]), std::fabs(yr[i]))) +
                             subnormal + rounding_f;
        const double tol_d = ((kDerivativeUlps + kReferenceUlps) * 2 * float_ulp(1.5) + subnormal) *
                                 std::fabs(dyv[i]) +
                             2 * float_ulp(std::max(std::fabs(dxv[i]), std::fabs(dxr[i]))) +
                             rounding_d;
        ASSERT_TRUE(close(yv[i], yr[i], tol_f)) << yv[i] << " vs reference " << yr[i];
        ASSERT_TRUE(close(dxv[i], dxr[i], tol_d)) << dxv[i] << " vs reference " << dxr[i];
      }
    }
  }
}

// Each element is the same bits whichever thread, lane or tail it lands in: 1 to 3 threads, and
// the same values computed from an offset of 1..3 elements.
TEST(TanhExpVectorized, SameBitsOnAnyThreadCountAndOffset) {
  for (DType dtype : {kFloat32, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const std::int64_t n = 70001;
    const Tensor x = sample_input(n, dtype, 11);
    const Tensor dy = sample_input(n, dtype, 12);
    std::vector<std::vector<double>> ys, dxs;
    for (int threads : {1, 2, 3}) {
      const ThreadCount guard(threads);
      ys.push_back(to_vector(ops::tanhexp(x)));
      dxs.push_back(to_vector(ops::tanhexp_backward(dy, x)));
    }
    for (std::size_t k = 1; k < ys.size(); ++k)
      for (std::int64_t i = 0; i < n; ++i) {
        ASSERT_TRUE(same(ys[k][i], ys[0][i])) << "threads " << k + 1 << ", i = " << i;
        ASSERT_TRUE(same(dxs[k][i], dxs[0][i])) << "threads " << k + 1 << ", i = " << i;
      }
    for (std::int64_t offset : {1, 2, 3}) {
      const Tensor xs = x.slice(0, offset, n).contiguous();
      const Tensor dys = dy.slice(0, offset, n).contiguous();
      const std::vector<double> y = to_vector(ops::tanhexp(xs));
      const std::vector<double> dx = to_vector(ops::tanhexp_backward(dys, xs));
      for (std::int64_t i = offset; i < n; ++i) {
        ASSERT_TRUE(same(y[i - offset], ys[0][i])) << "offset " << offset << ", i = " << i;
        ASSERT_TRUE(same(dx[i - offset], dxs[0][i])) << "offset " << offset << ", i = " << i;
      }
    }
  }
}

// Non-contiguous operands (transposed views) give the contiguous results, in every dtype.
TEST(TanhExpVectorized, StridedOperandsEqualContiguous) {
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor x = sample_input(37 * 29, dtype, 5).reshape({37, 29}).transpose(0, 1);
    const Tensor dy = sample_input(37 * 29, dtype, 6).reshape({37, 29}).transpose(0, 1);
    ASSERT_FALSE(x.is_contiguous());
    const std::vector<double> y = to_vector(ops::tanhexp(x));
    const std::vector<double> y_contiguous = to_vector(ops::tanhexp(x.contiguous()));
    const std::vector<double> dx = to_vector(ops::tanhexp_backward(dy, x));
    const std::vector<double> dx_contiguous =
        to_vector(ops::tanhexp_backward(dy.contiguous(), x.contiguous()));
    for (std::size_t i = 0; i < y.size(); ++i) {
      ASSERT_TRUE(same(y[i], y_contiguous[i])) << i;
      ASSERT_TRUE(same(dx[i], dx_contiguous[i])) << i;
    }
  }
}

}  // namespace
}  // namespace leangrad::test
