// NVTX ranges (what Nsight Systems shows as named spans on a thread): the profiler opens one per
// span when leangrad is built with CUDA (core/cuda/nvtx.cpp); without CUDA they do nothing
// (core/no_cuda/nvtx_stub.cpp). Private to core/profiler.cpp.
#pragma once

namespace leangrad::nvtx {

void range_push(const char* name);
void range_pop();

}  // namespace leangrad::nvtx
