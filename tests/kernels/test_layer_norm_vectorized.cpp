// LayerNorm's vectorised CPU launchers (kernels/cpu/layer_norm_vectorized.cpp, what the library
// runs) and its CUDA launchers (kernels/cuda/layer_norm.cu; SKIPPED without a GPU) against the
// reference loops (kernels/cpu/layer_norm_reference.h): mean, rstd, output and the three
// gradients in every dtype, affine or not, on shapes around the 32 partial sums and the
// 2048-element chunks, one row and thousands (the backward's row blocks, Note [Vectorised
// LayerNorm]), with means far from 0; the tolerance is the error bound of float (or double) sums
// of the lengths involved, per element. Also: the same bits at any thread count, 16-bit as
// float32 of its widening, each gradient alone equal to the gradients together.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <leangrad/core/cuda.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/cpu/layer_norm_reference.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>
#include "testing/norm_testing.h"
#include "testing/tensor_testing.h"

namespace leangrad::test {
namespace {

struct Case {
  std::int64_t rows, features;
  double offset;  // added to x: a mean this far from 0, in standard deviations
};

// One element per row; tails of the 32 partial sums; rows across chunks (2049, 4097, 70001);
// hundreds and thousands of rows (300 rows of 64 make 38 blocks of 8; 2500 of 8 reach the
// cap of 256 blocks: 250 blocks of 10 rows); means 8, 100 and 1000
// standard deviations out (at 1000 the worst-case bound on the variance of much longer rows would
// exceed the variance).
const std::vector<Case> kCases = {
    {1, 1, 0},    {3, 5, 0},      {7, 33, 0},   {4, 32, 0},    {5, 2049, 0},
    {2, 4097, 0}, {300, 64, 0},   {2500, 8, 0}, {1, 70001, 0}, {64, 36, 1000},
    {16, 300, 8}, {3, 9000, 100}, {33, 768, 0},
};

std::string describe(const Case& c) {
  std::ostringstream s;
  s << "(" << c.rows << ", " << c.features << "), mean " << c.offset;
  return s.str();
}

struct Buffers {
  Tensor y, mean, rstd;
  Tensor dx, dw, db;
};

enum class Kernel { Reference, Vectorised, Cuda };

Buffers empty_buffers(DType dtype, const Case& c, const Device& device) {
  const DType acc = dtype == kFloat64 ? kFloat64 : kFloat32;
  const TensorOptions values = TensorOptions(dtype).device(device);
  const TensorOptions stats = TensorOptions(acc).device(device);
  return {empty({c.rows, c.features}, values),
          empty({c.rows}, stats),
          empty({c.rows}, stats),
          empty({c.rows, c.features}, values),
          empty({c.features}, values),
          empty({c.features}, values)};
}

Buffers to_cpu(const Buffers& b) {
  return {b.y.cpu(), b.mean.cpu(), b.rstd.cpu(), b.dx.cpu(), b.dw.cpu(), b.db.cpu()};
}

// The forward of `kernel`; CUDA's on copies of the inputs, its results copied back.
Buffers run(Kernel kernel, DType dtype, const Case& c, const Tensor& x, const Tensor& w,
            const Tensor& b, double eps) {
  if (kernel == Kernel::Cuda) {
    const Device gpu = Device::cuda(0);
    const Tensor xd = x.to(gpu), wd = to_device(w, gpu), bd = to_device(b, gpu);
    Buffers o = empty_buffers(dtype, c, gpu);
    kernels::cuda::layer_norm_forward(dtype, c.rows, c.features, o.y.data_ptr(), o.mean.data_ptr(),
                                      o.rstd.data_ptr(), xd.data_ptr(), data_or_null(wd),
                                      data_or_null(bd), eps);
    return to_cpu(o);
  }
  Buffers o = empty_buffers(dtype, c, Device::cpu());
  const auto forward = kernel == Kernel::Reference ? kernels::cpu::reference::layer_norm_forward
                                                   : kernels::cpu::layer_norm_forward;
  forward(dtype, c.rows, c.features, o.y.data_ptr(), o.mean.data_ptr(), o.rstd.data_ptr(),
          x.data_ptr(), data_or_null(w), data_or_null(b), eps);
  return o;
}

// The backward of `kernel` into o's gradients (those defined in o), from the reference's mean
// and rstd.
void run_backward(Kernel kernel, DType dtype, const Case& c, Buffers& o, const Tensor& x,
                  const Tensor& w, const Tensor& dy, const Buffers& stats) {
  if (kernel == Kernel::Cuda) {
    const Device gpu = Device::cuda(0);
    const Tensor xd = x.to(gpu), wd = to_device(w, gpu), dyd = dy.to(gpu);
    const Tensor mean = stats.mean.to(gpu), rstd = stats.rstd.to(gpu);
    Buffers d = empty_buffers(dtype, c, gpu);
    kernels::cuda::layer_norm_backward(
        dtype, c.rows, c.features, o.dx.defined() ? d.dx.data_ptr() : nullptr,
        o.dw.defined() ? d.dw.data_ptr() : nullptr, o.db.defined() ? d.db.data_ptr() : nullptr,
        dyd.data_ptr(), xd.data_ptr(), mean.data_ptr(), rstd.data_ptr(), data_or_null(wd));
    if (o.dx.defined()) o.dx = d.dx.cpu();
    if (o.dw.defined()) o.dw = d.dw.cpu();
    if (o.db.defined()) o.db = d.db.cpu();
    return;
  }
  const auto backward = kernel == Kernel::Reference ? kernels::cpu::reference::layer_norm_backward
                                                    : kernels::cpu::layer_norm_backward;
  backward(dtype, c.rows, c.features, output_or_null(o.dx), output_or_null(o.dw),
           output_or_null(o.db), dy.data_ptr(), x.data_ptr(), stats.mean.data_ptr(),
           stats.rstd.data_ptr(), data_or_null(w));
}

// Forward and backward of the reference and of `fast` (the vectorised CPU kernel, or CUDA's);
// every value of fast's within the sum of the two kernels' error bounds of the reference's. With
// K = features terms per row, R rows, u the unit roundoff of the accumulation (float, or double
// for float64) and sd a row's standard deviation (the bounds of GroupNorm's test, one row being
// one group, tests/kernels/test_group_norm_vectorized.cpp):
//   - each kernel's mean is within (K + 8) u (|mean| + sd) and its variance within
//     (K + 8) u kappa var, kappa = 1 + |mean| / sd (Welford's updates, or sums of 32 lanes and a
//     tree merged by Chan's formula); with d = (K + 8) u kappa var / (var + eps), rstd within
//     (1 - d)^-1/2 - 1 + 3u relative;
//   - y within |w| (rstd |d mean| + |x - mean| |d rstd|) + 8u (|rstd w (x - mean)| + |b|) per
//     kernel, then one rounding to T each;
//   - the backward's row sums a = sum w dy and b = sum w dy (x - mean) of K terms within
//     (K + 10) u of the sum of the terms' sizes (the 2 for the product and the difference in
//     each term), the reference's in double (2^-53, of sum |w dy x| and |mean| sum |w dy|), and
//     dx within what those give through dx = rstd w dy - rstd^3 / K b (x - mean) - rstd / K a,
//     plus 4u of each term per kernel and one rounding to T each;
//   - dweight and dbias, sums over the R rows of dy (x - mean) rstd and dy, within (R + 8) u
//     (fast: float sums within each block, then double over the blocks) and (R + 8) 2^-53
//     (reference) of the sum of the terms' sizes, then one rounding to T each.
void check_case(const Case& c, DType dtype, bool affine, Kernel fast_kernel = Kernel::Vectorised) {
  const std::int64_t K = c.features;
  const Shape shape = {c.rows, K};
  const std::uint32_t seed = static_cast<std::uint32_t>(c.rows * 1000 + K);
  const Tensor x = random_tensor(shape, c.offset, dtype, seed);
  const Tensor dy = random_tensor(shape, 0.0, dtype, seed + 1);
  const Tensor w = affine ? random_tensor({K}, 1.0, dtype, seed + 2) : Tensor();
  const Tensor b = affine ? random_tensor({K}, 0.0, dtype, seed + 3) : Tensor();
  const double eps = 1e-5;
  Buffers fast = run(fast_kernel, dtype, c, x, w, b, eps);
  Buffers ref = run(Kernel::Reference, dtype, c, x, w, b, eps);
  run_backward(fast_kernel, dtype, c, fast, x, w, dy, ref);
  run_backward(Kernel::Reference, dtype, c, ref, x, w, dy, ref);

  const double u = math_unit_roundoff(dtype);
  constexpr double kDoubleU = 0x1p-53;
  const double k = static_cast<double>(K) + 8;
  const double row_sum_error = (static_cast<double>(K) + 10) * u;
  const double reference_row_sum_error = (static_cast<double>(K) + 8) * kDoubleU;
  const std::vector<double> xv = to_vector(x), dyv = to_vector(dy);
  const std::vector<double> wv = affine ? to_vector(w) : std::vector<double>(K, 1.0);
  const std::vector<double> bv = affine ? to_vector(b) : std::vector<double>(K, 0.0);
  const std::vector<double> mean_f = to_vector(fast.mean), mean_r = to_vector(ref.mean);
  const std::vector<double> rstd_f = to_vector(fast.rstd), rstd_r = to_vector(ref.rstd);
  const std::vector<double> y_f = to_vector(fast.y), y_r = to_vector(ref.y);
  const std::vector<double> dx_f = to_vector(fast.dx), dx_r = to_vector(ref.dx);
  const std::vector<double> dw_f = to_vector(fast.dw), dw_r = to_vector(ref.dw);
  const std::vector<double> db_f = to_vector(fast.db), db_r = to_vector(ref.db);
  std::vector<double> dw_terms(K, 0.0), db_terms(K, 0.0);

  for (std::int64_t row = 0; row < c.rows; ++row) {
    SCOPED_TRACE("row " + std::to_string(row));
    const double* xr = xv.data() + row * K;
    const double* dyr = dyv.data() + row * K;
    double sum = 0;
    for (std::int64_t i = 0; i < K; ++i)
      sum += xr[i];
    const double exact_mean = sum / static_cast<double>(K);
    double m2 = 0;
    for (std::int64_t i = 0; i < K; ++i)
      m2 += (xr[i] - exact_mean) * (xr[i] - exact_mean);
    const double var = m2 / static_cast<double>(K);
    const double sd = std::sqrt(var);
    const double d = k * u * (var + std::fabs(exact_mean) * sd) / (var + eps);
    ASSERT_LT(d, 0.5) << "a case whose variance bound says nothing";
    const double mean_tol = 2 * k * u * (std::fabs(exact_mean) + sd);
    const double rstd_rel_tol = 2 * (1 / std::sqrt(1 - d) - 1 + 3 * u);
    ASSERT_NEAR(mean_f[row], mean_r[row], mean_tol);
    ASSERT_NEAR(rstd_f[row], rstd_r[row], rstd_rel_tol * rstd_r[row]);
    const double r = rstd_r[row];
    const double m = mean_r[row];
    double a = 0, bc = 0, abs_a = 0, abs_bc = 0, abs_b_uncentred = 0;
    for (std::int64_t i = 0; i < K; ++i) {
      const double g = wv[i] * dyr[i];
      a += g;
      bc += g * (xr[i] - m);
      abs_a += std::fabs(g);
      abs_bc += std::fabs(g * (xr[i] - m));
      abs_b_uncentred += std::fabs(g * xr[i]);
      dw_terms[i] += std::fabs(dyr[i] * (xr[i] - m) * r);
      db_terms[i] += std::fabs(dyr[i]);
    }
    const double err_a = (row_sum_error + reference_row_sum_error) * abs_a;
    const double err_bc = row_sum_error * abs_bc +
                          reference_row_sum_error * (abs_b_uncentred + std::fabs(m) * abs_a) +
                          kDoubleU * std::fabs(m) * abs_a;
    const double kd = static_cast<double>(K);
    const double x_coef = -r * r * r / kd * bc;
    const double constant = -r / kd * a;
    const double d_x_coef = r * r * r / kd * err_bc;
    const double d_constant = r / kd * err_a;
    for (std::int64_t i = 0; i < K; ++i) {
      const std::int64_t e = row * K + i;
      const double scale = r * wv[i];
      const double y_tol =
          std::fabs(wv[i]) * r * (mean_tol + std::fabs(xr[i] - exact_mean) * rstd_rel_tol) +
          8 * u * (std::fabs(scale * (xr[i] - m)) + std::fabs(bv[i])) + 2 * rounding(dtype, y_r[e]);
      ASSERT_NEAR(y_f[e], y_r[e], y_tol) << "y[" << e << "]";
      const double dx_tol =
          std::fabs(xr[i] - m) * d_x_coef + d_constant +
          4 * u *
              (std::fabs(scale * dyr[i]) + std::fabs(x_coef * (xr[i] - m)) + std::fabs(constant)) +
          4 * kDoubleU *
              (std::fabs(scale * dyr[i]) + std::fabs(x_coef) * (std::fabs(xr[i]) + std::fabs(m)) +
               std::fabs(constant)) +
          2 * rounding(dtype, dx_r[e]);
      ASSERT_NEAR(dx_f[e], dx_r[e], dx_tol) << "dx[" << e << "]";
    }
  }
  const double column_sum_error =
      (static_cast<double>(c.rows) + 8) * u + (static_cast<double>(c.rows) + 8) * kDoubleU;
  for (std::int64_t i = 0; i < K; ++i) {
    ASSERT_NEAR(dw_f[i], dw_r[i], column_sum_error * dw_terms[i] + 2 * rounding(dtype, dw_r[i]))
        << "dweight[" << i << "]";
    ASSERT_NEAR(db_f[i], db_r[i], column_sum_error * db_terms[i] + 2 * rounding(dtype, db_r[i]))
        << "dbias[" << i << "]";
  }
}

TEST(LayerNormVectorized, MatchesTheReferenceInEveryDtype) {
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16})
    for (const Case& c : kCases)
      for (bool affine : {true, false}) {
        SCOPED_TRACE(describe(c) + ", " + dtype_name(dtype) + (affine ? ", affine" : ""));
        check_case(c, dtype, affine);
        if (HasFatalFailure()) return;
      }
}

