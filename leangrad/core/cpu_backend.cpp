// CpuBackend: the host memory source of the CPU caching allocator (core/allocator_backends.h).
// std::aligned_alloc needs a size that is a multiple of the alignment, so sizes round up to 64.
#include <cstdlib>

#include <leangrad/core/allocator_backends.h>

namespace leangrad {

void* CpuBackend::allocate(std::size_t nbytes) {
  const std::size_t rounded = (nbytes + kAlignmentBytes - 1) / kAlignmentBytes * kAlignmentBytes;
  return std::aligned_alloc(kAlignmentBytes, rounded);  // nullptr when the host is out of memory
}

void CpuBackend::deallocate(void* ptr, std::size_t /*nbytes*/) {
  std::free(ptr);
}

std::unique_ptr<AllocatorBackend> make_cpu_backend() {
  return std::make_unique<CpuBackend>();
}

}  // namespace leangrad
