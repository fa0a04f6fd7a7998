// BatchNorm's vectorised CPU launchers (kernels/cpu/batch_norm_vectorized.cpp, what the library
// runs) and its CUDA launchers (kernels/cuda/batch_norm.cu; SKIPPED without a GPU) against the
// reference loops (kernels/cpu/batch_norm_reference.h): the statistics, the output and the three
// gradients, in training and in evaluation, in every dtype, affine or not, on shapes of both of
// the vectorised kernel's layouts (planes of at least 64 values, cut in 2048-value chunks; and
// columns, with their row blocks and 2048-column tiles: Note [Vectorised BatchNorm]), with means
// far from 0; the tolerance is the error bound of float (or double) sums of the lengths
// involved, per value. Also: the same bits at any thread count, 16-bit as float32 of its
// widening, each gradient alone equal to the gradients together, evaluation's statistics from
// the running ones, and the errors of the tensor-level entries.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <leangrad/core/cuda.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/cpu/batch_norm_reference.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>
#include "testing/norm_testing.h"
#include "testing/tensor_testing.h"

namespace leangrad::test {
namespace {

using kernels::BatchNormSizes;

struct Case {
  std::int64_t batch, channels, spatial;
  double offset;  // added to x: a mean this far from 0, in standard deviations
};

// Planes (S >= 64): at the threshold (64, 65), across chunks (2049, 4097, 9000), 16 samples of
// short planes; columns (S < 64): BatchNorm1d's S = 1 with 5, 300 (38 row blocks of 8) and 2500
// samples (the cap: 250 blocks of 10), tails of lanes (S = 7, 63), 2100 columns (two tiles), one
// sample (one value per channel, variance 0) and one channel of two values; means 8, 100 and 1000
// standard deviations out in both layouts.
const std::vector<Case> kCases = {
    {2, 3, 64, 0},    {4, 5, 2049, 0},   {1, 2, 4097, 0}, {16, 4, 100, 8}, {3, 2, 9000, 100},
    {8, 3, 65, 1000}, {5, 7, 1, 0},      {300, 64, 1, 0}, {2500, 8, 1, 0}, {40, 3, 7, 0},
    {33, 700, 3, 0},  {64, 36, 1, 1000}, {16, 5, 63, 8},  {1, 4, 1, 0},    {2, 1, 1, 0},
};

std::string describe(const Case& c) {
  std::ostringstream s;
  s << "(" << c.batch << ", " << c.channels << ", " << c.spatial << "), mean " << c.offset;
  return s.str();
}

BatchNormSizes sizes_of(const Case& c) {
  BatchNormSizes sizes;
  sizes.batch = c.batch;
  sizes.channels = c.channels;
  sizes.spatial = c.spatial;
  return sizes;
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
  const Shape shape = {c.batch, c.channels, c.spatial};
  return {empty(shape, values), empty({c.channels}, stats),  empty({c.channels}, stats),
          empty(shape, values), empty({c.channels}, values), empty({c.channels}, values)};
}

// The forward of `kernel`: training computes the statistics, evaluation takes `given`'s mean and
// rstd. CUDA's on copies of the inputs, its results copied back.
Buffers run(Kernel kernel, DType dtype, const Case& c, bool training, const Tensor& x,
            const Tensor& w, const Tensor& b, double eps, const Buffers* given) {
  const BatchNormSizes sizes = sizes_of(c);
  const Device device = kernel == Kernel::Cuda ? Device::cuda(0) : Device::cpu();
  const Tensor xd = x.to(device), wd = to_device(w, device), bd = to_device(b, device);
  Buffers o = empty_buffers(dtype, c, device);
  if (!training) {
    o.mean = given->mean.to(device).contiguous();
    o.rstd = given->rstd.to(device).contiguous();
  }
  if (kernel == Kernel::Cuda) {
    if (training)
      kernels::cuda::batch_norm_statistics(dtype, sizes, o.mean.data_ptr(), o.rstd.data_ptr(),
                                           xd.data_ptr(), eps);
    kernels::cuda::batch_norm_forward(dtype, sizes, o.y.data_ptr(), xd.data_ptr(),
                                      o.mean.data_ptr(), o.rstd.data_ptr(), data_or_null(wd),
                                      data_or_null(bd));
    return {o.y.cpu(), o.mean.cpu(), o.rstd.cpu(), o.dx.cpu(), o.dw.cpu(), o.db.cpu()};
  }
  const bool reference = kernel == Kernel::Reference;
  if (training) {
    const auto statistics = reference ? kernels::cpu::reference::batch_norm_statistics
                                      : kernels::cpu::batch_norm_statistics;
    statistics(dtype, sizes, o.mean.data_ptr(), o.rstd.data_ptr(), x.data_ptr(), eps);
  }
  const auto forward =
      reference ? kernels::cpu::reference::batch_norm_forward : kernels::cpu::batch_norm_forward;
  forward(dtype, sizes, o.y.data_ptr(), x.data_ptr(), o.mean.data_ptr(), o.rstd.data_ptr(),
          data_or_null(w), data_or_null(b));
  return o;
}

// The backward of `kernel` into o's gradients, from `stats`' mean and rstd.
void run_backward(Kernel kernel, DType dtype, const Case& c, bool training, Buffers& o,
                  const Tensor& x, const Tensor& w, const Tensor& dy, const Buffers& stats) {
  const BatchNormSizes sizes = sizes_of(c);
  if (kernel == Kernel::Cuda) {
    const Device gpu = Device::cuda(0);
    const Tensor xd = x.to(gpu), wd = to_device(w, gpu), dyd = dy.to(gpu);
    const Tensor mean = stats.mean.to(gpu), rstd = stats.rstd.to(gpu);
    Buffers d = empty_buffers(dtype, c, gpu);
    kernels::cuda::batch_norm_backward(
        dtype, sizes, training, o.dx.defined() ? d.dx.data_ptr() : nullptr,
        o.dw.defined() ? d.dw.data_ptr() : nullptr, o.db.defined() ? d.db.data_ptr() : nullptr,
        dyd.data_ptr(), xd.data_ptr(), mean.data_ptr(), rstd.data_ptr(), data_or_null(wd));
    if (o.dx.defined()) o.dx = d.dx.cpu();
    if (o.dw.defined()) o.dw = d.dw.cpu();
    if (o.db.defined()) o.db = d.db.cpu();
    return;
  }
  const auto backward = kernel == Kernel::Reference ? kernels::cpu::reference::batch_norm_backward
                                                    : kernels::cpu::batch_norm_backward;
  backward(dtype, sizes, training, output_or_null(o.dx), output_or_null(o.dw), output_or_null(o.db),
           dy.data_ptr(), x.data_ptr(), stats.mean.data_ptr(), stats.rstd.data_ptr(),
           data_or_null(w));
}

// Forward and backward of the reference and of `fast` (the vectorised CPU kernel, or CUDA's), in
// training (the batch's statistics) or evaluation (the reference's statistics of the same x
// given as the running ones); every value of fast's within the sum of the two kernels' error
// bounds of the reference's. With K = N S values per channel, u the unit roundoff of the
// accumulation (float, or double for float64) and sd a channel's standard deviation (the bounds
// of GroupNorm's and LayerNorm's tests, one channel being one group or row):
//   - each kernel's mean is within (K + 8) u (|mean| + sd) and its variance within
//     (K + 8) u kappa var, kappa = 1 + |mean| / sd (Welford's updates, with or without a
//     reciprocal, or sums in 32 lanes, merged by Chan's formula); with d = (K + 8) u kappa var /
//     (var + eps), rstd within (1 - d)^-1/2 - 1 + 3u relative;
//   - y within |w| (rstd |d mean| + |x - mean| |d rstd|) plus each kernel's roundings of the
//     affine map: 4u (|scale x| + |shift| + |b|) for the fast kernels' scale x + shift (scale =
//     rstd w and shift = b - mean scale rounded first), 4u (|scale (x - mean)| + |b|) for the
//     reference's (x - mean) rstd w + b; then one rounding to T each;
//   - the backward's channel sums sum dy and sum dy (x - mean) of K terms within (K + 10) u of
//     the sum of the terms' sizes (the reference's in double, of sum |dy x| and |mean| sum |dy|,
//     as it subtracts mean sum dy after), so dbias and dweight = rstd sum dy (x - mean) within
//     those, and dx within what they give through dx = rstd w dy + x_coef (x - mean) + c0, plus
//     4u of each term per kernel and one rounding to T each; in evaluation dx = rstd w dy within
//     4u of it per kernel.
void check_case(const Case& c, DType dtype, bool affine, bool training,
                Kernel fast_kernel = Kernel::Vectorised) {
  const std::int64_t N = c.batch, C = c.channels, S = c.spatial;
  const std::int64_t K = N * S;
  const Shape shape = {N, C, S};
  const auto seed = static_cast<std::uint32_t>(N * 100000 + C * 100 + S);
  const Tensor x = random_tensor(shape, c.offset, dtype, seed);
  const Tensor dy = random_tensor(shape, 0.0, dtype, seed + 1);
  const Tensor w = affine ? random_tensor({C}, 1.0, dtype, seed + 2) : Tensor();
  const Tensor b = affine ? random_tensor({C}, 0.0, dtype, seed + 3) : Tensor();
  const double eps = 1e-5;
  const Buffers batch = run(Kernel::Reference, dtype, c, true, x, w, b, eps, nullptr);
  Buffers ref = training ? batch : run(Kernel::Reference, dtype, c, false, x, w, b, eps, &batch);
  Buffers fast = run(fast_kernel, dtype, c, training, x, w, b, eps, &batch);
  run_backward(fast_kernel, dtype, c, training, fast, x, w, dy, ref);
  run_backward(Kernel::Reference, dtype, c, training, ref, x, w, dy, ref);

  const double u = math_unit_roundoff(dtype);
  constexpr double kDoubleU = 0x1p-53;
  const double kd = static_cast<double>(K);
  const double sum_error = (kd + 10) * u;
  const double reference_sum_error = (kd + 8) * kDoubleU;
  const std::vector<double> xv = to_vector(x), dyv = to_vector(dy);
  const std::vector<double> wv = affine ? to_vector(w) : std::vector<double>(C, 1.0);
  const std::vector<double> bv = affine ? to_vector(b) : std::vector<double>(C, 0.0);
  const std::vector<double> mean_f = to_vector(fast.mean), mean_r = to_vector(ref.mean);
  const std::vector<double> rstd_f = to_vector(fast.rstd), rstd_r = to_vector(ref.rstd);
  const std::vector<double> y_f = to_vector(fast.y), y_r = to_vector(ref.y);
  const std::vector<double> dx_f = to_vector(fast.dx), dx_r = to_vector(ref.dx);
  const std::vector<double> dw_f = to_vector(fast.dw), dw_r = to_vector(ref.dw);
  const std::vector<double> db_f = to_vector(fast.db), db_r = to_vector(ref.db);

  for (std::int64_t ch = 0; ch < C; ++ch) {
    SCOPED_TRACE("channel " + std::to_string(ch));
    std::vector<std::int64_t> at;  // the channel's values' indices
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t s = 0; s < S; ++s)
        at.push_back((n * C + ch) * S + s);
    double sum = 0;
    for (std::int64_t i : at)
      sum += xv[i];
    const double exact_mean = sum / kd;
    double m2 = 0;
    for (std::int64_t i : at)
      m2 += (xv[i] - exact_mean) * (xv[i] - exact_mean);
    const double var = m2 / kd;
    const double sd = std::sqrt(var);
    const double d = (kd + 8) * u * (var + std::fabs(exact_mean) * sd) / (var + eps);
    ASSERT_LT(d, 0.5) << "a case whose variance bound says nothing";
    // In evaluation both kernels take the same statistics: no error of their own.
    const double mean_tol = training ? 2 * (kd + 8) * u * (std::fabs(exact_mean) + sd) : 0.0;
    const double rstd_rel_tol = training ? 2 * (1 / std::sqrt(1 - d) - 1 + 3 * u) : 0.0;
    ASSERT_NEAR(mean_f[ch], mean_r[ch], mean_tol);
    ASSERT_NEAR(rstd_f[ch], rstd_r[ch], rstd_rel_tol * rstd_r[ch]);
    const double r = rstd_r[ch];
    const double m = mean_r[ch];
    double a = 0, bc = 0, abs_a = 0, abs_bc = 0, abs_b_uncentred = 0;
    for (std::int64_t i : at) {
      a += dyv[i];
      bc += dyv[i] * (xv[i] - m);
      abs_a += std::fabs(dyv[i]);
      abs_bc += std::fabs(dyv[i] * (xv[i] - m));
      abs_b_uncentred += std::fabs(dyv[i] * xv[i]);
    }
    const double err_a = (sum_error + reference_sum_error) * abs_a;
    const double err_bc = sum_error * abs_bc +
                          reference_sum_error * (abs_b_uncentred + std::fabs(m) * abs_a) +
                          kDoubleU * std::fabs(m) * abs_a;
    ASSERT_NEAR(db_f[ch], db_r[ch], err_a + 2 * rounding(dtype, db_r[ch])) << "dbias";
    ASSERT_NEAR(dw_f[ch], dw_r[ch], r * err_bc + 4 * u * r * abs_bc + 2 * rounding(dtype, dw_r[ch]))
        << "dweight";
    const double wc = wv[ch];
    const double scale = r * wc;
    const double shift = bv[ch] - m * scale;
    const double x_coef = training ? -r * r * r / kd * wc * bc : 0.0;
    const double constant = training ? -r / kd * wc * a : 0.0;
    const double d_x_coef = training ? r * r * r / kd * std::fabs(wc) * err_bc : 0.0;
    const double d_constant = training ? r / kd * std::fabs(wc) * err_a : 0.0;
    for (std::int64_t i : at) {
      const double y_tol =
          std::fabs(wc) * r * (mean_tol + std::fabs(xv[i] - exact_mean) * rstd_rel_tol) +
          4 * u *
              (std::fabs(scale * xv[i]) + std::fabs(shift) + std::fabs(scale * (xv[i] - m)) +
               2 * std::fabs(bv[ch])) +
          2 * rounding(dtype, y_r[i]);
      ASSERT_NEAR(y_f[i], y_r[i], y_tol) << "y[" << i << "]";
      const double dx_tol =
          std::fabs(xv[i] - m) * d_x_coef + d_constant +
          4 * u *
              (std::fabs(scale * dyv[i]) + std::fabs(x_coef * (xv[i] - m)) + std::fabs(constant)) +
          4 * kDoubleU *
              (std::fabs(scale * dyv[i]) + std::fabs(x_coef) * (std::fabs(xv[i]) + std::fabs(m)) +
               std::fabs(constant)) +
          2 * rounding(dtype, dx_r[i]);
      ASSERT_NEAR(dx_f[i], dx_r[i], dx_tol) << "dx[" << i << "]";
    }
  }
}

void check_all_cases(Kernel kernel) {
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16})
    for (const Case& c : kCases)
      for (bool affine : {true, false})
        for (bool training : {true, false}) {
          SCOPED_TRACE(describe(c) + ", " + dtype_name(dtype) + (affine ? ", affine" : "") +
                       (training ? ", training" : ", evaluation"));
          check_case(c, dtype, affine, training, kernel);
          if (::testing::Test::HasFatalFailure()) return;
        }
}

