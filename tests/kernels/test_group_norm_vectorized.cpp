// GroupNorm's vectorised CPU launchers (kernels/cpu/group_norm_vectorized.cpp, what the library
// runs) and its CUDA launchers (kernels/cuda/group_norm.cu; SKIPPED without a GPU) against the
// reference loops (kernels/cpu/group_norm_reference.h): mean, rstd, output and the three gradients
// in every dtype, affine or not, on shapes around the chunk and vector sizes (one element per
// channel, one group, channels that straddle chunks, few rows and many, and on CUDA each of its
// paths), with means far from 0; the tolerance is the error bound of float (or double) sums of
// the lengths involved, per element. Also: the same bits at any thread count (rows split over
// threads, or threads within rows), non-contiguous inputs, and float16 as float32 of its widening.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <leangrad/core/cuda.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/cpu/group_norm_reference.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>
#include "testing/norm_testing.h"
#include "testing/tensor_testing.h"

namespace leangrad::test {
namespace {

using kernels::GroupNormSizes;

struct Case {
  std::int64_t batch, channels, spatial, groups;
  double offset;  // added to x: a mean this far from 0, in standard deviations
};

// (N, C, HxW, G): tails of the 32 partial sums, one value per channel, a row of one channel,
// channels that straddle the 2048-element chunks, rows longer than a chunk, few rows (threads
// within rows) and many (threads over rows). The last three, with means far from 0, reach CUDA's
// three backward paths (Note [GroupNorm strategies]): 256 groups of 36 values (one pass: more
// groups than an H100 has SMs), channels of 33 values (several rows per block), both 1000
// standard deviations out, and channels of 9000 (rows longer than 1024, cut into two segments
// of at least 4096 values), 100 out: at 1000 the worst-case bound on the variance of 18000
// float32 values would exceed the variance itself.
const std::vector<Case> kCases = {
    {2, 6, 7, 3, 0},      {3, 4, 1, 2, 0},     {1, 1, 5000, 1, 0},   {2, 8, 2049, 4, 0},
    {1, 3, 4097, 1, 0},   {16, 32, 33, 8, 0},  {4, 64, 49, 32, 0},   {2, 4, 300, 2, 8},
    {16, 32, 33, 8, 30},  {1, 2, 70001, 1, 0}, {64, 16, 9, 4, 1000}, {8, 16, 33, 4, 1000},
    {1, 2, 9000, 1, 100},
};

std::string describe(const Case& c) {
  std::ostringstream s;
  s << "(" << c.batch << ", " << c.channels << ", " << c.spatial << ") G = " << c.groups
    << ", mean " << c.offset;
  return s.str();
}

// The exact statistics of each group of x (as stored in T), in double, two passes.
struct GroupStats {
  std::vector<double> mean, var;
};
GroupStats exact_stats(const std::vector<double>& x, std::int64_t rows, std::int64_t row_size) {
  GroupStats s;
  for (std::int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (std::int64_t i = 0; i < row_size; ++i)
      sum += x[r * row_size + i];
    const double mean = sum / static_cast<double>(row_size);
    double m2 = 0;
    for (std::int64_t i = 0; i < row_size; ++i)
      m2 += (x[r * row_size + i] - mean) * (x[r * row_size + i] - mean);
    s.mean.push_back(mean);
    s.var.push_back(m2 / static_cast<double>(row_size));
  }
  return s;
}

struct Buffers {
  Tensor y, mean, rstd;
  Tensor dx, dw, db;
};

enum class Kernel { Reference, Vectorised, Cuda };

// The buffers of one kernel's results, on `device`.
Buffers empty_buffers(DType dtype, const GroupNormSizes& sizes, const Shape& shape,
                      const Device& device) {
  const DType acc = dtype == kFloat64 ? kFloat64 : kFloat32;
  const std::int64_t rows = sizes.batch * sizes.groups;
  const TensorOptions values = TensorOptions(dtype).device(device);
  const TensorOptions stats = TensorOptions(acc).device(device);
  return {empty(shape, values),
          empty({rows}, stats),
          empty({rows}, stats),
          empty(shape, values),
          empty({sizes.channels}, values),
          empty({sizes.channels}, values)};
}

Buffers to_cpu(const Buffers& b) {
  return {b.y.cpu(), b.mean.cpu(), b.rstd.cpu(), b.dx.cpu(), b.dw.cpu(), b.db.cpu()};
}

// The forward of `kernel`; CUDA's on copies of the inputs, its results copied back.
Buffers run(Kernel kernel, DType dtype, const GroupNormSizes& sizes, const Tensor& x,
            const Tensor& w, const Tensor& b, double eps) {
  if (kernel == Kernel::Cuda) {
    const Device gpu = Device::cuda(0);
    const Tensor xd = x.to(gpu), wd = to_device(w, gpu), bd = to_device(b, gpu);
    Buffers o = empty_buffers(dtype, sizes, x.shape(), gpu);
    kernels::cuda::group_norm_forward(dtype, sizes, o.y.data_ptr(), o.mean.data_ptr(),
                                      o.rstd.data_ptr(), xd.data_ptr(), data_or_null(wd),
                                      data_or_null(bd), eps);
    return to_cpu(o);
  }
  Buffers o = empty_buffers(dtype, sizes, x.shape(), Device::cpu());
  const auto forward = kernel == Kernel::Reference ? kernels::cpu::reference::group_norm_forward
                                                   : kernels::cpu::group_norm_forward;
  forward(dtype, sizes, o.y.data_ptr(), o.mean.data_ptr(), o.rstd.data_ptr(), x.data_ptr(),
          data_or_null(w), data_or_null(b), eps);
  return o;
}

// The backward of `kernel` into o's gradients, from the same mean and rstd (the reference's).
void run_backward(Kernel kernel, DType dtype, const GroupNormSizes& sizes, Buffers& o,
                  const Tensor& x, const Tensor& w, const Tensor& dy, const Buffers& stats) {
  if (kernel == Kernel::Cuda) {
    const Device gpu = Device::cuda(0);
    const Tensor xd = x.to(gpu), wd = to_device(w, gpu), dyd = dy.to(gpu);
    const Tensor mean = stats.mean.to(gpu), rstd = stats.rstd.to(gpu);
    Buffers d = empty_buffers(dtype, sizes, x.shape(), gpu);
    kernels::cuda::group_norm_backward(dtype, sizes, d.dx.data_ptr(), d.dw.data_ptr(),
                                       d.db.data_ptr(), dyd.data_ptr(), xd.data_ptr(),
                                       mean.data_ptr(), rstd.data_ptr(), data_or_null(wd));
    o.dx = d.dx.cpu();
    o.dw = d.dw.cpu();
    o.db = d.db.cpu();
    return;
  }
  const auto backward = kernel == Kernel::Reference ? kernels::cpu::reference::group_norm_backward
                                                    : kernels::cpu::group_norm_backward;
  backward(dtype, sizes, o.dx.data_ptr(), o.dw.data_ptr(), o.db.data_ptr(), dy.data_ptr(),
           x.data_ptr(), stats.mean.data_ptr(), stats.rstd.data_ptr(), data_or_null(w));
}

// Forward and backward of the reference and of `fast` (the vectorised CPU kernel, or CUDA's);
// every value of fast's within the sum of the two kernels' error bounds of the reference's. With K
// = D * HxW terms per group, u the unit roundoff of the accumulation (float, or double for float64)
// and sd the standard deviation:
//   - each kernel's mean is within (K + 8) u (|mean| + sd) and its variance within
//     (K + 8) u kappa var, kappa = 1 + |mean| / sd: the forward error of Welford's updates and of
//     sums merged by Chan's formula (Chan, Golub & LeVeque 1983), where the 8 covers the
//     vectorised kernel's 32 partial sums (5 levels of a tree) and its divisions (CUDA's merge
//     trees are deeper, but no path through them adds more than K terms); with var + eps within
//     a relative d = (K + 8) u kappa var / (var + eps) (finite for a group of equal values, sd =
//     0, as bfloat16 makes of values near 1000), rstd = (var + eps)^-1/2 is within
//     (1 - d)^-1/2 - 1 + 3u relative (d < 1);
//   - y within |w| (rstd |d mean| + |x - mean| |d rstd|) + 4u (|scale x| + |shift|) per kernel
//     (the affine map's roundings), then one rounding to T each;
//   - the backward's per-channel sums of HxW terms within (HxW + 8) u times the sum of the
//     terms' sizes: the fast kernels sum dy (x - mean) in the accumulation type, the
//     reference dy x in double (2^-53), then subtracts mean * sum dy; dx, dweight and dbias are
//     within what those errors give through the formulas of Note [GroupNorm layout and math],
//     plus 4u of each term of dx per kernel and one rounding to T each.
// These are worst-case bounds, so loose for long rows; the short rows of kCases are where a
// wrong or missing element would show.
void check_case(const Case& c, DType dtype, bool affine, Kernel fast_kernel = Kernel::Vectorised) {
  const GroupNormSizes sizes{c.batch, c.channels, c.spatial, c.groups};
  const std::int64_t rows = c.batch * c.groups;
  const std::int64_t row_size = sizes.group_size();
  const std::int64_t per_group = c.channels / c.groups;
  const std::int64_t hw = c.spatial;
  const Shape shape = {c.batch, c.channels, c.spatial};
  const std::uint32_t seed = static_cast<std::uint32_t>(c.batch * 1000 + c.channels + c.spatial);
  const Tensor x = random_tensor(shape, c.offset, dtype, seed);
  const Tensor dy = random_tensor(shape, 0.0, dtype, seed + 1);
  const Tensor w = affine ? random_tensor({c.channels}, 1.0, dtype, seed + 2) : Tensor();
  const Tensor b = affine ? random_tensor({c.channels}, 0.0, dtype, seed + 3) : Tensor();
  const double eps = 1e-5;
  Buffers fast = run(fast_kernel, dtype, sizes, x, w, b, eps);
  Buffers ref = run(Kernel::Reference, dtype, sizes, x, w, b, eps);
  run_backward(fast_kernel, dtype, sizes, fast, x, w, dy, ref);
  run_backward(Kernel::Reference, dtype, sizes, ref, x, w, dy, ref);

  const double u = math_unit_roundoff(dtype);  // of the accumulation type
  constexpr double kDoubleU = 0x1p-53;         // the reference backward's sums
  const double k = static_cast<double>(row_size) + 8;
  const double sum_error = (static_cast<double>(hw) + 8) * u;
  const double reference_sum_error = (static_cast<double>(hw) + 8) * kDoubleU;
  const std::vector<double> xv = to_vector(x), dyv = to_vector(dy);
  const std::vector<double> wv = affine ? to_vector(w) : std::vector<double>(c.channels, 1.0);
  const std::vector<double> bv = affine ? to_vector(b) : std::vector<double>(c.channels, 0.0);
  const GroupStats exact = exact_stats(xv, rows, row_size);
  const std::vector<double> mean_f = to_vector(fast.mean), mean_r = to_vector(ref.mean);
  const std::vector<double> rstd_f = to_vector(fast.rstd), rstd_r = to_vector(ref.rstd);
  const std::vector<double> y_f = to_vector(fast.y), y_r = to_vector(ref.y);
  const std::vector<double> dx_f = to_vector(fast.dx), dx_r = to_vector(ref.dx);
  const std::vector<double> dw_f = to_vector(fast.dw), dw_r = to_vector(ref.dw);
  const std::vector<double> db_f = to_vector(fast.db), db_r = to_vector(ref.db);

  // Per (n, c): the channel sums' errors, both kernels: of sum dy, and of the centred sum
  // sum dy (x - mean) (the reference's: of sum dy x, and mean times that of sum dy).
  std::vector<double> err_dy(c.batch * c.channels), err_centred(c.batch * c.channels);
  for (std::int64_t nc = 0; nc < c.batch * c.channels; ++nc) {
    const double m = mean_r[nc / per_group];
    double abs_dy = 0, abs_centred = 0, abs_dy_x = 0;
    for (std::int64_t i = nc * hw; i < (nc + 1) * hw; ++i) {
      abs_dy += std::fabs(dyv[i]);
      abs_centred += std::fabs(dyv[i] * (xv[i] - m));
      abs_dy_x += std::fabs(dyv[i] * xv[i]);
    }
    err_dy[nc] = (sum_error + reference_sum_error) * abs_dy;
    err_centred[nc] = sum_error * abs_centred +
                      reference_sum_error * (abs_dy_x + std::fabs(m) * abs_dy) +
                      kDoubleU * std::fabs(m) * abs_dy;
  }

  for (std::int64_t row = 0; row < rows; ++row) {
    SCOPED_TRACE("group " + std::to_string(row));
    const double sd = std::sqrt(exact.var[row]);
    // var + eps's relative error bound: kappa var = var + |mean| sd, relative to var + eps.
    const double d =
        k * u * (exact.var[row] + std::fabs(exact.mean[row]) * sd) / (exact.var[row] + eps);
    ASSERT_LT(d, 0.5) << "a case whose variance bound says nothing";
    const double mean_tol = 2 * k * u * (std::fabs(exact.mean[row]) + sd);
    const double rstd_rel_tol = 2 * (1 / std::sqrt(1 - d) - 1 + 3 * u);
    ASSERT_NEAR(mean_f[row], mean_r[row], mean_tol);
    ASSERT_NEAR(rstd_f[row], rstd_r[row], rstd_rel_tol * rstd_r[row]);
    const double r = rstd_r[row];
    const double m = mean_r[row];
    const std::int64_t n = row / c.groups;
    const std::int64_t c0 = (row % c.groups) * per_group;
    // dx = r w dy + x_coef (x - mean) + constant, x_coef = -r^3 / K0 sum_c w_c S2_c,
    // constant = -r / K0 sum_c w_c S1_c (K0 = D * HxW), and their errors.
    const double k0 = static_cast<double>(row_size);
    double x_coef = 0, constant = 0, d_x_coef = 0, d_constant = 0;
    for (std::int64_t ch = c0; ch < c0 + per_group; ++ch) {
      const std::int64_t nc = n * c.channels + ch;
      double s1 = 0, s2 = 0;
      for (std::int64_t i = nc * hw; i < (nc + 1) * hw; ++i) {
        s1 += dyv[i];
        s2 += dyv[i] * (xv[i] - m);
      }
      x_coef -= r * r * r / k0 * wv[ch] * s2;
      constant -= r / k0 * wv[ch] * s1;
      d_x_coef += r * r * r / k0 * std::fabs(wv[ch]) * err_centred[nc];
      d_constant += r / k0 * std::fabs(wv[ch]) * err_dy[nc];
    }
    for (std::int64_t i = row * row_size; i < (row + 1) * row_size; ++i) {
      const std::int64_t ch = c0 + (i - row * row_size) / hw;
      const double scale = r * wv[ch];
      const double y_tol =
          std::fabs(wv[ch]) * r * (mean_tol + std::fabs(xv[i] - exact.mean[row]) * rstd_rel_tol) +
          8 * u * (std::fabs(scale * xv[i]) + std::fabs(bv[ch] - m * scale)) +
          2 * rounding(dtype, y_r[i]);
      ASSERT_NEAR(y_f[i], y_r[i], y_tol) << "y[" << i << "]";
      // The reference adds x_coef x and -x_coef mean - r a / K0 instead of x_coef (x - mean).
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
  for (std::int64_t ch = 0; ch < c.channels; ++ch) {
    double dw_tol = 0, db_tol = 0;
    for (std::int64_t n = 0; n < c.batch; ++n) {
      const std::int64_t nc = n * c.channels + ch;
      dw_tol += err_centred[nc] * rstd_r[n * c.groups + ch / per_group];
      db_tol += err_dy[nc];
    }
    ASSERT_NEAR(dw_f[ch], dw_r[ch], dw_tol + 2 * rounding(dtype, dw_r[ch]))
        << "dweight[" << ch << "]";
    ASSERT_NEAR(db_f[ch], db_r[ch], db_tol + 2 * rounding(dtype, db_r[ch]))
        << "dbias[" << ch << "]";
  }
}

TEST(GroupNormVectorized, MatchesTheReferenceInEveryDtype) {
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16})
    for (const Case& c : kCases)
      for (bool affine : {true, false}) {
        SCOPED_TRACE(describe(c) + ", " + dtype_name(dtype) + (affine ? ", affine" : ""));
        check_case(c, dtype, affine);
        if (HasFatalFailure()) return;
      }
}

// CUDA's kernels within the same bounds: the backward sums dy (x - mean) there too (Note
// [GroupNorm layout and math]); summed as dy x and corrected by mean * sum dy afterwards, the
// cases with a mean 1000 standard deviations from 0 lose about ten bits to cancellation.
TEST(GroupNormCuda, MatchesTheReferenceInEveryDtype) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16})
    for (const Case& c : kCases)
      for (bool affine : {true, false}) {
        SCOPED_TRACE(describe(c) + ", " + dtype_name(dtype) + (affine ? ", affine" : ""));
        check_case(c, dtype, affine, Kernel::Cuda);
        if (HasFatalFailure()) return;
      }
}

