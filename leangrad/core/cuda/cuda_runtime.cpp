// The CUDA runtime surface of core/cuda.h: device queries, streams, events and the TF32 switch,
// over the CUDA runtime API. Built only with LEANGRAD_WITH_CUDA=ON; core/no_cuda/
// cuda_runtime_stub.cpp provides the same symbols otherwise.
//   - is_available()/device_count() never throw: no GPU or no driver simply means 0 devices.
//   - The current stream is per thread and per device (thread_local), the default stream (id 0)
//     until set_current_stream or a StreamGuard changes it, as in PyTorch.
//   - Streams from Stream::create are owned by a shared_ptr whose deleter destroys them when the
//     last Stream copy goes; deleters and Event's destructor report failures but never throw.
//     Each gets the next id of a process-wide counter: ids name streams for the caching
//     allocator, and unlike cudaStream_t values they are never reused.
#include <cuda_runtime.h>

#include <atomic>
#include <vector>

#include <leangrad/core/cuda.h>
#include <leangrad/core/cuda/cuda_check.h>
#include <leangrad/core/error.h>
#include <leangrad/core/host_sync.h>

namespace leangrad::cuda {
namespace {

std::atomic<bool> g_allow_tf32{false};
std::atomic<std::uint64_t> g_next_stream_id{1};  // 0 is every device's default stream

cudaStream_t to_cuda_stream(const Stream& stream) {
  return static_cast<cudaStream_t>(stream.handle());
}

// -1 -> the current device; anything else must name a visible device.
int resolve_device(int device) {
  if (device == -1) return current_device();
  const int count = device_count();
  LG_CHECK_DEVICE(device >= 0 && device < count, "invalid CUDA device index ", device, ": ", count,
                  " CUDA device(s) are visible");
  return device;
}

// Runs `destroy` (a CUDA call whose failure is only reported) with `device` current, restoring
// the previous device; for deleters and destructors, which must not throw. cudaStreamDestroy and
// cudaEventDestroy return at once: queued work still completes.
template <typename F>
void on_device_noexcept(int device, const F& destroy) noexcept {
  int previous = device;
  if (cudaGetDevice(&previous) != cudaSuccess) {
    (void)cudaGetLastError();
    previous = device;
  }
  if (previous != device) LG_CUDA_WARN(cudaSetDevice(device));
  destroy();
  if (previous != device) LG_CUDA_WARN(cudaSetDevice(previous));
}

// This thread's current stream of each device; filled with default streams on first use.
std::vector<Stream>& thread_current_streams(int device) {
  thread_local std::vector<Stream> streams;
  while (static_cast<int>(streams.size()) <= device) {
    streams.push_back(Stream::default_stream(static_cast<int>(streams.size())));
  }
  return streams;
}

}  // namespace

// ---- Devices ---------------------------------------------------------------------------------

int device_count() {
  // Read once: the set of visible devices does not change during a process.
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      (void)cudaGetLastError();  // cudaErrorNoDevice, cudaErrorInsufficientDriver, ...
      return 0;
    }
    return n;
  }();
  return count;
}

bool is_available() {
  return device_count() > 0;
}

void synchronize(int device) {
  CudaDeviceGuard guard(resolve_device(device));
  count_host_sync();
  LG_CUDA_CHECK(cudaDeviceSynchronize());
}