TEST(LayerNormCuda, MatchesTheReferenceInEveryDtype) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16})
    for (const Case& c : kCases)
      for (bool affine : {true, false}) {
        SCOPED_TRACE(describe(c) + ", " + dtype_name(dtype) + (affine ? ", affine" : ""));
        check_case(c, dtype, affine, Kernel::Cuda);
        if (HasFatalFailure()) return;
      }
}

// Every output of forward and backward, flattened.
std::vector<double> all_results(const Tensor& x, const Tensor& dy, const Tensor& w,
                                const Tensor& b) {
  const std::int64_t features = x.size(-1);
  const ops::GroupNormOutput f = ops::layer_norm(x, features, w, b, 1e-5);
  const ops::GroupNormGrads g =
      ops::layer_norm_backward(dy, x, f.mean, f.rstd, w, features, true, true, true);
  return values_of({&f.output, &f.mean, &f.rstd, &g.grad_input, &g.grad_weight, &g.grad_bias});
}

// The backward's blocks are cut by the sizes alone, and the forward's two paths (rows over threads
// when each thread gets 8 rows, else (row, chunk) tasks) compute alike, so 1 to 4 threads give
// the same bits, in float32 and the 16-bit dtypes (At most 4 threads: ThreadCount,
// tests/testing/thread_count.h, says why): 2500 rows of 8 (250 blocks of 10 rows), 300 of 64 (38
// blocks of 8), 8 of 5000 (one block; the forward by rows at 1 thread, by chunks at 2 to 4), one
// row of 70001 (by chunks).
TEST(LayerNormVectorized, SameBitsOnAnyThreadCount) {
  for (DType dtype : {kFloat32, kFloat16, kBFloat16})
    for (const Case& c :
         {Case{2500, 8, 0}, Case{300, 64, 0}, Case{8, 5000, 0}, Case{1, 70001, 0}}) {
      SCOPED_TRACE(describe(c) + ", " + dtype_name(dtype));
      const Tensor x = random_tensor({c.rows, c.features}, 0.5, dtype, 1);
      const Tensor dy = random_tensor({c.rows, c.features}, 0.0, dtype, 2);
      const Tensor w = random_tensor({c.features}, 1.0, dtype, 3);
      const Tensor b = random_tensor({c.features}, 0.0, dtype, 4);
      expect_same_bits_on_1_to_4_threads([&] { return all_results(x, dy, w, b); });
      if (HasFatalFailure()) return;
    }
}

