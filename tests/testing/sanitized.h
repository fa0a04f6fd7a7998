// test::kSanitized: the test program is built with AddressSanitizer or ThreadSanitizer
// (tools/sanitize.sh).
//
// The sanitizer jobs look for memory errors, undefined behaviour and data races, at -O1 and with
// every access checked: 5 to 20 times slower than the main stage. A few tests there are
// exhaustive numerical sweeps (every float, every option combination at every size, hundreds of
// products); the main stage (CTest) runs them in full, and under a sanitizer they sweep a subset
// that still reaches every code path: each vector tail, each chunk of a parallel loop, each
// option. docs/testing.md ("What the sanitizer jobs run") lists them.
#pragma once

namespace leangrad::test {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

// The step of a sweep over float bit patterns: every float, or under a sanitizer every 251st.
// 251 is prime, so the sweep still meets every exponent and sign and every value of the low
// mantissa byte.
inline constexpr unsigned kSweepStride = kSanitized ? 251 : 1;

}  // namespace leangrad::test
