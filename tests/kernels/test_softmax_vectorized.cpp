// Softmax's vectorised CPU launchers (kernels/cpu/softmax_vectorized.cpp, what the library runs)
// against exact values computed in double from the same float inputs, within bounds derived from
// the kernel's operations (Note [Vectorised softmax]); against the reference loops
// (kernels/cpu/softmax_reference.h) on special values and in float64; float16 and bfloat16 as the
// float32 kernel of their widening, rounded once, bit for bit; the same bits at any thread count.
// Layouts: rows (inner == 1) around the lane count and the log_softmax buffer, and columns
// (inner > 1) around the column block, forward and backward, softmax and log_softmax. The same for
// cross_entropy's kernels (a row's logsumexp, the losses, the logits' gradient), with class
// weights and ignored rows.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <leangrad/core/half.h>
#include <leangrad/kernels/backend.h>
#include <leangrad/kernels/cpu/softmax_reference.h>
#include "testing/thread_count.h"

namespace leangrad::test {
namespace {

namespace cpu = kernels::cpu;

constexpr double kU = 0x1p-24;  // float's unit roundoff
constexpr double kExpRelative =
    1.02 * 0x1p-23;                       // the polynomial exp: 1.02 ulps (kExpPolynomialMaxUlps)
constexpr double kLogRelative = 0x1p-23;  // glibc's logf: within 1 ulp
// Second-order terms (products of two errors, each below 1e-2 here) as a fraction of a bound.
constexpr double kSecondOrder = 1.01;

struct Layout {
  std::int64_t outer, R, inner;
  std::int64_t numel() const { return outer * R * inner; }
};

std::string describe(const Layout& l, bool log) {
  std::ostringstream s;
  s << (log ? "log_softmax" : "softmax") << " (outer " << l.outer << ", R " << l.R << ", inner "
    << l.inner << ")";
  return s.str();
}

// Rows: tails of the 32 lanes, one element, log_softmax's 512-element buffer and beyond. Columns:
// one step, tails of the 64-column block, several blocks, and runs too long for a 16-bit block's
// exps to be kept (R * 64 > 65536: the output pass computes them again). A 16-bit row of 9000
// is too long for the stack buffer (8192) and runs a piece at a time.
const std::vector<Layout> kLayouts = {
    {3, 1, 1}, {2, 31, 1}, {2, 32, 1}, {3, 33, 1}, {4, 100, 1},   {2, 513, 1},  {1, 4097, 1},
    {2, 1, 3}, {2, 5, 2},  {3, 7, 64}, {2, 9, 65}, {1, 300, 130}, {1, 1500, 3}, {1, 9000, 1},
};

// Partial sums of a run: a row's lanes add ceil(R / 32) terms each (the first onto 0, exactly),
// then 5 levels of a tree; a column adds its R terms in order (the first onto 0).
double sum_gamma(const Layout& l) {
  const double k =
      l.inner == 1 ? static_cast<double>((l.R + 31) / 32 + 4) : static_cast<double>(l.R);
  return k * kU / (1 - k * kU);
}

std::vector<float> random_floats(std::int64_t n, double scale, double offset, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v)
    x = static_cast<float>(offset + scale * normal(rng));
  return v;
}

// fn(indices of one run, in order of r).
template <typename F>
void for_each_run(const Layout& l, const F& fn) {
  std::vector<std::int64_t> run(static_cast<std::size_t>(l.R));
  for (std::int64_t o = 0; o < l.outer; ++o)
    for (std::int64_t j = 0; j < l.inner; ++j) {
      for (std::int64_t r = 0; r < l.R; ++r)
        run[r] = (o * l.R + r) * l.inner + j;
      fn(run);
    }
}

// Forward in float32 against double. Per element, with e_i = e^(x_i - m) and S = sum e_i: the
// kernel's x_i - m rounds (relative error |x_i - m| u in e_i), its exp adds kExpRelative; S adds
// sum_gamma; y = e (1 / S) two roundings more. log_softmax: (x_i - m) rounds, log S is off by S's
// relative error plus logf's own, the difference rounds once.
void check_forward(const Layout& l, bool log, double scale, double offset) {
  const std::vector<float> x = random_floats(l.numel(), scale, offset, 7);
  std::vector<float> y(x.size());
  cpu::softmax(kFloat32, y.data(), x.data(), l.outer, l.R, l.inner, log);
  for_each_run(l, [&](const std::vector<std::int64_t>& run) {
    double m = -INFINITY;
    for (std::int64_t k : run)
      m = std::max(m, static_cast<double>(x[k]));
    double s = 0;
    double worst_e = 0;
    for (std::int64_t k : run) {
      s += std::exp(x[k] - m);
      worst_e = std::max(worst_e, kExpRelative + std::fabs(x[k] - m) * kU);
    }
    const double s_relative = worst_e + sum_gamma(l);
    for (std::int64_t k : run) {
      const double d = x[k] - m;
      double exact, tol;
      if (log) {
        exact = d - std::log(s);
        tol = std::fabs(d) * kU + s_relative + kLogRelative * std::fabs(std::log(s)) +
              kU * std::fabs(exact);
      } else {
        exact = std::exp(d) / s;
        tol = exact * (kExpRelative + std::fabs(d) * kU + s_relative + 2 * kU);
      }
      ASSERT_NEAR(y[k], exact, kSecondOrder * tol) << "x = " << x[k] << ", max " << m;
    }
  });
}

// Backward in float32 against double, from float inputs g and y (y a softmax's output, or a
// log_softmax's). softmax: dot = sum g y, each product and the sum rounding (u + sum_gamma of
// sum |g y|), then y (g - dot) two roundings. log_softmax: dot = sum g (sum_gamma of sum |g|),
// then g - e^y dot: the exp, the product and the difference round.
void check_backward(const Layout& l, bool log) {
  const std::vector<float> x = random_floats(l.numel(), 2.0, 0.0, 8);
  const std::vector<float> g = random_floats(l.numel(), 1.0, 0.0, 9);
  std::vector<float> y(x.size()), gx(x.size());
  cpu::softmax(kFloat32, y.data(), x.data(), l.outer, l.R, l.inner, log);
  cpu::softmax_backward(kFloat32, gx.data(), g.data(), y.data(), l.outer, l.R, l.inner, log);
  for_each_run(l, [&](const std::vector<std::int64_t>& run) {
    double dot = 0;
    double magnitude = 0;
    for (std::int64_t k : run) {
      const double term = log ? g[k] : static_cast<double>(g[k]) * y[k];
      dot += term;
      magnitude += std::fabs(term);
    }
    const double dot_error = (log ? sum_gamma(l) : kU + sum_gamma(l)) * magnitude;
    for (std::int64_t k : run) {
      double exact, tol;
      if (log) {
        const double e = std::exp(static_cast<double>(y[k]));
        exact = g[k] - e * dot;
        tol = e * dot_error + e * std::fabs(dot) * (kExpRelative + kU) + kU * std::fabs(exact);
      } else {
        exact = y[k] * (g[k] - dot);
        tol = std::fabs(y[k]) * (dot_error + kU * std::fabs(g[k] - dot)) + kU * std::fabs(exact);
      }
      ASSERT_NEAR(gx[k], exact, kSecondOrder * tol) << "g = " << g[k] << ", y = " << y[k];
    }
  });
}

TEST(SoftmaxVectorized, Float32WithinTheDerivedBoundOfDouble) {
  for (const Layout& l : kLayouts)
    for (bool log : {false, true}) {
      SCOPED_TRACE(describe(l, log));
      // Logits of spread 4 (e^(x - max) down to about e^-40), and 1000 from 0 (stability).
      check_forward(l, log, 4.0, 0.0);
      check_forward(l, log, 4.0, 1000.0);
      check_backward(l, log);
      if (HasFatalFailure()) return;
    }
}

bool same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

// Runs whose every result is exact (0, 1, -inf, 0 for log) or NaN give the reference's values:
// a run of one; -inf beside finite values; all -inf (0 / 0: NaN, as PyTorch); +inf (inf - inf:
// NaN); a NaN. Rows and columns (the runs of the (2, R, 3) layout are its columns).
TEST(SoftmaxVectorized, SpecialValuesAsTheReference) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<std::vector<float>> runs = {{7},      {-inf, 5}, {5, -inf, -inf}, {-inf, -inf},
                                                {inf, 1}, {1, nan},  {-inf, nan}};
  for (bool log : {false, true})
    for (const std::vector<float>& run : runs) {
      const std::int64_t R = static_cast<std::int64_t>(run.size());
      for (const Layout& l : {Layout{1, R, 1}, Layout{2, R, 3}}) {
        SCOPED_TRACE(describe(l, log));
        std::vector<float> x(static_cast<std::size_t>(l.numel()));
        for (std::int64_t i = 0; i < l.numel(); ++i)
          x[i] = run[(i / l.inner) % R];
        std::vector<float> y(x.size()), y_ref(x.size());
        cpu::softmax(kFloat32, y.data(), x.data(), l.outer, l.R, l.inner, log);
        cpu::reference::softmax(kFloat32, y_ref.data(), x.data(), l.outer, l.R, l.inner, log);
        for (std::size_t i = 0; i < x.size(); ++i)
          ASSERT_TRUE(same(y[i], y_ref[i]))
              << "element " << i << ": " << y[i] << " vs " << y_ref[i];
      }
    }
}

