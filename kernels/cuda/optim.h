// CUDA launchers of the optimizers and of clip_grad_norm_, on the current stream (asynchronous);
// kernels/cpu/optim.h is the reference and its contracts hold here. Each launch updates many
// parameter tensors at once (a multi-tensor launch, see Note [Multi-tensor launch] in optim.cu).
// found_inf and total_norm are device pointers: nothing here waits for the GPU.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/optim_math.h"

namespace leangrad::kernels::cuda {

void sgd_step(const SgdUpdate& update, const std::vector<OptimTensor<SgdUpdate>>& tensors);
void adam_step(const AdamUpdate& update, const std::vector<OptimTensor<AdamUpdate>>& tensors,
               int* found_inf);
void radam_step(const RAdamUpdate& update, const std::vector<OptimTensor<RAdamUpdate>>& tensors);
void adam8bit_step(const AdamUpdate& update, const std::vector<Adam8bitTensor>& tensors,
                   int* found_inf);

// Floats of device scratch memory clip_grad_norm needs for these gradients.
std::int64_t clip_grad_norm_scratch_floats(const std::vector<GradSpan>& grads);
// total_norm: one device float; scratch: clip_grad_norm_scratch_floats(grads) device floats.
void clip_grad_norm(const std::vector<GradSpan>& grads, float max_norm, float norm_type,
                    float* total_norm, float* scratch);

}  // namespace leangrad::kernels::cuda