TEST(BatchNormVectorized, MatchesTheReferenceInEveryDtype) {
  check_all_cases(Kernel::Vectorised);
}

TEST(BatchNormCuda, MatchesTheReferenceInEveryDtype) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  check_all_cases(Kernel::Cuda);
}

// Every output of forward and backward (training), flattened.
std::vector<double> all_results(const Tensor& x, const Tensor& dy, const Tensor& w,
                                const Tensor& b) {
  const ops::GroupNormOutput f = ops::batch_norm(x, w, b, Tensor(), Tensor(), true, 1e-5);
  const ops::GroupNormGrads g =
      ops::batch_norm_backward(dy, x, f.mean, f.rstd, w, true, true, true, true);
  return values_of({&f.output, &f.mean, &f.rstd, &g.grad_input, &g.grad_weight, &g.grad_bias});
}

// The pieces are cut by the sizes alone and combined in a fixed order, so 1 to 4 threads give the
// same bits, in float32 and the 16-bit dtypes (at most 4 threads: ThreadCount,
// tests/testing/thread_count.h, says why): planes of 16384 values (8 chunks each) and of 100;
// columns of (2500, 8) (250 blocks) and (64, 3000) (two tiles).
TEST(BatchNormVectorized, SameBitsOnAnyThreadCount) {
  for (DType dtype : {kFloat32, kFloat16, kBFloat16})
    for (const Case& c :
         {Case{4, 3, 16384, 0}, Case{16, 8, 100, 0}, Case{2500, 8, 1, 0}, Case{64, 1000, 3, 0}}) {
      SCOPED_TRACE(describe(c) + ", " + dtype_name(dtype));
      const Shape shape = {c.batch, c.channels, c.spatial};
      const Tensor x = random_tensor(shape, 0.5, dtype, 1);
      const Tensor dy = random_tensor(shape, 0.0, dtype, 2);
      const Tensor w = random_tensor({c.channels}, 1.0, dtype, 3);
      const Tensor b = random_tensor({c.channels}, 0.0, dtype, 4);
      expect_same_bits_on_1_to_4_threads([&] { return all_results(x, dy, w, b); });
      if (HasFatalFailure()) return;
    }
}