template <typename T>
std::uint16_t bits_of(T v) {
  return v.bits;
}

// float16 and bfloat16 run the float32 kernel on their widened values and round once: the same
// bits as rounding the float32 kernel's result, forward and backward, every layout.
template <typename T>
void check_sixteen_bit(DType dtype) {
  for (const Layout& l : kLayouts)
    for (bool log : {false, true}) {
      SCOPED_TRACE(describe(l, log) + ", " + dtype_name(dtype));
      const std::vector<float> xs = random_floats(l.numel(), 3.0, 0.5, 10);
      const std::vector<float> gs = random_floats(l.numel(), 1.0, 0.0, 11);
      std::vector<T> x, g;
      std::vector<float> xf, gf;
      for (std::size_t i = 0; i < xs.size(); ++i) {
        x.push_back(T(xs[i]));
        g.push_back(T(gs[i]));
        xf.push_back(static_cast<float>(x.back()));
        gf.push_back(static_cast<float>(g.back()));
      }
      std::vector<T> y(x.size()), gx(x.size());
      std::vector<float> yf(x.size()), gxf(x.size());
      cpu::softmax(dtype, y.data(), x.data(), l.outer, l.R, l.inner, log);
      cpu::softmax(kFloat32, yf.data(), xf.data(), l.outer, l.R, l.inner, log);
      for (std::size_t i = 0; i < x.size(); ++i)
        ASSERT_EQ(bits_of(y[i]), bits_of(T(yf[i]))) << "y[" << i << "]";
      // The backward from the 16-bit output, and from its widening in float32.
      std::vector<float> y_wide(x.size());
      for (std::size_t i = 0; i < x.size(); ++i)
        y_wide[i] = static_cast<float>(y[i]);
      cpu::softmax_backward(dtype, gx.data(), g.data(), y.data(), l.outer, l.R, l.inner, log);
      cpu::softmax_backward(kFloat32, gxf.data(), gf.data(), y_wide.data(), l.outer, l.R, l.inner,
                            log);
      for (std::size_t i = 0; i < x.size(); ++i)
        ASSERT_EQ(bits_of(gx[i]), bits_of(T(gxf[i]))) << "dx[" << i << "]";
    }
}

