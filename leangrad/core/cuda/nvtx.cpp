// NVTX ranges for the profiler's spans (core/nvtx.h), over NVTX 3 (header-only: without a tool
// such as nsys attached, a push or pop is a call that returns at once).
#include <nvtx3/nvToolsExt.h>

#include <leangrad/core/nvtx.h>

namespace leangrad::nvtx {

void range_push(const char* name) {
  nvtxRangePushA(name);
}

void range_pop() {
  nvtxRangePop();
}

}  // namespace leangrad::nvtx
