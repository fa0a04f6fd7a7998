// optim::clip_grad_norm_ (optim/clip_grad.h): gathers the defined gradients, checks they share a
// device, has ops::grad_norm compute their norm and ops::clip_grads scale them in place; with
// error_if_nonfinite the norm is read on the host in between (on CUDA a wait for the GPU).
#include <leangrad/optim/clip_grad.h>

#include <cmath>

#include <leangrad/autograd/grad_mode.h>
#include <leangrad/kernels/ops.h>

namespace leangrad::optim {

Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  NoGradGuard no_grad;
  std::vector<Tensor> grads;
  for (const Tensor& p : parameters) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    LG_CHECK_DEVICE(grads.empty() || g.device() == grads.front().device(),
                    "clip_grad_norm_: gradients on ", grads.front().device(), " and ", g.device());
    grads.push_back(g);
  }
  const Tensor total_norm = ops::grad_norm(grads, norm_type);
  if (error_if_nonfinite) {
    const double norm = total_norm.dtype() == kFloat64
                            ? total_norm.item<double>()
                            : static_cast<double>(total_norm.item<float>());
    LG_CHECK(std::isfinite(norm), "clip_grad_norm_: the total norm of order ", norm_type,
             " for gradients from `parameters` is non-finite (", norm,
             "), so it cannot be clipped; the gradients were left unchanged (with "
             "error_if_nonfinite = false they are scaled by the non-finite norm anyway)");
  }
  ops::clip_grads(grads, max_norm, total_norm);
  return total_norm;
}

Tensor clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  return clip_grad_norm_(std::vector<Tensor>{parameter}, max_norm, norm_type, error_if_nonfinite);
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
  LG_CHECK(clip_value >= 0.0, "clip_grad_value_: expected clip_value >= 0, got ", clip_value);
  // Every gradient checked before any is clipped (clamp_ would name itself, half-way through).
  for (const Tensor& p : parameters) {
    const Tensor g = p.grad();
    LG_CHECK_DTYPE(!g.defined() || scalar_fits(clip_value, g.dtype()),
                   "clip_grad_value_: clip_value ", clip_value,
                   " cannot be converted to the gradients' dtype ", g.dtype(), " without overflow");
  }
  NoGradGuard no_grad;
  for (const Tensor& p : parameters) {
    Tensor g = p.grad();
    if (g.defined()) g.clamp_(-clip_value, clip_value);
  }
}

void clip_grad_value_(const Tensor& parameter, double clip_value) {
  clip_grad_value_(std::vector<Tensor>{parameter}, clip_value);
}

}  // namespace leangrad::optim
