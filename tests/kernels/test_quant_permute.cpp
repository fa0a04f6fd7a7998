// The byte-permute lookups of Adam8bit's maps (kernels/cpu/quant_permute.h, Note [Byte-permute
// quantisation]) against the plain functions of kernels/quantization_math.h: every code
// dequantised, every float of their domain quantised, and the blocks outside it refused. They
// run only on CPUs with AVX-512 VBMI (chosen at run time, Note [Choosing the permutes at run
// time]); elsewhere these tests report SKIPPED, and only the tables' checks run. The kernel that
// uses them is checked bitwise against the reference loop by test_optim_vectorized.cpp.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <leangrad/kernels/cpu/optim_reference.h>
#include <leangrad/kernels/cpu/quant_permute.h>
#include "testing/float_sweep.h"

namespace leangrad {
namespace {

using kernels::kQuantBlockSize;
using kernels::cpu::quant_permute_supported;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// The buckets separate the thresholds (the constructor checks it) and fit the tables.
TEST(QuantPermute, TablesHoldEveryBucket) {
  const kernels::cpu::QuantPermuteTables& tables = kernels::cpu::quant_permute_tables();
  EXPECT_LE(tables.signed_buckets, 256);
  EXPECT_LE(tables.unsigned_buckets, 512);
}

TEST(QuantPermute, DequantizesEveryCode) {
  if (!quant_permute_supported()) GTEST_SKIP() << "this CPU has no AVX-512 VBMI";
  const kernels::cpu::QuantMaps& maps = kernels::cpu::quant_maps();
  std::vector<std::uint8_t> codes(kQuantBlockSize);
  for (int c = 0; c < kQuantBlockSize; ++c)
    codes[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>((c * 37 + 11) % 256);
  std::vector<float> out(kQuantBlockSize);
  for (const bool is_signed : {true, false}) {
    const float* map = is_signed ? maps.signed_map.data() : maps.unsigned_map.data();
    for (const float absmax : {0.0f, 1.0f, 0.0371f, 1e-40f, 3e38f, kInf}) {
      SCOPED_TRACE(std::string(is_signed ? "signed" : "unsigned") + " absmax " +
                   std::to_string(absmax));
      kernels::cpu::dequantize_block_permute(is_signed, codes.data(), absmax, out.data());
      for (std::size_t j = 0; j < codes.size(); ++j) {
        const float expected = kernels::dequantize_state(map, codes[j], absmax);
        ASSERT_TRUE(std::bit_cast<std::uint32_t>(out[j]) ==
                        std::bit_cast<std::uint32_t>(expected) ||
                    (std::isnan(out[j]) && std::isnan(expected)))
            << "code " << +codes[j] << ": " << out[j] << ", expected " << expected;
      }
    }
  }
}

// Every finite float (signed map) and every finite non-negative one (unsigned map), 256 at a
// time in the order of their bits, gets quantize_state's code; blocks holding NaN or Inf (and,
// unsigned, a negative value) are refused. All 2^32 bit patterns, on every core.
TEST(QuantPermute, QuantizesEveryFloatAsQuantizeState) {
  if (!quant_permute_supported()) GTEST_SKIP() << "this CPU has no AVX-512 VBMI";
  const kernels::cpu::QuantMaps& maps = kernels::cpu::quant_maps();
  for (const bool is_signed : {true, false}) {
    SCOPED_TRACE(is_signed ? "signed" : "unsigned");
    const float* thresholds =
        is_signed ? maps.signed_thresholds.data() : maps.unsigned_thresholds.data();
    test::expect_float_sweep(
        std::uint64_t{1} << 32, kQuantBlockSize, 1,
        [&](std::uint64_t first, std::uint64_t, test::SweepFailures& failures) {
          float x[kQuantBlockSize];
          std::uint8_t codes[kQuantBlockSize] = {};
          bool outside = false;
          for (int j = 0; j < kQuantBlockSize; ++j) {
            const auto bits = static_cast<std::uint32_t>(first + static_cast<std::uint64_t>(j));
            x[j] = std::bit_cast<float>(bits);
            outside |= !std::isfinite(x[j]) || (!is_signed && (bits >> 31) != 0);
          }
          const bool done = kernels::cpu::quantize_block_permute(is_signed, x, 1.0f, codes);
          if (done == outside) {  // refused a block of its domain, or quantised one outside
            failures.add(static_cast<std::uint32_t>(first));
            return;
          }
          if (!done) return;
          for (int j = 0; j < kQuantBlockSize; ++j) {
            if (codes[j] != kernels::quantize_state(thresholds, x[j], 1.0f, is_signed))
              failures.add(std::bit_cast<std::uint32_t>(x[j]));
          }
        });
  }
}

// The scaling by 1 / absmax is the kernel's (value * inv_absmax, rounded once), and a block
// refused leaves the codes as they were.
TEST(QuantPermute, ScalesByTheInverseAbsmaxAndRefusesNonFinite) {
  if (!quant_permute_supported()) GTEST_SKIP() << "this CPU has no AVX-512 VBMI";
  const kernels::cpu::QuantMaps& maps = kernels::cpu::quant_maps();
  std::vector<float> values(kQuantBlockSize);
  for (int j = 0; j < kQuantBlockSize; ++j)
    values[static_cast<std::size_t>(j)] = 0.013f * static_cast<float>(j % 97) - 0.6f;
  const float inv_absmax = kernels::inverse_absmax(0.6f);
  for (const bool is_signed : {true, false}) {
    SCOPED_TRACE(is_signed ? "signed" : "unsigned");
    std::vector<float> x = values;
    if (!is_signed)
      for (float& value : x)
        value = value * value;
    const float* thresholds =
        is_signed ? maps.signed_thresholds.data() : maps.unsigned_thresholds.data();
    std::vector<std::uint8_t> codes(kQuantBlockSize, 7);
    ASSERT_TRUE(
        kernels::cpu::quantize_block_permute(is_signed, x.data(), inv_absmax, codes.data()));
    for (std::size_t j = 0; j < x.size(); ++j)
      ASSERT_EQ(codes[j], kernels::quantize_state(thresholds, x[j], inv_absmax, is_signed)) << j;
    for (const float bad : {kNaN, kInf, -kInf}) {
      std::vector<float> y = x;
      y[100] = bad;
      std::vector<std::uint8_t> kept(kQuantBlockSize, 7);
      EXPECT_FALSE(
          kernels::cpu::quantize_block_permute(is_signed, y.data(), inv_absmax, kept.data()));
      EXPECT_EQ(kept, std::vector<std::uint8_t>(kQuantBlockSize, 7));
    }
    // 0 * Inf: an all-zero block whose absmax made 1 / absmax overflow.
    std::vector<float> zeros(kQuantBlockSize, 0.0f);
    EXPECT_FALSE(kernels::cpu::quantize_block_permute(is_signed, zeros.data(), kInf, codes.data()));
  }
}

}  // namespace
}  // namespace leangrad
