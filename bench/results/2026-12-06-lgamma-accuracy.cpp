// lgamma_of_positive (kernels/special_math.h, Note [Log-gamma]) with libm's log and with the CPU
// lanes' log, and glibc's lgamma_r, against long double's lgammal, in ulps of the result: the
// largest error over 2 x 10^6 samples per range (uniform, or log-uniform for the wide ones), and
// over the doubles next to the zeros 1 and 2. The output is in
// 2026-12-06-cpu-lgamma-digamma-in-lanes-zen4-2core.md. From the checkout's root:
//   g++ -O2 -std=c++20 -ffp-contract=off -I. -o /tmp/lgamma_accuracy \
//     bench/results/2026-12-06-lgamma-accuracy.cpp && /tmp/lgamma_accuracy
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include <leangrad/kernels/cpu/double_polynomials.h>
#include <leangrad/kernels/special_math.h>

namespace sm = leangrad::kernels::special_math;

struct LanesLog {
  double operator()(double v) const { return leangrad::kernels::cpu::log_of_positive_normal(v); }
};

double ulps(double got, long double want) {
  int e = 0;
  std::frexp(static_cast<double>(want), &e);
  return static_cast<double>(std::fabs(got - want) / std::ldexp(1.0L, e - 53));
}

double glibc_lgamma(double x) {
  int sign = 0;
  return lgamma_r(x, &sign);
}

int main() {
  std::mt19937_64 rng(1);
  struct Range {
    const char* name;
    double low, high;
    bool logarithmic;
  };
  const Range ranges[] = {{"[1e-300, 1e-3)", 1e-300, 1e-3, true},
                          {"[1e-3, 0.5)", 1e-3, 0.5, false},
                          {"[0.5, 1)", 0.5, 1, false},
                          {"[1, 3)", 1, 3, false},
                          {"[3, 10)", 3, 10, false},
                          {"[10, 1e3)", 10, 1e3, true},
                          {"[1e3, 1e300)", 1e3, 1e300, true}};
  std::printf("| x | ours, libm's log | ours, the lanes' log | glibc's lgamma_r |\n");
  std::printf("| --- | ---: | ---: | ---: |\n");
  for (const Range& r : ranges) {
    double worst[3] = {0, 0, 0};
    for (int i = 0; i < 2000000; ++i) {
      const double x = r.logarithmic ? std::exp(std::uniform_real_distribution<double>(
                                           std::log(r.low), std::log(r.high))(rng))
                                     : std::uniform_real_distribution<double>(r.low, r.high)(rng);
      const long double want = lgammal(x);
      const double got[3] = {sm::lgamma_of_positive(x), sm::lgamma_of_positive(x, LanesLog{}),
                             glibc_lgamma(x)};
      for (int k = 0; k < 3; ++k)
        worst[k] = std::fmax(worst[k], ulps(got[k], want));
    }
    std::printf("| %s | %.3f | %.3f | %.3f |\n", r.name, worst[0], worst[1], worst[2]);
  }
  double worst[3] = {0, 0, 0};
  for (const double zero : {1.0, 2.0}) {
    for (int k = -2000; k <= 2000; ++k) {
      if (k == 0) continue;
      const double step = std::ldexp(1.0, zero == 2.0 ? -51 : -52) * (std::abs(k) > 1000 ? 1e6 : 1);
      const double x = zero + k * step;
      const long double want = lgammal(x);
      const double got[3] = {sm::lgamma_of_positive(x), sm::lgamma_of_positive(x, LanesLog{}),
                             glibc_lgamma(x)};
      for (int j = 0; j < 3; ++j)
        worst[j] = std::fmax(worst[j], ulps(got[j], want));
    }
  }
  std::printf("| next to 1 and 2 | %.3f | %.3f | %.3f |\n", worst[0], worst[1], worst[2]);
}