// The weight and bias gradients of a batch of more than 4M samples: their reduction has one block
// per (32 channels, 64 samples), and with the chunks of 64 on gridDim.y a batch above
// 65535 x 64 = 4194240 could not launch. (N, 2) = (4194241, 2), G = 1, x = (-1, +1) per sample:
// mean 0 and rstd 1 (given, as eps = 0 would), dy = 1, so dbias = N and dweight = (-N, +N)
// exactly in float32 (every partial sum an integer below 2^24). 34 MB per tensor.
TEST(GroupNormCuda, WeightAndBiasGradientsOfMoreThan4MSamples) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  constexpr std::int64_t kBatch = 65535 * 64 + 1;
  const TensorOptions options = TensorOptions(kFloat32).device(Device::cuda());
  const Tensor sign = tensor(std::vector<float>{-1.0f, 1.0f}, {1, 2}).to(Device::cuda());
  const Tensor x = sign.expand({kBatch, 2}).contiguous();
  const Tensor dy = ones({kBatch, 2}, options);
  const Tensor mean = zeros({kBatch, 1}, options);
  const Tensor rstd = ones({kBatch, 1}, options);
  const Tensor w = ones({2}, options);
  const ops::GroupNormGrads g =
      ops::group_norm_backward(dy, x, mean, rstd, w, 1, /*need_input=*/false,
                               /*need_weight=*/true, /*need_bias=*/true);
  const double n = static_cast<double>(kBatch);
  EXPECT_EQ(to_vector(g.grad_bias.cpu()), (std::vector<double>{n, n}));
  EXPECT_EQ(to_vector(g.grad_weight.cpu()), (std::vector<double>{-n, n}));
}