// float16 and bfloat16 LayerNorm is float32 LayerNorm of the widened input, rounded once: output,
// mean, rstd and the three gradients, bit for bit (Note [Vectorised LayerNorm]), on every shape
// of kCases.
TEST(LayerNormVectorized, SixteenBitIsFloat32OfTheWidenedInput) {
  for (DType dtype : {kFloat16, kBFloat16})
    for (const Case& c : kCases)
      for (bool affine : {true, false}) {
        SCOPED_TRACE(describe(c) + ", " + dtype_name(dtype) + (affine ? ", affine" : ""));
        const Shape shape = {c.rows, c.features};
        const Tensor x = random_tensor(shape, c.offset, dtype, 21);
        const Tensor dy = random_tensor(shape, 0.0, dtype, 22);
        const Tensor w = affine ? random_tensor({c.features}, 1.0, dtype, 23) : Tensor();
        const Tensor b = affine ? random_tensor({c.features}, 0.0, dtype, 24) : Tensor();
        auto wide = [](const Tensor& t) { return t.defined() ? t.to(kFloat32) : Tensor(); };
        const ops::GroupNormOutput f = ops::layer_norm(x, c.features, w, b, 1e-5);
        const ops::GroupNormOutput f32 =
            ops::layer_norm(wide(x), c.features, wide(w), wide(b), 1e-5);
        const ops::GroupNormGrads g =
            ops::layer_norm_backward(dy, x, f.mean, f.rstd, w, c.features, true, affine, affine);
        const ops::GroupNormGrads g32 = ops::layer_norm_backward(
            wide(dy), wide(x), f32.mean, f32.rstd, wide(w), c.features, true, affine, affine);
        ASSERT_EQ(f.output.dtype(), dtype);
        EXPECT_EQ(to_vector(f.output), to_vector(f32.output.to(dtype)));
        EXPECT_EQ(to_vector(f.mean), to_vector(f32.mean));
        EXPECT_EQ(to_vector(f.rstd), to_vector(f32.rstd));
        EXPECT_EQ(to_vector(g.grad_input), to_vector(g32.grad_input.to(dtype)));
        if (affine) {
          EXPECT_EQ(to_vector(g.grad_weight), to_vector(g32.grad_weight.to(dtype)));
          EXPECT_EQ(to_vector(g.grad_bias), to_vector(g32.grad_bias.to(dtype)));
        }
        if (HasFailure()) return;
      }
}

