// The public CUDA runtime surface: device queries, streams, events.
// Works in every build: without CUDA (LEANGRAD_WITH_CUDA=OFF) is_available() is false,
// device_count() is 0, and everything else throws DeviceError saying CUDA was not built in.
// No CUDA header is included here, so programs using leangrad need no CUDA toolkit.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <leangrad/core/allocator.h>

namespace leangrad::cuda {

// True when leangrad was built with CUDA and at least one GPU is visible.
bool is_available();
// Number of visible GPUs (0 without CUDA or without a GPU).
int device_count();
// Waits for all work on the current device.
void synchronize(int device = -1);

// What the runtime reports about a device (LibTorch: at::cuda::getDeviceProperties). Programs
// ask leangrad rather than the CUDA runtime: libleangrad holds its own (static) runtime.
struct DeviceProperties {
  std::string name;
  int sm_count = 0;
  std::int64_t l2_bytes = 0;
  int memory_bus_bits = 0;
  std::int64_t memory_clock_khz = 0;  // 0: the runtime does not report it
  std::int64_t global_memory_bytes = 0;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
};
DeviceProperties get_device_properties(int device = -1);

// A CUDA library leangrad opens at its first use rather than at start-up (Note [Lazily loaded
// CUDA libraries] in kernels/cuda/cublas_lazy.cpp), as library_statuses() finds it.
struct LibraryStatus {
  std::string name;     // "cuBLAS", "cuDNN", "NCCL"
  std::string file;     // the file opened ("libcublas.so.13"), or those tried
  std::string version;  // "13.1.0" as the loaded copy reports it; empty when not loaded
  int major = 0;        // the version's major number; 0 when not loaded
  std::string error;    // why it could not be loaded, or which function it lacks; empty if fine
  bool ok() const { return error.empty(); }
};
// Opens cuBLAS, cuDNN and (when built with NCCL) NCCL now, asks each its version and looks up
// every function leangrad calls in it. Needs no GPU: for `leangrad-train --version`, bug reports
// and the install test. Empty in a build without CUDA.
std::vector<LibraryStatus> library_statuses();
// The device that kernels launch on for this thread (as cudaGetDevice); -1 means "current".
int current_device();
void set_device(int device);

// Makes `device` current for the scope when it is a CUDA device, restoring the previous device
// on exit; does nothing for the CPU. Every op entry on CUDA tensors holds one (kernels/ops.h), so
// kernels launch, and their workspaces are allocated, on their tensors' device, whatever device
// the calling thread had current. (As c10::cuda::CUDAGuard.)
class DeviceGuard {
 public:
  explicit DeviceGuard(Device device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  [[maybe_unused]] int previous_ = -1;  // -1: nothing to restore (unused without CUDA)
};

class Event;

// A CUDA stream. The default stream has id 0 and needs no ownership; streams made by create()
// get ids 1, 2, ... (never reused in a process, unlike the driver's handles) and are destroyed
// when the last Stream copy referring to them goes away.
class Stream {
 public:
  Stream() = default;  // the default (legacy) stream of device 0
  // A new stream that does not synchronize with the default stream.
  static Stream create(int device = -1);
  static Stream default_stream(int device = -1);

  std::uint64_t id() const { return id_; }
  // The cudaStream_t, as an opaque pointer (null: the default stream).
  void* handle() const { return handle_; }
  // What the caching allocator keys blocks by (see StreamRef in core/allocator.h).
  StreamRef ref() const {
    return StreamRef{id_, reinterpret_cast<std::uintptr_t>(handle_), device_};
  }
  int device() const { return device_; }
  void synchronize() const;
  // True when all work queued on the stream has completed.
  bool query() const;
  // Work queued on this stream after the call waits for `event` (no host wait).
  void wait(const Event& event) const;

  friend bool operator==(const Stream& a, const Stream& b) {
    return a.id_ == b.id_ && a.device_ == b.device_;
  }

 private:
  Stream(std::uint64_t id, void* handle, int device, std::shared_ptr<void> owner)
      : id_(id), handle_(handle), device_(device), owner_(std::move(owner)) {}
  std::uint64_t id_ = 0;
  void* handle_ = nullptr;
  int device_ = 0;
  std::shared_ptr<void> owner_;
};

// The stream kernels and copies of this thread go to on `device` (default: current device).
Stream current_stream(int device = -1);
void set_current_stream(const Stream& stream);

// Makes `stream` current for the scope, restoring the previous one on exit.
class StreamGuard {
 public:
  explicit StreamGuard(const Stream& stream);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  Stream previous_;
};

// A CUDA event: a marker in a stream's work queue.
class Event {
 public:
  explicit Event(bool enable_timing = true);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;

  void record(const Stream& stream);
  void record();  // on the current stream
  void synchronize() const;
  bool query() const;
  // Milliseconds between this event and `end` (both created with enable_timing, on one device,
  // recorded and completed).
  float elapsed_ms(const Event& end) const;
  void* handle() const { return event_; }

 private:
  void* event_ = nullptr;
  int device_ = 0;
  bool timing_ = true;
};

// cuBLAS math mode for float32 matmul: false (default) keeps full f32 precision; true lets
// cuBLAS use TF32 tensor cores (like torch.backends.cuda.matmul.allow_tf32).
void set_allow_tf32(bool allow);
bool allow_tf32();

}  // namespace leangrad::cuda
