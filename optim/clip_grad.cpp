// optim::clip_grad_norm_ (optim/clip_grad.h): checks the gradients, then the CPU or CUDA launcher
// (kernels/cpu/optim.h, kernels/cuda/optim.h) computes the norm and scales in place.
#include "optim/clip_grad.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "core/creation.h"
#include "kernels/cpu/optim.h"
#include "kernels/cuda/optim.h"

namespace leangrad::optim {

Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type) {
  NoGradGuard no_grad;
  LG_CHECK(norm_type > 0, "clip_grad_norm_: norm_type must be positive or infinity, got ",
           norm_type);
  std::vector<kernels::GradSpan> grads;
  std::vector<Tensor> grad_tensors;
  Device device = Device::cpu();
  for (const Tensor& p : parameters) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    LG_CHECK_DTYPE(g.dtype() == kFloat32, "clip_grad_norm_: gradients must be float32, got ",
                   g.dtype());
    LG_CHECK(g.is_contiguous(), "clip_grad_norm_: gradient of shape ", g.shape(),
             " is not contiguous");
    if (grad_tensors.empty()) device = g.device();
    LG_CHECK_DEVICE(g.device() == device, "clip_grad_norm_: gradients on ", device, " and ",
                    g.device());
    grads.push_back({g.data_ptr<float>(), g.numel()});
    grad_tensors.push_back(g);
  }
  Tensor total_norm = zeros({}, TensorOptions(kFloat32).device(device));
  const float max = static_cast<float>(max_norm);
  const float p = std::isinf(norm_type) ? std::numeric_limits<float>::infinity()
                                        : static_cast<float>(norm_type);
  if (device.is_cuda()) {
    Tensor scratch = empty({kernels::cuda::clip_grad_norm_scratch_floats(grads)},
                           TensorOptions(kFloat32).device(device));
    kernels::cuda::clip_grad_norm(grads, max, p, total_norm.data_ptr<float>(),
                                  scratch.data_ptr<float>());
  } else {
    kernels::cpu::clip_grad_norm(grads, max, p, total_norm.data_ptr<float>());
  }
  for (const Tensor& g : grad_tensors)
    g.bump_version();
  return total_norm;
}

}  // namespace leangrad::optim