TEST(SoftmaxVectorized, SixteenBitIsFloat32OfTheWidenedInput) {
  check_sixteen_bit<Half>(kFloat16);
  check_sixteen_bit<BFloat16>(kBFloat16);
}

// float64 runs the reference loops.
TEST(SoftmaxVectorized, Float64IsTheReference) {
  for (const Layout& l : kLayouts)
    for (bool log : {false, true}) {
      SCOPED_TRACE(describe(l, log));
      const std::vector<float> xs = random_floats(l.numel(), 3.0, 0.0, 12);
      const std::vector<double> x(xs.begin(), xs.end());
      std::vector<double> y(x.size()), y_ref(x.size()), gx(x.size()), gx_ref(x.size());
      cpu::softmax(kFloat64, y.data(), x.data(), l.outer, l.R, l.inner, log);
      cpu::reference::softmax(kFloat64, y_ref.data(), x.data(), l.outer, l.R, l.inner, log);
      cpu::softmax_backward(kFloat64, gx.data(), x.data(), y.data(), l.outer, l.R, l.inner, log);
      cpu::reference::softmax_backward(kFloat64, gx_ref.data(), x.data(), y.data(), l.outer, l.R,
                                       l.inner, log);
      for (std::size_t i = 0; i < x.size(); ++i) {
        ASSERT_EQ(std::bit_cast<std::uint64_t>(y[i]), std::bit_cast<std::uint64_t>(y_ref[i]));
        ASSERT_EQ(std::bit_cast<std::uint64_t>(gx[i]), std::bit_cast<std::uint64_t>(gx_ref[i]));
      }
    }
}

