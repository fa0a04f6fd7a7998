// optim::clip_grad_norm_ (optim/clip_grad.h): gathers the defined gradients, checks they share a
// device, and hands them to ops::clip_grad_norm, which computes the norm and scales in place.
#include <leangrad/optim/clip_grad.h>

#include <leangrad/autograd/grad_mode.h>
#include <leangrad/kernels/ops.h>

namespace leangrad::optim {

Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type) {
  NoGradGuard no_grad;
  std::vector<Tensor> grads;
  for (const Tensor& p : parameters) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    LG_CHECK_DEVICE(grads.empty() || g.device() == grads.front().device(),
                    "clip_grad_norm_: gradients on ", grads.front().device(), " and ", g.device());
    grads.push_back(g);
  }
  return ops::clip_grad_norm(grads, max_norm, norm_type);
}

}  // namespace leangrad::optim
