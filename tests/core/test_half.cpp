// Tests of the float16 and bfloat16 conversions (core/half.h) against an independent reference
// built with std::ldexp: exact decoding of every bit pattern, round-to-nearest-even at every
// midpoint between neighbours, subnormals, overflow to infinity and NaN handling.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include <leangrad/core/half.h>

namespace leangrad {
namespace {

constexpr float kInfinity = std::numeric_limits<float>::infinity();

float float_from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// IEEE binary16 decoded with plain arithmetic.
double reference_half_value(std::uint16_t bits) {
  const int sign = bits >> 15;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  double magnitude = 0;
  if (exponent == 0x1f) {
    magnitude = mantissa == 0 ? std::numeric_limits<double>::infinity()
                              : std::numeric_limits<double>::quiet_NaN();
  } else if (exponent == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), -24);
  } else {
    magnitude = std::ldexp(1.0 + mantissa / 1024.0, exponent - 15);
  }
  return sign ? -magnitude : magnitude;
}

bool is_half_nan(std::uint16_t bits) {
  return (bits & 0x7c00) == 0x7c00 && (bits & 0x3ff) != 0;
}
bool is_bfloat16_nan(std::uint16_t bits) {
  return (bits & 0x7f80) == 0x7f80 && (bits & 0x7f) != 0;
}

TEST(Half, KnownValues) {
  EXPECT_EQ(Half(0.0f).bits, 0x0000);
  EXPECT_EQ(Half(-0.0f).bits, 0x8000);
  EXPECT_EQ(Half(1.0f).bits, 0x3c00);
  EXPECT_EQ(Half(-2.0f).bits, 0xc000);
  EXPECT_EQ(Half(65504.0f).bits, 0x7bff);  // largest finite
  EXPECT_EQ(Half(0.5f).bits, 0x3800);
  EXPECT_EQ(static_cast<float>(Half::from_bits(0x3555)), 0.333251953125f);
}

TEST(Half, DecodesEveryBitPatternExactly) {
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const float value = Half::from_bits(bits);
    const double expected = reference_half_value(bits);
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(value)) << "bits " << b;
    } else {
      ASSERT_EQ(static_cast<double>(value), expected) << "bits " << b;
      if (expected == 0) {
        EXPECT_EQ(std::signbit(value), (bits & 0x8000) != 0) << "bits " << b;
      }
    }
  }
}

TEST(Half, RoundTripsEveryBitPattern) {
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const Half back(static_cast<float>(Half::from_bits(bits)));
    if (is_half_nan(bits)) {
      EXPECT_TRUE(is_half_nan(back.bits)) << "bits " << b;  // NaN stays NaN
    } else {
      ASSERT_EQ(back.bits, bits) << "bits " << b;
    }
  }
}

TEST(Half, RoundsToNearestEvenAtEveryMidpoint) {
  // Between every pair of adjacent finite positive halves (subnormals included): the midpoint
  // goes to the one with an even mantissa, and one float step either side to the nearer one.
  for (std::uint16_t lo = 0; lo < 0x7bff; ++lo) {
    const auto hi = static_cast<std::uint16_t>(lo + 1);
    const double mid = (reference_half_value(lo) + reference_half_value(hi)) / 2;
    const auto mid_f = static_cast<float>(mid);
    ASSERT_EQ(static_cast<double>(mid_f), mid);  // exact in float
    const std::uint16_t even = (lo & 1) == 0 ? lo : hi;
    ASSERT_EQ(Half(mid_f).bits, even) << "midpoint above bits " << lo;
    ASSERT_EQ(Half(std::nextafter(mid_f, 0.0f)).bits, lo) << "below midpoint above " << lo;
    ASSERT_EQ(Half(std::nextafter(mid_f, kInfinity)).bits, hi) << "above midpoint above " << lo;
    ASSERT_EQ(Half(-mid_f).bits, even | 0x8000) << "negative midpoint above bits " << lo;
  }
}

TEST(Half, Subnormals) {
  const float smallest = std::ldexp(1.0f, -24);
  EXPECT_EQ(Half(smallest).bits, 0x0001);
  EXPECT_EQ(Half(smallest / 2).bits, 0x0000);  // tie with 0: even is 0
  EXPECT_EQ(Half(std::nextafter(smallest / 2, 1.0f)).bits, 0x0001);
  EXPECT_EQ(Half(smallest * 1.5f).bits, 0x0002);           // tie between 1 and 2: even
  EXPECT_EQ(Half(std::ldexp(1.0f, -30)).bits, 0x0000);     // underflow to zero
  EXPECT_EQ(Half(-std::ldexp(1.0f, -30)).bits, 0x8000);    // keeps the sign
  EXPECT_EQ(Half(std::ldexp(1023.0f, -24)).bits, 0x03ff);  // largest subnormal
  EXPECT_EQ(Half(std::ldexp(1.0f, -14)).bits, 0x0400);     // smallest normal
}

