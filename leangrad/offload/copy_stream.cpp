// offload's copy streams and their ordering helpers (offload/copy_stream.h).
#include <leangrad/offload/copy_stream.h>

#include <mutex>
#include <vector>

namespace leangrad::offload::detail {

CurrentDeviceScope::CurrentDeviceScope(int device)
    : previous_(cuda::current_device()), device_(device) {
  if (previous_ != device_) cuda::set_device(device_);
}

CurrentDeviceScope::~CurrentDeviceScope() {
  if (previous_ == device_) return;
  try {
    cuda::set_device(previous_);
  } catch (...) {  // a destructor never throws; the device was valid when we left it
  }
}

// Note [One copy stream per device]
// Process-wide rather than per guard: a guard usually lives for one forward, but its copies are
// waited on during the backward, after the guard is gone; a guard-owned stream would have to be
// kept alive by every packed tensor, and a new stream per step would give the caching allocator a
// new stream id to track each step. One stream also keeps the copies in order: the copy back of a
// tensor is queued behind the copy that produced its host block. Copies in the two directions
// happen in different phases (forward, backward), so one stream costs no parallelism. The streams
// are leaked on purpose: destroying them at exit would race with the CUDA runtime's own teardown.
cuda::Stream copy_stream(int device) {
  static std::mutex mutex;
  static auto* streams = new std::vector<cuda::Stream>();  // id 0: not created yet
  std::lock_guard<std::mutex> lock(mutex);
  if (static_cast<int>(streams->size()) <= device) streams->resize(device + 1);
  cuda::Stream& stream = (*streams)[static_cast<std::size_t>(device)];
  if (stream.id() == 0) stream = cuda::Stream::create(device);
  return stream;
}

std::shared_ptr<cuda::Event> record_event(const cuda::Stream& stream) {
  auto event = std::make_shared<cuda::Event>(/*enable_timing=*/false);
  event->record(stream);
  return event;
}

}  // namespace leangrad::offload::detail