int current_device() {
  LG_CHECK_DEVICE(is_available(), "no CUDA device is available");
  int device = 0;
  LG_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

void set_device(int device) {
  LG_CUDA_CHECK(cudaSetDevice(resolve_device(device)));
}

DeviceProperties get_device_properties(int device) {
  device = resolve_device(device);
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

DeviceGuard::DeviceGuard(Device device) {
  if (!device.is_cuda()) return;
  int current = 0;
  LG_CUDA_CHECK(cudaGetDevice(&current));
  if (current == device.index) return;
  LG_CUDA_CHECK(cudaSetDevice(resolve_device(device.index)));
  previous_ = current;
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0) LG_CUDA_WARN(cudaSetDevice(previous_));
}

// ---- Streams ---------------------------------------------------------------------------------

Stream Stream::create(int device) {
  device = resolve_device(device);
  CudaDeviceGuard guard(device);
  cudaStream_t stream = nullptr;
  LG_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  // The stream is destroyed with its last Stream copy, from whichever thread drops it.
  std::shared_ptr<void> owner(static_cast<void*>(stream), [device](void* s) noexcept {
    on_device_noexcept(device,
                       [s] { LG_CUDA_WARN(cudaStreamDestroy(static_cast<cudaStream_t>(s))); });
  });
  return Stream(g_next_stream_id.fetch_add(1, std::memory_order_relaxed), stream, device,
                std::move(owner));
}

Stream Stream::default_stream(int device) {
  return Stream(0, nullptr, resolve_device(device), nullptr);
}

void Stream::synchronize() const {
  CudaDeviceGuard guard(device_);  // stream 0 means the default stream of the current device
  count_host_sync();
  LG_CUDA_CHECK(cudaStreamSynchronize(to_cuda_stream(*this)));
}

bool Stream::query() const {
  CudaDeviceGuard guard(device_);
  const cudaError_t status = cudaStreamQuery(to_cuda_stream(*this));
  if (status == cudaErrorNotReady) {
    (void)cudaGetLastError();  // "not ready" is an answer, not an error to report later
    return false;
  }
  LG_CUDA_CHECK(status);
  return true;
}

void Stream::wait(const Event& event) const {
  LG_CHECK(event.handle() != nullptr, "Stream::wait: the event was moved from");
  CudaDeviceGuard guard(device_);
  LG_CUDA_CHECK(
      cudaStreamWaitEvent(to_cuda_stream(*this), static_cast<cudaEvent_t>(event.handle()), 0));
}

Stream current_stream(int device) {
  device = resolve_device(device);
  return thread_current_streams(device)[static_cast<std::size_t>(device)];
}

void set_current_stream(const Stream& stream) {
  const int device = resolve_device(stream.device());
  thread_current_streams(device)[static_cast<std::size_t>(device)] = stream;
}

StreamGuard::StreamGuard(const Stream& stream) : previous_(current_stream(stream.device())) {
  set_current_stream(stream);
}

StreamGuard::~StreamGuard() {
  // Only a thread_local vector element is assigned: nothing here can fail once constructed.
  try {
    set_current_stream(previous_);
  } catch (...) {
  }
}

// ---- Events ----------------------------------------------------------------------------------

Event::Event(bool enable_timing) : timing_(enable_timing) {
  device_ = current_device();
  cudaEvent_t event = nullptr;
  LG_CUDA_CHECK(
      cudaEventCreateWithFlags(&event, enable_timing ? cudaEventDefault : cudaEventDisableTiming));
  event_ = event;
}

namespace {

void destroy_event_noexcept(void* event, int device) noexcept {
  if (event == nullptr) return;
  on_device_noexcept(device,
                     [event] { LG_CUDA_WARN(cudaEventDestroy(static_cast<cudaEvent_t>(event))); });
}

}  // namespace

Event::~Event() {
  destroy_event_noexcept(event_, device_);
}

Event::Event(Event&& other) noexcept
    : event_(other.event_), device_(other.device_), timing_(other.timing_) {
  other.event_ = nullptr;
}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    destroy_event_noexcept(event_, device_);
    event_ = other.event_;
    device_ = other.device_;
    timing_ = other.timing_;
    other.event_ = nullptr;
  }
  return *this;
}

void Event::record(const Stream& stream) {
  LG_CHECK(event_ != nullptr, "Event::record: the event was moved from");
  LG_CHECK_DEVICE(stream.device() == device_, "Event::record: the event belongs to cuda:", device_,
                  " but the stream to cuda:", stream.device());
  CudaDeviceGuard guard(device_);
  LG_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event_), to_cuda_stream(stream)));
}

void Event::record() {
  record(current_stream(device_));
}

void Event::synchronize() const {
  LG_CHECK(event_ != nullptr, "Event::synchronize: the event was moved from");
  CudaDeviceGuard guard(device_);
  count_host_sync();
  LG_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event_)));
}

bool Event::query() const {
  LG_CHECK(event_ != nullptr, "Event::query: the event was moved from");
  CudaDeviceGuard guard(device_);
  const cudaError_t status = cudaEventQuery(static_cast<cudaEvent_t>(event_));
  if (status == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  LG_CUDA_CHECK(status);
  return true;
}

float Event::elapsed_ms(const Event& end) const {
  LG_CHECK(event_ != nullptr && end.event_ != nullptr,
           "Event::elapsed_ms: an event was moved from");
  // Checked here rather than left to the runtime, whose error a memory checker reports.
  LG_CHECK(timing_ && end.timing_, "Event::elapsed_ms: both events must be created with ",
           "enable_timing = true (this one ", timing_ ? "is" : "is not", ", the end event ",
           end.timing_ ? "is" : "is not", ")");
  LG_CHECK_DEVICE(device_ == end.device_, "Event::elapsed_ms: the events are on cuda:", device_,
                  " and cuda:", end.device_);
  CudaDeviceGuard guard(device_);
  float ms = 0.0f;
  const cudaError_t status = cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(event_),
                                                  static_cast<cudaEvent_t>(end.event_));
  if (status == cudaErrorNotReady) {
    (void)cudaGetLastError();
    LG_THROW(Error, "Event::elapsed_ms: an event has not completed yet (call synchronize() on ",
             "the end event first)");
  }
  if (status == cudaErrorInvalidResourceHandle) {
    (void)cudaGetLastError();
    LG_THROW(Error, "Event::elapsed_ms: both events must be recorded, on the same device, and ",
             "created with enable_timing = true");
  }
  LG_CUDA_CHECK(status);
  return ms;
}

// ---- Math modes ------------------------------------------------------------------------------

void set_allow_tf32(bool allow) {
  g_allow_tf32.store(allow, std::memory_order_relaxed);
}
bool allow_tf32() {
  return g_allow_tf32.load(std::memory_order_relaxed);
}

}  // namespace leangrad::cuda
