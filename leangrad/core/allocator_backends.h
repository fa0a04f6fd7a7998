// Internal: the memory sources behind the caching allocators (see core/allocator.h).
// CpuBackend lives in cpu_backend.cpp; the CUDA and pinned backends in cuda/cuda_backends.cpp,
// or in no_cuda/cuda_backends_stub.cpp when leangrad is built without CUDA.
#pragma once

#include <memory>
#include <string>

#include <leangrad/core/allocator.h>

namespace leangrad {

// Ordinary host memory, 64-byte aligned (one cache line, enough for any vector load).
// Also the pinned pool's backend when there is no CUDA (built without it, or no GPU present).
class CpuBackend final : public AllocatorBackend {
 public:
  static constexpr std::size_t kAlignmentBytes = 64;

  explicit CpuBackend(std::string name = "cpu") : name_(std::move(name)) {}
  void* allocate(std::size_t nbytes) override;
  void deallocate(void* ptr, std::size_t nbytes) override;
  Device device() const override { return Device::cpu(); }
  std::string name() const override { return name_; }

 private:
  std::string name_;
};

std::unique_ptr<AllocatorBackend> make_cpu_backend();
// Throws DeviceError when CUDA is not built in, no GPU is present or `device` does not exist.
std::unique_ptr<AllocatorBackend> make_cuda_backend(int device);
// Page-locked host memory (cudaHostAlloc); ordinary host memory without CUDA or without a GPU.
std::unique_ptr<AllocatorBackend> make_pinned_backend();

}  // namespace leangrad
