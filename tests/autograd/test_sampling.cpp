// bernoulli, multinomial and normal with tensor parameters (autograd/sampling_functions.h), and
// randperm (kernels/creation.h): each against its definition computed here by a plain loop from
// the same generator state (Note [Sampling by composition]), and its distribution against the
// probabilities it must have, within 5 standard deviations of the count (a bound the fixed seeds
// either meet or not, on every machine: the draws are Philox's, bit for bit).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/sampling_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/generator.h>
#include <leangrad/core/permutation.h>
#include <leangrad/kernels/creation.h>
#include "testing/tensor_testing.h"

namespace leangrad::test {
namespace {

// |count - n p| <= 5 sqrt(n p (1 - p)): a binomial count within five standard deviations.
void expect_count_near(double count, double n, double p, const char* what) {
  const double sigma = std::sqrt(n * p * (1 - p));
  EXPECT_LE(std::fabs(count - n * p), 5 * sigma)
      << what << ": " << count << " of " << n << ", probability " << p;
}

TEST(Bernoulli, IsUniformBelowP) {
  for (DType dtype : {kFloat32, kFloat64, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor p = rand({7, 33}, kFloat64).to(dtype);
    manual_seed(11);
    const Tensor b = bernoulli(p);
    EXPECT_EQ(b.dtype(), dtype);
    manual_seed(11);
    const DType draw = dtype == kFloat64 ? kFloat64 : kFloat32;
    const auto u = to_vector(rand({7, 33}, draw));
    const auto probability = to_vector(p);
    const auto got = to_vector(b);
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(got[i], u[i] < probability[i] ? 1.0 : 0.0) << "element " << i;
  }
  manual_seed(12);
  const Tensor ones_like_p = ones({5, 5});
  const auto scalar = to_vector(bernoulli(ones_like_p, 0.25));
  manual_seed(12);
  const auto u = to_vector(rand({5, 5}));
  for (std::size_t i = 0; i < u.size(); ++i)
    EXPECT_EQ(scalar[i], u[i] < 0.25 ? 1.0 : 0.0);
}

TEST(Bernoulli, FrequenciesAndTheEnds) {
  manual_seed(13);
  const double n = 1 << 20;
  expect_count_near(sum(bernoulli(full({1 << 20}, 0.3))).item<double>(), n, 0.3, "p 0.3");
  expect_count_near(sum(bernoulli(zeros({1 << 20}), 0.7)).item<double>(), n, 0.7, "p 0.7");
  EXPECT_EQ(sum(bernoulli(zeros({4096}))).item<double>(), 0.0);
  EXPECT_EQ(sum(bernoulli(ones({4096}, kBFloat16))).item<double>(), 4096.0);
  EXPECT_EQ(sum(bernoulli(ones({4096}), 1.0)).item<double>(), 4096.0);
}

// Index j of row r with replacement: the number of c_k <= u, c the row's normalised running sum.
TEST(Multinomial, WithReplacementInvertsTheDistributionFunction) {
  const Tensor weights = tensor(std::vector<double>{1, 0, 3, 6, 0, 2, 2, 0}, {2, 4});
  manual_seed(21);
  const auto got = to_vector(multinomial(weights, 50, true));
  manual_seed(21);
  const auto u = to_vector(rand({2, 50}, kFloat64));
  const auto w = to_vector(weights);
  for (int r = 0; r < 2; ++r) {
    std::vector<double> c(4);
    std::partial_sum(w.begin() + 4 * r, w.begin() + 4 * r + 4, c.begin());
    for (double& v : c)
      v /= c.back();
    for (int s = 0; s < 50; ++s) {
      const double want = static_cast<double>(
          std::count_if(c.begin(), c.end(), [&](double ck) { return ck <= u[50 * r + s]; }));
      ASSERT_EQ(got[50 * r + s], want) << "row " << r << ", sample " << s;
    }
  }
}

TEST(Multinomial, WithReplacementFrequencies) {
  manual_seed(22);
  const std::int64_t n = 1 << 16;
  const Tensor probs = tensor(std::vector<float>{0.1f, 0.0f, 0.3f, 0.6f}, {4});
  const Tensor samples = multinomial(probs, n, true);
  EXPECT_EQ(samples.dtype(), kInt64);
  EXPECT_EQ(samples.shape(), Shape({n}));
  const auto values = to_vector(samples);
  std::vector<double> counts(4, 0);
  for (double v : values)
    counts[static_cast<std::size_t>(v)] += 1;
  EXPECT_EQ(counts[1], 0.0);
  expect_count_near(counts[0], static_cast<double>(n), 0.1, "category 0");
  expect_count_near(counts[2], static_cast<double>(n), 0.3, "category 2");
  expect_count_near(counts[3], static_cast<double>(n), 0.6, "category 3");
}

// Without replacement: the indices of the num_samples largest w_k / -log(u_k), largest first.
TEST(Multinomial, WithoutReplacementTakesTheLargestKeys) {
  const Tensor weights = tensor(std::vector<double>{1, 0, 3, 6, 2, 5, 0, 4, 0.5, 7}, {2, 5});
  manual_seed(23);
  const auto got = to_vector(multinomial(weights, 3));
  manual_seed(23);
  const auto u = to_vector(rand({2, 5}, kFloat64));
  const auto w = to_vector(weights);
  for (int r = 0; r < 2; ++r) {
    std::vector<int> order(5);
    std::iota(order.begin(), order.end(), 0);
    const auto key = [&](int k) {
      return w[5 * r + k] > 0 ? w[5 * r + k] / -std::log(u[5 * r + k]) : -1.0;
    };
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return key(a) > key(b); });
    for (int s = 0; s < 3; ++s)
      EXPECT_EQ(got[3 * r + s], order[static_cast<std::size_t>(s)])
          << "row " << r << ", sample " << s;
  }
}

// The first draw has probability w_j / sum w, the second w_k / (sum w - w_j): over 2^15 rows of
// weights (1, 2, 3), each ordered pair (j, k) has probability w_j / 6 * w_k / (6 - w_j).
TEST(Multinomial, WithoutReplacementDrawsInOrder) {
  manual_seed(24);
  const std::int64_t rows = 1 << 15;
  const Tensor probs = tensor(std::vector<double>{1, 2, 3}, {1, 3}).expand({rows, 3}).contiguous();
  const auto values = to_vector(multinomial(probs, 2));
  std::map<std::pair<int, int>, double> counts;
  for (std::int64_t r = 0; r < rows; ++r) {
    const int j = static_cast<int>(values[2 * r]), k = static_cast<int>(values[2 * r + 1]);
    ASSERT_NE(j, k);
    counts[{j, k}] += 1;
  }
  const double w[] = {1, 2, 3};
  for (int j = 0; j < 3; ++j) {
    for (int k = 0; k < 3; ++k) {
      if (j == k) continue;
      const double p = w[j] / 6 * w[k] / (6 - w[j]);
      expect_count_near(counts[{j, k}], static_cast<double>(rows), p, "ordered pair");
    }
  }
  // Every category of a row once when num_samples is its size.
  const auto all = to_vector(multinomial(tensor(std::vector<float>{0.2f, 0.5f, 0.3f}, {3}), 3));
  std::vector<double> sorted(all.begin(), all.end());
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<double>{0, 1, 2}));
}