// float16 and bfloat16 BatchNorm is float32 BatchNorm of the widened input, rounded once: output,
// mean, rstd and the three gradients, bit for bit (Note [Vectorised BatchNorm]), on every shape
// of kCases, in training and evaluation.
TEST(BatchNormVectorized, SixteenBitIsFloat32OfTheWidenedInput) {
  for (DType dtype : {kFloat16, kBFloat16})
    for (const Case& c : kCases)
      for (bool training : {true, false}) {
        SCOPED_TRACE(describe(c) + ", " + dtype_name(dtype) +
                     (training ? ", training" : ", evaluation"));
        const Shape shape = {c.batch, c.channels, c.spatial};
        const Tensor x = random_tensor(shape, c.offset, dtype, 21);
        const Tensor dy = random_tensor(shape, 0.0, dtype, 22);
        const Tensor w = random_tensor({c.channels}, 1.0, dtype, 23);
        const Tensor b = random_tensor({c.channels}, 0.0, dtype, 24);
        const Tensor running_mean = random_tensor({c.channels}, c.offset, kFloat32, 25);
        const Tensor running_var = random_tensor({c.channels}, 3.0, kFloat32, 26).abs();
        auto wide = [](const Tensor& t) { return t.to(kFloat32); };
        const ops::GroupNormOutput f =
            ops::batch_norm(x, w, b, running_mean, running_var, training, 1e-5);
        const ops::GroupNormOutput f32 =
            ops::batch_norm(wide(x), wide(w), wide(b), running_mean, running_var, training, 1e-5);
        const ops::GroupNormGrads g =
            ops::batch_norm_backward(dy, x, f.mean, f.rstd, w, training, true, true, true);
        const ops::GroupNormGrads g32 = ops::batch_norm_backward(
            wide(dy), wide(x), f32.mean, f32.rstd, wide(w), training, true, true, true);
        ASSERT_EQ(f.output.dtype(), dtype);
        EXPECT_EQ(to_vector(f.output), to_vector(f32.output.to(dtype)));
        EXPECT_EQ(to_vector(f.mean), to_vector(f32.mean));
        EXPECT_EQ(to_vector(f.rstd), to_vector(f32.rstd));
        EXPECT_EQ(to_vector(g.grad_input), to_vector(g32.grad_input.to(dtype)));
        EXPECT_EQ(to_vector(g.grad_weight), to_vector(g32.grad_weight.to(dtype)));
        EXPECT_EQ(to_vector(g.grad_bias), to_vector(g32.grad_bias.to(dtype)));
        if (HasFailure()) return;
      }
}

