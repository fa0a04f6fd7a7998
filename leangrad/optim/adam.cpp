// optim::Adam / optim::AdamW (optim/adam.h): per-tensor bias corrections from each parameter's own
// step count (AdamUpdate::scalars_at), then one fused AdamUpdate over every parameter
// (ops::adam_step).
#include <leangrad/optim/adam.h>

#include <tuple>

#include <leangrad/kernels/creation.h>
#include <leangrad/kernels/ops.h>

namespace leangrad::optim {
namespace {

AdamOptions from_adamw(const AdamWOptions& o) {
  return AdamOptions(o.lr())
      .betas(o.betas())
      .eps(o.eps())
      .weight_decay(o.weight_decay())
      .amsgrad(o.amsgrad())
      .maximize(o.maximize());
}

}  // namespace

Adam::Adam(std::vector<Tensor> params, AdamOptions options)
    : Adam(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options, false) {}

Adam::Adam(std::vector<ParamGroup> groups, AdamOptions options)
    : Adam(std::move(groups), options, false) {}

Adam::Adam(std::vector<ParamGroup> groups, AdamOptions options, bool decoupled_weight_decay)
    : OptimizerWithState(decoupled_weight_decay ? "AdamW" : "Adam", std::move(groups), options.lr(),
                         options.weight_decay()),
      options_(options),
      decoupled_weight_decay_(decoupled_weight_decay) {
  const auto [beta1, beta2] = options.betas();
  LG_CHECK(beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1, name(), ": invalid betas (", beta1,
           ", ", beta2, "): each must be in [0, 1)");
  LG_CHECK(options.eps() >= 0, name(), ": invalid eps ", options.eps());
}

AdamW::AdamW(std::vector<Tensor> params, AdamWOptions options)
    : Adam(std::vector<ParamGroup>{ParamGroup(std::move(params))}, from_adamw(options), true) {}

AdamW::AdamW(std::vector<ParamGroup> groups, AdamWOptions options)
    : Adam(std::move(groups), from_adamw(options), true) {}

void Adam::update(Device /*device*/, const std::vector<ParamRef>& params, const Tensor& found_inf) {
  // Named variables, not a structured binding: the lambda below captures them, which clang
  // before 16 (the sanitizer and fuzzing builds' compiler) refuses for bindings.
  const double beta1 = std::get<0>(options_.betas()), beta2 = std::get<1>(options_.betas());
  by_dtype(params, [&](auto scalar, const std::vector<ParamRef>& refs) {
    using Update = kernels::AdamUpdateOf<decltype(scalar)>;
    const Update update =
        Update::make(beta1, beta2, options_.eps(), options_.amsgrad(), decoupled_weight_decay_,
                     /*skip_nonfinite=*/false, options_.maximize());
    std::vector<ops::OptimParam<Update>> list;
    for (const ParamRef& ref : refs) {
      AdamState& state = state_of(ref.index);
      if (!state.exp_avg.defined()) {
        state.exp_avg = zeros_like(ref.param);
        state.exp_avg_sq = zeros_like(ref.param);
      }
      if (options_.amsgrad() && !state.max_exp_avg_sq.defined())
        state.max_exp_avg_sq = zeros_like(ref.param);
      const Tensor max_exp_avg_sq = options_.amsgrad() ? state.max_exp_avg_sq : Tensor();
      list.push_back({ref.param,
                      ref.grad,
                      {state.exp_avg, state.exp_avg_sq, max_exp_avg_sq},
                      update.scalars_at(ref.lr, ref.weight_decay, ref.step),
                      ref.device_step()});
    }
    ops::adam_step(update, list, {.found_inf = found_inf});
  });
}

bool Adam::valid_state(const Tensor& param, const std::string& name, const Shape& shape) const {
  const bool known =
      name == "exp_avg" || name == "exp_avg_sq" || (name == "max_exp_avg_sq" && options_.amsgrad());
  return known && shape == param.shape();
}

std::vector<std::string> Adam::required_state(const Tensor& /*param*/) const {
  return {"exp_avg", "exp_avg_sq"};
}

}  // namespace leangrad::optim
