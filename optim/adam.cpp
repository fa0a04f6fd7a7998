// optim::Adam / optim::AdamW (optim/adam.h): per-tensor bias corrections from each parameter's own
// step count, then one multi-tensor launch of AdamUpdate (kernels/cpu/optim.h,
// kernels/cuda/optim.h).
#include "optim/adam.h"

#include <cmath>

#include "core/creation.h"
#include "kernels/cpu/optim.h"
#include "kernels/cuda/optim.h"

namespace leangrad::optim {
namespace {

AdamOptions from_adamw(const AdamWOptions& o) {
  return AdamOptions(o.lr())
      .betas(o.betas())
      .eps(o.eps())
      .weight_decay(o.weight_decay())
      .amsgrad(o.amsgrad());
}

}  // namespace

Adam::Adam(std::vector<Tensor> params, AdamOptions options)
    : Adam(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options, false) {}

Adam::Adam(std::vector<ParamGroup> groups, AdamOptions options)
    : Adam(std::move(groups), options, false) {}

Adam::Adam(std::vector<ParamGroup> groups, AdamOptions options, bool decoupled_weight_decay)
    : Optimizer(std::move(groups), options.lr(), options.weight_decay()),
      options_(options),
      decoupled_weight_decay_(decoupled_weight_decay) {
  const auto [beta1, beta2] = options.betas();
  LG_CHECK(beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1, "Adam: invalid betas (", beta1, ", ",
           beta2, "): each must be in [0, 1)");
  LG_CHECK(options.eps() >= 0, "Adam: invalid eps ", options.eps());
}

AdamW::AdamW(std::vector<Tensor> params, AdamWOptions options)
    : Adam(std::vector<ParamGroup>{ParamGroup(std::move(params))}, from_adamw(options), true) {}

AdamW::AdamW(std::vector<ParamGroup> groups, AdamWOptions options)
    : Adam(std::move(groups), from_adamw(options), true) {}

void Adam::update(Device device, const std::vector<ParamRef>& params) {
  const auto [beta1, beta2] = options_.betas();
  const kernels::AdamUpdate update =
      kernels::AdamUpdate::make(beta1, beta2, options_.eps(), options_.amsgrad(),
                                decoupled_weight_decay_, /*skip_nonfinite=*/false);
  std::vector<kernels::OptimTensor<kernels::AdamUpdate>> tensors;
  for (const ParamRef& ref : params) {
    ParamState& state = *ref.state;
    if (state.find("exp_avg") == nullptr) {
      state.set("exp_avg", zeros_like(ref.param));
      state.set("exp_avg_sq", zeros_like(ref.param));
    }
    if (options_.amsgrad() && state.find("max_exp_avg_sq") == nullptr)
      state.set("max_exp_avg_sq", zeros_like(ref.param));
    const double step = static_cast<double>(state.step);
    const double bias_correction1 = 1.0 - std::pow(beta1, step);
    const double bias_correction2 = 1.0 - std::pow(beta2, step);
    float* max_exp_avg_sq =
        options_.amsgrad() ? state.at("max_exp_avg_sq").data_ptr<float>() : nullptr;
    tensors.push_back({{ref.param.data_ptr<float>(), ref.grad.data_ptr<float>(),
                        state.at("exp_avg").data_ptr<float>(),
                        state.at("exp_avg_sq").data_ptr<float>(), max_exp_avg_sq},
                       ref.param.numel(),
                       {static_cast<float>(ref.lr), static_cast<float>(ref.weight_decay),
                        static_cast<float>(ref.lr / bias_correction1),
                        static_cast<float>(std::sqrt(bias_correction2))}});
  }
  if (device.is_cuda()) {
    kernels::cuda::adam_step(update, tensors, nullptr);
  } else {
    kernels::cpu::adam_step(update, tensors, nullptr);
  }
}

bool Adam::valid_state(const Tensor& param, const std::string& name, const Shape& shape) const {
  const bool known =
      name == "exp_avg" || name == "exp_avg_sq" || (name == "max_exp_avg_sq" && options_.amsgrad());
  return known && shape == param.shape();
}

}  // namespace leangrad::optim