// Two threads run GroupNorm's one-pass kernels with different shared memory sizes at once (48 and
// 4 KiB per group forward, 96 and 8 KiB backward, one kernel each way): every launch must find the
// limit of Note [One-pass shared memory limit] at least its own size, whatever the other thread
// set meanwhile (before, each call set the limit to its own size, so a smaller call between
// another's setting and its launch failed that launch), and give the bits it gives alone. 264
// groups: the one-pass path on GPUs of up to 264 SMs. A race: before the fix it could fail only
// sometimes, so a pass is evidence, not proof.
TEST(GroupNormCuda, OnePassKernelsOfTwoSizesFromTwoThreads) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  struct Problem {
    Tensor x, dy, w;
    std::vector<Tensor> alone, threaded;  // y, dx, dweight
  };
  const auto run_once = [](const Problem& p) {
    const ops::GroupNormOutput f = ops::group_norm(p.x, 1, p.w, Tensor(), 1e-5);
    const ops::GroupNormGrads g =
        ops::group_norm_backward(p.dy, p.x, f.mean, f.rstd, p.w, 1, true, true, false);
    return std::vector<Tensor>{f.output, g.grad_input, g.grad_weight};
  };
  std::vector<Problem> problems;
  for (const Shape& shape : {Shape{264, 48, 16, 16}, Shape{264, 16, 8, 8}}) {
    Problem p;
    p.x = random_tensor(shape, 0.5, kFloat32, 21).to(Device::cuda());
    p.dy = random_tensor(shape, 0.0, kFloat32, 22).to(Device::cuda());
    p.w = random_tensor({shape[1]}, 1.0, kFloat32, 23).to(Device::cuda());
    p.alone = run_once(p);
    problems.push_back(p);
  }
  std::vector<std::string> failures(problems.size());
  std::vector<std::thread> threads;
  for (std::size_t k = 0; k < problems.size(); ++k) {
    threads.emplace_back([&, k] {
      Problem& p = problems[k];
      try {
        for (int i = 0; i < 200; ++i)
          p.threaded = run_once(p);
        cuda::synchronize();
      } catch (const std::exception& e) {
        failures[k] = e.what();
      }
    });
  }
  for (std::thread& t : threads)
    t.join();
  for (std::size_t k = 0; k < problems.size(); ++k) {
    ASSERT_EQ(failures[k], "") << "thread " << k;
    for (std::size_t r = 0; r < problems[k].alone.size(); ++r)
      EXPECT_EQ(to_vector(problems[k].threaded[r]), to_vector(problems[k].alone[r]))
          << "thread " << k << ", result " << r;
  }
}

