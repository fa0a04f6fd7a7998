// Note [Discrete samplers]
//   Both samplers are PyTorch's (aten/src/ATen/native/Distributions.h), so their draws follow
//   the same distributions by the same acceptance tests; the uniforms come from Philox here, so
//   the values for a seed differ from torch's.
//   - Poisson, rate < 10: count the uniforms whose running product stays above e^-rate (Knuth).
//     Rate 0 gives 0.
//   - Poisson, rate >= 10: PTRS (W. Hormann, "The transformed rejection method for generating
//     Poisson random variables", Insurance: Mathematics and Economics 12, 1993): a candidate k
//     from a uniform U through the inverse of a hat function, accepted at once inside a box
//     under the density (most draws), else by comparing log V against log p(k).
//   - Binomial, count * q < 10 for q = min(p, 1 - p): inversion, counting the geometric waiting
//     times (each ceil(log U / log(1 - q))) that fit in count trials.
//   - Binomial, count * q >= 10: BTRS (W. Hormann, "The generation of binomial random
//     variates", J. Statist. Comput. Simul. 46, 1993), the binomial's transformed rejection with
//     its squeeze, log k! through the Stirling series' tail.
//   For p > 1/2 both draw count - Binomial(count, 1 - p).
#include <leangrad/kernels/discrete_samplers.h>

#include <cmath>
#include <numbers>

#include <leangrad/core/philox.h>
#include <leangrad/kernels/cpu/parallel_for.h>

namespace leangrad::kernels {

namespace {

// Element i's uniforms in [0, 1): two per Philox block of counter (first + i, draw block).
class Uniforms {
 public:
  Uniforms(std::uint64_t seed, std::uint64_t counter) : seed_(seed), counter_(counter) {}

  double next() {
    if (half_ == 0) {
      const std::uint64_t low = counter_;
      const philox::Block c{{static_cast<std::uint32_t>(low), static_cast<std::uint32_t>(low >> 32),
                             static_cast<std::uint32_t>(block_),
                             static_cast<std::uint32_t>(block_ >> 32)}};
      words_ = philox::philox4x32_10(c, static_cast<std::uint32_t>(seed_),
                                     static_cast<std::uint32_t>(seed_ >> 32));
      ++block_;
    }
    const double u = philox::uniform_double(words_.x[2 * half_], words_.x[2 * half_ + 1]);
    half_ ^= 1;
    return u;
  }

 private:
  std::uint64_t seed_;
  std::uint64_t counter_;
  std::uint64_t block_ = 0;
  philox::Block words_{};
  int half_ = 0;
};

double poisson_draw(double rate, Uniforms& u) {
  if (rate >= 10) {
    const double slam = std::sqrt(rate);
    const double loglam = std::log(rate);
    const double b = 0.931 + 2.53 * slam;
    const double a = -0.059 + 0.02483 * b;
    const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
    const double v_r = 0.9277 - 3.6224 / (b - 2);
    for (;;) {
      const double U = u.next() - 0.5;
      const double V = u.next();
      const double us = 0.5 - std::fabs(U);
      const double k = std::floor((2 * a / us + b) * U + rate + 0.43);
      if (us >= 0.07 && V <= v_r) return k;
      if (k < 0 || (us < 0.013 && V > us)) continue;
      if (std::log(V) + std::log(inv_alpha) - std::log(a / (us * us) + b) <=
          -rate + k * loglam - std::lgamma(k + 1))
        return k;
    }
  }
  if (rate == 0) return 0;
  const double threshold = std::exp(-rate);
  double product = 1;
  double k = 0;
  for (;;) {
    product *= u.next();
    if (product <= threshold) return k;
    k += 1;
  }
}

// log k! - ((k + 1/2) log(k + 1) - (k + 1) + log(2 pi) / 2): lgamma's below 10, the series
// 1/(12 m) - 1/(360 m^3) + 1/(1260 m^5), m = k + 1, from there.
double stirling_tail(double k) {
  if (k < 10) {
    const double m = k + 1;
    return std::lgamma(m) - ((k + 0.5) * std::log(m) - m + 0.5 * std::log(2 * std::numbers::pi));
  }
  const double m = k + 1;
  const double m2 = m * m;
  return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / m2) / m2) / m;
}

