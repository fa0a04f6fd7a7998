// The stub of bench/gpu_device_properties.cu for builds without CUDA (LEANGRAD_WITH_CUDA=OFF):
// the GPU programs stop at "no CUDA device: skipped" before asking, so nothing reaches it.
#include "bench/gpu_harness.h"
#include <leangrad/core/error.h>

namespace leangrad::bench {

DeviceProperties query_device_properties() {
  LG_THROW(DeviceError,
           "query_device_properties: leangrad was built without CUDA (LEANGRAD_WITH_CUDA=OFF)");
}

}  // namespace leangrad::bench
