// kernels/cpu/double_polynomials.h: log, sin with cos, and exp of double against long double's
// logl, sinl, cosl and expl (64-bit significands: 2^-11 of a double's ulp), within the bounds the
// header states (Note [Double polynomials]). The arguments are every one the float32 Box-Muller
// pairs of normal_ can produce (u1 = 1 - k 2^-24 and angle 2 pi k 2^-24, all 2^24 of each), samples
// of those of float64 (53-bit uniforms) and of the rest of sin_cos_moderate's range, and the hard
// cases: near 1 for log, next to multiples of pi/2 for sin and cos (every multiple up to 2^20);
// for exp, samples of its whole range and of small arguments, the subnormal results and the ends.
// Under a sanitizer the 2^24 of each and the multiples are swept in steps of test::kSweepStride,
// and the samples are 64 times fewer.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include <leangrad/kernels/cpu/double_polynomials.h>
#include <leangrad/kernels/random_math.h>
#include "testing/sanitized.h"

namespace leangrad::test {
namespace {

namespace cpu = kernels::cpu;

// |got - exact| in units of the last place of the exact value rounded to double.
double ulps(double got, long double exact) {
  const double rounded = static_cast<double>(exact);
  if (rounded == 0.0) return got == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
  int exponent = 0;
  std::frexp(rounded, &exponent);  // |rounded| in [2^(exponent - 1), 2^exponent)
  const long double ulp = std::ldexp(1.0L, exponent - 53);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - exact) / ulp);
}

// The worst of log's errors over the arguments, and where.
struct Worst {
  double ulps = 0;
  double at = 0;
  void take(double u, double x) {
    if (!(u <= ulps)) {
      ulps = u;
      at = x;
    }
  }
};

void check_log(double x, Worst& worst) {
  worst.take(ulps(cpu::log_of_positive_normal(x), logl(static_cast<long double>(x))), x);
}

void check_sin_cos(double a, Worst& sin_worst, Worst& cos_worst) {
  const cpu::SinCos got = cpu::sin_cos_moderate(a);
  sin_worst.take(ulps(got.sin, sinl(static_cast<long double>(a))), a);
  cos_worst.take(ulps(got.cos, cosl(static_cast<long double>(a))), a);
}

// A fixed sequence of 53-bit uniforms in [0, 1) (splitmix64).
struct Uniforms {
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  double next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1p-53;
  }
};

TEST(DoublePolynomials, LogOverBoxMullerArgumentsAndNearOne) {
  Worst worst;
  for (std::uint32_t k = 0; k < (1u << 24); k += kSweepStride)
    check_log(1.0 - static_cast<double>(k) * 0x1p-24, worst);  // float32's u1, 1 down to 2^-24
  Uniforms u;
  for (int i = 0; i < (kSanitized ? 1 << 14 : 1 << 20); ++i) {
    check_log(1.0 - u.next(), worst);                                    // float64's u1
    check_log(std::exp2(-1022.0 * u.next()), worst);                     // every binade of normals
    check_log(1.0 + (u.next() - 0.5) * 0x1p-20, worst);                  // 1 + tiny, both sides
    check_log(0.70710678118654752 * (1.0 + 0x1p-30 * u.next()), worst);  // the split at sqrt(1/2)
  }
  for (double x : {1.0, std::numeric_limits<double>::min(), std::numeric_limits<double>::max(),
                   std::nextafter(1.0, 0.0), std::nextafter(1.0, 2.0), 0x1p-53, 2.0, 0.5})
    check_log(x, worst);
  EXPECT_EQ(cpu::log_of_positive_normal(1.0), 0.0);
  EXPECT_LE(worst.ulps, cpu::kLogDoubleMaxUlps) << "at x = " << worst.at;
  RecordProperty("log_max_ulps", std::to_string(worst.ulps));
}

TEST(DoublePolynomials, SinCosOverBoxMullerAnglesAndNearMultiplesOfHalfPi) {
  Worst sin_worst, cos_worst;
  for (std::uint32_t k = 0; k < (1u << 24); k += kSweepStride)  // float32's angles, 2 pi k 2^-24
    check_sin_cos(random_math::kTwoPi * (static_cast<double>(k) * 0x1p-24), sin_worst, cos_worst);
  Uniforms u;
  for (int i = 0; i < (kSanitized ? 1 << 15 : 1 << 21); ++i)  // float64's angles
    check_sin_cos(random_math::kTwoPi * u.next(), sin_worst, cos_worst);
  // The doubles next to n pi/2, n = 1 .. 3, and below 2 pi, where r cancels most.
  for (int n = 1; n <= 4; ++n) {
    const double multiple = static_cast<double>(n) * 1.57079632679489661923;
    double below = multiple, above = multiple;
    for (int step = 0; step < 4096; ++step) {
      below = std::nextafter(below, 0.0);
      above = std::nextafter(above, 8.0);
      check_sin_cos(below, sin_worst, cos_worst);
      if (above < random_math::kTwoPi) check_sin_cos(above, sin_worst, cos_worst);
    }
    if (multiple < random_math::kTwoPi) check_sin_cos(multiple, sin_worst, cos_worst);
  }
  const cpu::SinCos at_zero = cpu::sin_cos_moderate(0.0);
  EXPECT_EQ(at_zero.sin, 0.0);
  EXPECT_EQ(at_zero.cos, 1.0);
  EXPECT_LE(sin_worst.ulps, cpu::kSinCosDoubleMaxUlps) << "sin, at a = " << sin_worst.at;
  EXPECT_LE(cos_worst.ulps, cpu::kSinCosDoubleMaxUlps) << "cos, at a = " << cos_worst.at;
  RecordProperty("sin_max_ulps", std::to_string(sin_worst.ulps));
  RecordProperty("cos_max_ulps", std::to_string(cos_worst.ulps));
}

