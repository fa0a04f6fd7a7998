// Default generators per device and manual_seed.
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

namespace {
struct Registry {
  std::mutex mutex;
  std::map<std::pair<int, int>, Generator> generators;  // (device type, index) -> generator
  std::uint64_t seed = Generator::kDefaultSeed;
};
Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: usable from static destructors
  return *r;
}
}  // namespace

Generator& default_generator(Device device) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const std::pair<int, int> key{static_cast<int>(device.type), device.is_cpu() ? 0 : device.index};
  auto it = r.generators.find(key);
  if (it == r.generators.end()) it = r.generators.try_emplace(key, r.seed).first;
  return it->second;
}

void manual_seed(std::uint64_t seed) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.seed = seed;
  for (auto& [key, gen] : r.generators)
    gen.manual_seed(seed);
}

RngSnapshot snapshot_rng() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  RngSnapshot snapshot;
  for (auto& [key, gen] : r.generators) {
    snapshot.states.emplace_back(Device(static_cast<DeviceType>(key.first), key.second),
                                 gen.state());
  }
  return snapshot;
}

void restore_rng(const RngSnapshot& snapshot) {
  for (const auto& [device, state] : snapshot.states)
    default_generator(device).set_state(state);
}

}  // namespace leangrad
