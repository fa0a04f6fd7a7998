// Adam8bit's quantisation maps (kernels/quantization_math.h) as byte tables read with AVX-512
// VBMI's byte permutes: a block of kQuantBlockSize codes to floats and floats to codes, 64 values
// per instruction, for the vectorised Adam8bit kernel (kernels/cpu/optim_vectorized.cpp). The
// permutes exist only on CPUs with AVX-512 VBMI (Ice Lake, Zen 4 and later): they are compiled for
// it in every x86-64 build and chosen at run time (Note [Choosing the permutes at run time]);
// elsewhere the kernel keeps its portable loops (kernels/cpu/quant_code_table.h).
//
// Note [Byte-permute quantisation]
//   Why intrinsics. leangrad's CPU kernels are loops the compiler vectorises (or Eigen/SLEEF),
//   but a table lookup per lane compiles to a gather (about one element per cycle, or scalar
//   loads), and Adam8bit needs four per element: two dequantisations, two quantisations. At four
//   gathers the 8-bit step took 2.5 times float32 Adam's time though it moves 16 bytes per
//   parameter against 28. vpermi2b looks 64 bytes up in a 128-byte table held in two registers
//   in one instruction, which no compiler emits from a loop: this file is the one place that
//   writes them. Everything here is exact: the tests compare every code and every float with
//   the plain functions (tests/kernels/test_quant_permute.cpp), and the kernel's results with
//   the reference loop's, bitwise.
//   - Dequantising (map[code] * absmax): a float table of 256 entries is four byte planes (byte
//     k of each entry). A 256-entry plane is two 128-byte permutes and a blend on the code's top
//     bit. The signed map is odd, map[126 - i] = -map[128 + i], so its planes hold the 128
//     magnitudes of codes 128..255 only: one permute per plane on |code - 127| (code 127, the
//     exact 0, zeroed by the permute's mask), and the sign bit set on codes below 127. The four
//     planes of 64 values are then interleaved into 16-float vectors with in-lane unpacks
//     (bytes_to_floats), which take the codes in "slot order": one byte permute (to_slots)
//     before the lookups puts each value where the unpacks bring it back into value order.
//     (Two rounds of two-register permutes, which need no slot order, were 12-20% slower per
//     dequantised value on Zen 5: the byte permutes are the kernel's scarce resource.)
//   - Quantising reads the same structure as Note [Code table] (kernels/cpu/quant_code_table.h)
//     with smaller buckets: the code is T(x) = #{c : x > thresholds[c]}, and a bucket of floats
//     holding at most one threshold gives T(x) = T(lo) + (x > thresholds[T(lo)]). A bucket here
//     is a binade of |x| (its exponent, 2^-24 up to 1, everything below and above clamped into
//     one bucket each) cut into 2^r equal parts by the top r <= 7 bits of the mantissa, r the
//     smallest that leaves at most one threshold per part (QuantPermuteTables checks it): 220
//     buckets for |x| in the signed map, 442 for the unsigned one, against 3328 per sign at a
//     uniform 7 bits. A 32-entry word table per map gives each binade its first bucket and r
//     (one vpermw), the buckets' T(lo) are a byte table of 256 or 512 entries, the thresholds
//     four byte planes by code: a few permutes to the first code, four or eight to look its
//     threshold up and eight to assemble it.
//   - The signed map from |x|. The map is odd, and its thresholds are the midpoints m of
//     neighbouring values rounded down to a float (midpoint_threshold): a negative x = -a meets
//     the mirror images of the positive midpoints, rounded the other way. For x = a >= 0 the code
//     is 127 + #{m < a} over the 128 positive midpoints; for x = -a it is 127 - #{m <= a} over
//     all of them but the last (the map has 1 but not -1). So, with T the first code of a's
//     bucket, the code of -a is max(0, 254 - T - [a >= m_T]), where that of a is T + [a > m_T]:
//     the two comparisons differ only when a is a midpoint that is a float (55 of the 127). One
//     unsigned comparison serves both signs: the key 2 bits(thresholds[c]) + (m inexact) of each
//     code against rotl(bits(x), 1) = 2 bits(a) + sign gives [a > threshold] for x >= 0 and
//     [a >= m] for x < 0.
//   - Domain: finite values; for the unsigned map non-negative ones. A block holding a NaN, an
//     Inf (NaN or Inf moments, or an absmax so small that its reciprocal overflows) or,
//     unsigned, a negative value (never made by the update: v >= 0) is refused as a whole, and the
//     kernel quantises it with the code table.
#pragma once

