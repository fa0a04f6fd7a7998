// The CUDA memory sources of the caching allocators (core/allocator_backends.h): CudaBackend
// (cudaMalloc on one GPU) and PinnedBackend (page-locked host memory from cudaHostAlloc), both
// with CUDA events for Note [Stream-ordered reuse] in caching_allocator.cpp.
// Built only with LEANGRAD_WITH_CUDA=ON; no_cuda/cuda_backends_stub.cpp stands in otherwise.
#include <cuda_runtime.h>

#include <cstdio>

#include <leangrad/core/allocator_backends.h>
#include <leangrad/core/cuda/cuda_check.h>
#include <leangrad/core/error.h>
#include <leangrad/core/host_sync.h>

namespace leangrad {
namespace {

int visible_device_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // e.g. cudaErrorNoDevice or cudaErrorInsufficientDriver
    return 0;
  }
  return count;
}

// Events shared by both backends; the caller has made the stream's device current.
void* record_event_on(StreamRef stream) {
  cudaEvent_t event = nullptr;
  LG_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  const cudaError_t status = cudaEventRecord(event, reinterpret_cast<cudaStream_t>(stream.handle));
  if (status != cudaSuccess) {
    cudaEventDestroy(event);
    LG_CUDA_CHECK(status);
  }
  return event;
}

bool query_event(void* event) {
  const cudaError_t status = cudaEventQuery(static_cast<cudaEvent_t>(event));
  if (status == cudaErrorNotReady) {
    // "Not ready" is an answer, but the runtime also keeps it as its last error: left there, the
    // next kernel launch's LG_CUDA_CHECK_LAUNCH would report it (as pytorch/pytorch#18584).
    (void)cudaGetLastError();
    return false;
  }
  LG_CUDA_CHECK(status);
  return true;
}

void synchronize_event_handle(void* event) {
  count_host_sync();
  LG_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event)));
}

void destroy_event_handle(void* event) noexcept {
  LG_CUDA_WARN(cudaEventDestroy(static_cast<cudaEvent_t>(event)));
}

class CudaBackend final : public AllocatorBackend {
 public:
  explicit CudaBackend(int device) : device_(device) {}

  void* allocate(std::size_t nbytes) override {
    CudaDeviceGuard guard(device_);
    void* ptr = nullptr;
    const cudaError_t status = cudaMalloc(&ptr, nbytes);
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // out of memory is an answer, not a sticky error
      return nullptr;
    }
    LG_CUDA_CHECK(status);
    return ptr;
  }

  void deallocate(void* ptr, std::size_t /*nbytes*/) override {
    int previous = device_;
    cudaGetDevice(&previous);
    if (previous != device_) LG_CUDA_WARN(cudaSetDevice(device_));
    LG_CUDA_WARN(cudaFree(ptr));
    if (previous != device_) LG_CUDA_WARN(cudaSetDevice(previous));
  }

  Device device() const override { return Device::cuda(device_); }
  std::string name() const override { return Device::cuda(device_).str(); }

  void* record_event(StreamRef stream) override {
    CudaDeviceGuard guard(device_);
    return record_event_on(stream);
  }
  bool event_completed(void* event) override { return query_event(event); }
  void synchronize_event(void* event) override { synchronize_event_handle(event); }
  void destroy_event(void* event) override { destroy_event_handle(event); }

 private:
  int device_;
};

class PinnedBackend final : public AllocatorBackend {
 public:
  void* allocate(std::size_t nbytes) override {
    void* ptr = nullptr;
    const cudaError_t status = cudaHostAlloc(&ptr, nbytes, cudaHostAllocDefault);
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      return nullptr;
    }
    LG_CUDA_CHECK(status);
    return ptr;
  }

  void deallocate(void* ptr, std::size_t /*nbytes*/) override { LG_CUDA_WARN(cudaFreeHost(ptr)); }

  Device device() const override { return Device::cpu(); }
  std::string name() const override { return "pinned"; }

  // A copy stream may belong to any GPU: the event is made on the stream's own device, which for
  // a default stream (handle 0) only StreamRef::device names (Note [Default streams of several
  // GPUs] in caching_allocator.cpp).
  void* record_event(StreamRef stream) override {
    CudaDeviceGuard guard(stream.device);
    return record_event_on(stream);
  }
  bool event_completed(void* event) override { return query_event(event); }
  void synchronize_event(void* event) override { synchronize_event_handle(event); }
  void destroy_event(void* event) override { destroy_event_handle(event); }
};

}  // namespace

std::unique_ptr<AllocatorBackend> make_cuda_backend(int device) {
  const int count = visible_device_count();
  LG_CHECK_DEVICE(count > 0, "no CUDA device is available: cannot allocate on cuda:", device);
  LG_CHECK_DEVICE(device >= 0 && device < count, "cannot allocate on cuda:", device, ": only ",
                  count, " CUDA device(s) are visible");
  return std::make_unique<CudaBackend>(device);
}

std::unique_ptr<AllocatorBackend> make_pinned_backend() {
  // Without a GPU, page-locking buys nothing (and cudaHostAlloc would fail): plain host memory.
  if (visible_device_count() == 0) return std::make_unique<CpuBackend>("pinned");
  return std::make_unique<PinnedBackend>();
}

}  // namespace leangrad
