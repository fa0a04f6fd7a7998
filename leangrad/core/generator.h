// Generator: the state of a Philox random stream (a seed and a counter offset).
// Each op that draws numbers reserves a range of counters, so successive ops get fresh numbers
// and a saved state replays exactly (checkpointing and recompute rely on that).
// The default generators (one per device) are the process's, unless a DefaultGeneratorsGuard
// gives the calling thread generators of its own for a scope (the DataLoader's batches).
#pragma once

#include <cstdint>
#include <memory>
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

// The default generator of a device (one for the CPU, one per CUDA device), as the calling
// thread sees it: the process's, or those of the innermost DefaultGeneratorsGuard alive on it.
Generator& default_generator(Device device);

// Seeds every default generator: afterwards rand/randn give the same numbers on every device.
// Under a DefaultGeneratorsGuard it seeds the guard's generators only.
void manual_seed(std::uint64_t seed);

// The state of every default generator created so far (for recompute and training checkpoints):
// restoring it replays exactly the random numbers drawn after it was taken. Both act on the
// generators the calling thread sees (the guard's, under a DefaultGeneratorsGuard).
struct RngSnapshot {
  std::vector<std::pair<Device, Generator::State>> states;
};
RngSnapshot snapshot_rng();
void restore_rng(const RngSnapshot& snapshot);

namespace detail {
struct DefaultGenerators;  // one set of default generators (core/generator.cpp)
}  // namespace detail

// Note [Thread default generators]: while a guard is alive, default_generator(device) on the
// thread that made it returns generators of the guard's own, seeded with `seed` (one per device,
// made on first use, as the process's are after manual_seed(seed)); every other thread, and this
// one after the guard, sees the generators it saw before, untouched. So code that draws from the
// default generators (rand, randn, dropout, a random augmentation) gets numbers that depend only
// on `seed` and its own draws, whatever other threads do at the same time. The DataLoader wraps
// each batch's assembly in one (docs/data.md, "Random draws in a batch"). Guards nest; a
// reference from default_generator inside the scope must not be used after it.
//   { DefaultGeneratorsGuard batch(seed); Tensor noise = randn({3}); }  // same noise every time
class DefaultGeneratorsGuard {
 public:
  explicit DefaultGeneratorsGuard(std::uint64_t seed);
  ~DefaultGeneratorsGuard();
  DefaultGeneratorsGuard(const DefaultGeneratorsGuard&) = delete;
  DefaultGeneratorsGuard& operator=(const DefaultGeneratorsGuard&) = delete;

 private:
  std::unique_ptr<detail::DefaultGenerators> generators_;
  detail::DefaultGenerators* previous_;  // an outer guard's, or null (the process's)
};

}  // namespace leangrad