// Runs are split over threads whole: 1 to 4 threads give the same bits. At most 4 threads:
// ThreadCount (tests/testing/thread_count.h) says why.
TEST(SoftmaxVectorized, SameBitsOnAnyThreadCount) {
  for (const Layout& l : {Layout{64, 700, 1}, Layout{8, 50, 200}})
    for (bool log : {false, true}) {
      SCOPED_TRACE(describe(l, log));
      const std::vector<float> x = random_floats(l.numel(), 3.0, 0.0, 13);
      const std::vector<float> g = random_floats(l.numel(), 1.0, 0.0, 14);
      std::vector<std::vector<float>> results;
      for (int threads : {1, 2, 3, 4}) {
        const ThreadCount guard(threads);
        std::vector<float> y(x.size()), gx(x.size());
        cpu::softmax(kFloat32, y.data(), x.data(), l.outer, l.R, l.inner, log);
        cpu::softmax_backward(kFloat32, gx.data(), g.data(), y.data(), l.outer, l.R, l.inner, log);
        y.insert(y.end(), gx.begin(), gx.end());
        results.push_back(y);
      }
      for (std::size_t k = 1; k < results.size(); ++k)
        for (std::size_t i = 0; i < results[0].size(); ++i)
          ASSERT_EQ(std::bit_cast<std::uint32_t>(results[k][i]),
                    std::bit_cast<std::uint32_t>(results[0][i]))
              << "threads " << k + 1 << ", value " << i;
    }
}

// ---- cross_entropy ------------------------------------------------------------------------------

constexpr std::int64_t kIgnore = -100;

// The class-index problem of one test: N rows of C logits, a target per row (row 2 ignored when
// N > 2) and, when weighted, a positive weight per class.
struct CrossEntropyCase {
  std::int64_t N, C;
  std::vector<float> x, weight, grad_losses;
  std::vector<std::int64_t> target;
};

CrossEntropyCase cross_entropy_case(std::int64_t N, std::int64_t C, double offset, bool weighted,
                                    std::uint32_t seed) {
  CrossEntropyCase c{N, C, random_floats(N * C, 4.0, offset, seed), {}, {}, {}};
  for (std::int64_t i = 0; i < N; ++i)
    c.target.push_back(i == 2 ? kIgnore : (i * 7 + 3) % C);
  if (weighted)
    for (float w : random_floats(C, 0.25, 1.0, seed + 1))
      c.weight.push_back(std::fabs(w));
  c.grad_losses = random_floats(N, 1.0, 0.0, seed + 2);
  return c;
}

const void* weight_of(const CrossEntropyCase& c) {
  return c.weight.empty() ? nullptr : c.weight.data();
}

double class_weight_of(const CrossEntropyCase& c, std::int64_t i) {
  const std::int64_t t = c.target[i];
  if (t == kIgnore) return 0.0;
  return c.weight.empty() ? 1.0 : c.weight[t];
}

