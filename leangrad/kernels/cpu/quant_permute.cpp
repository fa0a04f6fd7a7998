// The byte tables of kernels/cpu/quant_permute.h (Note [Byte-permute quantisation]), built from
// the maps and their thresholds and checked (at most one threshold per bucket, the signed map
// odd), and the one-block entries the tests call.
#include <leangrad/kernels/cpu/quant_permute.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <limits>

#include <leangrad/core/error.h>

namespace leangrad::kernels::cpu {
namespace {

// The buckets of |x| for a map whose thresholds above 0 are `thresholds` (ascending, `count` of
// them): per binade group (QuantPermuteTables::kBinades) its first bucket and resolution in
// `binades`, and per bucket the number of these thresholds below it, capped at `cap`, plus
// `base`, in `first_codes`. Returns the number of buckets.
int make_buckets(const float* thresholds, int count, int cap, int base, std::uint16_t* binades,
                 std::uint8_t* first_codes, int max_buckets) {
  constexpr int kFirstExponent = 103;  // biased exponent of 2^-24
  int next = 0;
  for (int group = 0; group < QuantPermuteTables::kBinades; ++group) {
    // The group's magnitudes as float bits [low, high].
    const bool clamped = group == 0 || group == QuantPermuteTables::kBinades - 1;
    const std::uint32_t low =
        group == 0 ? 0u : static_cast<std::uint32_t>(kFirstExponent + group - 1) << 23;
    const std::uint32_t high =
        group == 0 ? (static_cast<std::uint32_t>(kFirstExponent) << 23) - 1
        : clamped  ? std::bit_cast<std::uint32_t>(std::numeric_limits<float>::infinity())
                   : low | 0x7fffffu;
    // Part j of 2^r: the floats whose top r mantissa bits are j.
    auto part = [&](int r, int j, float& lo, float& hi) {
      std::uint32_t part_low = low, part_high = high;
      if (!clamped) {
        part_low = low | static_cast<std::uint32_t>(j) << (23 - r);
        part_high = part_low | ((1u << (23 - r)) - 1);
      }
      lo = std::bit_cast<float>(part_low);
      hi = std::bit_cast<float>(part_high);
    };
    int r = 0;
    for (;; ++r) {
      LG_INTERNAL_ASSERT(r <= 7 && !(clamped && r > 0),
                         "QuantPermuteTables: no bucket size separates the thresholds of binade ",
                         group);
      bool separated = true;
      for (int j = 0; j < (1 << r) && separated; ++j) {
        float lo, hi;
        part(r, j, lo, hi);
        const int inside = static_cast<int>(std::count_if(
            thresholds, thresholds + count, [&](float t) { return lo <= t && t <= hi; }));
        separated = inside <= 1;
      }
      if (separated) break;
    }
    LG_INTERNAL_ASSERT(next + (1 << r) <= max_buckets, "QuantPermuteTables: more than ",
                       max_buckets, " buckets");
    binades[group] = static_cast<std::uint16_t>(next | (7 - r) << 12);
    for (int j = 0; j < (1 << r); ++j) {
      float lo, hi;
      part(r, j, lo, hi);
      const int below = static_cast<int>(
          std::count_if(thresholds, thresholds + count, [&](float t) { return t < lo; }));
      first_codes[next++] = static_cast<std::uint8_t>(base + std::min(below, cap));
    }
  }
  return next;
}

// plane[k][c] = byte k of bits[c].
template <std::size_t N>
void to_planes(const std::uint32_t (&bits)[N], std::uint8_t (*plane)[N]) {
  for (std::size_t c = 0; c < N; ++c)
    for (int k = 0; k < 4; ++k)
      plane[k][c] = static_cast<std::uint8_t>(bits[c] >> (8 * k));
}

// set_quant_permute_allowed's switch, on by default.
std::atomic<bool>& permute_allowed() {
  static std::atomic<bool> allowed{true};
  return allowed;
}

}  // namespace

QuantPermuteTables::QuantPermuteTables(const QuantMaps& maps) {
  std::fill(std::begin(signed_binades), std::end(signed_binades), 0);
  std::fill(std::begin(unsigned_binades), std::end(unsigned_binades), 0);
  std::fill(std::begin(signed_first_codes), std::end(signed_first_codes), 0);
  std::fill(std::begin(unsigned_first_codes), std::end(unsigned_first_codes), 0);
  const float* map = maps.signed_map.data();
  const float* thresholds = maps.signed_thresholds.data();

  // Signed: the map is odd, 0 at 127 and 1 at 255.
  LG_INTERNAL_ASSERT(map[127] == 0.0f && map[255] == 1.0f);
  for (int i = 0; i < 127; ++i)
    LG_INTERNAL_ASSERT(map[126 - i] == -map[128 + i], "at code ", 126 - i);
  std::uint32_t magnitudes[128], keys[128];
  for (int i = 0; i < 128; ++i)
    magnitudes[i] = std::bit_cast<std::uint32_t>(map[128 + i]);
  for (int c = 127; c < kQuantCodes - 1; ++c) {
    const double midpoint = (static_cast<double>(map[c]) + static_cast<double>(map[c + 1])) * 0.5;
    const bool inexact = static_cast<double>(thresholds[c]) != midpoint;
    keys[c & 127] = 2 * std::bit_cast<std::uint32_t>(thresholds[c]) + (inexact ? 1u : 0u);
  }
  to_planes(magnitudes, signed_magnitudes);
  to_planes(keys, signed_keys);
  // Buckets of |x| over the 128 positive thresholds (127..254); the first code of |x| >= 1 is
  // capped at 254 (the comparison with thresholds[254] gives 255).
  signed_buckets =
      make_buckets(thresholds + 127, 128, 127, 127, signed_binades, signed_first_codes, 256);

  // Unsigned: every threshold is positive.
  const float* umap = maps.unsigned_map.data();
  const float* uthresholds = maps.unsigned_thresholds.data();
  std::uint32_t values[256], threshold_bits[256];
  for (int c = 0; c < kQuantCodes; ++c) {
    values[c] = std::bit_cast<std::uint32_t>(umap[c]);
    threshold_bits[c] = std::bit_cast<std::uint32_t>(
        c < kQuantCodes - 1 ? uthresholds[c] : std::numeric_limits<float>::infinity());
  }
  LG_INTERNAL_ASSERT(uthresholds[0] > 0.0f);
  to_planes(values, unsigned_values);
  to_planes(threshold_bits, unsigned_thresholds);
  unsigned_buckets = make_buckets(uthresholds, kQuantCodes - 1, kQuantCodes - 1, 0,
                                  unsigned_binades, unsigned_first_codes, 512);

  // Permute indices (an index with bit 6 (bytes) or 5 (words) set reads the second vector).
  for (int e = 0; e < 32; ++e)
    high_words[e] = static_cast<std::uint16_t>(2 * e + 1);
  for (int e = 0; e < 64; ++e) {
    low_bytes[e] = static_cast<std::uint8_t>(2 * e);
    high_bytes[e] = static_cast<std::uint8_t>(2 * e + 1);
  }
  for (int slot = 0; slot < 64; ++slot) {  // slot 16 L + 4 r + d holds value 16 r + 4 L + d
    slot_order[slot] =
        static_cast<std::uint8_t>(16 * ((slot % 16) / 4) + 4 * (slot / 16) + slot % 4);
  }
}

const QuantPermuteTables& quant_permute_tables() {
  static const QuantPermuteTables tables(quant_maps());
  return tables;
}

bool quant_permute_supported() {
#if LEANGRAD_QUANT_PERMUTE
  static const bool cpu_has_it = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vbmi");
  }();
  return cpu_has_it && permute_allowed().load(std::memory_order_relaxed);
#else
  return false;
#endif
}

