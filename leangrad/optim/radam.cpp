// optim::RAdam (optim/radam.h): the step-dependent scalars (bias corrections, rho_t, the
// rectification term: RAdamUpdate::scalars_at), then one multi-tensor launch of RAdamUpdate.
#include <leangrad/optim/radam.h>

#include <tuple>

#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

namespace leangrad::optim {

RAdam::RAdam(std::vector<Tensor> params, RAdamOptions options)
    : RAdam(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

RAdam::RAdam(std::vector<ParamGroup> groups, RAdamOptions options)
    : OptimizerWithState("RAdam", std::move(groups), options.lr(), options.weight_decay()),
      options_(options) {
  const auto [beta1, beta2] = options.betas();
  LG_CHECK(beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1, "RAdam: invalid betas (", beta1,
           ", ", beta2, "): each must be in [0, 1)");
  LG_CHECK(options.eps() >= 0, "RAdam: invalid eps ", options.eps());
}

void RAdam::update(Device /*device*/, const std::vector<ParamRef>& params,
                   const Tensor& found_inf) {
  // Named variables, not a structured binding: the lambda below captures them, which clang
  // before 16 (the sanitizer and fuzzing builds' compiler) refuses for bindings.
  const double beta1 = std::get<0>(options_.betas()), beta2 = std::get<1>(options_.betas());
  by_dtype(params, [&](auto scalar, const std::vector<ParamRef>& refs) {
    using Update = kernels::RAdamUpdateOf<decltype(scalar)>;
    const Update update = Update::make(beta1, beta2, options_.eps());
    std::vector<ops::OptimParam<Update>> list;
    for (const ParamRef& ref : refs) {
      RAdamState& state = state_of(ref.index);
      if (!state.exp_avg.defined()) {
        state.exp_avg = zeros_like(ref.param);
        state.exp_avg_sq = zeros_like(ref.param);
      }
      list.push_back({ref.param,
                      ref.grad,
                      {state.exp_avg, state.exp_avg_sq},
                      update.scalars_at(ref.lr, ref.weight_decay, ref.step),
                      ref.device_step()});
    }
    ops::radam_step(update, list, {.found_inf = found_inf});
  });
}

bool RAdam::valid_state(const Tensor& param, const std::string& name, const Shape& shape) const {
  return (name == "exp_avg" || name == "exp_avg_sq") && shape == param.shape();
}

std::vector<std::string> RAdam::required_state(const Tensor& /*param*/) const {
  return {"exp_avg", "exp_avg_sq"};
}

}  // namespace leangrad::optim
