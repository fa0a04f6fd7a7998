// optim::RAdam (optim/radam.h): the step-dependent scalars (bias corrections, rho_t, the
// rectification term) in double on the host, then one multi-tensor launch of RAdamUpdate.
#include "optim/radam.h"

#include <cmath>

#include "kernels/creation.h"
#include "kernels/ops.h"

namespace leangrad::optim {

RAdam::RAdam(std::vector<Tensor> params, RAdamOptions options)
    : RAdam(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

RAdam::RAdam(std::vector<ParamGroup> groups, RAdamOptions options)
    : OptimizerWithState(std::move(groups), options.lr(), options.weight_decay()),
      options_(options) {
  const auto [beta1, beta2] = options.betas();
  LG_CHECK(beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1, "RAdam: invalid betas (", beta1,
           ", ", beta2, "): each must be in [0, 1)");
  LG_CHECK(options.eps() >= 0, "RAdam: invalid eps ", options.eps());
}

void RAdam::update(Device /*device*/, const std::vector<ParamRef>& params) {
  const auto [beta1, beta2] = options_.betas();
  const kernels::RAdamUpdate update{static_cast<float>(beta1), static_cast<float>(1.0 - beta1),
                                    static_cast<float>(beta2), static_cast<float>(1.0 - beta2),
                                    static_cast<float>(options_.eps())};
  // The maximum length of the approximated simple moving average.
  const double rho_inf = 2.0 / (1.0 - beta2) - 1.0;
  std::vector<ops::OptimParam<kernels::RAdamUpdate>> list;
  for (const ParamRef& ref : params) {
    RAdamState& state = state_of(ref.index);
    if (!state.exp_avg.defined()) {
      state.exp_avg = zeros_like(ref.param);
      state.exp_avg_sq = zeros_like(ref.param);
    }
    const double step = static_cast<double>(ref.step);
    const double bias_correction1 = 1.0 - std::pow(beta1, step);
    const double bias_correction2 = 1.0 - std::pow(beta2, step);
    // Its length at this step; the variance is tractable (rectified steps) once it exceeds 5.
    const double rho_t = rho_inf - 2.0 * step * std::pow(beta2, step) / bias_correction2;
    const bool rectified = rho_t > 5.0;
    const double rect = rectified ? std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf /
                                              ((rho_inf - 4) * (rho_inf - 2) * rho_t))
                                  : 0.0;
    list.push_back(
        {ref.param,
         ref.grad,
         {state.exp_avg, state.exp_avg_sq},
         {static_cast<float>(ref.lr), static_cast<float>(ref.weight_decay),
          static_cast<float>(bias_correction1), static_cast<float>(std::sqrt(bias_correction2)),
          static_cast<float>(rect), rectified}});
  }
  ops::radam_step(update, list);
}

bool RAdam::valid_state(const Tensor& param, const std::string& name, const Shape& shape) const {
  return (name == "exp_avg" || name == "exp_avg_sq") && shape == param.shape();
}

}  // namespace leangrad::optim
