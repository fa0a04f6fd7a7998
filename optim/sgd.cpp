// optim::SGD (optim/sgd.h): builds the list of parameters for one fused SgdUpdate
// (ops::sgd_step, kernels/optim_math.h).
#include "optim/sgd.h"

#include "kernels/creation.h"
#include "kernels/ops.h"

namespace leangrad::optim {

SGD::SGD(std::vector<Tensor> params, SGDOptions options)
    : SGD(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

SGD::SGD(std::vector<ParamGroup> groups, SGDOptions options)
    : OptimizerWithState(std::move(groups), options.lr(), options.weight_decay()),
      options_(options) {
  LG_CHECK(options.momentum() >= 0, "SGD: invalid momentum ", options.momentum());
  LG_CHECK(!options.nesterov() || (options.momentum() > 0 && options.dampening() == 0),
           "SGD: Nesterov momentum requires a momentum and zero dampening");
}

void SGD::update(Device /*device*/, const std::vector<ParamRef>& params) {
  const kernels::SgdUpdate update{static_cast<float>(options_.momentum()),
                                  static_cast<float>(1.0 - options_.dampening()),
                                  options_.nesterov()};
  std::vector<ops::OptimParam<kernels::SgdUpdate>> list;
  for (const ParamRef& ref : params) {
    SGDState& state = state_of(ref.index);
    bool first_step = false;
    if (options_.momentum() != 0 && !state.momentum_buffer.defined()) {
      state.momentum_buffer = zeros_like(ref.param);
      first_step = true;
    }
    list.push_back(
        {ref.param,
         ref.grad,
         {state.momentum_buffer},
         {static_cast<float>(ref.lr), static_cast<float>(ref.weight_decay), first_step}});
  }
  ops::sgd_step(update, list);
}

bool SGD::valid_state(const Tensor& param, const std::string& name, const Shape& shape) const {
  return name == "momentum_buffer" && shape == param.shape();
}

}  // namespace leangrad::optim
