// CPU launchers of the optimizers and of clip_grad_norm_ (the reference for kernels/cuda/optim.cu,
// which has the same functions). Each takes a list of parameter tensors as raw pointers and sizes
// (kernels/optim_math.h) and updates them in place; called only by optim/*.cpp, which has checked
// dtypes (float32), contiguity and shapes. OpenMP over elements (parallel_for).
#pragma once

#include <vector>

#include "kernels/optim_math.h"

namespace leangrad::kernels::cpu {

void sgd_step(const SgdUpdate& update, const std::vector<OptimTensor<SgdUpdate>>& tensors);
// found_inf (may be null): set to 1 when update.skip_nonfinite met a NaN/Inf gradient element.
void adam_step(const AdamUpdate& update, const std::vector<OptimTensor<AdamUpdate>>& tensors,
               int* found_inf);
void radam_step(const RAdamUpdate& update, const std::vector<OptimTensor<RAdamUpdate>>& tensors);
// Block-wise 8-bit Adam (optim/quantization.h): per block, dequantise both moments, run `update`
// (amsgrad off) on each element, then requantise with the block's new absmax.
void adam8bit_step(const AdamUpdate& update, const std::vector<Adam8bitTensor>& tensors,
                   int* found_inf);

// total_norm[0] = the norm_type-norm of all gradients together (norm_type > 0 or infinity);
// then every gradient is multiplied by min(1, max_norm / (total_norm + 1e-6)) (as PyTorch).
void clip_grad_norm(const std::vector<GradSpan>& grads, float max_norm, float norm_type,
                    float* total_norm);

}  // namespace leangrad::kernels::cpu
