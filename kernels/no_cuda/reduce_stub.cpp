// kernels/cuda/reduce.h for builds without CUDA: the launchers throw DeviceError (STYLE.md
// habit 13). ops_reduce.cpp only calls them for CUDA tensors, which such a build cannot create.
#include "core/error.h"
#include "kernels/cuda/reduce.h"

namespace leangrad::kernels::cuda {

void reduce(ReduceOp op, DType /*dtype*/, void* /*out*/, const void* /*in*/, std::int64_t /*outer*/,
            std::int64_t /*reduce_size*/, std::int64_t /*inner*/) {
  LG_THROW(DeviceError, op_name(op), " on cuda: leangrad was built without CUDA ",
           "(LEANGRAD_WITH_CUDA=OFF)");
}

void argmax(DType /*dtype*/, std::int64_t* /*out*/, const void* /*in*/,
            std::int64_t /*num_outputs*/, std::int64_t /*reduce_size*/) {
  LG_THROW(DeviceError, "argmax on cuda: leangrad was built without CUDA ",
           "(LEANGRAD_WITH_CUDA=OFF)");
}

}  // namespace leangrad::kernels::cuda
