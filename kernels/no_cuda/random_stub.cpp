// CUDA random launchers in a build without CUDA: unreachable in practice (no CUDA tensor can be
// allocated), present so the library links; they throw DeviceError.
#include "core/error.h"
#include "kernels/cuda/random.h"

namespace leangrad::kernels::cuda {

void uniform(DType, void*, std::int64_t, std::uint64_t, std::uint64_t, double, double) {
  detail::throw_cuda_not_built("uniform_");
}
void normal(DType, void*, std::int64_t, std::uint64_t, std::uint64_t, double, double) {
  detail::throw_cuda_not_built("normal_");
}

}  // namespace leangrad::kernels::cuda
