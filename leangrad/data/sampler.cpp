// random_permutation (the loader's seeded shuffle) and DistributedSampler, whose partition
// follows torch.utils.data.DistributedSampler line by line.
#include <leangrad/data/sampler.h>

#include <limits>
#include <numeric>

#include <leangrad/core/error.h>
#include <leangrad/core/permutation.h>

namespace leangrad::data {

std::vector<std::int64_t> random_permutation(std::int64_t n, std::uint64_t seed,
                                             std::uint64_t epoch) {
  LG_CHECK(n >= 0, "random_permutation: expected n >= 0, got ", n);
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  philox_permutation(order.data(), n, seed, 0, epoch);  // step i's counter words: (i, epoch)
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
