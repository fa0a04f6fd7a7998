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
namespace {

#if LEANGRAD_HALF_PACKETS
// True when one of src[0, n) is a float16 NaN (exponent all ones, mantissa not zero).
bool any_nan(const Half* src, std::int64_t n) {
  unsigned found = 0;
  for (std::int64_t i = 0; i < n; ++i)
    found |= (src[i].bits & 0x7fffu) > 0x7c00u ? 1u : 0u;
  return found != 0;
}

// True when one of src[0, n) is a float NaN.
bool any_nan(const float* src, std::int64_t n) {
  unsigned found = 0;
  for (std::int64_t i = 0; i < n; ++i)
    found |= (detail::float_bits(src[i]) & 0x7fffffffu) > 0x7f800000u ? 1u : 0u;
  return found != 0;
}
#endif

}  // namespace

void widen(const Half* src, float* dst, std::int64_t n) {
  std::int64_t i = 0;
#if LEANGRAD_HALF_PACKETS
  if (!any_nan(src, n)) {
    for (; i + 8 <= n; i += 8) {
      const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
      _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
    }
  }
#endif
  for (; i < n; ++i)
    dst[i] = detail::half_bits_to_float(src[i].bits);
}

void widen(const BFloat16* src, float* dst, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i)
    dst[i] = detail::bfloat16_bits_to_float(src[i].bits);
}

void narrow(const float* src, Half* dst, std::int64_t n) {
  std::int64_t i = 0;
#if LEANGRAD_HALF_PACKETS
  if (!any_nan(src, n)) {
    for (; i + 8 <= n; i += 8) {
      const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
    }
  }
#endif
  for (; i < n; ++i)
    dst[i].bits = detail::float_to_half_bits(src[i]);
}

void narrow(const float* src, BFloat16* dst, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i)
    dst[i].bits = detail::float_to_bfloat16_bits(src[i]);
}

bool half_convert_vectorized() {
  return LEANGRAD_HALF_PACKETS != 0;
}

}  // namespace leangrad::kernels::cpu
