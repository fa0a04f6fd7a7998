// The raw CUDA runtime side of the GPU bench harness (bench/gpu_harness.h): what the runtime
// reports about the current device. Compiled only with CUDA; gpu_device_properties_no_cuda.cpp
// is the stub of builds without it. See Note [Device limits] in gpu_harness.cpp for how the
// memory clock and bus width become a bandwidth.
#include <cuda_runtime.h>

#include "bench/gpu_harness.h"
#include <leangrad/core/cuda/cuda_check.h>

namespace leangrad::bench {

DeviceProperties query_device_properties() {
  int device = 0;
  LG_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  LG_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  // CUDA 13 removed cudaDeviceProp::memoryClockRate; the attribute remains (0 if not reported).
  int memory_clock_khz = 0;
  LG_CUDA_CHECK(cudaDeviceGetAttribute(&memory_clock_khz, cudaDevAttrMemoryClockRate, device));
  DeviceProperties p;
  p.name = prop.name;
  p.sm_count = prop.multiProcessorCount;
  p.l2_bytes = prop.l2CacheSize;
  p.memory_bus_bits = prop.memoryBusWidth;
  p.memory_clock_khz = memory_clock_khz;
  p.global_memory_bytes = static_cast<std::int64_t>(prop.totalGlobalMem);
  p.compute_capability_major = prop.major;
  p.compute_capability_minor = prop.minor;
  return p;
}

}  // namespace leangrad::bench
