// The process-wide caching allocators (allocator_for, pinned_allocator in core/allocator.h) and
// the memory:: functions of core/memory.h. One allocator per device plus the pinned host pool,
// each created on first use with the configuration from LEANGRAD_ALLOC_CONF or memory::configure.
#include <array>
#include <atomic>
#include <cstdlib>
#include <mutex>

#include <leangrad/core/allocator.h>
#include <leangrad/core/allocator_backends.h>
#include <leangrad/core/error.h>
#include <leangrad/core/memory.h>

namespace leangrad {
namespace {

constexpr int kMaxCudaDevices = 64;

// Note [The registry is never destroyed]
// Tensors may live in static storage (a global model, a cached constant table); their DataPtrs
// give memory back to an allocator while static destructors run, in an order no one controls.
// A function-local `static Registry` could be destroyed first and those frees would touch a dead
// allocator. So the registry (and every allocator in it) is allocated with `new` and never
// deleted: it lives until the process ends, and the OS takes the memory back.
struct Registry {
  std::mutex mutex;  // guards creation and the configuration; lookups are lock-free
  bool have_config = false;
  AllocatorConfig config;
  std::atomic<CachingAllocator*> cpu{nullptr};
  std::atomic<CachingAllocator*> pinned{nullptr};
  std::array<std::atomic<CachingAllocator*>, kMaxCudaDevices> cuda{};
};

Registry& registry() {
  static Registry* registry = new Registry();  // see Note [The registry is never destroyed]
  return *registry;
}

// The configuration for new allocators; LEANGRAD_ALLOC_CONF is read the first time, unless
// memory::configure came first. A bad value throws at every allocator creation until fixed.
// Called with the registry's mutex held.
const AllocatorConfig& current_config(Registry& registry) {
  if (!registry.have_config) {
    if (const char* conf = std::getenv("LEANGRAD_ALLOC_CONF"); conf != nullptr) {
      try {
        registry.config = parse_allocator_config(conf);
      } catch (const Error& e) {
        LG_THROW(Error, "invalid LEANGRAD_ALLOC_CONF=\"", conf, "\": ", e.message());
      }
    }
    registry.have_config = true;
  }
  return registry.config;
}

template <typename MakeBackend>
CachingAllocator& get_or_create(std::atomic<CachingAllocator*>& slot, MakeBackend make_backend) {
  if (CachingAllocator* allocator = slot.load(std::memory_order_acquire)) return *allocator;
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  if (CachingAllocator* allocator = slot.load(std::memory_order_relaxed)) return *allocator;
  const AllocatorConfig& config = current_config(reg);
  auto* allocator = new CachingAllocator(make_backend(), config);
  slot.store(allocator, std::memory_order_release);
  return *allocator;
}

}  // namespace

CachingAllocator& allocator_for(Device device) {
  Registry& reg = registry();
  if (device.is_cpu()) return get_or_create(reg.cpu, make_cpu_backend);
  LG_CHECK_DEVICE(device.index >= 0 && device.index < kMaxCudaDevices,
                  "allocator_for: invalid device ", device.str());
  return get_or_create(reg.cuda[device.index], [&] { return make_cuda_backend(device.index); });
}

CachingAllocator& pinned_allocator() {
  return get_or_create(registry().pinned, make_pinned_backend);
}

namespace memory {

MemoryStats stats(Device device) {
  return allocator_for(device).stats();
}
MemoryStats pinned_stats() {
  return pinned_allocator().stats();
}
void reset_peak(Device device) {
  allocator_for(device).reset_peak();
}
void empty_cache(Device device) {
  allocator_for(device).empty_cache();
}
std::string summary(Device device) {
  return allocator_for(device).summary();
}

void configure(const std::string& conf) {
  const AllocatorConfig config = parse_allocator_config(conf);  // throws before changing anything
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  reg.config = config;
  reg.have_config = true;
  for (std::atomic<CachingAllocator*>* slot : {&reg.cpu, &reg.pinned}) {
    if (CachingAllocator* allocator = slot->load()) allocator->set_config(config);
  }
  for (std::atomic<CachingAllocator*>& slot : reg.cuda) {
    if (CachingAllocator* allocator = slot.load()) allocator->set_config(config);
  }
}

bool caching_enabled() {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  return current_config(reg).caching;
}

}  // namespace memory
}  // namespace leangrad
