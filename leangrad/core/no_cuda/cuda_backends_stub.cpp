// The CUDA backends of a build without CUDA (LEANGRAD_WITH_CUDA=OFF): CUDA memory is refused with
// a clear DeviceError, and the pinned pool falls back to ordinary host memory.
#include <leangrad/core/allocator_backends.h>
#include <leangrad/core/error.h>

namespace leangrad {

std::unique_ptr<AllocatorBackend> make_cuda_backend(int device) {
  LG_THROW(
      DeviceError,
      "leangrad was built without CUDA (LEANGRAD_WITH_CUDA=OFF): cannot allocate on cuda:", device);
}

std::unique_ptr<AllocatorBackend> make_pinned_backend() {
  return std::make_unique<CpuBackend>("pinned");
}

}  // namespace leangrad