// Forward and backward in float32 against double, within bounds derived as check_forward's. Per
// row, with S = sum e^(x_j - m): the kernel's logsumexp m + log S carries S's relative error
// (each e^(x_j - m) within kExpRelative + |x_j - m| u, the lane sums sum_gamma), logf's own and
// one rounding of the sum; the loss w (lse - x_t) two roundings more. The backward from the
// kernel's own logsumexp: p = e^(x - lse) within kExpRelative + |x - lse| u, then g (p - [j = t])
// with g = grad w rounded, p - 1 rounded and the product rounded.
void check_cross_entropy(std::int64_t N, std::int64_t C, double offset, bool weighted) {
  SCOPED_TRACE("cross_entropy (" + std::to_string(N) + ", " + std::to_string(C) + "), offset " +
               std::to_string(offset) + (weighted ? ", weighted" : ""));
  const CrossEntropyCase c = cross_entropy_case(N, C, offset, weighted, 21);
  std::vector<float> losses(N), sample_weights(N), lse(N), gx(N * C);
  cpu::cross_entropy(kFloat32, losses.data(), sample_weights.data(), lse.data(), c.x.data(),
                     c.target.data(), weight_of(c), N, C, kIgnore);
  cpu::cross_entropy_backward(kFloat32, gx.data(), c.grad_losses.data(), c.x.data(), lse.data(),
                              c.target.data(), weight_of(c), N, C, kIgnore);
  const Layout row{1, C, 1};
  for (std::int64_t i = 0; i < N; ++i) {
    const float* x = c.x.data() + i * C;
    double m = -INFINITY;
    for (std::int64_t j = 0; j < C; ++j)
      m = std::max(m, static_cast<double>(x[j]));
    double s = 0;
    double worst_e = 0;
    for (std::int64_t j = 0; j < C; ++j) {
      s += std::exp(x[j] - m);
      worst_e = std::max(worst_e, kExpRelative + std::fabs(x[j] - m) * kU);
    }
    const double exact_lse = m + std::log(s);
    const double lse_tol = worst_e + sum_gamma(row) + kLogRelative * std::fabs(std::log(s)) +
                           kU * std::fabs(exact_lse);
    ASSERT_NEAR(lse[i], exact_lse, kSecondOrder * lse_tol) << "row " << i;
    const double w = class_weight_of(c, i);
    ASSERT_EQ(sample_weights[i], static_cast<float>(w)) << "row " << i;
    const std::int64_t t = c.target[i];
    if (t == kIgnore) {
      ASSERT_EQ(losses[i], 0.0f) << "row " << i;
      for (std::int64_t j = 0; j < C; ++j)
        ASSERT_EQ(gx[i * C + j], 0.0f) << "row " << i << ", class " << j;
      continue;
    }
    const double exact_loss = w * (exact_lse - x[t]);
    const double loss_tol =
        w * (lse_tol + kU * std::fabs(exact_lse - x[t])) + kU * std::fabs(exact_loss);
    ASSERT_NEAR(losses[i], exact_loss, kSecondOrder * loss_tol) << "row " << i;
    const double g = c.grad_losses[i] * w;
    for (std::int64_t j = 0; j < C; ++j) {
      const double d = x[j] - static_cast<double>(lse[i]);
      const double p = std::exp(d);
      const double target_term = j == t ? 1.0 : 0.0;
      const double exact = g * (p - target_term);
      const double tol = std::fabs(g) * (p * (kExpRelative + std::fabs(d) * kU) +
                                         kU * std::fabs(p - target_term)) +
                         2 * kU * std::fabs(exact);
      ASSERT_NEAR(gx[i * C + j], exact, kSecondOrder * tol) << "row " << i << ", class " << j;
    }
  }
}

// Classes around the 32 lanes and the 512-element pieces, and 1000 (ImageNet's).
const std::int64_t kClassCounts[] = {1, 10, 31, 32, 33, 513, 1000, 4097};

TEST(CrossEntropyVectorized, Float32WithinTheDerivedBoundOfDouble) {
  for (std::int64_t C : kClassCounts)
    for (bool weighted : {false, true}) {
      check_cross_entropy(5, C, 0.0, weighted);
      check_cross_entropy(5, C, 1000.0, weighted);
      if (HasFatalFailure()) return;
    }
}

