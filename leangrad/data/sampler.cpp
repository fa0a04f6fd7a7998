// random_permutation (the loader's seeded shuffle) and DistributedSampler, whose partition
// follows torch.utils.data.DistributedSampler line by line.
#include <leangrad/data/sampler.h>

#include <limits>
#include <numeric>

#include <leangrad/core/error.h>
#include <leangrad/core/philox.h>

namespace leangrad::data {

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

std::vector<std::int64_t> random_permutation(std::int64_t n, std::uint64_t seed,
                                             std::uint64_t epoch) {
  LG_CHECK(n >= 0, "random_permutation: expected n >= 0, got ", n);
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  // Fisher-Yates from the back: step i swaps order[i] with order[j], j uniform in [0, i]. Each
  // Philox block (counter words: step, epoch) gives 64 random bits; j = floor(bits * (i + 1) /
  // 2^64) (Lemire's multiply-shift), whose bias is below n / 2^64.
  const auto k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
  for (std::int64_t i = n - 1; i > 0; --i) {
    const auto step = static_cast<std::uint64_t>(i);
    const philox::Block counter{
        {static_cast<std::uint32_t>(step), static_cast<std::uint32_t>(step >> 32),
         static_cast<std::uint32_t>(epoch), static_cast<std::uint32_t>(epoch >> 32)}};
    const philox::Block r = philox::philox4x32_10(counter, k0, k1);
    const std::uint64_t bits = (std::uint64_t{r.x[0]} << 32) | r.x[1];
    const auto j = static_cast<std::int64_t>(mul_high(bits, static_cast<std::uint64_t>(i + 1)));
    std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(j)]);
  }
  return order;
}

DistributedSampler::DistributedSampler(std::int64_t size, int rank, int world_size, bool shuffle,
                                       std::uint64_t seed, bool drop_last)
    : size_(size),
      rank_(rank),
      world_size_(world_size),
      shuffle_(shuffle),
      seed_(seed),
      drop_last_(drop_last) {
  LG_CHECK(size >= 0, "DistributedSampler: expected a dataset size >= 0, got ", size);
  LG_CHECK(world_size >= 1, "DistributedSampler: expected world_size >= 1, got ", world_size);
  LG_CHECK(rank >= 0 && rank < world_size, "DistributedSampler: invalid rank ", rank,
           ", rank should be in the interval [0, ", world_size - 1, "]");
  // As PyTorch: with drop_last, ceil((size - world_size) / world_size) = floor(size / world_size)
  // per rank; otherwise ceil(size / world_size), without forming size + world_size - 1 (which
  // overflows for a size near INT64_MAX).
  num_samples_ = size / world_size + (!drop_last && size % world_size != 0 ? 1 : 0);
  LG_CHECK(num_samples_ <= std::numeric_limits<std::int64_t>::max() / world_size,
           "DistributedSampler: a dataset of ", size, " examples padded to a multiple of ",
           world_size, " ranks has more than INT64_MAX indices");
}

std::vector<std::int64_t> DistributedSampler::indices() const {
  std::vector<std::int64_t> all;
  if (shuffle_) {
    all = random_permutation(size_, seed_, epoch_);
  } else {
    all.resize(static_cast<std::size_t>(size_));
    std::iota(all.begin(), all.end(), std::int64_t{0});
  }
  const auto total = static_cast<std::size_t>(total_size());
  if (all.size() < total) {
    // Padding: repeat the list from its start (several times when it is shorter than the gap).
    const std::size_t original = all.size();
    LG_INTERNAL_ASSERT(original > 0);
    for (std::size_t i = 0; all.size() < total; ++i)
      all.push_back(all[i % original]);
  } else {
    all.resize(total);
  }
  std::vector<std::int64_t> mine;
  mine.reserve(static_cast<std::size_t>(num_samples_));
  for (std::size_t i = static_cast<std::size_t>(rank_); i < total;
       i += static_cast<std::size_t>(world_size_))
    mine.push_back(all[i]);
  return mine;
}

}  // namespace leangrad::data
