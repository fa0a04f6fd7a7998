// The allocator's history (core/memory_history.h): a global list the recording allocator appends
// to, guarded by its own mutex (the allocator's is held when it calls in; nothing here calls back).
#include <leangrad/core/memory_history.h>

#include <atomic>
#include <chrono>
#include <mutex>

#include <leangrad/core/allocator.h>
#include <leangrad/core/error.h>

namespace leangrad::memory {
namespace {

using Clock = std::chrono::steady_clock;

struct History {
  std::atomic<const void*> backend{nullptr};  // the recording allocator's backend
  std::mutex mutex;
  Clock::time_point start;
  std::vector<MemoryEvent> events;
};

History& history() {
  static History* h = new History();  // never destroyed: frees may come during exit
  return *h;
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - history().start)
      .count();
}

}  // namespace

void start_history(Device device) {
  History& h = history();
  const void* backend = &allocator_for(device).backend();
  std::lock_guard<std::mutex> lock(h.mutex);
  LG_CHECK(h.backend.load() == nullptr,
           "memory::start_history: a history is already being recorded");
  h.events.clear();
  h.start = Clock::now();
  h.backend.store(backend, std::memory_order_release);
}

std::vector<MemoryEvent> stop_history() {
  History& h = history();
  std::lock_guard<std::mutex> lock(h.mutex);
  h.backend.store(nullptr, std::memory_order_release);
  return std::move(h.events);
}

void mark_history(const std::string& label) {
  History& h = history();
  if (h.backend.load(std::memory_order_relaxed) == nullptr) return;
  std::lock_guard<std::mutex> lock(h.mutex);
  if (h.backend.load() == nullptr) return;
  MemoryEvent event;
  event.time_ns = now_ns();
  event.mark = label;
  h.events.push_back(std::move(event));
}

bool recording_history() {
  return history().backend.load(std::memory_order_relaxed) != nullptr;
}

namespace detail {

bool records_history_of(const void* backend) {
  return history().backend.load(std::memory_order_relaxed) == backend;
}

void record_history_event(const void* backend, std::int64_t bytes, const void* address,
                          std::uint64_t stream) noexcept {
  History& h = history();
  std::lock_guard<std::mutex> lock(h.mutex);
  // Checked again under the lock: records_history_of(backend) was read without it, and the
  // history may have been stopped, or started for another device, since.
  if (h.backend.load() != backend) return;
  MemoryEvent event;
  event.time_ns = now_ns();
  event.bytes = bytes;
  event.address = reinterpret_cast<std::uintptr_t>(address);
  event.stream = stream;
  try {
    h.events.push_back(std::move(event));
  } catch (...) {  // out of host memory: the history misses this event, the free goes on
  }
}

}  // namespace detail
}  // namespace leangrad::memory