// Binomial(count, p), p <= 1/2 and count * p >= 10.
double btrs(double count, double p, Uniforms& u) {
  const double stddev = std::sqrt(count * p * (1 - p));
  const double b = 1.15 + 2.53 * stddev;
  const double a = -0.0873 + 0.0248 * b + 0.01 * p;
  const double c = count * p + 0.5;
  const double v_r = 0.92 - 4.2 / b;
  const double r = p / (1 - p);
  const double alpha = (2.83 + 5.1 / b) * stddev;
  const double m = std::floor((count + 1) * p);
  for (;;) {
    const double U = u.next() - 0.5;
    double V = u.next();
    const double us = 0.5 - std::fabs(U);
    const double k = std::floor((2 * a / us + b) * U + c);
    if (k < 0 || k > count) continue;
    if (us >= 0.07 && V <= v_r) return k;
    V = std::log(V * alpha / (a / (us * us) + b));
    const double bound = (m + 0.5) * std::log((m + 1) / (r * (count - m + 1))) +
                         (count + 1) * std::log((count - m + 1) / (count - k + 1)) +
                         (k + 0.5) * std::log(r * (count - k + 1) / (k + 1)) + stirling_tail(m) +
                         stirling_tail(count - m) - stirling_tail(k) - stirling_tail(count - k);
    if (V <= bound) return k;
  }
}

// Binomial(count, p), p <= 1/2: the geometric waiting times that fit in count trials.
double binomial_inversion(double count, double p, Uniforms& u) {
  const double log_q = std::log1p(-p);
  double trials = 0;
  double successes = 0;
  for (;;) {
    trials += std::ceil(std::log(u.next()) / log_q);
    if (trials > count) return successes;
    successes += 1;
  }
}

double binomial_draw(double count, double p, Uniforms& u) {
  if (count == 0 || p == 0) return 0;
  if (p == 1) return count;
  const double q = p <= 0.5 ? p : 1 - p;
  const double k = count * q >= 10 ? btrs(count, q, u) : binomial_inversion(count, q, u);
  return p <= 0.5 ? k : count - k;
}

// Elements per task: each draw is a few Philox blocks and logarithms.
constexpr std::int64_t kDrawGrain = 2048;

}  // namespace

template <typename T>
void poisson(const T* rate, T* out, std::int64_t n, std::uint64_t seed, std::uint64_t first) {
  cpu::parallel_for(n, kDrawGrain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      Uniforms u(seed, first + static_cast<std::uint64_t>(i));
      out[i] = static_cast<T>(poisson_draw(static_cast<double>(rate[i]), u));
    }
  });
}

template <typename T>
void binomial(const T* count, const T* prob, T* out, std::int64_t n, std::uint64_t seed,
              std::uint64_t first) {
  cpu::parallel_for(n, kDrawGrain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      Uniforms u(seed, first + static_cast<std::uint64_t>(i));
      out[i] = static_cast<T>(
          binomial_draw(static_cast<double>(count[i]), static_cast<double>(prob[i]), u));
    }
  });
}

template void poisson<float>(const float*, float*, std::int64_t, std::uint64_t, std::uint64_t);
template void poisson<double>(const double*, double*, std::int64_t, std::uint64_t, std::uint64_t);
template void binomial<float>(const float*, const float*, float*, std::int64_t, std::uint64_t,
                              std::uint64_t);
template void binomial<double>(const double*, const double*, double*, std::int64_t, std::uint64_t,
                               std::uint64_t);

}  // namespace leangrad::kernels