TEST(Normal, IsMeanPlusStdTimesRandnAndDifferentiates) {
  const Tensor mean = tensor(std::vector<double>{1, -2, 3}, {3, 1}).requires_grad_(true);
  const Tensor std = tensor(std::vector<double>{0.5, 2}, {1, 2}).requires_grad_(true);
  manual_seed(31);
  const Tensor y = normal(mean, std);
  EXPECT_EQ(y.shape(), Shape({3, 2}));
  manual_seed(31);
  const auto z = to_vector(randn({3, 2}, kFloat64));
  const auto got = to_vector(y);
  const double m[] = {1, -2, 3}, s[] = {0.5, 2};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      EXPECT_EQ(got[2 * i + j], m[i] + s[j] * z[2 * i + j]);
  y.backward(ones({3, 2}, kFloat64));
  EXPECT_EQ(to_vector(mean.grad()), (std::vector<double>{2, 2, 2}));
  const auto std_grad = to_vector(std.grad());
  EXPECT_DOUBLE_EQ(std_grad[0], z[0] + z[2] + z[4]);
  EXPECT_DOUBLE_EQ(std_grad[1], z[1] + z[3] + z[5]);

  manual_seed(32);
  const auto scalar_std = to_vector(normal(full({4}, 10.0), 3.0));
  const auto scalar_mean = to_vector(normal(-1.0, full({4}, 0.0)));
  manual_seed(32);
  const auto z2 = to_vector(randn({4}));
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(scalar_std[i], static_cast<float>(10.0f + 3.0f * static_cast<float>(z2[i])));
    EXPECT_EQ(scalar_mean[i], -1.0);  // std 0: the mean itself
  }
  manual_seed(33);
  const Tensor sized = normal(5.0, 2.0, {1 << 16}, kFloat64);
  EXPECT_EQ(sized.shape(), Shape({1 << 16}));
  // Mean 5 within 5 standard errors (2 / 2^8).
  EXPECT_NEAR(leangrad::mean(sized).item<double>(), 5.0, 5 * 2.0 / 256);
}