void set_quant_permute_allowed(bool allowed) {
  permute_allowed().store(allowed);
}

namespace {

[[noreturn]] void throw_unsupported(const char* what) {
  LG_THROW(Error, what,
           ": the byte-permute lookups need AVX-512 F, BW, VL and VBMI, which this CPU or build "
           "lacks (quant_permute_supported() is false)");
}

#if LEANGRAD_QUANT_PERMUTE
LG_QUANT_PERMUTE_TARGET void dequantize_with_permutes(bool is_signed, const std::uint8_t* codes,
                                                      float absmax, float* out) {
  const QuantPermuteTables& tables = quant_permute_tables();
  if (is_signed) {
    quant_permute::dequantize_signed(tables, codes, absmax, out);
  } else {
    quant_permute::dequantize_unsigned(tables, codes, absmax, out);
  }
}

LG_QUANT_PERMUTE_TARGET bool quantize_with_permutes(bool is_signed, const float* values,
                                                    float inv_absmax, std::uint8_t* codes) {
  const QuantPermuteTables& tables = quant_permute_tables();
  return is_signed ? quant_permute::quantize_signed(tables, values, inv_absmax, codes)
                   : quant_permute::quantize_unsigned(tables, values, inv_absmax, codes);
}
#endif

}  // namespace

void dequantize_block_permute(bool is_signed, const std::uint8_t* codes, float absmax, float* out) {
  if (!quant_permute_supported()) throw_unsupported("dequantize_block_permute");
#if LEANGRAD_QUANT_PERMUTE
  dequantize_with_permutes(is_signed, codes, absmax, out);
#else
  (void)is_signed, (void)codes, (void)absmax, (void)out;
#endif
}

bool quantize_block_permute(bool is_signed, const float* values, float inv_absmax,
                            std::uint8_t* codes) {
  if (!quant_permute_supported()) throw_unsupported("quantize_block_permute");
#if LEANGRAD_QUANT_PERMUTE
  return quantize_with_permutes(is_signed, values, inv_absmax, codes);
#else
  (void)is_signed, (void)values, (void)inv_absmax, (void)codes;
  return false;
#endif
}

}  // namespace leangrad::kernels::cpu
