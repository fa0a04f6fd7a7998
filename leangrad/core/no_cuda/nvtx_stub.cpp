// Without CUDA there is no NVTX: the profiler's ranges (core/nvtx.h) do nothing.
#include <leangrad/core/nvtx.h>

namespace leangrad::nvtx {

void range_push(const char* /*name*/) {}
void range_pop() {}

}  // namespace leangrad::nvtx