// Each gradient asked for alone is the bits of the three asked for together: the kernels skip
// the work of the others without changing their own.
TEST(LayerNormVectorized, EachGradientAloneEqualsAllTogether) {
  const Tensor x = random_tensor({40, 96}, 0.5, kFloat32, 31);
  const Tensor dy = random_tensor({40, 96}, 0.0, kFloat32, 32);
  const Tensor w = random_tensor({96}, 1.0, kFloat32, 33);
  const ops::GroupNormOutput f = ops::layer_norm(x, 96, w, Tensor(), 1e-5);
  const ops::GroupNormGrads all =
      ops::layer_norm_backward(dy, x, f.mean, f.rstd, w, 96, true, true, true);
  const ops::GroupNormGrads dx =
      ops::layer_norm_backward(dy, x, f.mean, f.rstd, w, 96, true, false, false);
  const ops::GroupNormGrads dw =
      ops::layer_norm_backward(dy, x, f.mean, f.rstd, w, 96, false, true, false);
  const ops::GroupNormGrads db =
      ops::layer_norm_backward(dy, x, f.mean, f.rstd, w, 96, false, false, true);
  EXPECT_FALSE(dx.grad_weight.defined());
  EXPECT_EQ(to_vector(dx.grad_input), to_vector(all.grad_input));
  EXPECT_EQ(to_vector(dw.grad_weight), to_vector(all.grad_weight));
  EXPECT_EQ(to_vector(db.grad_bias), to_vector(all.grad_bias));
}

