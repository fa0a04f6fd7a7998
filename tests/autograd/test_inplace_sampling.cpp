// The in-place random fills (Tensor::uniform_, normal_, exponential_, geometric_, cauchy_,
// log_normal_, bernoulli_, random_) and gumbel_softmax (autograd/sampling_functions.h; Note
// [In-place samplers]). Each against its definition computed here by a plain loop from the same
// generator state, within bounds derived from the roundings on each side; its distribution by
// the Kolmogorov-Smirnov distance to the distribution function or by counts within 5 standard
// deviations (bounds the fixed seeds either meet or not, on every machine: the draws are
// Philox's, bit for bit); and the in-place rules: views, versions, autograd. Misuse: the Sampling
// table of tests/misuse/test_misuse_sampling.cpp.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include <leangrad/autograd/engine.h>
#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/autograd/sampling_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/cuda.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/nn.h>
#include "testing/tensor_testing.h"

namespace leangrad::test {
namespace {

constexpr double kPi = 3.141592653589793238462643383279502884;
constexpr std::int64_t kSamples = 1 << 16;

// The Kolmogorov-Smirnov distance of the samples to the distribution function `cdf`: for n
// independent samples of that distribution, P(D > c / sqrt(n)) is about 2 exp(-2 c^2), 1e-4 for
// c = 2.2; a wrong scale, shift or shape is off by a constant, far above 2.2 / sqrt(65536).
void expect_distribution(const Tensor& samples, const std::function<double(double)>& cdf,
                         const char* what) {
  std::vector<double> x = to_vector(samples);
  std::sort(x.begin(), x.end());
  const double n = static_cast<double>(x.size());
  double d = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double f = cdf(x[i]);
    d = std::max({d, f - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - f});
  }
  EXPECT_LE(d, 2.2 / std::sqrt(n))
      << what << ": Kolmogorov-Smirnov distance over " << x.size() << " samples";
}

// |count - n p| <= 5 sqrt(n p (1 - p)): a binomial count within five standard deviations.
void expect_count_near(double count, double n, double p, const std::string& what) {
  const double sigma = std::sqrt(n * p * (1 - p));
  EXPECT_LE(std::fabs(count - n * p), 5 * sigma)
      << what << ": " << count << " of " << n << ", probability " << p;
}

double normal_cdf(double z) {
  return 0.5 * std::erfc(-z / std::sqrt(2.0));
}

// ---- Against their definitions -----------------------------------------------------------------

// uniform_ and normal_ are rand's and randn's kernels on self: from + (to - from) u as one fma
// of rand's u (exact in float32 too: 24-bit u), and mean + std z of randn's float64 z.
TEST(InPlaceSampling, UniformAndNormalAreRandsAndRandnsDraws) {
  for (DType dtype : {kFloat32, kFloat64}) {
    SCOPED_TRACE(dtype_name(dtype));
    manual_seed(3);
    Tensor x = empty({5, 7}, dtype);
    Tensor& returned = x.uniform_(-2.0, 3.0);
    EXPECT_EQ(&returned, &x);
    manual_seed(3);
    const auto u = to_vector(rand({5, 7}, dtype));
    const auto got = to_vector(x);
    for (std::size_t i = 0; i < u.size(); ++i) {
      const double want = std::fma(u[i], 5.0, -2.0);
      ASSERT_EQ(got[i], dtype == kFloat32 ? static_cast<double>(static_cast<float>(want)) : want)
          << "element " << i;
    }
  }
  manual_seed(4);
  Tensor y = empty({64}, kFloat64);
  y.normal_(1.5, 0.25);
  manual_seed(4);
  const auto z = to_vector(randn({64}, kFloat64));
  const auto got = to_vector(y);
  for (std::size_t i = 0; i < z.size(); ++i)
    ASSERT_EQ(got[i], std::fma(z[i], 0.25, 1.5)) << "element " << i;
}

// exponential_: -log(1 - u) / lambd from float64 uniforms; the tensor log and the C library's
// are each within an ulp or so, then one division and (for float32) one rounding to float32:
// 8 units of the target's roundoff of max(1, |E|) separate them.
TEST(InPlaceSampling, ExponentialIsMinusLogOfOneMinusU) {
  for (DType dtype : {kFloat32, kFloat64}) {
    SCOPED_TRACE(dtype_name(dtype));
    manual_seed(5);
    Tensor x = empty({4, 33}, dtype);
    x.exponential_(2.5);
    manual_seed(5);
    const auto u = to_vector(rand({4, 33}, kFloat64));
    std::vector<double> want(u.size());
    for (std::size_t i = 0; i < u.size(); ++i)
      want[i] = -std::log(1.0 - u[i]) / 2.5;
    EXPECT_TRUE(matches_within_roundoff(x, tensor(want, {4, 33}, kFloat64), {}, {.ulps = 8}));
    EXPECT_GT(min(x).item<double>(), 0.0);
  }
}

// The limits of -log(1 - u) / lambd, as PyTorch 1.13's exponential_ gives them: every value inf at
// lambd 0, every value 0 at an infinite lambd.
TEST(InPlaceSampling, ExponentialAtRatesZeroAndInfinity) {
  const double inf = std::numeric_limits<double>::infinity();
  for (DType dtype : {kFloat32, kFloat64, kFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    EXPECT_TRUE(empty({5}, dtype).exponential_(0.0).equal(full({5}, inf, dtype)));
    EXPECT_TRUE(empty({5}, dtype).exponential_(inf).equal(zeros({5}, dtype)));
  }
}

// geometric_: the least k >= 1 with (1 - p)^k <= 1 - u. Where log(1 - u) / log(1 - p) lies
// within rounding of an integer either neighbour is right; elsewhere the counts are equal.
TEST(InPlaceSampling, GeometricIsTheFirstSuccess) {
  for (DType dtype : {kFloat32, kInt64, kUInt8}) {
    SCOPED_TRACE(dtype_name(dtype));
    manual_seed(6);
    Tensor x = zeros({300}, dtype);
    x.geometric_(0.3);
    manual_seed(6);
    const auto u = to_vector(rand({300}, kFloat64));
    const auto got = to_vector(x);
    for (std::size_t i = 0; i < u.size(); ++i) {
      const double ratio = std::log(1.0 - u[i]) / std::log1p(-0.3);
      const double want = std::max(std::ceil(ratio), 1.0);
      if (std::fabs(ratio - std::round(ratio)) > 1e-9 * std::max(1.0, ratio)) {
        ASSERT_EQ(got[i], std::min(want, 255.0)) << "element " << i;
      }
    }
  }
}

// cauchy_: median + sigma tan(pi (u - 1/2)). tan's slope 1 + t^2 magnifies the argument's two
// roundings (about 2 u pi/2) near the poles; with tan's own error and the affine map, 4 u of
// sigma ((1 + t^2) pi/2 + |t|) plus the final rounding bound the difference.
TEST(InPlaceSampling, CauchyIsTheTangentOfAUniformAngle) {
  manual_seed(7);
  Tensor x = empty({500}, kFloat64);
  x.cauchy_(1.0, 2.0);
  manual_seed(7);
  const auto u = to_vector(rand({500}, kFloat64));
  const auto got = to_vector(x);
  const double unit = std::numeric_limits<double>::epsilon() / 2;
  for (std::size_t i = 0; i < u.size(); ++i) {
    const double t = std::tan(kPi * (u[i] - 0.5));
    const double want = 1.0 + 2.0 * t;
    const double bound =
        4 * unit * 2.0 * ((1 + t * t) * kPi / 2 + std::fabs(t)) + 4 * unit * std::fabs(want);
    ASSERT_LE(std::fabs(got[i] - want), bound) << "element " << i << ", u " << u[i];
  }
}

// log_normal_: exp(mean + std z), z randn's float64 normal. exp turns the exponent's rounding
// (about u |e|) into a relative error of the same size, plus its own ulp.
TEST(InPlaceSampling, LogNormalIsTheExpOfANormal) {
  manual_seed(8);
  Tensor x = empty({500}, kFloat64);
  x.log_normal_(0.5, 1.5);
  manual_seed(8);
  const auto z = to_vector(randn({500}, kFloat64));
  const auto got = to_vector(x);
  const double unit = std::numeric_limits<double>::epsilon() / 2;
  for (std::size_t i = 0; i < z.size(); ++i) {
    const double e = 0.5 + 1.5 * z[i];
    const double want = std::exp(e);
    ASSERT_LE(std::fabs(got[i] - want), 4 * unit * (std::fabs(e) + 4) * want) << "element " << i;
  }
}

// bernoulli_(p) draws as bernoulli(self, p) does, and bernoulli_(tensor p) as bernoulli(p)
// broadcast to self's shape; the methods bernoulli() and bernoulli(p) are the free functions.
TEST(InPlaceSampling, BernoulliIsUniformBelowP) {
  const Tensor like = zeros({6, 9});
  manual_seed(9);
  Tensor x = empty({6, 9});
  x.bernoulli_(0.3);
  manual_seed(9);
  EXPECT_TRUE(equal(x, bernoulli(like, 0.3)));

  const Tensor p = rand({9}, kFloat64);
  manual_seed(10);
  Tensor y = empty({6, 9}, kFloat64);
  y.bernoulli_(p);
  manual_seed(10);
  EXPECT_TRUE(equal(y, bernoulli(p.expand({6, 9}))));

  manual_seed(11);
  const Tensor by_method = p.bernoulli();
  manual_seed(11);
  EXPECT_TRUE(equal(by_method, bernoulli(p)));
  manual_seed(12);
  const Tensor by_method_p = like.bernoulli(0.7);
  manual_seed(12);
  EXPECT_TRUE(equal(by_method_p, bernoulli(like, 0.7)));
}

// ---- Distributions ------------------------------------------------------------------------------

TEST(InPlaceSampling, ContinuousDistributions) {
  manual_seed(21);
  for (DType dtype : {kFloat32, kFloat64}) {
    SCOPED_TRACE(dtype_name(dtype));
    expect_distribution(
        empty({kSamples}, dtype).uniform_(-1.0, 3.0),
        [](double v) { return std::clamp((v + 1.0) / 4.0, 0.0, 1.0); }, "uniform_");
    expect_distribution(
        empty({kSamples}, dtype).normal_(2.0, 0.5),
        [](double v) { return normal_cdf((v - 2.0) / 0.5); }, "normal_");
    expect_distribution(
        empty({kSamples}, dtype).exponential_(3.0),
        [](double v) { return v <= 0 ? 0.0 : -std::expm1(-3.0 * v); }, "exponential_");
    expect_distribution(
        empty({kSamples}, dtype).cauchy_(-1.0, 0.5),
        [](double v) { return 0.5 + std::atan((v + 1.0) / 0.5) / kPi; }, "cauchy_");
    expect_distribution(
        empty({kSamples}, dtype).log_normal_(0.3, 0.8),
        [](double v) { return v <= 0 ? 0.0 : normal_cdf((std::log(v) - 0.3) / 0.8); },
        "log_normal_");
  }
}

TEST(InPlaceSampling, DiscreteDistributions) {
  manual_seed(22);
  const double n = kSamples;
  // geometric: P(k) = (1 - p)^(k-1) p.
  const auto k = to_vector(empty({kSamples}, kInt64).geometric_(0.25));
  EXPECT_GE(*std::min_element(k.begin(), k.end()), 1.0);
  for (int value = 1; value <= 6; ++value)
    expect_count_near(static_cast<double>(std::count(k.begin(), k.end(), value)), n,
                      std::pow(0.75, value - 1) * 0.25, "geometric_ k = " + std::to_string(value));
  // bernoulli_ into every dtype.
  for (DType dtype : {kFloat32, kInt32, kUInt8, kBool}) {
    const Tensor b = empty({kSamples}, dtype).bernoulli_(0.6);
    EXPECT_EQ(b.dtype(), dtype);
    expect_count_near(sum(b.to(kFloat64)).item<double>(), n, 0.6,
                      std::string("bernoulli_ into ") + dtype_name(dtype));
  }
  // random_(from, to): each of the 7 values with probability 1/7.
  for (DType dtype : {kFloat32, kInt64, kInt32, kUInt8}) {
    const auto r = to_vector(empty({kSamples}, dtype).random_(3, 10));
    for (int value = 3; value < 10; ++value)
      expect_count_near(static_cast<double>(std::count(r.begin(), r.end(), value)), n, 1.0 / 7,
                        std::string("random_(3, 10) into ") + dtype_name(dtype) + ", value " +
                            std::to_string(value));
  }
}

// ---- random_'s ranges ---------------------------------------------------------------------------

TEST(InPlaceSampling, RandomRanges) {
  manual_seed(23);
  const auto values = [](const Tensor& t) {
    const auto v = to_vector(t);
    return std::set<double>(v.begin(), v.end());
  };
  // random_(to) is [0, to); a negative from fits a signed dtype.
  EXPECT_EQ(values(zeros({4096}, kInt32).random_(5)), (std::set<double>{0, 1, 2, 3, 4}));
  EXPECT_EQ(values(zeros({4096}).random_(-2, 2)), (std::set<double>{-2, -1, 0, 1}));
  // No upper bound: up to the dtype's largest value.
  EXPECT_EQ(values(zeros({4096}, kUInt8).random_(250, std::nullopt)),
            (std::set<double>{250, 251, 252, 253, 254, 255}));
  EXPECT_EQ(values(zeros({4096}, kBool).random_()), (std::set<double>{0, 1}));
  const auto bytes = values(zeros({4096}, kUInt8).random_());
  EXPECT_EQ(bytes.size(), 256u);  // every byte, from 4096 draws (each missed with p < 1e-6)
  // float32: integers in [0, 2^24], the upper half reached.
  const auto floats = to_vector(zeros({4096}).random_());
  for (double v : floats)
    ASSERT_TRUE(v >= 0 && v <= 16777216.0 && v == std::floor(v)) << v;
  EXPECT_GT(*std::max_element(floats.begin(), floats.end()), 8388608.0);
  // int64: [0, 2^63) exactly, from two 32-bit draws: values above 2^53 with odd low bits (a
  // double in the way would make every one even).
  const Tensor big = zeros({4096}, kInt64).random_();
  const auto* bits = big.data_ptr<std::int64_t>();
  int above = 0, odd_above = 0, top_half = 0;
  for (std::int64_t i = 0; i < big.numel(); ++i) {
    ASSERT_GE(bits[i], 0) << "element " << i;
    above += bits[i] > (std::int64_t{1} << 53);
    odd_above += bits[i] > (std::int64_t{1} << 53) && bits[i] % 2 == 1;
    top_half += bits[i] >= (std::int64_t{1} << 62);
  }
  EXPECT_GT(above, 4000);
  EXPECT_GT(odd_above, 1500);
  expect_count_near(top_half, 4096, 0.5, "random_() of int64 in [2^62, 2^63)");
  // A low bound beyond 2^53 is added in int64: exactly [2^60, 2^60 + 4).
  const std::int64_t from = std::int64_t{1} << 60;
  const Tensor shifted = zeros({256}, kInt64).random_(from, from + 4);
  std::set<std::int64_t> seen;
  const Tensor cpu = shifted.contiguous();
  const auto* data = cpu.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < cpu.numel(); ++i)
    seen.insert(data[i]);
  EXPECT_EQ(seen, (std::set<std::int64_t>{from, from + 1, from + 2, from + 3}));
}

// ---- In place -----------------------------------------------------------------------------------

// A view's elements are written and nothing else; the version counter moves; the same seed gives
// the same values, and a non-contiguous view gets the values a contiguous tensor would, in its
// row-major order.
TEST(InPlaceSampling, WritesViewsInPlace) {
  Tensor base = zeros({4, 6});
  const auto version = base.version();
  Tensor left = base.narrow(1, 0, 3);
  left.exponential_();
  EXPECT_GT(base.version(), version);
  EXPECT_GT(min(base.narrow(1, 0, 3)).item<double>(), 0.0);
  EXPECT_EQ(max_abs(base.narrow(1, 3, 3)), 0.0);

  for (const auto& fill : std::vector<std::function<void(Tensor&)>>{
           [](Tensor& t) { t.uniform_(); }, [](Tensor& t) { t.normal_(); },
           [](Tensor& t) { t.exponential_(); }, [](Tensor& t) { t.cauchy_(); },
           [](Tensor& t) { t.log_normal_(); }, [](Tensor& t) { t.geometric_(0.5); },
           [](Tensor& t) { t.bernoulli_(); }, [](Tensor& t) { t.random_(0, 100); }}) {
    Tensor wide = zeros({6, 4});
    Tensor transposed = wide.t();  // (4, 6), not contiguous
    manual_seed(31);
    fill(transposed);
    Tensor plain = zeros({4, 6});
    manual_seed(31);
    fill(plain);
    EXPECT_TRUE(equal(transposed, plain));
  }
}

// A leaf that requires grad is refused (outside NoGradGuard), as PyTorch's; a tensor computed
// from one keeps requiring grad, with a zero gradient: nothing of its old value survives.
TEST(InPlaceSampling, Autograd) {
  Tensor leaf = ones({3}).requires_grad_();
  EXPECT_THROW_MSG(leaf.uniform_(),
                   "uniform_: in-place operation on a leaf tensor that requires grad");
  EXPECT_THROW_MSG(leaf.random_(4),
                   "random_: in-place operation on a leaf tensor that requires grad");
  {
    NoGradGuard no_grad;
    leaf.normal_();
  }
  EXPECT_TRUE(leaf.requires_grad());

  Tensor x = ones({3}).requires_grad_();
  Tensor y = mul(x, 2.0);
  y.exponential_();
  ASSERT_TRUE(y.requires_grad());
  add(sum(y), sum(mul(x, 3.0))).backward();
  EXPECT_TRUE(equal(x.grad(), full({3}, 3.0)));  // only the second term's
}

// ---- gumbel_softmax -----------------------------------------------------------------------------

// softmax((logits - log E) / tau) with E from exponential_ under the same seed, bit for bit; the
// F:: options form is the same call.
TEST(GumbelSoftmax, IsSoftmaxOfGumbelPerturbedLogits) {
  const Tensor logits = randn({5, 4}, kFloat64);
  manual_seed(41);
  const Tensor got = gumbel_softmax(logits, 0.7, false, 1);
  manual_seed(41);
  Tensor e = empty({5, 4}, kFloat64);
  e.exponential_();
  EXPECT_TRUE(equal(got, softmax(div(add(logits, neg(log(e))), 0.7), 1)));
  manual_seed(41);
  namespace F = nn::functional;
  EXPECT_TRUE(equal(F::gumbel_softmax(logits, F::GumbelSoftmaxFuncOptions().tau(0.7).dim(1)), got));
  // Along dim 0: the noise is the same, the softmax another.
  manual_seed(41);
  EXPECT_TRUE(
      equal(gumbel_softmax(logits, 0.7, false, 0), softmax(div(add(logits, neg(log(e))), 0.7), 0)));
}

// The Gumbel-max trick: the argmax of logits + Gumbel noise is category k with probability
// softmax(logits)_k, whatever tau; a hard sample is its one-hot, to within the two roundings of
// 1 - s + s.
TEST(GumbelSoftmax, HardSamplesFollowTheSoftmax) {
  const Tensor logits = tensor(std::vector<double>{1.0, -0.5, 0.0, 2.0}, {1, 4}, kFloat32);
  const std::int64_t n = 20000;
  manual_seed(42);
  const Tensor y = gumbel_softmax(logits.expand({n, 4}), 0.3, true);
  const auto p = to_vector(softmax(logits.to(kFloat64), 1));
  const auto counts = to_vector(sum(y.to(kFloat64), {0}));
  for (int k = 0; k < 4; ++k)
    expect_count_near(counts[static_cast<std::size_t>(k)], static_cast<double>(n),
                      p[static_cast<std::size_t>(k)], "category " + std::to_string(k));
  const Tensor one_hot_error = sub(y, round(y));
  EXPECT_LE(max_abs(one_hot_error), 2 * math_unit_roundoff(kFloat32));
  EXPECT_TRUE(equal(sum(round(y), {1}), ones({n})));
}

// 16-bit logits get their noise drawn in float32 (a float16 exponential would round its
// smallest draws to 0: noise +inf, NaN samples) and cast: the sample keeps the logits' dtype,
// every value finite, each row summing to 1 within the dtype's rounding of its 4 terms; float32
// logits draw float32 noise, as drawing it directly does.
TEST(GumbelSoftmax, SixteenBitLogits) {
  for (DType dtype : {kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    manual_seed(44);
    const Tensor y = gumbel_softmax(zeros({1 << 16, 4}, dtype), 0.5);
    EXPECT_EQ(y.dtype(), dtype);
    EXPECT_TRUE(all(isfinite(y)).item<bool>());
    const double unit = dtype == kFloat16 ? 1.0 / 2048 : 1.0 / 256;
    EXPECT_LE(max_abs(sub(sum(y.to(kFloat32), {1}), 1.0)), 8 * unit);
    // The noise is float32's -log E cast to the dtype (E rounded to float32, not to 16 bits).
    const Tensor logits = randn({5, 4}).to(dtype);
    manual_seed(46);
    const Tensor got = gumbel_softmax(logits, 0.5);
    manual_seed(46);
    Tensor e = empty({5, 4});
    e.exponential_();
    EXPECT_TRUE(equal(got, softmax(div(add(logits, neg(log(e)).to(dtype)), 0.5), -1)));
  }
  const Tensor logits = randn({3, 5});
  manual_seed(45);
  const Tensor got = gumbel_softmax(logits, 2.0);
  manual_seed(45);
  Tensor e = empty({3, 5});
  e.exponential_();
  EXPECT_TRUE(equal(got, softmax(div(add(logits, neg(log(e))), 2.0), -1)));
}

// Straight-through: a hard sample's gradient is the soft sample's (same noise, same seed).
TEST(GumbelSoftmax, HardGradientIsTheSoftOnes) {
  const Tensor w = randn({3, 5}, kFloat64);
  const Tensor start = randn({3, 5}, kFloat64);
  Tensor soft_logits = start.clone().requires_grad_();
  Tensor hard_logits = start.clone().requires_grad_();
  manual_seed(43);
  sum(mul(gumbel_softmax(soft_logits, 0.5), w)).backward();
  manual_seed(43);
  const Tensor hard = gumbel_softmax(hard_logits, 0.5, true);
  sum(mul(hard, w)).backward();
  EXPECT_TRUE(matches_within_roundoff(hard_logits.grad(), soft_logits.grad(), {}, {.ulps = 4}));
  EXPECT_GT(max_abs(soft_logits.grad()), 0.0);
}

// ---- CUDA ---------------------------------------------------------------------------------------

// The CUDA fills draw the same float64 uniforms as the CPU's (Philox, bit for bit); the values
// then differ by the two devices' log, tan and exp (within 2 ulps each on CUDA, 1 on the CPU),
// carried as in the CPU tests above. SKIPPED without a CUDA device.
TEST(InPlaceSamplingCuda, SameDrawsAsTheCpu) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Device gpu(DeviceType::CUDA, 0);
  for (DType dtype : {kFloat32, kFloat64}) {
    SCOPED_TRACE(dtype_name(dtype));
    manual_seed(51);
    Tensor on_gpu = empty({1000}, TensorOptions(dtype).device(gpu));
    on_gpu.exponential_(1.5);
    manual_seed(51);
    Tensor on_cpu = empty({1000}, dtype);
    on_cpu.exponential_(1.5);
    EXPECT_TRUE(matches_within_roundoff(on_gpu.to(kCPU), on_cpu, {}, {.ulps = 8}));
    manual_seed(52);
    const Tensor r_gpu = empty({1000}, TensorOptions(dtype).device(gpu)).random_(-5, 5);
    manual_seed(52);
    EXPECT_TRUE(equal(r_gpu.to(kCPU), empty({1000}, dtype).random_(-5, 5)));
  }
}

}  // namespace
}  // namespace leangrad::test