// Each gradient asked for alone is the bits of the three asked for together, in both layouts and
// both modes: the kernels skip the work of the others without changing their own.
TEST(BatchNormVectorized, EachGradientAloneEqualsAllTogether) {
  for (const Shape& shape : {Shape{6, 5, 80}, Shape{40, 96}})
    for (bool training : {true, false}) {
      SCOPED_TRACE(std::string(training ? "training" : "evaluation"));
      const Tensor x = random_tensor(shape, 0.5, kFloat32, 31);
      const Tensor dy = random_tensor(shape, 0.0, kFloat32, 32);
      const Tensor w = random_tensor({shape[1]}, 1.0, kFloat32, 33);
      const Tensor running = random_tensor({shape[1]}, 2.0, kFloat32, 34).abs();
      const ops::GroupNormOutput f =
          ops::batch_norm(x, w, Tensor(), running, running, training, 1e-5);
      auto grads = [&](bool dx, bool dw, bool db) {
        return ops::batch_norm_backward(dy, x, f.mean, f.rstd, w, training, dx, dw, db);
      };
      const ops::GroupNormGrads all = grads(true, true, true);
      const ops::GroupNormGrads dx = grads(true, false, false);
      EXPECT_FALSE(dx.grad_weight.defined());
      EXPECT_EQ(to_vector(dx.grad_input), to_vector(all.grad_input));
      EXPECT_EQ(to_vector(grads(false, true, false).grad_weight), to_vector(all.grad_weight));
      EXPECT_EQ(to_vector(grads(false, false, true).grad_bias), to_vector(all.grad_bias));
    }
}

