// The code tables of the dynamic quantisation maps (kernels/cpu/quant_code_table.h,
// Note [Code table]): each bucket's first code and its threshold, checked to be at most one.
#include <leangrad/kernels/cpu/quant_code_table.h>

#include <limits>

#include <leangrad/core/error.h>
#include <leangrad/kernels/cpu/optim_reference.h>

namespace leangrad::kernels::cpu {

QuantCodeTable::QuantCodeTable(const float* thresholds, bool is_signed)
    : entries_(2 * kBucketsPerSign) {
  nan_code_ = quantize_state(thresholds, std::numeric_limits<float>::quiet_NaN(), 1.0f, is_signed);
  constexpr std::uint32_t kLowBits = 0xffffu;
  for (int b = 0; b < kBucketsPerSign; ++b) {
    // The bucket's magnitudes [low, high]: the floats whose top 16 bits (sign aside) are b's.
    const std::uint32_t top_bits = static_cast<std::uint32_t>(b + (kFirstExponent << kMantissaBits))
                                   << 16;
    const float low = b == 0 ? 0.0f : std::bit_cast<float>(top_bits);
    const float high = b == kBucketsPerSign - 1 ? std::numeric_limits<float>::infinity()
                                                : std::bit_cast<float>(top_bits | kLowBits);
    for (const bool negative : {false, true}) {
      const float lo = negative ? -high : low;  // the bucket as an interval of values [lo, hi]
      const float hi = negative ? -low : high;
      int below = 0;  // T(lo)
      int inside = 0;
      std::uint32_t entry = 0;
      for (int c = 0; c + 1 < kQuantCodes; ++c) {
        below += static_cast<int>(lo > thresholds[c]);
        if (lo <= thresholds[c] && thresholds[c] <= hi) {
          ++inside;
          const auto threshold_bits = std::bit_cast<std::uint32_t>(thresholds[c]);
          LG_INTERNAL_ASSERT(
              (threshold_bits & ~kLowBits) == (top_bits | (negative ? 1u << 31 : 0u)),
              "QuantCodeTable: threshold ", thresholds[c], " is not in bucket ", b);
          entry = 1u << 24 | (threshold_bits & kLowBits);
        }
      }
      LG_INTERNAL_ASSERT(inside <= 1, "QuantCodeTable: ", inside, " thresholds in bucket [", lo,
                         ", ", hi, "]");
      entries_[static_cast<std::size_t>(b + (negative ? kBucketsPerSign : 0))] =
          entry | static_cast<std::uint32_t>(below) << 16;
    }
  }
}

const QuantCodeTable& signed_code_table() {
  static const QuantCodeTable table(quant_maps().signed_thresholds.data(), true);
  return table;
}

const QuantCodeTable& unsigned_code_table() {
  static const QuantCodeTable table(quant_maps().unsigned_thresholds.data(), false);
  return table;
}

}  // namespace leangrad::kernels::cpu
