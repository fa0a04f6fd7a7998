// Stand-ins for distributed/nccl/ in a build without NCCL (LEANGRAD_WITH_NCCL=OFF, and every
// build without CUDA): the same symbols, throwing an Error that says how to get NCCL.
#include <leangrad/core/cuda/lazy_libraries.h>
#include <leangrad/core/error.h>
#include <leangrad/distributed/process_group.h>

namespace leangrad::distributed {

std::shared_ptr<ProcessGroup> make_nccl_process_group(const ProcessGroupSetup&) {
  LG_THROW(Error,
           "init_process_group(Backend::NCCL): leangrad was built without NCCL "
           "(LEANGRAD_WITH_NCCL=OFF, or without CUDA); build with the CUDA toolkit, which ships "
           "NCCL, or use Backend::Gloo for CPU tensors");
}

bool is_nccl_available() {
  return false;
}

}  // namespace leangrad::distributed

namespace leangrad::detail {

// What cuda::library_statuses() lists for NCCL in a CUDA build without it.
cuda::LibraryStatus nccl_status() {
  cuda::LibraryStatus status;
  status.name = "NCCL";
  status.error = "leangrad was built without NCCL (LEANGRAD_WITH_NCCL=OFF)";
  return status;
}

}  // namespace leangrad::detail