// Evaluation normalizes with mean = running_mean and rstd = 1 / sqrt(running_var + eps), in the
// accumulation dtype whatever the running statistics' dtype (float64 ones beside float32 input
// here), and returns them for backward: the output against the formula in double, within a few
// roundings of float.
TEST(BatchNormOps, EvaluationUsesTheRunningStatistics) {
  const Tensor x = random_tensor({3, 4, 5}, 0.0, kFloat32, 51);
  const Tensor w = random_tensor({4}, 1.0, kFloat32, 52);
  const Tensor b = random_tensor({4}, 0.0, kFloat32, 53);
  const Tensor running_mean = random_tensor({4}, 0.0, kFloat64, 54);
  const Tensor running_var = random_tensor({4}, 2.0, kFloat64, 55).abs();
  const double eps = 1e-3;
  const ops::GroupNormOutput f = ops::batch_norm(x, w, b, running_mean, running_var, false, eps);
  ASSERT_EQ(f.mean.dtype(), kFloat32);
  const std::vector<double> xv = to_vector(x), wv = to_vector(w), bv = to_vector(b);
  const std::vector<double> mv = to_vector(running_mean), vv = to_vector(running_var);
  const std::vector<double> y = to_vector(f.output), mean = to_vector(f.mean),
                            rstd = to_vector(f.rstd);
  for (std::int64_t c = 0; c < 4; ++c) {
    const double r = 1 / std::sqrt(vv[c] + eps);
    EXPECT_NEAR(mean[c], mv[c], rounding(kFloat32, mv[c]));
    EXPECT_NEAR(rstd[c], r, 4 * rounding(kFloat32, r));
    for (std::int64_t n = 0; n < 3; ++n)
      for (std::int64_t s = 0; s < 5; ++s) {
        const std::int64_t i = (n * 4 + c) * 5 + s;
        const double want = (xv[i] - mv[c]) * r * wv[c] + bv[c];
        EXPECT_NEAR(
            y[i], want,
            16 * 0x1p-24 *
                (std::fabs(xv[i] * r * wv[c]) + std::fabs(mv[c] * r * wv[c]) + std::fabs(bv[c])));
      }
  }
}

