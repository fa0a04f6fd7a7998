// CUDA launchers of the layer kernels (on the current stream, asynchronous): pooling, dropout,
// softmax and the losses. Same contract as kernels/cpu/layers.h, the reference; called only by
// kernels/ops_layers.cpp. An out-of-range target gives a NaN loss (see docs/kernels-layers.md).
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "kernels/layers_math.h"

namespace leangrad::kernels::cuda {

using layers_math::Pool2dShape;

// in: (planes, H, W); out, indices: (planes, OH, OW); indices are h * W + w within the plane.
void max_pool2d(DType dtype, void* out, std::int64_t* indices, const void* in,
                const Pool2dShape& g);
// grad_in: (planes, H, W) from grad_out and indices (planes, OH, OW).
void max_pool2d_backward(DType dtype, void* grad_in, const void* grad_out,
                         const std::int64_t* indices, const Pool2dShape& g);
void avg_pool2d(DType dtype, void* out, const void* in, const Pool2dShape& g);
void avg_pool2d_backward(DType dtype, void* grad_in, const void* grad_out, const Pool2dShape& g);

// out[i] = keep(i) ? in[i] * scale : 0 and mask[i] = keep(i) (layers_math::dropout_keep).
void dropout(DType dtype, void* out, bool* mask, const void* in, std::int64_t numel, double p,
             double scale, std::uint64_t seed, std::uint64_t offset);
// grad_in[i] = mask[i] ? grad_out[i] * scale : 0.
void dropout_backward(DType dtype, void* grad_in, const void* grad_out, const bool* mask,
                      std::int64_t numel, double scale);

// (outer, R, inner) blocks: each (o, j) is a run of R elements with stride inner.
// out = softmax (or log_softmax when `log`) along the run.
void softmax(DType dtype, void* out, const void* in, std::int64_t outer, std::int64_t R,
             std::int64_t inner, bool log);
// grad_in from grad_out and the forward's output y:
//   softmax:      grad_in = y * (grad_out - sum(grad_out * y))
//   log_softmax:  grad_in = grad_out - exp(y) * sum(grad_out)
void softmax_backward(DType dtype, void* grad_in, const void* grad_out, const void* out,
                      std::int64_t outer, std::int64_t R, std::int64_t inner, bool log);

// logits (N, C), target (N,) in [0, C) or ignore_index (checked by the caller on the CPU).
// losses[i] = logsumexp(row i) - logits[i, t_i] (0 when ignored); lse (N,) keeps logsumexp in
// opmath_t of dtype (float32 for the 16-bit floats) for the backward.
void cross_entropy(DType dtype, void* losses, void* lse, const void* logits,
                   const std::int64_t* target, std::int64_t N, std::int64_t C,
                   std::int64_t ignore_index);
// grad_logits[i, j] = grad_losses[i] * (exp(logits[i, j] - lse[i]) - [j == t_i]), 0 if ignored.
void cross_entropy_backward(DType dtype, void* grad_logits, const void* grad_losses,
                            const void* logits, const void* lse, const std::int64_t* target,
                            std::int64_t N, std::int64_t C, std::int64_t ignore_index);
// losses[i] = -logp[i, t_i] (0 when ignored).
void nll_loss(DType dtype, void* losses, const void* logp, const std::int64_t* target,
              std::int64_t N, std::int64_t C, std::int64_t ignore_index);
// grad_logp[i, j] = -grad_losses[i] when j == t_i and t_i is not ignored, else 0.
void nll_loss_backward(DType dtype, void* grad_logp, const void* grad_losses,
                       const std::int64_t* target, std::int64_t N, std::int64_t C,
                       std::int64_t ignore_index);

}  // namespace leangrad::kernels::cuda
