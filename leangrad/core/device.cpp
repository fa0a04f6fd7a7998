// Device from its text form (core/device.h).
#include <leangrad/core/device.h>

#include <charconv>

#include <leangrad/core/error.h>

namespace leangrad {

Device::Device(const std::string& spec) {
  if (spec == "cpu") return;
  type = DeviceType::CUDA;
  if (spec == "cuda") return;
  const char* last = spec.data() + spec.size();
  const bool prefixed = spec.rfind("cuda:", 0) == 0 && spec.size() > 5;
  const auto [end, error] = std::from_chars(spec.data() + (prefixed ? 5 : 0), last, index);
  LG_CHECK_DEVICE(prefixed && error == std::errc() && end == last && index >= 0,
                  "Device: expected \"cpu\", \"cuda\" or \"cuda:<index >= 0>\", got \"", spec,
                  "\"");
}

}  // namespace leangrad
