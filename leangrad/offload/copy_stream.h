// The copy stream that offload's host<->device copies run on, and the two helpers every such copy
// uses: the events that order it against the compute stream, and a scope that makes the tensor's
// device current. Shared by offload::SaveOnCpu and offload::ParameterOffload.
#pragma once

#include <memory>

#include <leangrad/core/cuda.h>

namespace leangrad::offload::detail {

// The process-wide copy stream of `device`, made on first use. See Note [One copy stream per
// device] in copy_stream.cpp.
cuda::Stream copy_stream(int device);

// An event recorded on `stream` now; timing off (cheaper to record and wait on).
std::shared_ptr<cuda::Event> record_event(const cuda::Stream& stream);

// Makes `device` current for a scope: cuda::Event belongs to the device current at construction.
class CurrentDeviceScope {
 public:
  explicit CurrentDeviceScope(int device);
  ~CurrentDeviceScope();
  CurrentDeviceScope(const CurrentDeviceScope&) = delete;
  CurrentDeviceScope& operator=(const CurrentDeviceScope&) = delete;

 private:
  int previous_;
  int device_;
};

}  // namespace leangrad::offload::detail