TEST(Half, OverflowGoesToInfinity) {
  EXPECT_EQ(Half(65519.0f).bits, 0x7bff);  // below the midpoint to 2^16: rounds down
  EXPECT_EQ(Half(65520.0f).bits, 0x7c00);  // the midpoint: rounds to even, which is infinity
  EXPECT_EQ(Half(1e10f).bits, 0x7c00);
  EXPECT_EQ(Half(-1e10f).bits, 0xfc00);
  EXPECT_EQ(Half(std::numeric_limits<float>::infinity()).bits, 0x7c00);
  EXPECT_EQ(Half(-std::numeric_limits<float>::infinity()).bits, 0xfc00);
  EXPECT_TRUE(std::isinf(static_cast<float>(Half::from_bits(0x7c00))));
}

TEST(Half, NaNStaysNaN) {
  EXPECT_TRUE(is_half_nan(Half(std::numeric_limits<float>::quiet_NaN()).bits));
  EXPECT_TRUE(is_half_nan(Half(-std::numeric_limits<float>::quiet_NaN()).bits));
  // NaN payloads only in the low float bits (which float -> half drops) stay NaN.
  EXPECT_TRUE(is_half_nan(Half(float_from_bits(0x7f800001u)).bits));
  EXPECT_TRUE(is_half_nan(Half(float_from_bits(0xffc00000u)).bits));
  EXPECT_TRUE(std::isnan(static_cast<float>(Half::from_bits(0x7e00))));
  EXPECT_TRUE(std::isnan(static_cast<float>(Half::from_bits(0xfc01))));
}

TEST(HalfBFloat16, KnownValues) {
  EXPECT_EQ(BFloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(BFloat16(-2.0f).bits, 0xc000);
  EXPECT_EQ(BFloat16(0.0f).bits, 0x0000);
  EXPECT_EQ(BFloat16(-0.0f).bits, 0x8000);
  EXPECT_EQ(static_cast<float>(BFloat16::from_bits(0x4049)), 3.140625f);
}

TEST(HalfBFloat16, RoundTripsEveryBitPattern) {
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const float value = BFloat16::from_bits(bits);
    ASSERT_EQ(value == value, !is_bfloat16_nan(bits)) << "bits " << b;
    const BFloat16 back(value);
    if (is_bfloat16_nan(bits)) {
      EXPECT_TRUE(is_bfloat16_nan(back.bits)) << "bits " << b;
    } else {
      ASSERT_EQ(back.bits, bits) << "bits " << b;  // subnormals and infinities included
    }
  }
}

TEST(HalfBFloat16, RoundsToNearestEvenAtEveryMidpoint) {
  // Adjacent positive finite bfloat16 values lo, lo + 1: the midpoint is exact in float.
  for (std::uint16_t lo = 0; lo < 0x7f7f; ++lo) {
    const auto hi = static_cast<std::uint16_t>(lo + 1);
    const double mid = (static_cast<double>(static_cast<float>(BFloat16::from_bits(lo))) +
                        static_cast<double>(static_cast<float>(BFloat16::from_bits(hi)))) /
                       2;
    const auto mid_f = static_cast<float>(mid);
    ASSERT_EQ(static_cast<double>(mid_f), mid);
    const std::uint16_t even = (lo & 1) == 0 ? lo : hi;
    ASSERT_EQ(BFloat16(mid_f).bits, even) << "midpoint above bits " << lo;
    ASSERT_EQ(BFloat16(std::nextafter(mid_f, 0.0f)).bits, lo) << "below midpoint " << lo;
    ASSERT_EQ(BFloat16(std::nextafter(mid_f, kInfinity)).bits, hi) << "above midpoint " << lo;
  }
}

TEST(HalfBFloat16, OverflowAndNaN) {
  // FLT_MAX is past the midpoint between the largest bfloat16 and 2^128: rounds to infinity.
  EXPECT_EQ(BFloat16(std::numeric_limits<float>::max()).bits, 0x7f80);
  EXPECT_EQ(BFloat16(std::numeric_limits<float>::infinity()).bits, 0x7f80);
  EXPECT_EQ(BFloat16(-std::numeric_limits<float>::infinity()).bits, 0xff80);
  EXPECT_TRUE(is_bfloat16_nan(BFloat16(std::numeric_limits<float>::quiet_NaN()).bits));
  // A NaN whose payload sits only in the dropped low bits must not become infinity.
  EXPECT_TRUE(is_bfloat16_nan(BFloat16(float_from_bits(0x7f800001u)).bits));
  EXPECT_TRUE(is_bfloat16_nan(BFloat16(float_from_bits(0xff800001u)).bits));
}

}  // namespace
}  // namespace leangrad