TEST(Randperm, IsTheShuffleOfItsGeneratorsCounters) {
  manual_seed(41);
  const Generator::State before = default_generator(Device::cpu()).state();
  const Tensor perm = randperm(1000);
  EXPECT_EQ(perm.dtype(), kInt64);
  std::vector<std::int64_t> want(1000);
  philox_permutation(want.data(), 1000, before.seed, before.offset, 0);
  const auto got = to_vector(perm);
  for (std::size_t i = 0; i < want.size(); ++i)
    ASSERT_EQ(got[i], static_cast<double>(want[i])) << "element " << i;
  EXPECT_EQ(default_generator(Device::cpu()).state().offset, before.offset + 1000);
  std::vector<double> sorted = got;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i)
    ASSERT_EQ(sorted[i], static_cast<double>(i));
  EXPECT_EQ(randperm(0).numel(), 0);
  EXPECT_EQ(to_vector(randperm(1)), (std::vector<double>{0}));
  EXPECT_EQ(randperm(300, kFloat32).dtype(), kFloat32);
}

// Each of the 6 permutations of 3 elements with probability 1/6.
TEST(Randperm, EveryOrderEquallyLikely) {
  manual_seed(42);
  std::map<std::vector<double>, double> counts;
  const int draws = 6000;
  for (int i = 0; i < draws; ++i)
    counts[to_vector(randperm(3))] += 1;
  EXPECT_EQ(counts.size(), 6u);
  for (const auto& [order, count] : counts)
    expect_count_near(count, draws, 1.0 / 6, "a permutation of 3");
}

// On a GPU the samplers draw the same uniforms as on the CPU (random_math.h), so bernoulli,
// multinomial with replacement and randperm give the CPU's results exactly; normal's randn may
// differ by the ulps of the two devices' log, sin and cos (Note [Random fills in lanes]): CUDA's
// log within 1 ulp and sin, cos within 2 (CUDA's math documentation), the CPU's within 0.81 and
// 0.75, so z = sqrt(-2 log u1) cos|sin differs by at most (1.81 / 2 + 1 + 2.75 + 1) u |z| < 6 u
// |z| (u = 2^-52; log's error halved by the square root, both sides' square roots and products
// rounding), and mean + std z rounds once on each side. SKIPPED without a CUDA device.
TEST(SamplingCuda, SameDrawsAsTheCpu) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Device gpu = Device::cuda(0);
  const Tensor p = rand({64, 33}, kFloat64);
  const Tensor weights = rand({8, 100}, kFloat64);
  const auto draw = [&](Device device) {
    manual_seed(51);
    std::vector<std::vector<double>> out;
    out.push_back(to_vector(bernoulli(p.to(device))));
    out.push_back(to_vector(multinomial(weights.to(device), 300, true)));
    out.push_back(to_vector(randperm(513, TensorOptions(kInt64).device(device))));
    out.push_back(
        to_vector(normal(full({1000}, 2.0, TensorOptions(kFloat64).device(device)), 3.0)));
    return out;
  };
  const auto cpu_draws = draw(Device::cpu());
  const auto gpu_draws = draw(gpu);
  EXPECT_EQ(gpu_draws[0], cpu_draws[0]) << "bernoulli";
  EXPECT_EQ(gpu_draws[1], cpu_draws[1]) << "multinomial";
  EXPECT_EQ(gpu_draws[2], cpu_draws[2]) << "randperm";
  constexpr double u = 0x1p-52;
  for (std::size_t i = 0; i < cpu_draws[3].size(); ++i) {
    const double x = cpu_draws[3][i];
    ASSERT_NEAR(gpu_draws[3][i], x,
                6 * u * (std::fabs(x - 2.0) + u * std::fabs(x)) + 2 * u * std::fabs(x));
  }
}

}  // namespace
}  // namespace leangrad::test
