// Index orders for the DataLoader: the seeded shuffle (random_permutation) and
// DistributedSampler, which gives each of world_size processes its own share of a dataset.
// Both depend only on (seed, epoch), so every rank computes the same permutation.
#pragma once

#include <cstdint>
#include <vector>

namespace leangrad::data {

// A permutation of 0..n-1 that depends only on (seed, epoch): Fisher-Yates driven by
// leangrad's Philox generator (key = seed, counter = (epoch, step)). Not the permutation
// torch.randperm gives for the same seed: the two generators differ.
std::vector<std::int64_t> random_permutation(std::int64_t n, std::uint64_t seed,
                                             std::uint64_t epoch);

// PyTorch's DistributedSampler: rank r of world_size takes indices r, r + world_size, ... of the
// (shuffled) index list. Without drop_last the list is padded to a multiple of world_size by
// repeating its first indices, so every rank gets ceil(size / world_size) indices; with
// drop_last the tail is dropped instead (floor). The shuffle is random_permutation(size, seed,
// epoch): the same partition rules as PyTorch, but our own permutation.
class DistributedSampler {
 public:
  DistributedSampler(std::int64_t size, int rank, int world_size, bool shuffle = true,
                     std::uint64_t seed = 0, bool drop_last = false);

  // A new shuffle for each epoch (call it before each epoch, as in PyTorch).
  void set_epoch(std::uint64_t epoch) { epoch_ = epoch; }
  std::uint64_t epoch() const { return epoch_; }

  // This process's rank among world_size (PyTorch's sampler.rank).
  int rank() const { return rank_; }
  // This rank's indices for the current epoch (num_samples() of them).
  std::vector<std::int64_t> indices() const;
  std::int64_t num_samples() const { return num_samples_; }
  std::int64_t total_size() const { return num_samples_ * world_size_; }
  // The size of the dataset it splits (its indices are below it, in every epoch).
  std::int64_t dataset_size() const { return size_; }

 private:
  std::int64_t size_;
  int rank_;
  int world_size_;
  bool shuffle_;
  std::uint64_t seed_;
  bool drop_last_;
  std::uint64_t epoch_ = 0;
  std::int64_t num_samples_;
};

}  // namespace leangrad::data
