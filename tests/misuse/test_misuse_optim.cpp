// Misuse of the optimizers: parameter lists that are empty or hold tensors an optimizer cannot
// update, hyperparameters out of range or NaN, steps whose gradients or parameters no longer fit
// the state, state dicts with wrong keys, shapes, dtypes and values, clip_grad_norm_ and the
// schedulers out of range; amp::GradScaler's options out of range, calls out of order and bad
// state dicts, and bad flags for Optimizer::step_unless. Tables of the misuse suite
// (tests/misuse/misuse_testing.h).
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/creation.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/optim/optim.h>
#include "misuse/misuse_testing.h"

namespace leangrad::test {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor param(const Shape& shape = {2}) {
  return ones(shape).requires_grad_();
}

// An optimizer over one parameter of shape (2,) that has taken one step.
template <typename Optimizer, typename Options>
std::pair<Tensor, std::unique_ptr<Optimizer>> stepped(Options options) {
  Tensor p = param();
  auto optimizer = std::make_unique<Optimizer>(std::vector<Tensor>{p}, options);
  p.set_grad(full({2}, 0.5));
  optimizer->step();
  return {p, std::move(optimizer)};
}

void load_adam_state(const std::string& key, const Tensor& value) {
  auto [p, adam] = stepped<optim::Adam>(optim::AdamOptions());
  adam->load_state_dict({{key, value}});
}

std::vector<MisuseCase> construction_cases() {
  MisuseTable t;
  t.add("empty_parameter_list", Raises::Error, {"SGD", "empty parameter list"},
        [] { optim::SGD(std::vector<Tensor>{}, optim::SGDOptions(0.1)); });
  t.add("no_parameter_groups", Raises::Error, {"Adam", "empty parameter list"},
        [] { optim::Adam(std::vector<optim::ParamGroup>{}); });
  t.add("undefined_parameter", Raises::Error, {"SGD", "parameter 1", "undefined"}, [] {
    optim::SGD({param(), Tensor()}, optim::SGDOptions(0.1));
  });
  t.add("non_leaf_parameter", Raises::Error, {"Adam", "parameter 0", "leaf", "MulBackward"},
        [] { optim::Adam({param() * 2.0}); });
  t.add("integral_parameter", Raises::DTypeError, {"SGD", "parameter 0", "float32", "int64"},
        [] { optim::SGD({ones({2}, kInt64)}, optim::SGDOptions(0.1)); });
  t.add("bool_parameter", Raises::DTypeError,
        {"RAdam", "parameter 0", "float32, float64, float16 or bfloat16", "bool"},
        [] { optim::RAdam({ones({2}, kBool)}); });
  // The 8-bit optimizer stays float32 (float16 and bfloat16 go to Adam: docs/optimizers.md).
  t.add("adam8bit_bfloat16_parameter", Raises::DTypeError,
        {"Adam8bit", "parameter 0", "float32", "bfloat16", "Adam8bit"},
        [] { optim::Adam8bit({ones({2}, kBFloat16).requires_grad_()}); });
  t.add("adam8bit_add_float16_group", Raises::DTypeError,
        {"Adam8bit", "parameter 1", "float16", "Adam8bit"}, [] {
          optim::Adam8bit adam({param()});
          adam.add_param_group(optim::ParamGroup({ones({2}, kFloat16).requires_grad_()}));
        });
  t.add("adam8bit_float64_parameter", Raises::DTypeError,
        {"Adam8bit", "parameter 1", "float32", "float64", "Adam8bit", "bitsandbytes"}, [] {
          optim::Adam8bit({param(), ones({2}, kFloat64).requires_grad_()});
        });
  t.add("adam8bit_add_float64_group", Raises::DTypeError,
        {"Adam8bit", "parameter 1", "float64", "Adam8bit"}, [] {
          optim::Adam8bit adam({param()});
          adam.add_param_group(optim::ParamGroup({ones({2}, kFloat64).requires_grad_()}));
        });
  t.add("non_contiguous_parameter", Raises::Error, {"Adam", "parameter 0", "[3, 2]", "contiguous"},
        [] {
          optim::Adam({ones({2, 3}).transpose(0, 1)});
        });
  t.add("parameter_given_twice", Raises::Error, {"SGD", "parameters 0 and 2", "same tensor"}, [] {
    const Tensor p = param();
    optim::SGD({p, param(), p}, optim::SGDOptions(0.1));
  });
  t.add(
      "parameter_in_two_groups", Raises::Error, {"Adam", "parameters 0 and 1", "same tensor"}, [] {
        const Tensor p = param();
        optim::Adam(std::vector<optim::ParamGroup>{optim::ParamGroup({p}), optim::ParamGroup({p})});
      });
  t.add("negative_lr", Raises::Error, {"SGD", "learning rate", "-0.1"},
        [] { optim::SGD({param()}, optim::SGDOptions(-0.1)); });
  t.add("nan_lr", Raises::Error, {"Adam", "learning rate", "nan"},
        [] { optim::Adam({param()}, optim::AdamOptions(kNaN)); });
  t.add("negative_group_lr", Raises::Error, {"Adam", "learning rate", "-1"},
        [] { optim::Adam(std::vector<optim::ParamGroup>{optim::ParamGroup({param()}, -1.0)}); });
  t.add("negative_weight_decay", Raises::Error, {"AdamW", "weight_decay", "-0.01"},
        [] { optim::AdamW({param()}, optim::AdamWOptions().weight_decay(-0.01)); });
  t.add("nan_group_weight_decay", Raises::Error, {"SGD", "weight_decay", "nan"}, [] {
    optim::SGD(std::vector<optim::ParamGroup>{optim::ParamGroup({param()}, 0.1, kNaN)},
               optim::SGDOptions(0.1));
  });
  t.add("sgd_negative_momentum", Raises::Error, {"SGD", "momentum", "-0.9"},
        [] { optim::SGD({param()}, optim::SGDOptions(0.1).momentum(-0.9)); });
  t.add("sgd_nan_momentum", Raises::Error, {"SGD", "momentum", "nan"},
        [] { optim::SGD({param()}, optim::SGDOptions(0.1).momentum(kNaN)); });
  t.add("sgd_nesterov_without_momentum", Raises::Error, {"SGD", "Nesterov", "momentum"},
        [] { optim::SGD({param()}, optim::SGDOptions(0.1).nesterov(true)); });
  t.add("sgd_nesterov_with_dampening", Raises::Error, {"SGD", "Nesterov", "dampening"}, [] {
    optim::SGD({param()}, optim::SGDOptions(0.1).momentum(0.9).dampening(0.1).nesterov(true));
  });
  t.add("adam_beta1_one", Raises::Error, {"Adam", "betas (1, 0.999)"}, [] {
    optim::Adam({param()}, optim::AdamOptions().betas({1.0, 0.999}));
  });
  t.add("adam_negative_beta2", Raises::Error, {"Adam", "betas (0.9, -0.1)"}, [] {
    optim::Adam({param()}, optim::AdamOptions().betas({0.9, -0.1}));
  });
  t.add("adamw_nan_beta", Raises::Error, {"AdamW", "betas (nan, 0.9)"}, [] {
    optim::AdamW({param()}, optim::AdamWOptions().betas({kNaN, 0.9}));
  });
  t.add("adam_negative_eps", Raises::Error, {"Adam", "eps", "-1e-08"},
        [] { optim::Adam({param()}, optim::AdamOptions().eps(-1e-8)); });
  t.add("radam_nan_eps", Raises::Error, {"RAdam", "eps", "nan"},
        [] { optim::RAdam({param()}, optim::RAdamOptions().eps(kNaN)); });
  t.add("radam_beta2_above_one", Raises::Error, {"RAdam", "betas (0.9, 1.5)"}, [] {
    optim::RAdam({param()}, optim::RAdamOptions().betas({0.9, 1.5}));
  });
  t.add("adam8bit_negative_min_size", Raises::Error, {"Adam8bit", "min_8bit_size", "-1"},
        [] { optim::Adam8bit({param()}, optim::Adam8bitOptions().min_8bit_size(-1)); });
  t.add("adam8bit_infinite_eps", Raises::Error, {"Adam8bit", "eps", "-inf"},
        [] { optim::Adam8bit({param()}, optim::Adam8bitOptions().eps(-kInf)); });
  return t.cases();
}
LG_MISUSE_SUITE(OptimizerConstruction, construction_cases());

std::vector<MisuseCase> step_cases() {
  MisuseTable t;
  // set_grad checks the shape, dtype and device; mutable_grad() is the handle that does not.
  t.add("step_gradient_shape", Raises::ShapeError, {"SGD step", "[3]", "[2]"}, [] {
    const Tensor p = param();
    optim::SGD sgd({p}, optim::SGDOptions(0.1));
    p.mutable_grad() = ones({3});
    sgd.step();
  });
  // A float64 .grad was cast and the step taken.
  t.add("step_gradient_dtype", Raises::DTypeError,
        {"SGD step", "parameter 0", "float64", "float32"}, [] {
          const Tensor p = param();
          optim::SGD sgd({p}, optim::SGDOptions(0.1));
          p.mutable_grad() = ones({2}, kFloat64);
          sgd.step();
        });
  // A gradient of a narrower dtype is refused as well: a .grad has its parameter's dtype.
  t.add("step_bfloat16_gradient_of_float32_parameter", Raises::DTypeError,
        {"Adam step", "parameter 0", "bfloat16", "float32"}, [] {
          const Tensor p = param();
          optim::Adam adam({p});
          p.mutable_grad() = ones({2}, kBFloat16);
          adam.step();
        });
  t.add("step_float32_gradient_of_float16_parameter", Raises::DTypeError,
        {"SGD step", "parameter 0", "float32", "float16"}, [] {
          const Tensor p = ones({2}, kFloat16).requires_grad_();
          optim::SGD sgd({p}, optim::SGDOptions(0.1));
          p.mutable_grad() = ones({2});
          sgd.step();
        });
  // Module::to(kBFloat16) after the state was made: the float32 state no longer fits.
  t.add("step_after_parameter_became_bfloat16", Raises::DTypeError,
        {"Adam step", "state 'exp_avg'", "float32", "bfloat16"}, [] {
          auto [p, adam] = stepped<optim::Adam>(optim::AdamOptions());
          p.set_data(zeros({2}, kBFloat16));
          p.set_grad(ones({2}, kBFloat16));
          adam->step();
        });
  // The parameter changed size after the state was made (issue 14 defect 2).
  t.add("step_after_parameter_resized", Raises::ShapeError,
        {"Adam step", "state 'exp_avg'", "[2]", "[3]"}, [] {
          auto [p, adam] = stepped<optim::Adam>(optim::AdamOptions());
          p.set_data(zeros({3}));
          p.set_grad(ones({3}));
          adam->step();
        });
  // Module::to(kFloat64) after the state was made: the float32 state no longer fits.
  t.add("step_after_parameter_became_float64", Raises::DTypeError,
        {"SGD step", "state 'momentum_buffer'", "float32", "float64"}, [] {
          auto [p, sgd] = stepped<optim::SGD>(optim::SGDOptions(0.1).momentum(0.9));
          p.set_data(zeros({2}, kFloat64));
          p.set_grad(ones({2}, kFloat64));  // a gradient that fits it, so the state check refuses
          sgd->step();
        });
  t.add("step_after_parameter_became_non_contiguous", Raises::Error,
        {"RAdam step", "[2, 2]", "contiguous"}, [] {
          const Tensor p = ones({2, 2}).requires_grad_();
          optim::RAdam radam({p});
          p.set_data(zeros({2, 2}).transpose(0, 1));
          p.set_grad(ones({2, 2}));
          radam.step();
        });
  t.add("clip_grad_norm_zero_norm_type", Raises::Error, {"clip_grad_norm_", "norm_type", "0"}, [] {
    const Tensor p = param();
    p.set_grad(ones({2}));
    optim::clip_grad_norm_({p}, 1.0, 0.0);
  });
  t.add("clip_grad_norm_nan_norm_type", Raises::Error, {"clip_grad_norm_", "norm_type", "nan"}, [] {
    const Tensor p = param();
    p.set_grad(ones({2}));
    optim::clip_grad_norm_({p}, 1.0, kNaN);
  });
  t.add("clip_grad_norm_nan_with_error_if_nonfinite", Raises::Error,
        {"clip_grad_norm_", "order 2", "non-finite", "nan"}, [] {
          const Tensor p = param();
          p.set_grad(tensor<float>({std::numeric_limits<float>::quiet_NaN(), 1.0f}));
          optim::clip_grad_norm_({p}, 1.0, 2.0, /*error_if_nonfinite=*/true);
        });
  t.add("clip_grad_norm_overflow_with_error_if_nonfinite", Raises::Error,
        {"clip_grad_norm_", "order 2", "non-finite", "inf"}, [] {
          const Tensor p = param();
          p.set_grad(full({2}, 1e20));  // finite, but |g|^2 overflows float32
          optim::clip_grad_norm_({p}, 1.0, 2.0, /*error_if_nonfinite=*/true);
        });
  t.add("step_lr_zero_step_size", Raises::Error, {"StepLR", "step_size", "0"}, [] {
    optim::SGD sgd({param()}, optim::SGDOptions(0.1));
    optim::StepLR(sgd, 0);
  });
  t.add("cosine_negative_t_max", Raises::Error, {"CosineAnnealingLR", "t_max", "-5"}, [] {
    optim::SGD sgd({param()}, optim::SGDOptions(0.1));
    optim::CosineAnnealingLR(sgd, -5);
  });
  t.add("linear_warmup_zero_steps", Raises::Error, {"LinearWarmup", "warmup_steps", "0"}, [] {
    optim::SGD sgd({param()}, optim::SGDOptions(0.1));
    optim::LinearWarmup(sgd, 0);
  });
  return t.cases();
}
LG_MISUSE_SUITE(OptimizerStep, step_cases());

std::vector<MisuseCase> load_state_dict_cases() {
  MisuseTable t;
  t.add("unknown_key", Raises::Error, {"load_state_dict", "'momentum'"},
        [] { load_adam_state("momentum", ones({2})); });
  t.add("malformed_index", Raises::Error, {"load_state_dict", "'state.x.exp_avg'"},
        [] { load_adam_state("state.x.exp_avg", ones({2})); });
  t.add("missing_state_name", Raises::Error, {"load_state_dict", "'state.0'"},
        [] { load_adam_state("state.0", ones({2})); });
  t.add("index_past_parameters", Raises::Error,
        {"load_state_dict", "'state.5.exp_avg'", "parameter 5", "1"},
        [] { load_adam_state("state.5.exp_avg", ones({2})); });
  t.add("index_overflows", Raises::Error,
        {"load_state_dict", "'state.99999999999999999999.exp_avg'"},
        [] { load_adam_state("state.99999999999999999999.exp_avg", ones({2})); });
  t.add("unknown_state_name", Raises::Error, {"load_state_dict", "'state.0.momentum_buffer'"},
        [] { load_adam_state("state.0.momentum_buffer", ones({2})); });
  t.add("amsgrad_state_without_amsgrad", Raises::Error,
        {"load_state_dict", "'state.0.max_exp_avg_sq'"},
        [] { load_adam_state("state.0.max_exp_avg_sq", ones({2})); });
  t.add("state_shape", Raises::Error, {"load_state_dict", "'state.0.exp_avg'", "[3]", "[2]"},
        [] { load_adam_state("state.0.exp_avg", ones({3})); });
  t.add("state_integral_dtype", Raises::DTypeError,
        {"load_state_dict", "'state.0.exp_avg'", "int64"},
        [] { load_adam_state("state.0.exp_avg", ones({2}, kInt64)); });
  t.add("state_bool_dtype", Raises::DTypeError, {"load_state_dict", "'state.0.exp_avg_sq'", "bool"},
        [] { load_adam_state("state.0.exp_avg_sq", ones({2}, kBool)); });
  t.add("state_nan_values", Raises::Error, {"load_state_dict", "'state.0.exp_avg'", "NaN"},
        [] { load_adam_state("state.0.exp_avg", full({2}, kNaN)); });
  t.add("state_infinite_values", Raises::Error,
        {"load_state_dict", "'state.0.exp_avg_sq'", "NaN or Inf"}, [] {
          load_adam_state("state.0.exp_avg_sq", tensor<float>({1.0f, INFINITY}));
        });
  // Squares and magnitudes are never negative (a damaged file: the next step's sqrt would be NaN).
  t.add("state_negative_square", Raises::Error,
        {"load_state_dict", "'state.0.exp_avg_sq'", "negative values"}, [] {
          load_adam_state("state.0.exp_avg_sq", tensor<float>({1.0f, -1.0f}));
        });
  t.add("adam8bit_negative_absmax", Raises::Error,
        {"load_state_dict", "'state.0.absmax2'", "negative values"}, [] {
          const Tensor p = ones({300}).requires_grad_();
          optim::Adam8bit adam(std::vector<Tensor>{p}, optim::Adam8bitOptions().min_8bit_size(256));
          adam.load_state_dict({{"state.0.step", full({}, 1, kInt64)},
                                {"state.0.state1", zeros({300}, kUInt8)},
                                {"state.0.state2", zeros({300}, kUInt8)},
                                {"state.0.absmax1", zeros({2})},
                                {"state.0.absmax2", full({2}, -1.0)}});
        });
  t.add("state_undefined", Raises::Error, {"load_state_dict", "'state.0.exp_avg'", "undefined"},
        [] { load_adam_state("state.0.exp_avg", Tensor()); });
  t.add("state_without_step", Raises::Error,
        {"load_state_dict", "'state.0.exp_avg'", "without 'state.0.step'"},
        [] { load_adam_state("state.0.exp_avg", ones({2})); });
  t.add("state_without_exp_avg_sq", Raises::Error,
        {"load_state_dict", "parameter 0", "step 3", "'state.0.exp_avg_sq'"}, [] {
          auto [p, adam] = stepped<optim::Adam>(optim::AdamOptions());
          adam->load_state_dict(
              {{"state.0.step", full({}, 3, kInt64)}, {"state.0.exp_avg", ones({2})}});
        });
  t.add("step_without_moments", Raises::Error,
        {"load_state_dict", "parameter 0", "step 3", "'state.0.exp_avg'"},
        [] { load_adam_state("state.0.step", full({}, 3, kInt64)); });
  t.add("adam8bit_codes_without_absmax", Raises::Error,
        {"load_state_dict", "parameter 0", "'state.0.absmax1'"}, [] {
          const Tensor p = ones({300}).requires_grad_();
          optim::Adam8bit adam(std::vector<Tensor>{p}, optim::Adam8bitOptions().min_8bit_size(256));
          adam.load_state_dict({{"state.0.step", full({}, 1, kInt64)},
                                {"state.0.state1", zeros({300}, kUInt8)},
                                {"state.0.state2", zeros({300}, kUInt8)},
                                {"state.0.absmax2", zeros({2})}});
        });
  t.add("adam8bit_codes_as_float", Raises::DTypeError,
        {"load_state_dict", "'state.0.state1'", "uint8", "float32"}, [] {
          const Tensor p = ones({300}).requires_grad_();
          optim::Adam8bit adam(std::vector<Tensor>{p}, optim::Adam8bitOptions().min_8bit_size(256));
          adam.load_state_dict({{"state.0.state1", zeros({300})}});
        });
  t.add("adam8bit_absmax_as_codes", Raises::DTypeError,
        {"load_state_dict", "'state.0.absmax1'", "uint8"}, [] {
          const Tensor p = ones({300}).requires_grad_();
          optim::Adam8bit adam(std::vector<Tensor>{p}, optim::Adam8bitOptions().min_8bit_size(256));
          adam.load_state_dict({{"state.0.absmax1", zeros({2}, kUInt8)}});
        });
  t.add("step_nan", Raises::Error, {"load_state_dict", "'state.0.step'", "nan"},
        [] { load_adam_state("state.0.step", full({}, kNaN, kFloat64)); });
  t.add("step_negative", Raises::Error, {"load_state_dict", "'state.0.step'", "-3"},
        [] { load_adam_state("state.0.step", full({}, -3, kInt64)); });
  t.add("step_fractional", Raises::Error, {"load_state_dict", "'state.0.step'", "2.5"},
        [] { load_adam_state("state.0.step", full({}, 2.5, kFloat64)); });
  t.add("step_beyond_int64", Raises::Error, {"load_state_dict", "'state.0.step'", "1e+300"},
        [] { load_adam_state("state.0.step", full({}, 1e300, kFloat64)); });
  t.add("step_of_two_values", Raises::Error, {"load_state_dict", "'state.0.step'", "[2]"},
        [] { load_adam_state("state.0.step", ones({2}, kInt64)); });
  t.add("lr_negative", Raises::Error, {"load_state_dict", "'param_groups.0.lr'", "-1"},
        [] { load_adam_state("param_groups.0.lr", full({}, -1.0, kFloat64)); });
  t.add("lr_nan", Raises::Error, {"load_state_dict", "'param_groups.0.lr'", "nan"},
        [] { load_adam_state("param_groups.0.lr", full({}, kNaN, kFloat64)); });
  t.add("weight_decay_infinite", Raises::Error,
        {"load_state_dict", "'param_groups.0.weight_decay'", "inf"},
        [] { load_adam_state("param_groups.0.weight_decay", full({}, kInf, kFloat64)); });
  t.add("group_past_groups", Raises::Error, {"load_state_dict", "'param_groups.1.lr'", "group 1"},
        [] { load_adam_state("param_groups.1.lr", full({}, 0.1, kFloat64)); });
  t.add("unknown_group_key", Raises::Error, {"load_state_dict", "'param_groups.0.momentum'"},
        [] { load_adam_state("param_groups.0.momentum", full({}, 0.9, kFloat64)); });
  return t.cases();
}
LG_MISUSE_SUITE(OptimizerLoadStateDict, load_state_dict_cases());

// An Adam over one parameter of shape (2,) with a gradient, and a scaler that has scaled a loss.
struct Scaled {
  Tensor p = param();
  optim::Adam adam{std::vector<Tensor>{p}};
  amp::GradScaler scaler;
  Scaled() { scaler.scale((p * 2.0).sum()).backward(); }
};

NamedTensors scaler_state_with(const std::string& key, const Tensor& value) {
  NamedTensors state = amp::GradScaler().state_dict();
  for (auto& [name, t] : state)
    if (name == key) t = value;
  return state;
}

std::vector<MisuseCase> grad_scaler_cases() {
  using amp::GradScaler;
  using amp::GradScalerOptions;
  MisuseTable t;
  t.add("growth_factor_one", Raises::Error, {"GradScaler", "growth_factor", "> 1", "got 1"},
        [] { GradScaler(GradScalerOptions().growth_factor(1.0)); });
  t.add("growth_factor_nan", Raises::Error, {"GradScaler", "growth_factor", "nan"},
        [] { GradScaler(GradScalerOptions().growth_factor(kNaN)); });
  t.add("backoff_factor_zero", Raises::Error, {"GradScaler", "backoff_factor", "(0, 1)", "got 0"},
        [] { GradScaler(GradScalerOptions().backoff_factor(0.0)); });
  t.add("backoff_factor_one", Raises::Error, {"GradScaler", "backoff_factor", "got 1"},
        [] { GradScaler(GradScalerOptions().backoff_factor(1.0)); });
  t.add("growth_interval_zero", Raises::Error, {"GradScaler", "growth_interval", "got 0"},
        [] { GradScaler(GradScalerOptions().growth_interval(0)); });
  t.add("growth_interval_past_int32", Raises::Error,
        {"GradScaler", "growth_interval", "4294967296"},
        [] { GradScaler(GradScalerOptions().growth_interval(std::int64_t{1} << 32)); });
  t.add("init_scale_zero", Raises::Error, {"GradScaler", "init_scale", "got 0"},
        [] { GradScaler(GradScalerOptions().init_scale(0.0)); });
  t.add("init_scale_infinite", Raises::Error, {"GradScaler", "init_scale", "inf"},
        [] { GradScaler(GradScalerOptions().init_scale(kInf)); });
  t.add("init_scale_past_float32", Raises::Error, {"GradScaler", "init_scale", "1e+39"},
        [] { GradScaler(GradScalerOptions().init_scale(1e39)); });
  t.add("scale_integral_loss", Raises::DTypeError, {"GradScaler.scale", "floating", "int64"},
        [] { GradScaler().scale(ones({}, kInt64)); });
  t.add("scale_undefined_loss", Raises::Error, {"GradScaler.scale", "undefined"},
        [] { GradScaler().scale(Tensor()); });
  t.add("unscale_before_scale", Raises::Error, {"GradScaler.unscale_", "scale(loss)"}, [] {
    Tensor p = param();
    optim::SGD sgd({p}, optim::SGDOptions(0.1));
    GradScaler().unscale_(sgd);
  });
  t.add("unscale_twice", Raises::Error, {"GradScaler.unscale_", "already been called"}, [] {
    Scaled s;
    s.scaler.unscale_(s.adam);
    s.scaler.unscale_(s.adam);
  });
  t.add("unscale_after_step", Raises::Error, {"GradScaler.unscale_", "after step()"}, [] {
    Scaled s;
    s.scaler.step(s.adam);
    s.scaler.unscale_(s.adam);
  });
  t.add("step_twice", Raises::Error, {"GradScaler.step", "already been called"}, [] {
    Scaled s;
    s.scaler.step(s.adam);
    s.scaler.step(s.adam);
  });
  t.add("unscale_float64_gradient", Raises::DTypeError,
        {"GradScaler.unscale_", "parameter 0", "float64", "float32"}, [] {
          Scaled s;
          s.p.mutable_grad() = ones({2}, kFloat64);  // set_grad would refuse it
          s.scaler.unscale_(s.adam);
        });
  // Pure float16 training: PyTorch refuses too ("Attempting to unscale FP16 gradients").
  t.add("step_float16_model", Raises::DTypeError,
        {"GradScaler.unscale_", "parameter 0", "float16", "float32", "underflow"}, [] {
          const Tensor p = ones({2}, kFloat16).requires_grad_();
          optim::Adam adam({p});
          amp::GradScaler scaler;
          scaler.scale((p * 2.0).sum()).backward();
          scaler.step(adam);
        });
  t.add("unscale_bfloat16_gradient", Raises::DTypeError,
        {"GradScaler.unscale_", "parameter 0", "bfloat16", "float32"}, [] {
          const Tensor p = ones({2}, kBFloat16).requires_grad_();
          optim::SGD sgd({p}, optim::SGDOptions(0.1));
          amp::GradScaler scaler;
          scaler.scale((p * 2.0).sum()).backward();
          scaler.unscale_(sgd);
        });
  // The optimizers take float64 parameters; GradScaler stays float32 (docs/optimizers.md).
  t.add("step_float64_model", Raises::DTypeError,
        {"GradScaler.unscale_", "parameter 0", "float64", "float32", "needs none"}, [] {
          const Tensor p = ones({2}, kFloat64).requires_grad_();
          optim::SGD sgd({p}, optim::SGDOptions(0.1));
          amp::GradScaler scaler;
          scaler.scale((p * 2.0).sum()).backward();
          scaler.step(sgd);
        });
  t.add("unscale_strided_gradient", Raises::Error,
        {"GradScaler.unscale_", "parameter 0", "contiguous"}, [] {
          Scaled s;
          s.p.set_grad(ones({2, 2}).select(1, 0));
          s.scaler.unscale_(s.adam);
        });
  t.add("update_before_scale", Raises::Error, {"GradScaler.update", "scale(loss)"},
        [] { GradScaler().update(); });
  t.add("update_without_step", Raises::Error, {"GradScaler.update", "no inf checks"}, [] {
    Scaled s;
    s.scaler.update();
  });
  t.add("update_to_zero", Raises::Error, {"GradScaler.update", "new_scale", "got 0"}, [] {
    Scaled s;
    s.scaler.update(0.0);
  });
  t.add("update_to_nan", Raises::Error, {"GradScaler.update", "new_scale", "nan"}, [] {
    Scaled s;
    s.scaler.update(kNaN);
  });
  t.add("load_empty_state", Raises::Error, {"GradScaler.load_state_dict", "empty", "disabled"},
        [] { GradScaler().load_state_dict({}); });
  t.add("load_unknown_key", Raises::Error, {"GradScaler.load_state_dict", "'scale_'"}, [] {
    GradScaler().load_state_dict({{"scale_", ones({})}});
  });
  t.add("load_without_tracker", Raises::Error, {"GradScaler.load_state_dict", "'_growth_tracker'"},
        [] {
          NamedTensors state = GradScaler().state_dict();
          state.pop_back();
          GradScaler().load_state_dict(state);
        });
  t.add("load_negative_scale", Raises::Error, {"GradScaler.load_state_dict", "init_scale", "-2"},
        [] { GradScaler().load_state_dict(scaler_state_with("scale", full({}, -2.0))); });
  t.add("load_nan_scale", Raises::Error, {"GradScaler.load_state_dict", "'scale'", "nan"},
        [] { GradScaler().load_state_dict(scaler_state_with("scale", full({}, kNaN))); });
  t.add(
      "load_backoff_above_one", Raises::Error,
      {"GradScaler.load_state_dict", "backoff_factor", "got 2"}, [] {
        GradScaler().load_state_dict(scaler_state_with("backoff_factor", full({}, 2.0, kFloat64)));
      });
  t.add(
      "load_fractional_interval", Raises::Error,
      {"GradScaler.load_state_dict", "'growth_interval'", "2.5", "integer"}, [] {
        GradScaler().load_state_dict(scaler_state_with("growth_interval", full({}, 2.5, kFloat64)));
      });
  t.add(
      "load_tracker_at_interval", Raises::Error,
      {"GradScaler.load_state_dict", "_growth_tracker = 2000", "[0, growth_interval = 2000)"}, [] {
        GradScaler().load_state_dict(scaler_state_with("_growth_tracker", full({}, 2000, kInt32)));
      });
  t.add("load_two_scales", Raises::Error, {"GradScaler.load_state_dict", "'scale'", "[2]"},
        [] { GradScaler().load_state_dict(scaler_state_with("scale", ones({2}))); });
  t.add("step_unless_float_flag", Raises::DTypeError, {"step_unless", "int32", "float32"}, [] {
    Scaled s;
    s.adam.step_unless({zeros({})});
  });
  t.add("step_unless_two_flags_on_one_device", Raises::DeviceError,
        {"step_unless", "found_inf 0 and 1", "cpu"}, [] {
          Scaled s;
          s.adam.step_unless({zeros({}, kInt32), zeros({}, kInt32)});
        });
  t.add("step_unless_no_flag_for_device", Raises::DeviceError,
        {"step_unless", "no found_inf", "cpu"}, [] {
          Scaled s;
          s.adam.step_unless({});
        });
  return t.cases();
}
LG_MISUSE_SUITE(GradScaler, grad_scaler_cases());

}  // namespace
}  // namespace leangrad::test