#include <cstdint>

#include <leangrad/kernels/cpu/optim_reference.h>
#include <leangrad/kernels/quantization_math.h>

// The permute lookups are compiled on x86-64 with GCC or Clang whatever LEANGRAD_CPU_ARCH says:
// each function that uses AVX-512 carries LG_QUANT_PERMUTE_TARGET, and none runs before
// quant_permute_supported() has found AVX-512 F, BW, VL and VBMI on the CPU (Note [Choosing the
// permutes at run time]).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define LEANGRAD_QUANT_PERMUTE 1
#include <immintrin.h>
#define LG_QUANT_PERMUTE_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi")))
#else
#define LEANGRAD_QUANT_PERMUTE 0
#endif

namespace leangrad::kernels::cpu {

// The byte tables of both maps and the permute indices the lookups use (Note [Byte-permute
// quantisation]). Plain data, built and checked on any CPU.
struct QuantPermuteTables {
  static constexpr int kBinades = 26;  // |x| < 2^-24, the binades 2^-24 .. 2^-1, |x| >= 1

  // Signed map (first moment).
  alignas(64) std::uint8_t signed_magnitudes[4][128];  // byte k of map[128 + i]
  alignas(64) std::uint16_t signed_binades[32];        // first bucket | (7 - r) << 12
  alignas(64) std::uint8_t signed_first_codes[256];    // T(lo) of each bucket of |x|: 127..254
  alignas(64) std::uint8_t signed_keys[4][128];  // byte k of 2 bits(thresholds[c]) + inexact, at
                                                 // c & 127 for c in 127..254
  // Unsigned map (second moment).
  alignas(64) std::uint8_t unsigned_values[4][256];      // byte k of map[c]
  alignas(64) std::uint16_t unsigned_binades[32];        // as signed_binades
  alignas(64) std::uint8_t unsigned_first_codes[512];    // T(lo) of each bucket
  alignas(64) std::uint8_t unsigned_thresholds[4][256];  // byte k of thresholds[c]; [255] = +inf
  // Permute indices: the high word of 32 floats (in two vectors); the low and the high byte of 64
  // words (in two vectors); the slot order of bytes_to_floats (its own inverse).
  alignas(64) std::uint16_t high_words[32];
  alignas(64) std::uint8_t low_bytes[64];
  alignas(64) std::uint8_t high_bytes[64];
  alignas(64) std::uint8_t slot_order[64];
  int signed_buckets;
  int unsigned_buckets;

