// kernels/cuda/copy.h for builds without CUDA: copy_bytes throws DeviceError (STYLE.md habit 13).
#include "core/error.h"
#include "kernels/cuda/copy.h"

namespace leangrad::kernels::cuda {

void copy_bytes(void* /*dst*/, Device dst_device, bool /*dst_pinned*/, const void* /*src*/,
                Device src_device, bool /*src_pinned*/, std::size_t /*nbytes*/,
                bool /*non_blocking*/) {
  LG_THROW(DeviceError, "copy from ", src_device, " to ", dst_device,
           ": leangrad was built without CUDA (LEANGRAD_WITH_CUDA=OFF)");
}

}  // namespace leangrad::kernels::cuda
