// poisson and binomial (autograd/sampling_functions.h, kernels/discrete_samplers.cpp): the draws
// follow their distributions (mean, variance and a chi-square test of the frequencies, each
// bound derived from the sampling distribution of the statistic at a fixed seed), the special
// parameters give their exact values, the same seed replays, the CUDA draws equal the CPU's, and
// bad parameters are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/reduction_functions.h>
#include <leangrad/autograd/sampling_functions.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>

namespace leangrad {
namespace {

constexpr std::int64_t kDraws = 200000;
// Bounds at 6 standard deviations of each statistic: a correct sampler fails one with
// probability about 2e-9 (and, the seed being fixed, either always or never).
constexpr double kSigmas = 6.0;

std::vector<double> values_of(const Tensor& t) {
  const Tensor c = t.to(kFloat64).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

// The draws' mean and variance against the distribution's (mean mu, variance var, fourth
// central moment mu4): the sample mean has standard deviation sqrt(var / N), the sample
// variance about sqrt((mu4 - var^2) / N).
void expect_moments(const std::vector<double>& x, double mu, double var, double mu4) {
  const double n = static_cast<double>(x.size());
  double sum = 0;
  for (double v : x)
    sum += v;
  const double mean = sum / n;
  double squares = 0;
  for (double v : x)
    squares += (v - mean) * (v - mean);
  const double variance = squares / (n - 1);
  EXPECT_NEAR(mean, mu, kSigmas * std::sqrt(var / n) + 1e-12) << "mean";
  EXPECT_NEAR(variance, var, kSigmas * std::sqrt((mu4 - var * var) / n) + 1e-12) << "variance";
}

// Pearson's chi-square of the draws' frequencies against pmf(k), over the values k whose
// expected count is at least 50 (the rest pooled into one cell at each end), below the upper
// point of the chi-square distribution at z = 6 normal deviations (Wilson and Hilferty's
// approximation of its quantile: df (1 - 2 / (9 df) + z sqrt(2 / (9 df)))^3).
template <typename Pmf>
void expect_frequencies(const std::vector<double>& x, std::int64_t support, const Pmf& pmf) {
  const double n = static_cast<double>(x.size());
  std::vector<double> observed(support + 1, 0.0);
  for (double v : x) {
    ASSERT_GE(v, 0.0);
    ASSERT_EQ(v, std::floor(v));
    observed[std::min<std::int64_t>(static_cast<std::int64_t>(v), support)] += 1;
  }
  // Cells: the values with enough expectation, and the pooled tails.
  double chi2 = 0;
  double low_observed = 0, low_expected = 0;
  std::int64_t cells = 0;
  double tail_observed = 0, tail_expected = 0;
  bool started = false;
  for (std::int64_t k = 0; k <= support; ++k) {
    const double expected = n * pmf(k);
    if (expected < 50 && !started) {
      low_observed += observed[k];
      low_expected += expected;
      continue;
    }
    started = true;
    if (expected < 50) {
      tail_observed += observed[k];
      tail_expected += expected;
      continue;
    }
    chi2 += (observed[k] - expected) * (observed[k] - expected) / expected;
    ++cells;
  }
  for (const auto& [o, e] :
       {std::pair{low_observed, low_expected}, {tail_observed, tail_expected}}) {
    if (e >= 5) {
      chi2 += (o - e) * (o - e) / e;
      ++cells;
    } else {
      EXPECT_LE(o, e + kSigmas * std::sqrt(e) + 5) << "a pooled tail";
    }
  }
  ASSERT_GE(cells, 3);
  const double df = static_cast<double>(cells - 1);
  const double h = 2.0 / (9.0 * df);
  const double bound = df * std::pow(1.0 - h + kSigmas * std::sqrt(h), 3.0);
  EXPECT_LT(chi2, bound) << cells << " cells";
}

double poisson_pmf(double rate, std::int64_t k) {
  const double kk = static_cast<double>(k);
  return std::exp(kk * std::log(rate) - rate - std::lgamma(kk + 1));
}

double binomial_pmf(double n, double p, std::int64_t k) {
  const double kk = static_cast<double>(k);
  if (kk > n) return 0.0;
  return std::exp(std::lgamma(n + 1) - std::lgamma(kk + 1) - std::lgamma(n - kk + 1) +
                  kk * std::log(p) + (n - kk) * std::log1p(-p));
}

TEST(DiscreteSamplers, PoissonFollowsItsDistribution) {
  manual_seed(7);
  // Both algorithms (below and from rate 10) and the switch between them.
  for (const double rate : {0.3, 4.0, 9.99, 10.0, 37.5, 1000.0}) {
    SCOPED_TRACE("rate " + std::to_string(rate));
    const std::vector<double> x = values_of(poisson(full({kDraws}, rate, kFloat64)));
    expect_moments(x, rate, rate, rate * (1 + 3 * rate));
    expect_frequencies(x, static_cast<std::int64_t>(rate + 12 * std::sqrt(rate) + 20),
                       [rate](std::int64_t k) { return poisson_pmf(rate, k); });
  }
}

TEST(DiscreteSamplers, BinomialFollowsItsDistribution) {
  manual_seed(8);
  // Inversion (count * min(p, 1 - p) < 10) and BTRS, each with p above 1/2 (drawn as count
  // minus a draw of 1 - p).
  for (const auto& [n, prob] :
       {std::pair{10.0, 0.3}, {6.0, 0.9}, {100.0, 0.5}, {1000.0, 0.97}, {40.0, 0.26}}) {
    // (Plain variables: a lambda cannot capture structured bindings in C++20.)
    const double count = n;
    const double p = prob;
    SCOPED_TRACE("count " + std::to_string(count) + ", p " + std::to_string(p));
    const std::vector<double> x =
        values_of(binomial(full({kDraws}, count, kFloat32), full({kDraws}, p, kFloat32)));
    const double q = 1 - p;
    const double var = count * p * q;
    expect_moments(x, count * p, var, var * (1 + 3 * (count - 2) * p * q));
    expect_frequencies(x, static_cast<std::int64_t>(count),
                       [count, p](std::int64_t k) { return binomial_pmf(count, p, k); });
  }
}

TEST(DiscreteSamplers, ExactCasesShapesAndReplay) {
  // Rate 0, count 0, p 0 and p 1 have one value.
  EXPECT_TRUE(poisson(zeros({5})).equal(zeros({5})));
  const Tensor counts = tensor({0.0, 7.0, 7.0, 12.0}, kFloat64);
  const Tensor probs = tensor({0.5, 0.0, 1.0, 1.0}, kFloat64);
  EXPECT_TRUE(binomial(counts, probs).equal(tensor({0.0, 0.0, 7.0, 12.0}, kFloat64)));
  // Broadcasting, dtype and shape; every draw of a binomial lies in [0, count].
  const Tensor b = binomial(tensor({3.0, 50.0}).to(kFloat32).reshape({2, 1}), full({1, 4}, 0.4));
  EXPECT_EQ(b.shape(), (Shape{2, 4}));
  EXPECT_EQ(b.dtype(), kFloat32);
  EXPECT_LE(max(b.select(0, 0)).item<float>(), 3.0f);
  EXPECT_EQ(poisson(full({2, 3}, 2.0, kFloat16)).dtype(), kFloat16);
  // The same seed replays; the next call draws new numbers.
  manual_seed(11);
  const Tensor first = poisson(full({64}, 5.0));
  const Tensor second = poisson(full({64}, 5.0));
  manual_seed(11);
  EXPECT_TRUE(poisson(full({64}, 5.0)).equal(first));
  EXPECT_FALSE(second.equal(first));
  // An element's draw depends on its index only, not on how many elements are drawn with it.
  manual_seed(12);
  const Tensor many = poisson(full({5000}, 30.0));
  manual_seed(12);
  EXPECT_TRUE(poisson(full({10}, 30.0)).equal(many.slice(0, 0, 10)));
}

TEST(DiscreteSamplers, GradientsAndBadParameters) {
  const Tensor rate = full({3}, 2.0, kFloat64).requires_grad_(true);
  const Tensor y = poisson(rate);
  ASSERT_TRUE(y.requires_grad());
  sum(y).backward();
  EXPECT_TRUE(rate.grad().equal(zeros({3}, kFloat64)));  // PyTorch's gradient: zero
  EXPECT_FALSE(binomial(full({2}, 3.0).requires_grad_(true), full({2}, 0.5)).requires_grad());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_THROW(poisson(tensor({1.0, -0.5})), Error);
  EXPECT_THROW(poisson(tensor({nan})), Error);
  EXPECT_THROW(poisson(tensor({inf})), Error);
  EXPECT_THROW(poisson(ones({2}, kInt64)), DTypeError);
  EXPECT_THROW(poisson(Tensor()), Error);
  EXPECT_THROW(binomial(tensor({2.5}), tensor({0.5})), Error);  // not an integer count
  EXPECT_THROW(binomial(tensor({-1.0}), tensor({0.5})), Error);
  EXPECT_THROW(binomial(tensor({inf}), tensor({0.5})), Error);
  EXPECT_THROW(binomial(tensor({2.0}), tensor({1.5})), Error);
  EXPECT_THROW(binomial(tensor({2.0}), tensor({nan})), Error);
  EXPECT_THROW(binomial(tensor({2.0}), tensor({0.5}).to(kFloat32)), DTypeError);
  EXPECT_THROW(binomial(ones({2}), ones({3})), ShapeError);
}

// The draws are made on the host from the CUDA device's generator: the same seed gives the CPU's
// numbers. SKIPPED without a CUDA device.
TEST(DiscreteSamplersCuda, SameDrawsAsTheCpu) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Device gpu(DeviceType::CUDA, 0);
  manual_seed(13);
  const Tensor on_gpu = poisson(full({100}, 12.0, TensorOptions().device(gpu)));
  EXPECT_EQ(on_gpu.device(), gpu);
  const Tensor b_gpu = binomial(full({100}, 20.0, TensorOptions().device(gpu)),
                                full({100}, 0.3, TensorOptions().device(gpu)));
  manual_seed(13);
  EXPECT_TRUE(on_gpu.to(kCPU).equal(poisson(full({100}, 12.0))));
  EXPECT_TRUE(b_gpu.to(kCPU).equal(binomial(full({100}, 20.0), full({100}, 0.3))));
}

}  // namespace
}  // namespace leangrad
