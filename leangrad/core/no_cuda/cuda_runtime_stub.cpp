// core/cuda.h for builds without CUDA (LEANGRAD_WITH_CUDA=OFF): no devices, the TF32 switch
// still works, and everything that would need a GPU throws DeviceError saying so: a build
// without CUDA links and tells the user clearly. core/cuda/cuda_runtime.cpp is the real one.
#include <atomic>

#include <leangrad/core/cuda.h>
#include <leangrad/core/error.h>

namespace leangrad::cuda {
namespace {

std::atomic<bool> g_allow_tf32{false};

[[noreturn]] void throw_not_built(const char* what) {
  LG_THROW(DeviceError, what, ": leangrad was built without CUDA (LEANGRAD_WITH_CUDA=OFF)");
}

}  // namespace

bool is_available() {
  return false;
}
int device_count() {
  return 0;
}
void synchronize(int /*device*/) {
  throw_not_built("cuda::synchronize");
}
int current_device() {
  throw_not_built("cuda::current_device");
}
void set_device(int /*device*/) {
  throw_not_built("cuda::set_device");
}
DeviceProperties get_device_properties(int /*device*/) {
  throw_not_built("cuda::get_device_properties");
}
std::vector<LibraryStatus> library_statuses() {
  return {};
}

// No CUDA tensor can exist without CUDA: a guard for a CPU device has nothing to do.
DeviceGuard::DeviceGuard(Device device) {
  if (device.is_cuda()) throw_not_built("cuda::DeviceGuard");
}
DeviceGuard::~DeviceGuard() = default;

Stream Stream::create(int /*device*/) {
  throw_not_built("cuda::Stream::create");
}
Stream Stream::default_stream(int /*device*/) {
  throw_not_built("cuda::Stream::default_stream");
}
void Stream::synchronize() const {
  throw_not_built("cuda::Stream::synchronize");
}
bool Stream::query() const {
  throw_not_built("cuda::Stream::query");
}
void Stream::wait(const Event& /*event*/) const {
  throw_not_built("cuda::Stream::wait");
}

Stream current_stream(int /*device*/) {
  throw_not_built("cuda::current_stream");
}
void set_current_stream(const Stream& /*stream*/) {
  throw_not_built("cuda::set_current_stream");
}

StreamGuard::StreamGuard(const Stream& /*stream*/) {
  throw_not_built("cuda::StreamGuard");
}
StreamGuard::~StreamGuard() = default;  // never reached: the constructor always throws

Event::Event(bool /*enable_timing*/) {
  throw_not_built("cuda::Event");
}
Event::~Event() = default;  // no Event can exist: the constructor always throws
Event::Event(Event&& other) noexcept
    : event_(other.event_), device_(other.device_), timing_(other.timing_) {
  other.event_ = nullptr;
}
Event& Event::operator=(Event&& other) noexcept {
  event_ = other.event_;
  device_ = other.device_;
  other.event_ = nullptr;
  return *this;
}
void Event::record(const Stream& /*stream*/) {
  throw_not_built("cuda::Event::record");
}
void Event::record() {
  throw_not_built("cuda::Event::record");
}
void Event::synchronize() const {
  throw_not_built("cuda::Event::synchronize");
}
bool Event::query() const {
  throw_not_built("cuda::Event::query");
}
float Event::elapsed_ms(const Event& /*end*/) const {
  throw_not_built("cuda::Event::elapsed_ms");
}

void set_allow_tf32(bool allow) {
  g_allow_tf32.store(allow, std::memory_order_relaxed);
}
bool allow_tf32() {
  return g_allow_tf32.load(std::memory_order_relaxed);
}

}  // namespace leangrad::cuda
