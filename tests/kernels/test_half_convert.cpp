// The array conversions of kernels/cpu/half_convert.h (Note [Vectorised 16-bit conversions])
// against core/half.h's one-value conversions, bitwise: every float16 and bfloat16 value widened,
// every one of the 2^32 floats narrowed (under a sanitizer every test::kSweepStride-th), NaNs among
// finite values, and every length of a vector tail.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <leangrad/core/half.h>
#include <leangrad/kernels/cpu/half_convert.h>

#include "testing/float_sweep.h"
#include "testing/sanitized.h"

namespace leangrad {
namespace {

template <typename T>
float widen_one(T h) {
  if constexpr (std::is_same_v<T, Half>)
    return detail::half_bits_to_float(h.bits);
  else
    return detail::bfloat16_bits_to_float(h.bits);
}

template <typename T>
std::uint16_t narrow_one(float x) {
  if constexpr (std::is_same_v<T, Half>)
    return detail::float_to_half_bits(x);
  else
    return detail::float_to_bfloat16_bits(x);
}

// Every 16-bit pattern in one array: NaNs among the rest, so core/half.h's path for their groups
// of 8; and the array without its NaNs, which F16C converts where the build has it.
template <typename T>
void expect_widens_every_value() {
  std::vector<T> all(65536), finite;
  for (std::uint32_t b = 0; b < 65536; ++b) {
    all[b] = T::from_bits(static_cast<std::uint16_t>(b));
    if (!std::isnan(widen_one(all[b]))) finite.push_back(all[b]);
  }
  for (const std::vector<T>* values : {&all, &finite}) {
    std::vector<float> out(values->size());
    kernels::cpu::widen(values->data(), out.data(), static_cast<std::int64_t>(values->size()));
    for (std::size_t i = 0; i < values->size(); ++i)
      ASSERT_EQ(std::bit_cast<std::uint32_t>(out[i]),
                std::bit_cast<std::uint32_t>(widen_one((*values)[i])))
          << "bits " << std::hex << (*values)[i].bits;
  }
}

TEST(HalfConvert, WidensEveryFloat16) {
  expect_widens_every_value<Half>();
}
TEST(HalfConvert, WidensEveryBFloat16) {
  expect_widens_every_value<BFloat16>();
}

// Every float narrowed in arrays of kChunk consecutive bit patterns, on every core; a group of 8
// holding a NaN takes core/half.h's path, every other one F16C's where the build has it
// (float16).
template <typename T>
void expect_narrows_every_float() {
  constexpr std::uint64_t kChunk = 4096;
  auto check = [](std::uint64_t first, std::uint64_t n, test::SweepFailures& failures) {
    thread_local float in[kChunk];  // each sweep thread's own buffers, made once
    thread_local T out[kChunk];
    for (std::uint64_t i = 0; i < n; ++i)
      in[i] = std::bit_cast<float>(static_cast<std::uint32_t>(first + i));
    kernels::cpu::narrow(in, out, static_cast<std::int64_t>(n));
    for (std::uint64_t i = 0; i < n; ++i)
      if (out[i].bits != narrow_one<T>(in[i])) failures.add(std::bit_cast<std::uint32_t>(in[i]));
  };
  test::expect_float_sweep(std::uint64_t{1} << 32, kChunk, test::kSweepStride, check);
}

TEST(HalfConvert, NarrowsEveryFloatToFloat16) {
  expect_narrows_every_float<Half>();
}
TEST(HalfConvert, NarrowsEveryFloatToBFloat16) {
  expect_narrows_every_float<BFloat16>();
}

// Lengths 0 to 40 from every offset of a buffer of values across the float16 range, with and
// without one NaN (a NaN whose payload F16C would keep): every vector tail, and a NaN anywhere
// in an array sends its group of 8 to core/half.h.
template <typename T>
void expect_every_length() {
  std::vector<float> values;
  for (int i = 0; i < 64; ++i)
    values.push_back(static_cast<float>(i - 31) * 1021.37f / static_cast<float>(1 + i * i));
  const float nan_with_payload = std::bit_cast<float>(0x7fc12345u);
  for (const bool with_nan : {false, true}) {
    for (std::int64_t offset = 0; offset < 8; ++offset) {
      for (std::int64_t n = 0; n + offset <= 48; ++n) {
        std::vector<float> in(values.begin() + offset, values.begin() + offset + n);
        if (with_nan && n > 0) in[static_cast<std::size_t>(n / 2)] = nan_with_payload;
        std::vector<T> narrowed(static_cast<std::size_t>(n));
        std::vector<float> widened(static_cast<std::size_t>(n));
        kernels::cpu::narrow(in.data(), narrowed.data(), n);
        kernels::cpu::widen(narrowed.data(), widened.data(), n);
        for (std::size_t i = 0; i < in.size(); ++i) {
          ASSERT_EQ(narrowed[i].bits, narrow_one<T>(in[i]))
              << "n " << n << ", offset " << offset << ", element " << i;
          ASSERT_EQ(std::bit_cast<std::uint32_t>(widened[i]),
                    std::bit_cast<std::uint32_t>(widen_one(narrowed[i])))
              << "n " << n << ", offset " << offset << ", element " << i;
        }
      }
    }
  }
}

TEST(HalfConvert, EveryLengthFloat16) {
  expect_every_length<Half>();
}
TEST(HalfConvert, EveryLengthBFloat16) {
  expect_every_length<BFloat16>();
}

// The strided conversions (a block of columns gathered into a dense buffer and back): each run
// converted as the array functions do, values between the runs left as they were. Runs of 0,
// 1, 13 and 24 values (a tail, and whole groups of 8), one NaN in the middle of the block.
template <typename T>
void expect_strided() {
  constexpr std::int64_t kRows = 5;
  constexpr std::int64_t kStride = 29;
  constexpr std::uint16_t kUntouched = 0x1234;
  for (const std::int64_t cols : {0, 1, 13, 24}) {
    std::vector<T> src(static_cast<std::size_t>(kRows * kStride));
    for (std::size_t i = 0; i < src.size(); ++i)
      src[i] = T(static_cast<float>(i) * 0.37f - 20.0f);
    if (cols > 0) src[static_cast<std::size_t>(2 * kStride + cols / 2)] = T::from_bits(0x7e01);
    std::vector<float> dense(static_cast<std::size_t>(kRows * cols));
    kernels::cpu::widen_strided(src.data(), kStride, dense.data(), kRows, cols);
    for (std::int64_t r = 0; r < kRows; ++r)
      for (std::int64_t k = 0; k < cols; ++k)
        ASSERT_EQ(
            std::bit_cast<std::uint32_t>(dense[static_cast<std::size_t>(r * cols + k)]),
            std::bit_cast<std::uint32_t>(widen_one(src[static_cast<std::size_t>(r * kStride + k)])))
            << "cols " << cols << ", row " << r << ", " << k;
    for (float& v : dense)
      v = v * 1.5f + 0.25f;  // values that round on the way back
    std::vector<T> back(src.size(), T::from_bits(kUntouched));
    kernels::cpu::narrow_strided(dense.data(), back.data(), kStride, kRows, cols);
    for (std::int64_t r = 0; r < kRows; ++r)
      for (std::int64_t k = 0; k < kStride; ++k) {
        const std::uint16_t want =
            k < cols ? narrow_one<T>(dense[static_cast<std::size_t>(r * cols + k)]) : kUntouched;
        ASSERT_EQ(back[static_cast<std::size_t>(r * kStride + k)].bits, want)
            << "cols " << cols << ", row " << r << ", " << k;
      }
  }
}

TEST(HalfConvert, StridedFloat16) {
  expect_strided<Half>();
}
TEST(HalfConvert, StridedBFloat16) {
  expect_strided<BFloat16>();
}

}  // namespace
}  // namespace leangrad