// Rows whose results are exact or NaN give the reference's values: one class; -inf beside finite
// logits (the target on either); all -inf (lse -inf, the loss -inf - -inf: NaN); +inf and NaN
// logits (NaN); an ignored row.
TEST(CrossEntropyVectorized, SpecialValuesAsTheReference) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<std::pair<std::vector<float>, std::int64_t>> rows = {
      {{7}, 0},          {{-inf, 5}, 0}, {{-inf, 5}, 1}, {{5, -inf, -inf}, 2},
      {{-inf, -inf}, 1}, {{inf, 1}, 1},  {{1, nan}, 0},  {{3, 4}, kIgnore}};
  for (const auto& [x, t] : rows) {
    const auto C = static_cast<std::int64_t>(x.size());
    SCOPED_TRACE("row of " + std::to_string(C) + ", target " + std::to_string(t));
    const float grad = 0.75f;
    float loss = 0, loss_ref = 0, sw = 0, sw_ref = 0, lse = 0, lse_ref = 0;
    std::vector<float> gx(x.size()), gx_ref(x.size());
    cpu::cross_entropy(kFloat32, &loss, &sw, &lse, x.data(), &t, nullptr, 1, C, kIgnore);
    cpu::reference::cross_entropy(kFloat32, &loss_ref, &sw_ref, &lse_ref, x.data(), &t, nullptr, 1,
                                  C, kIgnore);
    ASSERT_TRUE(same(lse, lse_ref)) << lse << " vs " << lse_ref;
    ASSERT_TRUE(same(loss, loss_ref)) << loss << " vs " << loss_ref;
    ASSERT_EQ(sw, sw_ref);
    cpu::cross_entropy_backward(kFloat32, gx.data(), &grad, x.data(), &lse, &t, nullptr, 1, C,
                                kIgnore);
    cpu::reference::cross_entropy_backward(kFloat32, gx_ref.data(), &grad, x.data(), &lse_ref, &t,
                                           nullptr, 1, C, kIgnore);
    for (std::size_t j = 0; j < x.size(); ++j)
      ASSERT_TRUE(same(gx[j], gx_ref[j])) << "class " << j << ": " << gx[j] << " vs " << gx_ref[j];
  }
}

// float16 and bfloat16 run the float32 kernel on their widened logits, weights and upstream
// gradients and round once: the same bits as rounding the float32 kernel's results (the
// logsumexp is float32 in both).
template <typename T>
void check_cross_entropy_sixteen_bit(DType dtype) {
  for (std::int64_t C : kClassCounts)
    for (bool weighted : {false, true}) {
      SCOPED_TRACE(std::to_string(C) + " classes, " + dtype_name(dtype) +
                   (weighted ? ", weighted" : ""));
      const std::int64_t N = 4;
      const CrossEntropyCase c = cross_entropy_case(N, C, 0.5, weighted, 22);
      std::vector<T> x, w, gl;
      std::vector<float> xf, wf, glf;
      for (float v : c.x) {
        x.push_back(T(v));
        xf.push_back(static_cast<float>(x.back()));
      }
      for (float v : c.weight) {
        w.push_back(T(v));
        wf.push_back(static_cast<float>(w.back()));
      }
      for (float v : c.grad_losses) {
        gl.push_back(T(v));
        glf.push_back(static_cast<float>(gl.back()));
      }
      const void* wp = weighted ? static_cast<const void*>(w.data()) : nullptr;
      const void* wfp = weighted ? static_cast<const void*>(wf.data()) : nullptr;
      std::vector<T> losses(N), sw(N), gx(N * C);
      std::vector<float> lossesf(N), swf(N), lse(N), lsef(N), gxf(N * C);
      cpu::cross_entropy(dtype, losses.data(), sw.data(), lse.data(), x.data(), c.target.data(), wp,
                         N, C, kIgnore);
      cpu::cross_entropy(kFloat32, lossesf.data(), swf.data(), lsef.data(), xf.data(),
                         c.target.data(), wfp, N, C, kIgnore);
      for (std::int64_t i = 0; i < N; ++i) {
        ASSERT_EQ(std::bit_cast<std::uint32_t>(lse[i]), std::bit_cast<std::uint32_t>(lsef[i]));
        ASSERT_EQ(bits_of(losses[i]), bits_of(T(lossesf[i]))) << "loss " << i;
        ASSERT_EQ(bits_of(sw[i]), bits_of(T(swf[i]))) << "sample weight " << i;
      }
      cpu::cross_entropy_backward(dtype, gx.data(), gl.data(), x.data(), lse.data(),
                                  c.target.data(), wp, N, C, kIgnore);
      cpu::cross_entropy_backward(kFloat32, gxf.data(), glf.data(), xf.data(), lsef.data(),
                                  c.target.data(), wfp, N, C, kIgnore);
      for (std::size_t k = 0; k < gx.size(); ++k)
        ASSERT_EQ(bits_of(gx[k]), bits_of(T(gxf[k]))) << "dx[" << k << "]";
    }
}

