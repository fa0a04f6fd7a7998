// The CUDA memory sources of the caching allocators (core/allocator_backends.h): CudaBackend
// (cudaMalloc on one GPU) and PinnedBackend (page-locked host memory from cudaHostAlloc), both
// with CUDA events for Note [Stream-ordered reuse] in caching_allocator.cpp.
// Built only with LEANGRAD_WITH_CUDA=ON; no_cuda/cuda_backends_stub.cpp stands in otherwise.
#include <cuda_runtime.h>

#include <cstdio>

#include "core/allocator_backends.h"
#include "core/error.h"

namespace leangrad {
namespace {

void check_cuda(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  cudaGetLastError();  // clear the error so it is not reported again by the next call
  LG_THROW(Error, call, " failed: ", cudaGetErrorString(status));
}

// For paths that must not throw (deallocate, destructors): report and go on.
void log_cuda_error(cudaError_t status, const char* call) noexcept {
  if (status == cudaSuccess) return;
  cudaGetLastError();
  std::fprintf(stderr, "leangrad: %s failed: %s\n", call, cudaGetErrorString(status));
}

int visible_device_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // e.g. cudaErrorNoDevice or cudaErrorInsufficientDriver
    return 0;
  }
  return count;
}

// Makes `device` current for the scope and restores the previous device (a no-op when it is
// already current, the usual case).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    check_cuda(cudaGetDevice(&previous_), "cudaGetDevice");
    if (previous_ == device) return;
    check_cuda(cudaSetDevice(device), "cudaSetDevice");
    switched_ = true;
  }
  ~DeviceGuard() {
    if (switched_) log_cuda_error(cudaSetDevice(previous_), "cudaSetDevice");
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
  bool switched_ = false;
};

// Events shared by both backends; the caller has made the stream's device current.
void* record_event_on(StreamId stream) {
  cudaEvent_t event = nullptr;
  check_cuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  const cudaError_t status = cudaEventRecord(event, reinterpret_cast<cudaStream_t>(stream));
  if (status != cudaSuccess) {
    cudaEventDestroy(event);
    check_cuda(status, "cudaEventRecord");
  }
  return event;
}

bool query_event(void* event) {
  const cudaError_t status = cudaEventQuery(static_cast<cudaEvent_t>(event));
  if (status == cudaErrorNotReady) return false;
  check_cuda(status, "cudaEventQuery");
  return true;
}

void synchronize_event_handle(void* event) {
  check_cuda(cudaEventSynchronize(static_cast<cudaEvent_t>(event)), "cudaEventSynchronize");
}

void destroy_event_handle(void* event) noexcept {
  log_cuda_error(cudaEventDestroy(static_cast<cudaEvent_t>(event)), "cudaEventDestroy");
}

class CudaBackend final : public AllocatorBackend {
 public:
  explicit CudaBackend(int device) : device_(device) {}

  void* allocate(std::size_t nbytes) override {
    DeviceGuard guard(device_);
    void* ptr = nullptr;
    const cudaError_t status = cudaMalloc(&ptr, nbytes);
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // out of memory is an answer, not a sticky error
      return nullptr;
    }
    check_cuda(status, "cudaMalloc");
    return ptr;
  }

  void deallocate(void* ptr, std::size_t /*nbytes*/) override {
    int previous = device_;
    cudaGetDevice(&previous);
    if (previous != device_) log_cuda_error(cudaSetDevice(device_), "cudaSetDevice");
    log_cuda_error(cudaFree(ptr), "cudaFree");
    if (previous != device_) log_cuda_error(cudaSetDevice(previous), "cudaSetDevice");
  }

  Device device() const override { return Device::cuda(device_); }
  std::string name() const override { return Device::cuda(device_).str(); }

  void* record_event(StreamId stream) override {
    DeviceGuard guard(device_);
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
    check_cuda(status, "cudaHostAlloc");
    return ptr;
  }

  void deallocate(void* ptr, std::size_t /*nbytes*/) override {
    log_cuda_error(cudaFreeHost(ptr), "cudaFreeHost");
  }

  Device device() const override { return Device::cpu(); }
  std::string name() const override { return "pinned"; }

  // A copy stream may belong to any GPU: the event is made on the stream's own device.
  void* record_event(StreamId stream) override {
    int device = 0;
    check_cuda(cudaStreamGetDevice(reinterpret_cast<cudaStream_t>(stream), &device),
               "cudaStreamGetDevice");
    DeviceGuard guard(device);
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