  explicit QuantPermuteTables(const QuantMaps& maps);
};

// The tables of quant_maps(), built once.
const QuantPermuteTables& quant_permute_tables();

// True when this build has the permute lookups (LEANGRAD_QUANT_PERMUTE) and the CPU it runs on
// has AVX-512 F, BW, VL and VBMI (asked once). The two functions below run them on one block of
// kQuantBlockSize values (the tests' entry; the kernel calls the same functions) and throw when
// they cannot run here. quantize_block_permute returns false, and writes nothing, for a block
// outside its domain (Note [Byte-permute quantisation]).
//
// Note [Choosing the permutes at run time]
//   The default build is x86-64-v3 (AVX2), so that one binary runs on every machine leangrad
//   targets; the permutes need AVX-512 VBMI (Ice Lake, Zen 4 and later). Only the functions that
//   use them are compiled for it (LG_QUANT_PERMUTE_TARGET: here, and adam8bit_blocks_permute and
//   update_quarter in kernels/cpu/optim_vectorized.cpp), and the kernel takes that path only when
//   quant_permute_supported(). Everything they call that is not marked is ordinary code of the
//   build's architecture (inlined into them, or called), so no AVX-512 instruction can reach a
//   machine without it. Results are bitwise those of the code-table path either way.
bool quant_permute_supported();
// For tests and benchmarks: false makes quant_permute_supported() false (the kernel then takes the
// code tables everywhere, as on a CPU without VBMI); true gives the CPU's answer back.
void set_quant_permute_allowed(bool allowed);
void dequantize_block_permute(bool is_signed, const std::uint8_t* codes, float absmax, float* out);
bool quantize_block_permute(bool is_signed, const float* values, float inv_absmax,
                            std::uint8_t* codes);

#if LEANGRAD_QUANT_PERMUTE
namespace quant_permute {

constexpr int kGroups = kQuantBlockSize / 64;  // a block is 4 vectors of 64 codes

LG_QUANT_PERMUTE_TARGET inline __m512i load(const void* p) {
  return _mm512_load_si512(p);
}

// 64 lookups in a 256-entry byte table: two 128-byte halves, chosen by the index's top bit.
LG_QUANT_PERMUTE_TARGET inline __m512i lookup256(__m512i t0, __m512i t1, __m512i t2, __m512i t3,
                                                 __m512i index) {
  return _mm512_mask_blend_epi8(_mm512_movepi8_mask(index), _mm512_permutex2var_epi8(t0, index, t1),
                                _mm512_permutex2var_epi8(t2, index, t3));
}

// Four byte planes of 64 values in slot order (byte k of the value in slot j at plane[k][j]) -> 64
// values as 4 vectors of 16, in value order. Unpacking bytes into words, then words into dwords,
// within each 128-bit lane puts slot 16 L + 4 r + d at dword 4 L + d of out[r]: slot_order gives
// that slot value 16 r + 4 L + d.
LG_QUANT_PERMUTE_TARGET inline void bytes_to_floats(const __m512i plane[4], __m512i out[4]) {
  const __m512i a = _mm512_unpacklo_epi8(plane[0], plane[1]);
  const __m512i b = _mm512_unpackhi_epi8(plane[0], plane[1]);
  const __m512i c = _mm512_unpacklo_epi8(plane[2], plane[3]);
  const __m512i d = _mm512_unpackhi_epi8(plane[2], plane[3]);
  out[0] = _mm512_unpacklo_epi16(a, c);
  out[1] = _mm512_unpackhi_epi16(a, c);
  out[2] = _mm512_unpacklo_epi16(b, d);
  out[3] = _mm512_unpackhi_epi16(b, d);
}

// Bytes in value order -> slot order (and back: the permutation is its own inverse).
LG_QUANT_PERMUTE_TARGET inline __m512i to_slots(const QuantPermuteTables& t, __m512i bytes) {
  return _mm512_maskz_permutexvar_epi8(~__mmask64{0}, load(t.slot_order), bytes);  // GCC bug 105593
}

// out[j] = map[codes[j]] * absmax for one block (dequantize_state), signed map.
LG_QUANT_PERMUTE_TARGET inline void dequantize_signed(const QuantPermuteTables& t,
                                                      const std::uint8_t* codes, float absmax,
                                                      float* out) {
  __m512i index[kGroups], plane[kGroups][4];
  __mmask64 nonzero[kGroups], negative[kGroups];
  for (int g = 0; g < kGroups; ++g) {
    const __m512i code = to_slots(t, _mm512_loadu_si512(codes + 64 * g));
    const __mmask64 positive = _mm512_movepi8_mask(code);  // code >= 128
    // |code - 127| - 1 (mod 128): 128 + i -> i, 126 - i -> i; 127 is masked out below.
    index[g] = _mm512_mask_blend_epi8(positive, _mm512_sub_epi8(_mm512_set1_epi8(126), code), code);
    nonzero[g] = _mm512_cmpneq_epi8_mask(code, _mm512_set1_epi8(127));
    negative[g] = _kandn_mask64(positive, nonzero[g]);
  }
  for (int k = 0; k < 4; ++k) {  // each plane's table loaded once for the block
    const __m512i t0 = load(t.signed_magnitudes[k]), t1 = load(t.signed_magnitudes[k] + 64);
    for (int g = 0; g < kGroups; ++g)
      plane[g][k] = _mm512_maskz_permutex2var_epi8(nonzero[g], t0, index[g], t1);
  }
  const __m512 scale = _mm512_set1_ps(absmax);
  for (int g = 0; g < kGroups; ++g) {
    // The sign bit of codes below 127: the top bit of byte 3.
    plane[g][3] = _mm512_mask_add_epi8(plane[g][3], negative[g], plane[g][3],
                                       _mm512_set1_epi8(static_cast<char>(0x80)));
    __m512i value[4];
    bytes_to_floats(plane[g], value);
    for (int j = 0; j < 4; ++j)
      _mm512_storeu_ps(out + 64 * g + 16 * j, _mm512_mul_ps(_mm512_castsi512_ps(value[j]), scale));
  }
}

// The same for the unsigned map: 256-entry planes.
LG_QUANT_PERMUTE_TARGET inline void dequantize_unsigned(const QuantPermuteTables& t,
                                                        const std::uint8_t* codes, float absmax,
                                                        float* out) {
  __m512i code[kGroups], plane[kGroups][4];
  for (int g = 0; g < kGroups; ++g)
    code[g] = to_slots(t, _mm512_loadu_si512(codes + 64 * g));
  for (int k = 0; k < 4; ++k) {
    const std::uint8_t* table = t.unsigned_values[k];
    const __m512i t0 = load(table), t1 = load(table + 64), t2 = load(table + 128),
                  t3 = load(table + 192);
    for (int g = 0; g < kGroups; ++g)
      plane[g][k] = lookup256(t0, t1, t2, t3, code[g]);
  }
  const __m512 scale = _mm512_set1_ps(absmax);
  for (int g = 0; g < kGroups; ++g) {
    __m512i value[4];
    bytes_to_floats(plane[g], value);
    for (int j = 0; j < 4; ++j)
      _mm512_storeu_ps(out + 64 * g + 16 * j, _mm512_mul_ps(_mm512_castsi512_ps(value[j]), scale));
  }
}

// x = values * inv_absmax for 64 values.
LG_QUANT_PERMUTE_TARGET inline void scaled(const float* values, __m512 inv_absmax, __m512 x[4]) {
  for (int j = 0; j < 4; ++j)
    x[j] = _mm512_mul_ps(_mm512_loadu_ps(values + 16 * j), inv_absmax);
}

// The buckets of |x| for 64 values: the low byte of each bucket number (and, in *high, the high
// byte); the high words of x (sign, exponent, 7 mantissa bits) in word[0..1].
LG_QUANT_PERMUTE_TARGET inline __m512i buckets(const QuantPermuteTables& t,
                                               const std::uint16_t* binades, const __m512 x[4],
                                               __m512i word[2], __m512i* high) {
  const __m512i high_words = load(t.high_words), binade_table = load(binades);
  __m512i bucket[2];
  for (int h = 0; h < 2; ++h) {
    word[h] = _mm512_permutex2var_epi16(_mm512_castps_si512(x[2 * h]), high_words,
                                        _mm512_castps_si512(x[2 * h + 1]));
    const __m512i exponent =
        _mm512_and_si512(_mm512_srli_epi16(word[h], 7), _mm512_set1_epi16(0xff));
    // 0: below 2^-24; 1..24: 2^-24 .. 2^-1; 25: 1 and above (and Inf, NaN).
    const __m512i binade = _mm512_min_epu16(_mm512_subs_epu16(exponent, _mm512_set1_epi16(102)),
                                            _mm512_set1_epi16(25));
    const __m512i entry = _mm512_permutexvar_epi16(binade, binade_table);
    const __m512i part = _mm512_srlv_epi16(_mm512_and_si512(word[h], _mm512_set1_epi16(0x7f)),
                                           _mm512_srli_epi16(entry, 12));
    bucket[h] = _mm512_add_epi16(_mm512_and_si512(entry, _mm512_set1_epi16(0x1ff)), part);
  }
  if (high != nullptr) *high = _mm512_permutex2var_epi8(bucket[0], load(t.high_bytes), bucket[1]);
  return _mm512_permutex2var_epi8(bucket[0], load(t.low_bytes), bucket[1]);
}

LG_QUANT_PERMUTE_TARGET inline __mmask64 join(__mmask32 low, __mmask32 high) {
  return _mm512_kunpackd(high, low);
}
LG_QUANT_PERMUTE_TARGET inline __mmask64 join(__mmask16 a, __mmask16 b, __mmask16 c, __mmask16 d) {
  return _mm512_kunpackd(_mm512_kunpackw(d, c), _mm512_kunpackw(b, a));
}

// codes[j] = quantize_state(thresholds, values[j], inv_absmax, true) for one block; false (and
// nothing written) when some values[j] * inv_absmax is NaN or Inf.
LG_QUANT_PERMUTE_TARGET inline bool quantize_signed(const QuantPermuteTables& t,
                                                    const float* values, float inv_absmax,
                                                    std::uint8_t* codes) {
  const __m512 inv = _mm512_set1_ps(inv_absmax);
  const __m512i magnitude_mask = _mm512_set1_epi16(0x7fff), infinity = _mm512_set1_epi16(0x7f80);
  __m512i bucket[kGroups];
  __mmask64 negative[kGroups];
  __mmask64 outside = 0;
  for (int g = 0; g < kGroups; ++g) {
    __m512 x[4];
    __m512i word[2];
    scaled(values + 64 * g, inv, x);
    bucket[g] = buckets(t, t.signed_binades, x, word, nullptr);
    outside |= join(_mm512_cmpge_epu16_mask(_mm512_and_si512(word[0], magnitude_mask), infinity),
                    _mm512_cmpge_epu16_mask(_mm512_and_si512(word[1], magnitude_mask), infinity));
    negative[g] = join(_mm512_movepi16_mask(word[0]), _mm512_movepi16_mask(word[1]));
  }
  if (outside != 0) return false;
  __m512i first[kGroups], key_plane[kGroups][4];
  {
    const std::uint8_t* table = t.signed_first_codes;
    const __m512i t0 = load(table), t1 = load(table + 64), t2 = load(table + 128),
                  t3 = load(table + 192);
    for (int g = 0; g < kGroups; ++g)
      first[g] = lookup256(t0, t1, t2, t3, bucket[g]);
  }
  __m512i first_slots[kGroups];  // the thresholds' planes are read in slot order: bytes_to_floats
  for (int g = 0; g < kGroups; ++g)
    first_slots[g] = to_slots(t, first[g]);
  for (int k = 0; k < 4; ++k) {  // first codes are 127..254: index c & 127
    const __m512i t0 = load(t.signed_keys[k]), t1 = load(t.signed_keys[k] + 64);
    for (int g = 0; g < kGroups; ++g)
      key_plane[g][k] = _mm512_permutex2var_epi8(t0, first_slots[g], t1);
  }
  const __m512i one = _mm512_set1_epi8(1);
  for (int g = 0; g < kGroups; ++g) {
    __m512 x[4];
    __m512i key[4];
    __mmask16 above[4];
    scaled(values + 64 * g, inv, x);
    bytes_to_floats(key_plane[g], key);
    // rotl(bits(x), 1) = 2 bits(|x|) + sign. (The zero-masking form, with every lane kept:
    // GCC 12's plain _mm512_rol_epi32 trips its -Wmaybe-uninitialized, GCC bug 105593.)
    for (int j = 0; j < 4; ++j) {
      const __m512i rotated = _mm512_maskz_rol_epi32(0xffff, _mm512_castps_si512(x[j]), 1);
      above[j] = _mm512_cmpgt_epu32_mask(rotated, key[j]);
    }
    const __mmask64 step = join(above[0], above[1], above[2], above[3]);
    const __m512i code_positive = _mm512_mask_add_epi8(first[g], step, first[g], one);
    const __m512i mirrored = _mm512_sub_epi8(_mm512_set1_epi8(static_cast<char>(254)), first[g]);
    const __m512i code_negative = _mm512_mask_subs_epu8(mirrored, step, mirrored, one);
    _mm512_storeu_si512(codes + 64 * g,
                        _mm512_mask_blend_epi8(negative[g], code_positive, code_negative));
  }
  return true;
}

// The same for the unsigned map; false also when a value is negative (or -0).
LG_QUANT_PERMUTE_TARGET inline bool quantize_unsigned(const QuantPermuteTables& t,
                                                      const float* values, float inv_absmax,
                                                      std::uint8_t* codes) {
  const __m512 inv = _mm512_set1_ps(inv_absmax);
  const __m512i infinity = _mm512_set1_epi16(0x7f80);  // and every word with the sign bit
  __m512i bucket[kGroups], bucket_high[kGroups];
  __mmask64 outside = 0;
  for (int g = 0; g < kGroups; ++g) {
    __m512 x[4];
    __m512i word[2];
    scaled(values + 64 * g, inv, x);
    bucket[g] = buckets(t, t.unsigned_binades, x, word, &bucket_high[g]);
    outside |= join(_mm512_cmpge_epu16_mask(word[0], infinity),
                    _mm512_cmpge_epu16_mask(word[1], infinity));
  }
  if (outside != 0) return false;
  __m512i first[kGroups], threshold_plane[kGroups][4];
  {
    const std::uint8_t* table = t.unsigned_first_codes;
    __m512i t0 = load(table), t1 = load(table + 64), t2 = load(table + 128), t3 = load(table + 192);
    for (int g = 0; g < kGroups; ++g)
      first[g] = lookup256(t0, t1, t2, t3, bucket[g]);
    t0 = load(table + 256), t1 = load(table + 320), t2 = load(table + 384), t3 = load(table + 448);
    for (int g = 0; g < kGroups; ++g)  // buckets 256..511
      first[g] = _mm512_mask_blend_epi8(_mm512_test_epi8_mask(bucket_high[g], bucket_high[g]),
                                        first[g], lookup256(t0, t1, t2, t3, bucket[g]));
  }
  __m512i first_slots[kGroups];  // the thresholds' planes are read in slot order: bytes_to_floats
  for (int g = 0; g < kGroups; ++g)
    first_slots[g] = to_slots(t, first[g]);
  for (int k = 0; k < 4; ++k) {
    const std::uint8_t* table = t.unsigned_thresholds[k];
    const __m512i t0 = load(table), t1 = load(table + 64), t2 = load(table + 128),
                  t3 = load(table + 192);
    for (int g = 0; g < kGroups; ++g)
      threshold_plane[g][k] = lookup256(t0, t1, t2, t3, first_slots[g]);
  }
  for (int g = 0; g < kGroups; ++g) {
    __m512 x[4];
    __m512i threshold[4];
    __mmask16 above[4];
    scaled(values + 64 * g, inv, x);
    bytes_to_floats(threshold_plane[g], threshold);
    for (int j = 0; j < 4; ++j)
      above[j] = _mm512_cmp_ps_mask(x[j], _mm512_castsi512_ps(threshold[j]), _CMP_GT_OQ);
    const __mmask64 step = join(above[0], above[1], above[2], above[3]);
    _mm512_storeu_si512(codes + 64 * g,
                        _mm512_mask_add_epi8(first[g], step, first[g], _mm512_set1_epi8(1)));
  }
  return true;
}

}  // namespace quant_permute
#endif  // LEANGRAD_QUANT_PERMUTE

}  // namespace leangrad::kernels::cpu
