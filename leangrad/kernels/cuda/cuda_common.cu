// The host side of kernels/cuda/cuda_common.cuh: the current stream, the device's SM count and
// kernels' occupancy for Note [Grid policy] (both cached), and Workspace.
#include <leangrad/kernels/cuda/cuda_common.cuh>

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <tuple>

#include <leangrad/core/cuda.h>

namespace leangrad::kernels::cuda {

cudaStream_t current_stream() {
  return static_cast<cudaStream_t>(leangrad::cuda::current_stream().handle());
}

int sm_count() {
  constexpr int kMaxCachedDevices = 64;
  static std::array<std::atomic<int>, kMaxCachedDevices> cache{};
  int device = 0;
  LG_CUDA_CHECK(cudaGetDevice(&device));
  if (device < kMaxCachedDevices) {
    const int cached = cache[device].load(std::memory_order_relaxed);
    if (cached > 0) return cached;
  }
  int count = 0;
  LG_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
  count = std::max(count, 1);
  if (device < kMaxCachedDevices) cache[device].store(count, std::memory_order_relaxed);
  return count;
}

int resident_blocks_per_sm(const void* kernel, int threads, std::size_t dynamic_smem_bytes,
                           OccupancyQuery query) {
  using Key = std::tuple<const void*, int, int, std::size_t>;  // kernel, device, threads, smem
  static std::mutex mutex;
  static std::map<Key, int>* cache = new std::map<Key, int>();  // leaked: used until exit
  int device = 0;
  LG_CUDA_CHECK(cudaGetDevice(&device));
  const Key key{kernel, device, threads, dynamic_smem_bytes};
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = cache->find(key); it != cache->end()) return it->second;
  }
  int blocks = 0;
  LG_CUDA_CHECK(query(&blocks, kernel, threads, dynamic_smem_bytes));
  blocks = std::max(blocks, 1);
  std::lock_guard<std::mutex> lock(mutex);
  cache->emplace(key, blocks);
  return blocks;
}

Workspace::Workspace(std::size_t nbytes)
    : data_(
          allocator_for(Device::cuda(leangrad::cuda::current_device()))
              .allocate(std::max<std::size_t>(nbytes, 1), leangrad::cuda::current_stream().ref())),
      size_(std::max<std::size_t>(nbytes, 1)) {}

}  // namespace leangrad::kernels::cuda
