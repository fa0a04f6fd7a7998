// Default generators per device (the process's, or a DefaultGeneratorsGuard's) and manual_seed.
#include <leangrad/core/generator.h>

#include <map>

namespace leangrad {

void Generator::manual_seed(std::uint64_t seed) {
  std::lock_guard<std::mutex> lock(mutex_);
  seed_ = seed;
  offset_ = 0;
}

Generator::State Generator::state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return State{seed_, offset_};
}

void Generator::set_state(const State& state) {
  std::lock_guard<std::mutex> lock(mutex_);
  seed_ = state.seed;
  offset_ = state.offset;
}

Generator::State Generator::reserve(std::uint64_t num_counters) {
  std::lock_guard<std::mutex> lock(mutex_);
  State reserved{seed_, offset_};
  offset_ += num_counters;
  return reserved;
}

namespace detail {
// The default generators of the process, or of one DefaultGeneratorsGuard.
struct DefaultGenerators {
  explicit DefaultGenerators(std::uint64_t seed) : seed(seed) {}
  std::mutex mutex;
  std::map<std::pair<int, int>, Generator> generators;  // (device type, index) -> generator
  std::uint64_t seed;  // of the generators made from now on (the last manual_seed)
};
}  // namespace detail

namespace {

using detail::DefaultGenerators;

// Never destroyed: usable from static destructors.
DefaultGenerators& process_generators() {
  static auto* g = new DefaultGenerators(Generator::kDefaultSeed);
  return *g;
}

// The innermost DefaultGeneratorsGuard alive on this thread, or null.
thread_local DefaultGenerators* thread_generators = nullptr;

// See Note [Thread default generators].
DefaultGenerators& current_generators() {
  return thread_generators != nullptr ? *thread_generators : process_generators();
}

}  // namespace

Generator& default_generator(Device device) {
  DefaultGenerators& g = current_generators();
  std::lock_guard<std::mutex> lock(g.mutex);
  const std::pair<int, int> key{static_cast<int>(device.type), device.is_cpu() ? 0 : device.index};
  auto it = g.generators.find(key);
  if (it == g.generators.end()) it = g.generators.try_emplace(key, g.seed).first;
  return it->second;
}

void manual_seed(std::uint64_t seed) {
  DefaultGenerators& g = current_generators();
  std::lock_guard<std::mutex> lock(g.mutex);
  g.seed = seed;
  for (auto& [key, gen] : g.generators)
    gen.manual_seed(seed);
}

RngSnapshot snapshot_rng() {
  DefaultGenerators& g = current_generators();
  std::lock_guard<std::mutex> lock(g.mutex);
  RngSnapshot snapshot;
  for (auto& [key, gen] : g.generators) {
    snapshot.states.emplace_back(Device(static_cast<DeviceType>(key.first), key.second),
                                 gen.state());
  }
  return snapshot;
}

void restore_rng(const RngSnapshot& snapshot) {
  for (const auto& [device, state] : snapshot.states)
    default_generator(device).set_state(state);
}

DefaultGeneratorsGuard::DefaultGeneratorsGuard(std::uint64_t seed)
    : generators_(std::make_unique<DefaultGenerators>(seed)), previous_(thread_generators) {
  thread_generators = generators_.get();
}

DefaultGeneratorsGuard::~DefaultGeneratorsGuard() {
  thread_generators = previous_;
}

}  // namespace leangrad