// The rest of the range, |a| <= 2^20 (the Bessel functions' Hankel forms): samples of both signs,
// and the double nearest each multiple n pi/2 with its neighbours, where r cancels most (down to
// 2^-60.5 at n = 29: tools/double_sin_cos_hard_cases.py) and a wrong n P3 or n P4 would show.
TEST(DoublePolynomials, SinCosUpToTwoToThe20AndNextToEveryMultipleOfHalfPi) {
  Worst sin_worst, cos_worst;
  Uniforms u;
  for (int i = 0; i < (kSanitized ? 1 << 14 : 1 << 20); ++i) {
    const double a = std::ldexp(u.next(), static_cast<int>(u.next() * 21.0));  // [0, 2^20)
    check_sin_cos(i % 2 == 0 ? a : -a, sin_worst, cos_worst);
  }
  constexpr long double kHalfPi = 1.570796326794896619231321691639751442L;
  const auto last = static_cast<std::int64_t>(cpu::kSinCosModerateLimit / kHalfPi);
  for (std::int64_t n = 1; n <= last; n += kSweepStride) {
    const double multiple = static_cast<double>(static_cast<long double>(n) * kHalfPi);
    const double sign = n % 2 == 0 ? 1.0 : -1.0;
    check_sin_cos(sign * multiple, sin_worst, cos_worst);
    check_sin_cos(sign * std::nextafter(multiple, 0.0), sin_worst, cos_worst);
    check_sin_cos(sign * std::nextafter(multiple, 0x1p21), sin_worst, cos_worst);
  }
  check_sin_cos(cpu::kSinCosModerateLimit, sin_worst, cos_worst);
  check_sin_cos(-cpu::kSinCosModerateLimit, sin_worst, cos_worst);
  EXPECT_LE(sin_worst.ulps, cpu::kSinCosDoubleMaxUlps) << "sin, at a = " << sin_worst.at;
  EXPECT_LE(cos_worst.ulps, cpu::kSinCosDoubleMaxUlps) << "cos, at a = " << cos_worst.at;
  RecordProperty("sin_max_ulps", std::to_string(sin_worst.ulps));
  RecordProperty("cos_max_ulps", std::to_string(cos_worst.ulps));
}

// e^x: samples where the result is a normal double (x in [-708.39, 709.78]) and of small |x|
// (2^-60 to 1), within kExpDoubleMaxUlps; the subnormal results, rounded a second time, within
// 0.5 + kExpDoubleMaxUlps of their spacing (2^-1074); the ends and NaN.
TEST(DoublePolynomials, ExpOverItsRange) {
  Worst worst;
  Uniforms u;
  const auto check = [&](double x) {
    worst.take(ulps(cpu::exp_of_double(x), expl(static_cast<long double>(x))), x);
  };
  for (int i = 0; i < (kSanitized ? 1 << 15 : 1 << 21); ++i) {
    check(-708.39 + 1418.17 * u.next());
    check((u.next() - 0.5) * std::ldexp(2.0, -static_cast<int>(u.next() * 60.0)));
  }
  for (const double x : {0.0, -0.0, 1.0, -1.0, 0.5 * 0.69314718055994531, 709.78, -708.39})
    check(x);
  EXPECT_LE(worst.ulps, cpu::kExpDoubleMaxUlps) << "at x = " << worst.at;
  RecordProperty("exp_max_ulps", std::to_string(worst.ulps));
  double subnormal_worst = 0;
  for (int i = 0; i < (kSanitized ? 1 << 10 : 1 << 16); ++i) {
    const double x = -745.13 + (745.13 - 708.40) * u.next();
    const long double exact = expl(static_cast<long double>(x));
    const long double error = std::fabs(static_cast<long double>(cpu::exp_of_double(x)) - exact);
    subnormal_worst = std::max(subnormal_worst, static_cast<double>(error * 0x1p1074L));
  }
  EXPECT_LE(subnormal_worst, 0.5 + cpu::kExpDoubleMaxUlps);
  EXPECT_EQ(cpu::exp_of_double(0.0), 1.0);
  EXPECT_EQ(cpu::exp_of_double(709.79), std::numeric_limits<double>::infinity());
  EXPECT_EQ(cpu::exp_of_double(std::numeric_limits<double>::infinity()),
            std::numeric_limits<double>::infinity());
  EXPECT_EQ(cpu::exp_of_double(-745.14), 0.0);
  EXPECT_EQ(cpu::exp_of_double(-std::numeric_limits<double>::infinity()), 0.0);
  EXPECT_EQ(cpu::exp_of_double(-745.13), std::numeric_limits<double>::denorm_min());
  EXPECT_TRUE(std::isnan(cpu::exp_of_double(std::numeric_limits<double>::quiet_NaN())));
}

}  // namespace
}  // namespace leangrad::test
