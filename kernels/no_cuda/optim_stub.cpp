// kernels/cuda/optim.h for builds without CUDA: the launchers throw DeviceError (STYLE.md
// habit 13). optim/*.cpp only calls them for CUDA tensors, which such a build cannot create.
#include "core/error.h"
#include "kernels/cuda/optim.h"

namespace leangrad::kernels::cuda {

void sgd_step(const SgdUpdate&, const std::vector<OptimTensor<SgdUpdate>>&) {
  detail::throw_cuda_not_built("optim::SGD::step");
}
void adam_step(const AdamUpdate&, const std::vector<OptimTensor<AdamUpdate>>&, int*) {
  detail::throw_cuda_not_built("optim::Adam::step");
}
void radam_step(const RAdamUpdate&, const std::vector<OptimTensor<RAdamUpdate>>&) {
  detail::throw_cuda_not_built("optim::RAdam::step");
}
void adam8bit_step(const AdamUpdate&, const std::vector<Adam8bitTensor>&, int*) {
  detail::throw_cuda_not_built("optim::Adam8bit::step");
}
std::int64_t clip_grad_norm_scratch_floats(const std::vector<GradSpan>&) {
  detail::throw_cuda_not_built("optim::clip_grad_norm_");
}
void clip_grad_norm(const std::vector<GradSpan>&, float, float, float*, float*) {
  detail::throw_cuda_not_built("optim::clip_grad_norm_");
}

}  // namespace leangrad::kernels::cuda
