// The CUDA libraries opened at their first call (Note [Lazily loaded CUDA libraries] in
// kernels/cuda/cublas_lazy.cpp): each forwarding file reports its library's status for
// cuda::library_statuses() (core/cuda.h). Internal.
#pragma once

#include <array>
#include <functional>
#include <initializer_list>

#include <leangrad/core/cuda.h>
#include <leangrad/core/shared_library.h>

namespace leangrad::detail {

// Opens `library`, resolves each of `functions` (every function leangrad forwards to it) and asks
// `version()` for {major, minor, patch}. Never throws: a failure is the status's error.
cuda::LibraryStatus probe_library(const char* name, SharedLibrary& library,
                                  std::initializer_list<const char*> functions,
                                  const std::function<std::array<int, 3>()>& version);

cuda::LibraryStatus cublas_status();  // kernels/cuda/cublas_lazy.cpp
cuda::LibraryStatus cudnn_status();   // kernels/cuda/cudnn_lazy.cpp
// distributed/nccl/nccl_lazy.cpp; distributed/no_nccl/ in builds without NCCL says so.
cuda::LibraryStatus nccl_status();

}  // namespace leangrad::detail