TEST(CrossEntropyVectorized, SixteenBitIsFloat32OfTheWidenedInput) {
  check_cross_entropy_sixteen_bit<Half>(kFloat16);
  check_cross_entropy_sixteen_bit<BFloat16>(kBFloat16);
}

// float64 runs the reference loops.
TEST(CrossEntropyVectorized, Float64IsTheReference) {
  const std::int64_t N = 5, C = 513;
  const CrossEntropyCase c = cross_entropy_case(N, C, 0.0, true, 23);
  const std::vector<double> x(c.x.begin(), c.x.end()), w(c.weight.begin(), c.weight.end());
  const std::vector<double> gl(c.grad_losses.begin(), c.grad_losses.end());
  std::vector<double> losses(N), sw(N), lse(N), gx(N * C), losses_ref(N), sw_ref(N), lse_ref(N),
      gx_ref(N * C);
  cpu::cross_entropy(kFloat64, losses.data(), sw.data(), lse.data(), x.data(), c.target.data(),
                     w.data(), N, C, kIgnore);
  cpu::reference::cross_entropy(kFloat64, losses_ref.data(), sw_ref.data(), lse_ref.data(),
                                x.data(), c.target.data(), w.data(), N, C, kIgnore);
  cpu::cross_entropy_backward(kFloat64, gx.data(), gl.data(), x.data(), lse.data(), c.target.data(),
                              w.data(), N, C, kIgnore);
  cpu::reference::cross_entropy_backward(kFloat64, gx_ref.data(), gl.data(), x.data(),
                                         lse_ref.data(), c.target.data(), w.data(), N, C, kIgnore);
  for (std::int64_t i = 0; i < N; ++i) {
    ASSERT_EQ(std::bit_cast<std::uint64_t>(lse[i]), std::bit_cast<std::uint64_t>(lse_ref[i]));
    ASSERT_EQ(std::bit_cast<std::uint64_t>(losses[i]), std::bit_cast<std::uint64_t>(losses_ref[i]));
  }
  for (std::size_t k = 0; k < gx.size(); ++k)
    ASSERT_EQ(std::bit_cast<std::uint64_t>(gx[k]), std::bit_cast<std::uint64_t>(gx_ref[k]));
}

// Rows are split over threads whole: 1 to 4 threads give the same bits.
TEST(CrossEntropyVectorized, SameBitsOnAnyThreadCount) {
  const std::int64_t N = 64, C = 700;
  const CrossEntropyCase c = cross_entropy_case(N, C, 0.0, true, 24);
  std::vector<std::vector<float>> results;
  for (int threads : {1, 2, 3, 4}) {
    const ThreadCount guard(threads);
    std::vector<float> losses(N), sw(N), lse(N), gx(N * C);
    cpu::cross_entropy(kFloat32, losses.data(), sw.data(), lse.data(), c.x.data(), c.target.data(),
                       weight_of(c), N, C, kIgnore);
    cpu::cross_entropy_backward(kFloat32, gx.data(), c.grad_losses.data(), c.x.data(), lse.data(),
                                c.target.data(), weight_of(c), N, C, kIgnore);
    gx.insert(gx.end(), losses.begin(), losses.end());
    gx.insert(gx.end(), lse.begin(), lse.end());
    results.push_back(gx);
  }
  for (std::size_t k = 1; k < results.size(); ++k)
    for (std::size_t i = 0; i < results[0].size(); ++i)
      ASSERT_EQ(std::bit_cast<std::uint32_t>(results[k][i]),
                std::bit_cast<std::uint32_t>(results[0][i]))
          << "threads " << k + 1 << ", value " << i;
}

}  // namespace
}  // namespace leangrad::test
