// float16/bfloat16 <-> float over arrays (Note [Vectorised 16-bit conversions] in
// kernels/cpu/half_convert.h).
#include <leangrad/kernels/cpu/half_convert.h>

// F16C's two conversions, 8 values at a time, when the build targets it; otherwise the loops
// below convert with core/half.h alone.
#if defined(__F16C__) && defined(__AVX__)
#include <immintrin.h>
#define LEANGRAD_HALF_PACKETS 1
#else
#define LEANGRAD_HALF_PACKETS 0
#endif

namespace leangrad::kernels::cpu {

// Each group of 8 converts with F16C unless it holds a NaN, which core/half.h converts (Note
// [Vectorised 16-bit conversions]): the test is a compare in the same pass, so an array is read
// once whether or not it holds NaNs.

namespace {

// The float16 loops, inlined into the array and strided functions below.
inline void widen_half(const Half* src, float* dst, std::int64_t n) {
  std::int64_t i = 0;
#if LEANGRAD_HALF_PACKETS
  const __m128i magnitude = _mm_set1_epi16(0x7fff);
  const __m128i infinity = _mm_set1_epi16(0x7c00);
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    // A float16 NaN: exponent all ones and a mantissa, (bits & 0x7fff) > 0x7c00 (as int16).
    const __m128i nan = _mm_cmpgt_epi16(_mm_and_si128(h, magnitude), infinity);
    if (_mm_testz_si128(nan, nan) != 0) {
      _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
    } else {
      for (std::int64_t k = i; k < i + 8; ++k)
        dst[k] = detail::half_bits_to_float(src[k].bits);
    }
  }
#endif
  for (; i < n; ++i)
    dst[i] = detail::half_bits_to_float(src[i].bits);
}

inline void narrow_half(const float* src, Half* dst, std::int64_t n) {
  std::int64_t i = 0;
#if LEANGRAD_HALF_PACKETS
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(src + i);
    const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    if (_mm256_testz_ps(nan, nan) != 0) {
      const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
    } else {
      for (std::int64_t k = i; k < i + 8; ++k)
        dst[k].bits = detail::float_to_half_bits(src[k]);
    }
  }
#endif
  for (; i < n; ++i)
    dst[i].bits = detail::float_to_half_bits(src[i]);
}

}  // namespace

void widen(const Half* src, float* dst, std::int64_t n) {
  widen_half(src, dst, n);
}

void widen(const BFloat16* src, float* dst, std::int64_t n) {
  widen_inline(src, dst, n);
}

void narrow(const float* src, Half* dst, std::int64_t n) {
  narrow_half(src, dst, n);
}

void narrow(const float* src, BFloat16* dst, std::int64_t n) {
  narrow_inline(src, dst, n);
}

void widen_strided(const Half* src, std::int64_t stride, float* dst, std::int64_t rows,
                   std::int64_t cols) {
  for (std::int64_t r = 0; r < rows; ++r)
    widen_half(src + r * stride, dst + r * cols, cols);
}

void widen_strided(const BFloat16* src, std::int64_t stride, float* dst, std::int64_t rows,
                   std::int64_t cols) {
  for (std::int64_t r = 0; r < rows; ++r)
    widen_inline(src + r * stride, dst + r * cols, cols);
}

void narrow_strided(const float* src, Half* dst, std::int64_t stride, std::int64_t rows,
                    std::int64_t cols) {
  for (std::int64_t r = 0; r < rows; ++r)
    narrow_half(src + r * cols, dst + r * stride, cols);
}

void narrow_strided(const float* src, BFloat16* dst, std::int64_t stride, std::int64_t rows,
                    std::int64_t cols) {
  for (std::int64_t r = 0; r < rows; ++r)
    narrow_inline(src + r * cols, dst + r * stride, cols);
}

bool half_convert_vectorized() {
  return LEANGRAD_HALF_PACKETS != 0;
}

}  // namespace leangrad::kernels::cpu