// Threads over rows (rows >= 8 per thread) or within rows give the same bits: (4, 32, 33) G = 4
// has 16 rows, split by rows at 1 and 2 threads and within rows at 3 and 4, so the two paths meet
// on one input; (1, 2, 70001) G = 1 is one row of 34 chunks. At most 4 threads: ThreadCount
// (tests/testing/thread_count.h) says why.
TEST(GroupNormVectorized, SameBitsOnAnyThreadCount) {
  for (const Case& c : {Case{4, 32, 33, 4, 0}, Case{2, 8, 2049, 1, 0}, Case{1, 2, 70001, 1, 0}}) {
    SCOPED_TRACE(describe(c));
    const Shape shape = {c.batch, c.channels, c.spatial};
    const Tensor x = random_tensor(shape, 0.5, kFloat32, 1);
    const Tensor dy = random_tensor(shape, 0.0, kFloat32, 2);
    const Tensor w = random_tensor({c.channels}, 1.0, kFloat32, 3);
    const Tensor b = random_tensor({c.channels}, 0.0, kFloat32, 4);
    expect_same_bits_on_1_to_4_threads([&] {
      const ops::GroupNormOutput f = ops::group_norm(x, c.groups, w, b, 1e-5);
      const ops::GroupNormGrads g =
          ops::group_norm_backward(dy, x, f.mean, f.rstd, w, c.groups, true, true, true);
      return values_of({&f.output, &f.mean, &f.rstd, &g.grad_input, &g.grad_weight, &g.grad_bias});
    });
    if (HasFatalFailure()) return;
  }
}

