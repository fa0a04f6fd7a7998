// Generator: the state of a Philox random stream (a seed and a counter offset).
// Each op that draws numbers reserves a range of counters, so successive ops get fresh numbers
// and a saved state replays exactly (checkpointing and recompute rely on that).
#pragma once

#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include <leangrad/core/device.h>

namespace leangrad {

class Generator {
 public:
  static constexpr std::uint64_t kDefaultSeed = 67280421310721ull;  // PyTorch's default seed

  explicit Generator(std::uint64_t seed = kDefaultSeed) : seed_(seed) {}

  struct State {
    std::uint64_t seed = kDefaultSeed;
    std::uint64_t offset = 0;  // the next unused Philox counter
  };

  // Resets the stream: new seed, offset 0.
  void manual_seed(std::uint64_t seed);
  State state() const;
  void set_state(const State& state);
  // Reserves `num_counters` consecutive Philox counters; returns (seed, first counter).
  State reserve(std::uint64_t num_counters);

 private:
  mutable std::mutex mutex_;
  std::uint64_t seed_;
  std::uint64_t offset_ = 0;
};

// The default generator of a device (one for the CPU, one per CUDA device).
Generator& default_generator(Device device);

// Seeds every default generator: afterwards rand/randn give the same numbers on every device.
void manual_seed(std::uint64_t seed);

// The state of every default generator created so far (for recompute and training checkpoints):
// restoring it replays exactly the random numbers drawn after it was taken.
struct RngSnapshot {
  std::vector<std::pair<Device, Generator::State>> states;
};
RngSnapshot snapshot_rng();
void restore_rng(const RngSnapshot& snapshot);

}  // namespace leangrad
