// optim::SGD (optim/sgd.h): builds the multi-tensor list of SgdUpdate and calls the CPU or CUDA
// launcher (kernels/cpu/optim.h, kernels/cuda/optim.h).
#include "optim/sgd.h"

#include "core/creation.h"
#include "kernels/cpu/optim.h"
#include "kernels/cuda/optim.h"

namespace leangrad::optim {

SGD::SGD(std::vector<Tensor> params, SGDOptions options)
    : SGD(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

SGD::SGD(std::vector<ParamGroup> groups, SGDOptions options)
    : Optimizer(std::move(groups), options.lr(), options.weight_decay()), options_(options) {
  LG_CHECK(options.momentum() >= 0, "SGD: invalid momentum ", options.momentum());
  LG_CHECK(!options.nesterov() || (options.momentum() > 0 && options.dampening() == 0),
           "SGD: Nesterov momentum requires a momentum and zero dampening");
}

void SGD::update(Device device, const std::vector<ParamRef>& params) {
  const kernels::SgdUpdate update{static_cast<float>(options_.momentum()),
                                  static_cast<float>(1.0 - options_.dampening()),
                                  options_.nesterov()};
  std::vector<kernels::OptimTensor<kernels::SgdUpdate>> tensors;
  for (const ParamRef& ref : params) {
    float* buffer = nullptr;
    bool first_step = false;
    if (options_.momentum() != 0) {
      Tensor* existing = ref.state->find("momentum_buffer");
      if (existing == nullptr) {
        ref.state->set("momentum_buffer", zeros_like(ref.param));
        existing = ref.state->find("momentum_buffer");
        first_step = true;
      }
      buffer = existing->data_ptr<float>();
    }
    tensors.push_back(
        {{ref.param.data_ptr<float>(), ref.grad.data_ptr<float>(), buffer},
         ref.param.numel(),
         {static_cast<float>(ref.lr), static_cast<float>(ref.weight_decay), first_step}});
  }
  if (device.is_cuda()) {
    kernels::cuda::sgd_step(update, tensors);
  } else {
    kernels::cpu::sgd_step(update, tensors);
  }
}

bool SGD::valid_state(const Tensor& param, const std::string& name, const Shape& shape) const {
  return name == "momentum_buffer" && shape == param.shape();
}

}  // namespace leangrad::optim
