// DistributedSampler and random_permutation (data/sampler.h). PyTorch's DistributedSampler
// shuffles with torch.randperm seeded by seed + epoch, which leangrad's Philox permutation does
// not reproduce bit for bit; so the shuffled cases test the partition's properties (disjoint
// shares, cover, padding by repetition), and the unshuffled cases compare with the exact index
// lists PyTorch's code gives (worked out by hand from torch/utils/data/distributed.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>

#include <leangrad/core/error.h>
#include <leangrad/data/sampler.h>

namespace leangrad::data {
namespace {

using Indices = std::vector<std::int64_t>;

std::vector<Indices> shares(std::int64_t size, int world, bool shuffle, bool drop_last,
                            std::uint64_t seed = 0, std::uint64_t epoch = 0) {
  std::vector<Indices> out;
  for (int rank = 0; rank < world; ++rank) {
    DistributedSampler sampler(size, rank, world, shuffle, seed, drop_last);
    sampler.set_epoch(epoch);
    out.push_back(sampler.indices());
    EXPECT_EQ(static_cast<std::int64_t>(out.back().size()), sampler.num_samples());
  }
  return out;
}

TEST(Sampler, RandomPermutationIsAPermutationFixedBySeedAndEpoch) {
  for (const std::int64_t n : {0, 1, 2, 7, 1000}) {
    Indices p = random_permutation(n, 5, 2);
    EXPECT_EQ(p, random_permutation(n, 5, 2));
    std::sort(p.begin(), p.end());
    Indices identity(static_cast<std::size_t>(n));
    std::iota(identity.begin(), identity.end(), 0);
    EXPECT_EQ(p, identity);
  }
  EXPECT_NE(random_permutation(1000, 5, 2), random_permutation(1000, 5, 3));
  EXPECT_NE(random_permutation(1000, 5, 2), random_permutation(1000, 6, 2));
  EXPECT_THROW(random_permutation(-1, 0, 0), Error);
  // Roughly uniform: each value lands in each of 4 positions about equally often.
  std::map<std::pair<std::int64_t, std::int64_t>, int> counts;
  for (std::uint64_t epoch = 0; epoch < 4000; ++epoch) {
    const Indices p = random_permutation(4, 1, epoch);
    for (std::int64_t pos = 0; pos < 4; ++pos)
      ++counts[{pos, p[static_cast<std::size_t>(pos)]}];
  }
  for (const auto& [key, count] : counts)
    EXPECT_NEAR(count, 1000, 150) << "position " << key.first << " value " << key.second;
}

TEST(Sampler, UnshuffledSharesMatchPyTorchExactly) {
  // size 10, 3 ranks: padded to 12 with indices 0, 1; rank r takes r, r + 3, ...
  EXPECT_EQ(shares(10, 3, false, false),
            (std::vector<Indices>{{0, 3, 6, 9}, {1, 4, 7, 0}, {2, 5, 8, 1}}));
  // drop_last: truncated to 9.
  EXPECT_EQ(shares(10, 3, false, true), (std::vector<Indices>{{0, 3, 6}, {1, 4, 7}, {2, 5, 8}}));
  // More ranks than examples: padding repeats the list several times ([0, 1, 0, 1, 0]).
  EXPECT_EQ(shares(2, 5, false, false), (std::vector<Indices>{{0}, {1}, {0}, {1}, {0}}));
  EXPECT_EQ(shares(2, 5, false, true), (std::vector<Indices>(5)));
  EXPECT_EQ(shares(0, 2, false, false), (std::vector<Indices>(2)));
  EXPECT_EQ(shares(6, 1, false, false), (std::vector<Indices>{{0, 1, 2, 3, 4, 5}}));
}

TEST(Sampler, ShuffledSharesPartitionLikePyTorch) {
  for (const std::int64_t size : {1, 5, 10, 11, 17, 64}) {
    for (const int world : {1, 2, 3, 4, 8}) {
      for (const bool drop_last : {false, true}) {
        SCOPED_TRACE(testing::Message()
                     << "size " << size << " world " << world << " drop_last " << drop_last);
        const auto parts = shares(size, world, /*shuffle=*/true, drop_last, 7, 3);
        const std::int64_t per_rank =
            drop_last ? size / world : (size + world - 1) / world;  // PyTorch's num_samples
        Indices all;
        for (const Indices& part : parts) {
          EXPECT_EQ(static_cast<std::int64_t>(part.size()), per_rank);
          all.insert(all.end(), part.begin(), part.end());
        }
        // Reassemble the padded list (rank r holds positions r, r + world, ...).
        Indices padded(all.size());
        for (int r = 0; r < world; ++r)
          for (std::size_t k = 0; k < parts[static_cast<std::size_t>(r)].size(); ++k)
            padded[k * world + r] = parts[static_cast<std::size_t>(r)][k];
        const Indices permutation = random_permutation(size, 7, 3);
        for (std::size_t i = 0; i < padded.size(); ++i)
          EXPECT_EQ(padded[i], permutation[i % permutation.size()]) << "position " << i;
        std::sort(all.begin(), all.end());
        const auto distinct = std::unique(all.begin(), all.end()) - all.begin();
        if (drop_last) {
          EXPECT_EQ(distinct, static_cast<std::int64_t>(all.size()));  // disjoint shares
        } else {
          EXPECT_EQ(distinct, size);  // every example covered; only padding repeats
        }
      }
    }
  }
}

TEST(Sampler, EpochAndSeedChangeTheShuffleConsistentlyAcrossRanks) {
  const auto epoch0 = shares(100, 4, true, false, 1, 0);
  EXPECT_EQ(epoch0, shares(100, 4, true, false, 1, 0));  // every rank agrees on the permutation
  EXPECT_NE(epoch0, shares(100, 4, true, false, 1, 1));
  EXPECT_NE(epoch0, shares(100, 4, true, false, 2, 0));
  DistributedSampler sampler(100, 0, 4);
  EXPECT_EQ(sampler.epoch(), 0u);
  EXPECT_EQ(sampler.total_size(), 100);
}

TEST(Sampler, RejectsInvalidArguments) {
  EXPECT_THROW(DistributedSampler(10, 2, 2), Error);
  EXPECT_THROW(DistributedSampler(10, -1, 2), Error);
  EXPECT_THROW(DistributedSampler(10, 0, 0), Error);
  EXPECT_THROW(DistributedSampler(-1, 0, 1), Error);
  // Padded to a multiple of 2, INT64_MAX examples would be 2^63 indices.
  EXPECT_THROW(DistributedSampler(INT64_MAX, 0, 2), Error);
}

// The share was (size + world_size - 1) / world_size: signed overflow near INT64_MAX, which gave
// a negative num_samples() (-3074457345618258602 for INT64_MAX - 1 examples over 3 ranks).
TEST(Sampler, SharesOfSizesNearInt64Max) {
  const DistributedSampler thirds(INT64_MAX - 1, 0, 3);  // divisible by 3: no padding
  EXPECT_EQ(thirds.num_samples(), (INT64_MAX - 1) / 3);
  EXPECT_EQ(thirds.total_size(), INT64_MAX - 1);
  const DistributedSampler halves(INT64_MAX, 1, 2, /*shuffle=*/true, 0, /*drop_last=*/true);
  EXPECT_EQ(halves.num_samples(), INT64_MAX / 2);
  EXPECT_EQ(halves.total_size(), INT64_MAX - 1);
}

}  // namespace
}  // namespace leangrad::data
