// kernels/cuda/linalg.h for builds without CUDA: the launcher throws DeviceError (STYLE.md
// habit 13). ops_linalg.cpp only calls it for CUDA tensors, which such a build cannot create.
#include "core/error.h"
#include "kernels/cuda/linalg.h"

namespace leangrad::kernels::cuda {

void matmul(DType /*dtype*/, const MatmulGeometry& /*g*/, void* /*out*/) {
  LG_THROW(DeviceError, "matmul on cuda: leangrad was built without CUDA ",
           "(LEANGRAD_WITH_CUDA=OFF)");
}

}  // namespace leangrad::kernels::cuda