// A non-contiguous input (a transposed view, made contiguous by the op) gives the contiguous
// input's bits; parameters of normalized_shape (2-D here) are taken as their elements in order.
TEST(LayerNormVectorized, StridedInputAndTwoDimParameters) {
  const Tensor base = random_tensor({4, 6, 5, 7}, 0.3, kFloat32, 9);
  const Tensor x = base.transpose(2, 3);  // (4, 6, 7, 5), normalized over (7, 5)
  const Tensor dy = random_tensor({4, 6, 5, 7}, 0.0, kFloat32, 10).transpose(2, 3);
  ASSERT_FALSE(x.is_contiguous());
  const Tensor w = random_tensor({7, 5}, 1.0, kFloat32, 11);
  const ops::GroupNormOutput f = ops::layer_norm(x, 35, w, Tensor(), 1e-5);
  const ops::GroupNormOutput fc = ops::layer_norm(x.contiguous(), 35, w.reshape({35}), {}, 1e-5);
  const ops::GroupNormGrads g =
      ops::layer_norm_backward(dy, x, f.mean, f.rstd, w, 35, true, true, true);
  const ops::GroupNormGrads gc = ops::layer_norm_backward(
      dy.contiguous(), x.contiguous(), fc.mean, fc.rstd, w.reshape({35}), 35, true, true, true);
  EXPECT_EQ(f.output.shape(), x.shape());
  EXPECT_EQ(to_vector(f.output), to_vector(fc.output));
  EXPECT_EQ(to_vector(g.grad_input), to_vector(gc.grad_input));
  EXPECT_EQ(g.grad_weight.shape(), (Shape{7, 5}));
  EXPECT_EQ(to_vector(g.grad_weight), to_vector(gc.grad_weight));
  EXPECT_EQ(to_vector(g.grad_bias), to_vector(gc.grad_bias));
}

