// Public memory API: statistics, cache control and configuration of the caching allocators.
// Mirrors torch.cuda.memory_* but works for every device, the CPU included.
#pragma once

#include <cstdint>
#include <string>

#include <leangrad/core/device.h>

namespace leangrad {

struct MemoryStats {
  std::int64_t allocated = 0;       // bytes in blocks handed out to tensors
  std::int64_t reserved = 0;        // bytes obtained from the backend (segments)
  std::int64_t peak_allocated = 0;  // high-water mark of `allocated` since reset_peak
  std::int64_t peak_reserved = 0;   // high-water mark of `reserved` since reset_peak
  std::int64_t active_blocks = 0;   // blocks handed out and not yet freed
  std::int64_t backend_allocs = 0;  // real malloc / cudaMalloc / cudaHostAlloc calls
  std::int64_t backend_frees = 0;   // real free / cudaFree / cudaFreeHost calls
  std::int64_t oom_count = 0;       // OutOfMemoryError thrown
  std::int64_t alloc_retries = 0;   // backend failures followed by cache release and retry
};

namespace memory {

MemoryStats stats(Device device);
MemoryStats pinned_stats();
void reset_peak(Device device);
void empty_cache(Device device);
std::string summary(Device device);
// Same syntax as LEANGRAD_ALLOC_CONF ("max_split_size_mb:256,memory_cap_mb:12288,caching:0").
// Applies to every allocator, those already created included; call it before the first
// allocation to be sure every block obeys it.
void configure(const std::string& conf);
// False under caching:0: every free goes straight back to the device or the host (for memory
// checkers such as compute-sanitizer).
bool caching_enabled();
// The bytes `allocated` grows by for a request of `nbytes`: the request rounded up to the
// allocator's block granularity (512 bytes; 0 for 0). What the memory planner counts a saved
// tensor's storage as (offload/memory_planner.h).
std::int64_t allocated_size(std::int64_t nbytes);

}  // namespace memory
}  // namespace leangrad
