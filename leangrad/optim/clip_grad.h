// optim::clip_grad_norm_: rescales gradients so that their joint norm is at most max_norm, as
// torch.nn.utils.clip_grad_norm_; optim::clip_grad_value_ clamps each element. One fused norm over
// all parameters (a multi-tensor reduction), then one multi-tensor scale; on CUDA the clip
// coefficient stays on the device (no host wait) unless error_if_nonfinite asks for the norm to be
// checked.
//   loss.backward();
//   optim::clip_grad_norm_(model.parameters(), 1.0);
//   opt.step();
#pragma once

#include <limits>
#include <vector>

#include <leangrad/core/tensor.h>

namespace leangrad::optim {

// The total norm of the gradients (parameters without one are skipped), as a 0-d tensor on their
// device, float64 when any gradient is float64 and float32 otherwise (PyTorch's promotion); every
// gradient is multiplied by min(1, max_norm / (total_norm + 1e-6)), that factor computed in the
// norm's dtype (for float32 gradients beside float64 ones, from the norm rounded to float32:
// docs/api-notes.md). norm_type: p > 0, or infinity (the largest |g|). Gradients: float32 or
// float64, contiguous, one device.
// As in PyTorch, a NaN gradient makes the norm and every gradient NaN, and an Inf one makes the
// norm Inf and the factor 0 (kernels::clip_coefficient). With error_if_nonfinite, a NaN or
// infinite norm (an overflowing one too) throws Error instead, before any gradient is changed;
// the norm is then read on the host, which waits for the GPU (one host sync per call).
Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm,
                       double norm_type = 2.0, bool error_if_nonfinite = false);
// One parameter's gradient, as LibTorch's overload.
Tensor clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);

// Every gradient (parameters without one are skipped) clamped in place to [-clip_value,
// clip_value], as torch.nn.utils.clip_grad_value_; NaN stays NaN. clip_value >= 0 (a negative or
// NaN one is an Error, where PyTorch would set every gradient to -clip_value).
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);
void clip_grad_value_(const Tensor& parameter, double clip_value);

}  // namespace leangrad::optim

// LibTorch's spelling, torch::nn::utils::clip_grad_norm_ and clip_grad_value_.
namespace leangrad::nn::utils {
using optim::clip_grad_norm_;
using optim::clip_grad_value_;
}  // namespace leangrad::nn::utils
