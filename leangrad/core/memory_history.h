// The allocator's history: when asked, one device's caching allocator records every allocation
// and free (time, size, address, stream), and a program marks moments in it ("forward done").
// leangrad-train --memory-timeline turns one step's history into a timeline of memory by category
// (docs/profiling.md); torch.cuda.memory._record_memory_history is the same idea.
// Off, an allocation or a free pays one relaxed atomic load.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <leangrad/core/device.h>

namespace leangrad::memory {

struct MemoryEvent {
  std::int64_t time_ns = 0;  // since start_history
  std::int64_t bytes = 0;    // the block's allocated size: > 0 allocated, < 0 freed, 0 a mark
  std::uintptr_t address = 0;
  std::uint64_t stream = 0;  // the stream id the block belongs to (0 on the CPU)
  std::string mark;          // mark_history's label; empty for allocations and frees
};

// Starts recording `device`'s allocator (not the pinned host pool), dropping an earlier history.
// One device at a time.
void start_history(Device device);
// Stops recording and returns the events in the order they happened.
std::vector<MemoryEvent> stop_history();
// Adds a mark to the history being recorded (nothing when none is).
void mark_history(const std::string& label);
bool recording_history();

namespace detail {
// Called by the caching allocator (core/caching_allocator.cpp) under its mutex.
bool records_history_of(const void* backend);
void record_history_event(const void* backend, std::int64_t bytes, const void* address,
                          std::uint64_t stream) noexcept;
}  // namespace detail

}  // namespace leangrad::memory