// float16 GroupNorm is float32 GroupNorm of the float16 input widened, rounded once to float16:
// output, mean, rstd and the three gradients, bit for bit (Note [float16 GroupNorm in float] in
// kernels/cpu/group_norm_vectorized.cpp), on every shape of kCases, so on chunk and piece tails
// and on both threading paths.
TEST(GroupNormVectorized, Float16IsFloat32OfTheWidenedInput) {
  for (const Case& c : kCases)
    for (bool affine : {true, false}) {
      SCOPED_TRACE(describe(c) + (affine ? ", affine" : ""));
      const Shape shape = {c.batch, c.channels, c.spatial};
      const Tensor x = random_tensor(shape, c.offset, kFloat16, 21);
      const Tensor dy = random_tensor(shape, 0.0, kFloat16, 22);
      const Tensor w = affine ? random_tensor({c.channels}, 1.0, kFloat16, 23) : Tensor();
      const Tensor b = affine ? random_tensor({c.channels}, 0.0, kFloat16, 24) : Tensor();
      auto wide = [](const Tensor& t) { return t.defined() ? t.to(kFloat32) : Tensor(); };
      const ops::GroupNormOutput f = ops::group_norm(x, c.groups, w, b, 1e-5);
      const ops::GroupNormOutput f32 = ops::group_norm(wide(x), c.groups, wide(w), wide(b), 1e-5);
      const ops::GroupNormGrads g =
          ops::group_norm_backward(dy, x, f.mean, f.rstd, w, c.groups, true, affine, affine);
      const ops::GroupNormGrads g32 = ops::group_norm_backward(
          wide(dy), wide(x), f32.mean, f32.rstd, wide(w), c.groups, true, affine, affine);
      ASSERT_EQ(f.output.dtype(), kFloat16);
      EXPECT_EQ(to_vector(f.output), to_vector(f32.output.to(kFloat16)));
      EXPECT_EQ(to_vector(f.mean), to_vector(f32.mean));
      EXPECT_EQ(to_vector(f.rstd), to_vector(f32.rstd));
      EXPECT_EQ(to_vector(g.grad_input), to_vector(g32.grad_input.to(kFloat16)));
      if (affine) {
        EXPECT_EQ(to_vector(g.grad_weight), to_vector(g32.grad_weight.to(kFloat16)));
        EXPECT_EQ(to_vector(g.grad_bias), to_vector(g32.grad_bias.to(kFloat16)));
      }
      if (HasFailure()) return;
    }
}