// The tensor-level entries refuse what their launchers cannot take, naming the op: an input of
// fewer than 2 dims or of an integral dtype, parameters of another size or dtype, missing or
// misshapen running statistics in evaluation, a gradient of another shape, statistics that are
// not the forward's.
TEST(BatchNormOps, RefusesInputsTheKernelsCannotTake) {
  const Tensor x = random_tensor({4, 6}, 0.0, kFloat32, 41);
  const Tensor w = random_tensor({6}, 1.0, kFloat32, 42);
  const Tensor running = random_tensor({6}, 1.0, kFloat32, 43).abs();
  const ops::GroupNormOutput f = ops::batch_norm(x, w, Tensor(), Tensor(), Tensor(), true, 1e-5);
  const char* forward = "batch_norm";
  expect_error_naming([&] { ops::batch_norm(x.reshape({24}), {}, {}, {}, {}, true, 1e-5); },
                      forward);
  expect_error_naming([&] { ops::batch_norm(x.to(kInt64), {}, {}, {}, {}, true, 1e-5); }, forward);
  expect_error_naming(
      [&] {
        ops::batch_norm(x, w.reshape({2, 3}), {}, {}, {}, true, 1e-5);
      },
      forward);
  expect_error_naming([&] { ops::batch_norm(x, w.to(kFloat64), {}, {}, {}, true, 1e-5); }, forward);
  expect_error_naming([&] { ops::batch_norm(x, {}, {}, {}, {}, false, 1e-5); }, forward);
  expect_error_naming([&] { ops::batch_norm(x, {}, {}, running, Tensor(), false, 1e-5); }, forward);
  expect_error_naming(
      [&] {
        ops::batch_norm(x, {}, {}, running, running.reshape({2, 3}), false, 1e-5);
      },
      forward);
  expect_error_naming([&] { ops::batch_norm(x, {}, {}, running.to(kInt64), running, false, 1e-5); },
                      forward);
  const char* backward = "batch_norm_backward";
  expect_error_naming(
      [&] {
        ops::batch_norm_backward(x.reshape({6, 4}), x, f.mean, f.rstd, w, true, true, true, true);
      },
      backward);
  expect_error_naming(
      [&] {
        ops::batch_norm_backward(x, x, f.mean.reshape({2, 3}), f.rstd, w, true, true, true, true);
      },
      backward);
  expect_error_naming(
      [&] {
        ops::batch_norm_backward(x, x, f.mean.to(kFloat64), f.rstd, w, true, true, true, true);
      },
      backward);
}

}  // namespace
}  // namespace leangrad::test