// The tensor-level entries refuse what their launchers cannot take, naming the op: features
// that do not divide the input, parameters of another size or dtype, a gradient of another
// shape, statistics that are not the forward's.
TEST(LayerNormOps, RefusesInputsTheKernelsCannotTake) {
  const Tensor x = random_tensor({4, 6}, 0.0, kFloat32, 41);
  const Tensor w = random_tensor({6}, 1.0, kFloat32, 42);
  const ops::GroupNormOutput f = ops::layer_norm(x, 6, w, Tensor(), 1e-5);
  expect_error_naming([&] { ops::layer_norm(x, 5, Tensor(), Tensor(), 1e-5); }, "layer_norm");
  expect_error_naming([&] { ops::layer_norm(x, 0, Tensor(), Tensor(), 1e-5); }, "layer_norm");
  expect_error_naming(
      [&] { ops::layer_norm(x, 6, random_tensor({5}, 1.0, kFloat32, 43), {}, 1e-5); },
      "layer_norm");
  expect_error_naming([&] { ops::layer_norm(x, 6, w.to(kFloat64), Tensor(), 1e-5); }, "layer_norm");
  expect_error_naming([&] { ops::layer_norm(x.to(kInt64), 6, Tensor(), Tensor(), 1e-5); },
                      "layer_norm");
  const char* backward = "layer_norm_backward";
  expect_error_naming(
      [&] {
        ops::layer_norm_backward(x.reshape({6, 4}), x, f.mean, f.rstd, w, 6, true, true, true);
      },
      backward);
  expect_error_naming(
      [&] {
        ops::layer_norm_backward(x, x, f.rstd.reshape({2, 2}), f.rstd, w, 6, true, true, true);
      },
      backward);
  expect_error_naming(
      [&] { ops::layer_norm_backward(x, x, f.mean.to(kFloat64), f.rstd, w, 6, true, true, true); },
      backward);
  expect_error_naming(
      [&] { ops::layer_norm_backward(x, x, f.mean, f.rstd, Tensor(), 6, true, true, true); },
      backward);
}

}  // namespace
}  // namespace leangrad::test