// A non-contiguous input (a transposed view, made contiguous by the op) gives the contiguous
// input's bits.
TEST(GroupNormVectorized, StridedInputEqualsContiguous) {
  for (DType dtype : {kFloat32, kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor base = random_tensor({4, 6, 5, 7}, 0.3, dtype, 9);
    const Tensor x = base.transpose(2, 3);
    const Tensor dy = random_tensor({4, 6, 5, 7}, 0.0, dtype, 10).transpose(2, 3);
    ASSERT_FALSE(x.is_contiguous());
    const Tensor w = random_tensor({6}, 1.0, dtype, 11);
    const ops::GroupNormOutput f = ops::group_norm(x, 3, w, Tensor(), 1e-5);
    const ops::GroupNormOutput fc = ops::group_norm(x.contiguous(), 3, w, Tensor(), 1e-5);
    const ops::GroupNormGrads g =
        ops::group_norm_backward(dy, x, f.mean, f.rstd, w, 3, true, true, false);
    const ops::GroupNormGrads gc = ops::group_norm_backward(
        dy.contiguous(), x.contiguous(), fc.mean, fc.rstd, w, 3, true, true, false);
    EXPECT_EQ(to_vector(f.output), to_vector(fc.output));
    EXPECT_EQ(to_vector(g.grad_input), to_vector(gc.grad_input));
    EXPECT_EQ(to_vector(g.grad_weight), to_vector(gc.grad_weight));
  }
}

}  // namespace
}  // namespace leangrad::test
