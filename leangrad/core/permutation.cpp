// philox_permutation, the Fisher-Yates shuffle of core/permutation.h.
#include <leangrad/core/permutation.h>

#include <numeric>
#include <utility>

#include <leangrad/core/error.h>
#include <leangrad/core/philox.h>

namespace leangrad {

namespace {

// The high 64 bits of the 128-bit product a * b.
std::uint64_t mul_high(std::uint64_t a, std::uint64_t b) {
  const std::uint64_t a_lo = a & 0xffffffffu, a_hi = a >> 32;
  const std::uint64_t b_lo = b & 0xffffffffu, b_hi = b >> 32;
  const std::uint64_t lo_lo = a_lo * b_lo, hi_lo = a_hi * b_lo, lo_hi = a_lo * b_hi;
  const std::uint64_t cross = (lo_lo >> 32) + (hi_lo & 0xffffffffu) + lo_hi;
  return a_hi * b_hi + (hi_lo >> 32) + (cross >> 32);
}

}  // namespace

void philox_permutation(std::int64_t* order, std::int64_t n, std::uint64_t seed,
                        std::uint64_t counter_low, std::uint64_t counter_high) {
  LG_CHECK(n >= 0, "philox_permutation: expected n >= 0, got ", n);
  std::iota(order, order + n, std::int64_t{0});
  const auto k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
  for (std::int64_t i = n - 1; i > 0; --i) {
    const std::uint64_t low = counter_low + static_cast<std::uint64_t>(i);
    const philox::Block counter{
        {static_cast<std::uint32_t>(low), static_cast<std::uint32_t>(low >> 32),
         static_cast<std::uint32_t>(counter_high), static_cast<std::uint32_t>(counter_high >> 32)}};
    const philox::Block r = philox::philox4x32_10(counter, k0, k1);
    const std::uint64_t bits = (std::uint64_t{r.x[0]} << 32) | r.x[1];
    const auto j = static_cast<std::int64_t>(mul_high(bits, static_cast<std::uint64_t>(i + 1)));
    std::swap(order[i], order[j]);
  }
}

}  // namespace leangrad
