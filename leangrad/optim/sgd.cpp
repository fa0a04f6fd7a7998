// optim::SGD (optim/sgd.h): builds the list of parameters for one fused SgdUpdate
// (ops::sgd_step, kernels/optim_math.h). The one step-dependent scalar is whether the momentum
// buffer starts as a copy of the gradient: on the buffer's first update, counted from when it was
// made, so that a first step that found_inf skipped leaves the next one still first.
#include <leangrad/optim/sgd.h>

#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

namespace leangrad::optim {

SGD::SGD(std::vector<Tensor> params, SGDOptions options)
    : SGD(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

SGD::SGD(std::vector<ParamGroup> groups, SGDOptions options)
    : OptimizerWithState("SGD", std::move(groups), options.lr(), options.weight_decay()),
      options_(options) {
  LG_CHECK(options.momentum() >= 0, "SGD: invalid momentum ", options.momentum());
  LG_CHECK(!options.nesterov() || (options.momentum() > 0 && options.dampening() == 0),
           "SGD: Nesterov momentum requires a momentum and zero dampening");
}

void SGD::update(Device /*device*/, const std::vector<ParamRef>& params, const Tensor& found_inf) {
  by_dtype(params, [&](auto scalar, const std::vector<ParamRef>& refs) {
    using Update = kernels::SgdUpdateOf<decltype(scalar)>;
    const Update update = Update::make(options_.momentum(), options_.dampening(),
                                       options_.nesterov(), options_.maximize());
    std::vector<ops::OptimParam<Update>> list;
    for (const ParamRef& ref : refs) {
      SGDState& state = state_of(ref.index);
      if (options_.momentum() != 0 && !state.momentum_buffer.defined()) {
        state.momentum_buffer = zeros_like(ref.param);
        state.steps_before_buffer = ref.step - 1;
      }
      ops::DeviceStep device_step = ref.device_step();
      device_step.step = ref.step - state.steps_before_buffer;
      list.push_back({ref.param,
                      ref.grad,
                      {state.momentum_buffer},
                      update.scalars_at(ref.lr, ref.weight_decay, device_step.step),
                      device_step});
    }
    ops::sgd_step(update, list, {.found_inf = found_inf});
  });
}

bool SGD::valid_state(const Tensor& param, const std::string& name, const Shape& shape) const {
  return name == "momentum_buffer" && shape == param.shape();
}

std::vector<std::string> SGD::required_state(const Tensor& /*param*/) const {
  return {};  // a missing momentum_buffer starts afresh at the next step, as in PyTorch
}

}  // namespace leangrad::optim
