// Misuse of nn modules: constructors with sizes and options out of range, registration with bad
// names, forward with wrong input ranks and feature counts, load_state_dict with missing,
// unexpected, mis-shaped and undefined entries, checkpoints at paths that cannot be read or
// written. Tables of the misuse suite (tests/misuse/misuse_testing.h).
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <leangrad/kernels/creation.h>
#include <leangrad/nn/init.h>
#include <leangrad/nn/nn.h>
#include "misuse/misuse_testing.h"

namespace leangrad::test {
namespace {

constexpr std::int64_t k2Pow32 = std::int64_t{1} << 32;
constexpr std::int64_t k2Pow40 = std::int64_t{1} << 40;

// A module with a parameter, a buffer and a child, to load state into.
struct Net : nn::Module {
  Net() : Module("Net") {
    fc = register_module("fc", nn::Linear(3, 2));
    register_buffer("steps", zeros({}, kInt64));
  }
  Tensor forward(const Tensor& x) override { return fc->forward(x); }
  nn::Linear fc{nullptr};
};

NamedTensors state_of_net() {
  return Net().state_dict();
}

NamedTensors without(NamedTensors state, const std::string& name) {
  std::erase_if(state, [&](const auto& entry) { return entry.first == name; });
  return state;
}

NamedTensors with(NamedTensors state, const std::string& name, const Tensor& value) {
  std::erase_if(state, [&](const auto& entry) { return entry.first == name; });
  state.emplace_back(name, value);
  return state;
}

std::vector<MisuseCase> constructor_cases() {
  MisuseTable t;
  t.add("linear_negative_in_features", Raises::Error, {"Linear", "-1"}, [] { nn::Linear(-1, 3); });
  t.add("linear_weight_numel_overflows", Raises::ShapeError,
        {"[4294967296, 4294967296]", "overflows"}, [] { nn::Linear(k2Pow32, k2Pow32); });
  t.add("conv2d_zero_in_channels", Raises::ShapeError, {"Conv2d", "0, 2, 1, (3, 3)"},
        [] { nn::Conv2d(nn::Conv2dOptions(0, 2, 3)); });
  t.add("conv2d_negative_kernel", Raises::ShapeError, {"Conv2d", "(-3, -3)"},
        [] { nn::Conv2d(nn::Conv2dOptions(1, 2, -3)); });
  t.add("conv2d_groups_do_not_divide", Raises::ShapeError, {"Conv2d", "(3)", "(2)"},
        [] { nn::Conv2d(nn::Conv2dOptions(3, 4, 3).groups(2)); });
  // in_channels * kH * kW (the fan-in of the initialisation) overflows int64.
  t.add("conv2d_weight_numel_overflows", Raises::ShapeError,
        {"Conv2d", "1099511627776", "overflows"}, [] {
          nn::Conv2d(nn::Conv2dOptions(1, 1, Size2{k2Pow40, k2Pow40}));
        });
  t.add("group_norm_groups_do_not_divide", Raises::Error, {"GroupNorm", "(4)", "(6)"},
        [] { nn::GroupNorm(nn::GroupNormOptions(4, 6)); });
  t.add("group_norm_zero_groups", Raises::Error, {"GroupNorm", "(0)"},
        [] { nn::GroupNorm(nn::GroupNormOptions(0, 6)); });
  t.add("group_norm_negative_channels", Raises::Error, {"GroupNorm", "-4"},
        [] { nn::GroupNorm(nn::GroupNormOptions(1, -4)); });
  t.add("dropout_p_above_one", Raises::Error, {"Dropout", "1.5"}, [] { nn::Dropout(1.5); });
  t.add("register_parameter_dotted_name", Raises::Error, {"M", "'a.b'"},
        [] { nn::Module("M").register_parameter("a.b", ones({1})); });
  t.add("register_buffer_empty_name", Raises::Error, {"M", "''"},
        [] { nn::Module("M").register_buffer("", ones({1})); });
  t.add("register_parameter_twice", Raises::Error, {"M", "'w'", "already"}, [] {
    nn::Module m("M");
    m.register_parameter("w", ones({1}));
    m.register_buffer("w", ones({1}));
  });
  t.add("register_parameter_integral_requiring_grad", Raises::DTypeError,
        {"requires_grad_", "int64"},
        [] { nn::Module("M").register_parameter("w", ones({1}, kInt64)); });
  t.add("register_null_module", Raises::Error, {"M", "'child'", "null"},
        [] { nn::Module("M").register_module("child", std::shared_ptr<nn::Module>()); });
  t.add("sequential_index_out_of_range", Raises::Error, {"Sequential", "[3]", "size 0"},
        [] { nn::Sequential()[3]; });
  t.add("empty_holder_called", Raises::Error,
        {"empty module holder leangrad::nn::Linear", "LinearImpl", "nullptr"}, [] {
          nn::Linear fc{nullptr};
          fc(ones({1, 2}));
        });
  t.add("empty_holder_registered", Raises::Error, {"empty module holder", "Conv2d"},
        [] { nn::Module("M").register_module("conv", nn::Conv2d{nullptr}); });
  t.add("named_parameters_missing_key", Raises::Error,
        {"Linear parameter", "'wieght'", "not defined", "'weight'"},
        [] { nn::Linear(2, 2)->named_parameters()["wieght"]; });
  t.add("named_modules_of_a_module_not_held_by_shared_ptr", Raises::Error,
        {"M", "named_modules", "shared_ptr", "include_self"},
        [] { nn::Module("M").named_modules(); });
  t.add("sequential_ptr_of_wrong_type", Raises::Error, {"Sequential", "[0]", "ReLU"},
        [] { nn::Sequential(nn::ReLU())->ptr<nn::LinearImpl>(0); });
  t.add("gelu_unknown_approximate", Raises::Error, {"GELU", "'erf'"},
        [] { nn::GELU(nn::GELUOptions().approximate("erf")); });
  t.add("hardtanh_min_above_max", Raises::Error, {"Hardtanh", "min_val <= max_val", "1", "0"},
        [] { nn::Hardtanh(nn::HardtanhOptions().min_val(1).max_val(0)); });
  t.add("softplus_negative_beta", Raises::Error, {"Softplus", "finite beta > 0", "-1"},
        [] { nn::Softplus(nn::SoftplusOptions().beta(-1)); });
  t.add("celu_zero_alpha", Raises::Error, {"CELU", "alpha != 0", "0"},
        [] { nn::CELU(nn::CELUOptions().alpha(0)); });
  t.add("softshrink_negative_lambda", Raises::Error, {"Softshrink", "lambda >= 0", "-1"},
        [] { nn::Softshrink(-1.0); });
  t.add("prelu_no_parameters", Raises::ShapeError, {"PReLU", "num_parameters > 0", "0"},
        [] { nn::PReLU(nn::PReLUOptions().num_parameters(0)); });
  t.add("smooth_l1_loss_negative_beta", Raises::Error, {"SmoothL1Loss", "beta", "-1"},
        [] { nn::SmoothL1Loss(nn::SmoothL1LossOptions().beta(-1)); });
  t.add("huber_loss_negative_delta", Raises::Error, {"HuberLoss", "delta", "-2"},
        [] { nn::HuberLoss(nn::HuberLossOptions().delta(-2)); });
  return t.cases();
}
LG_MISUSE_SUITE(ModuleConstruction, constructor_cases());

std::vector<MisuseCase> forward_cases() {
  MisuseTable t;
  t.add("linear_forward_feature_count", Raises::ShapeError, {"linear", "[4, 5]", "[2, 3]"}, [] {
    nn::Linear(3, 2)->forward(ones({4, 5}));
  });
  t.add("linear_forward_0d", Raises::ShapeError, {"linear", "[]"},
        [] { nn::Linear(1, 2)->forward(full({}, 1.0)); });
  t.add("linear_forward_float64_input", Raises::DTypeError, {"linear", "float64", "float32"}, [] {
    nn::Linear(3, 2)->forward(ones({1, 3}, kFloat64));
  });
  t.add("conv2d_forward_2d_input", Raises::ShapeError, {"conv2d", "[5, 5]"}, [] {
    nn::Conv2d(nn::Conv2dOptions(1, 2, 3))->forward(ones({5, 5}));
  });
  t.add("conv2d_forward_channel_count", Raises::ShapeError,
        {"conv2d", "[2, 1, 3, 3]", "[1, 3, 5, 5]"}, [] {
          nn::Conv2d(nn::Conv2dOptions(1, 2, 3))->forward(ones({1, 3, 5, 5}));
        });
  t.add("group_norm_forward_channel_count", Raises::ShapeError,
        {"group_norm", "weight", "(6)", "[4]"}, [] {
          nn::GroupNorm(nn::GroupNormOptions(2, 4))->forward(ones({2, 6, 3}));
        });
  t.add("max_pool_forward_2d_input", Raises::ShapeError, {"max_pool2d", "[4, 4]"}, [] {
    nn::MaxPool2d(2)->forward(ones({4, 4}));
  });
  t.add("avg_pool_forward_too_small", Raises::ShapeError, {"avg_pool2d", "[1, 1, 2, 2]", "[3, 3]"},
        [] {
          nn::AvgPool2d(3)->forward(ones({1, 1, 2, 2}));
        });
  t.add("pixel_shuffle_forward_channels", Raises::ShapeError, {"pixel_shuffle", "[1, 2, 3, 3]"},
        [] {
          nn::PixelShuffle(2)->forward(ones({1, 2, 3, 3}));
        });
  t.add("pixel_shuffle_negative_factor", Raises::Error, {"pixel_shuffle", "-2"}, [] {
    nn::PixelShuffle(-2)->forward(ones({1, 4, 3, 3}));
  });
  t.add("flatten_forward_dim_out_of_range", Raises::ShapeError, {"flatten", "5"}, [] {
    nn::Flatten(1, 5)->forward(ones({2, 3}));
  });
  t.add("sequential_forward_mismatched_layers", Raises::ShapeError, {"linear", "[1, 3]", "[1, 2]"},
        [] {
          nn::Sequential seq(nn::Linear(4, 3), nn::Linear(2, 1));
          seq->forward(ones({1, 4}));
        });
  t.add("module_list_forward", Raises::Error, {"ModuleList", "forward"},
        [] { nn::ModuleList()->forward(ones({1})); });
  t.add("loss_module_forward_one_input", Raises::Error, {"MSELoss", "forward"}, [] {
    nn::MSELoss loss;
    loss(ones({1}));  // compiles (nn::Module::forward is visible) and throws
  });
  t.add("cross_entropy_module_bad_target", Raises::Error,
        {"cross_entropy", "target 7", "3 classes"}, [] {
          nn::CrossEntropyLoss()->forward(ones({2, 3}), tensor<std::int64_t>({0, 7}));
        });
  return t.cases();
}
LG_MISUSE_SUITE(ModuleForward, forward_cases());

std::vector<MisuseCase> state_dict_cases() {
  MisuseTable t;
  t.add("load_state_dict_missing_key", Raises::Error,
        {"load_state_dict", "Net", "missing", "'fc.bias'"},
        [] { Net().load_state_dict(without(state_of_net(), "fc.bias")); });
  t.add("load_state_dict_unexpected_key", Raises::Error,
        {"load_state_dict", "Net", "unexpected", "'fc.extra'"},
        [] { Net().load_state_dict(with(state_of_net(), "fc.extra", ones({1}))); });
  t.add("load_state_dict_missing_and_unexpected", Raises::Error,
        {"missing", "'steps'", "unexpected", "'step'"},
        [] { Net().load_state_dict(with(without(state_of_net(), "steps"), "step", zeros({}))); });
  t.add("load_state_dict_weight_shape", Raises::ShapeError,
        {"load_state_dict", "'fc.weight'", "[3, 2]", "[2, 3]"}, [] {
          Net().load_state_dict(with(state_of_net(), "fc.weight", ones({3, 2})));
        });
  t.add("load_state_dict_buffer_shape", Raises::ShapeError,
        {"load_state_dict", "'steps'", "[1]", "[]"},
        [] { Net().load_state_dict(with(state_of_net(), "steps", zeros({1}, kInt64))); });
  t.add("load_state_dict_shape_not_strict", Raises::ShapeError,
        {"load_state_dict", "'fc.bias'", "[3]", "[2]"}, [] {
          Net().load_state_dict({{"fc.bias", ones({3})}}, /*strict=*/false);
        });
  t.add("load_state_dict_undefined_tensor", Raises::Error,
        {"load_state_dict", "'fc.weight'", "undefined"},
        [] { Net().load_state_dict(with(state_of_net(), "fc.weight", Tensor())); });
  t.add("load_from_missing_file", Raises::Error, {"/nonexistent/leangrad/net.safetensors"},
        [] { Net().load("/nonexistent/leangrad/net.safetensors"); });
  t.add("save_into_missing_folder", Raises::Error, {"/nonexistent/leangrad"},
        [] { Net().save("/nonexistent/leangrad/net.safetensors"); });
  t.add("load_checkpoint_of_another_model", Raises::ShapeError,
        {"load_state_dict", "'weight'", "[2, 3]", "[2, 2]"}, [] {
          const std::string path = ::testing::TempDir() + "/misuse_linear_" +
                                   std::to_string(::getpid()) + ".safetensors";
          nn::Linear(3, 2)->save(path);
          nn::Linear other(2, 2);
          try {
            other->load(path);
          } catch (...) {
            std::remove(path.c_str());
            throw;
          }
        });
  return t.cases();
}
LG_MISUSE_SUITE(ModuleStateDict, state_dict_cases());

std::vector<MisuseCase> init_cases() {
  MisuseTable t;
  t.add("kaiming_on_integers", Raises::DTypeError, {"kaiming_uniform_", "int64", "[4, 4]"}, [] {
    nn::init::kaiming_uniform_(empty({4, 4}, kInt64));
  });
  t.add("kaiming_on_a_vector", Raises::Error, {"kaiming_normal_", "at least 2 dimensions", "[5]"},
        [] { nn::init::kaiming_normal_(empty({5})); });
  t.add("eye_of_three_dims", Raises::Error, {"eye_", "2-D", "[2, 2, 2]"}, [] {
    nn::init::eye_(empty({2, 2, 2}));
  });
  t.add("dirac_of_a_matrix", Raises::ShapeError, {"dirac_", "3 to 5 dimensions", "[6, 4]"}, [] {
    nn::init::dirac_(empty({6, 4}));
  });
  t.add("dirac_groups_not_dividing", Raises::Error, {"dirac_", "dividing the 6 output", "got 4"},
        [] {
          nn::init::dirac_(empty({6, 4, 3}), 4);
        });
  t.add("sparse_sparsity_above_1", Raises::Error, {"sparse_", "sparsity in [0, 1]", "1.5"}, [] {
    nn::init::sparse_(empty({4, 4}), 1.5);
  });
  t.add("sparse_of_3d", Raises::ShapeError, {"sparse_", "2-D", "[4, 4, 4]"}, [] {
    nn::init::sparse_(empty({4, 4, 4}), 0.5);
  });
  t.add("orthogonal_of_a_vector", Raises::ShapeError, {"orthogonal_", "at least 2", "[5]"},
        [] { nn::init::orthogonal_(empty({5})); });
  t.add("orthogonal_of_integers", Raises::DTypeError, {"orthogonal_", "floating", "int64"}, [] {
    nn::init::orthogonal_(empty({3, 3}, kInt64));
  });
  t.add("zeros_of_undefined", Raises::Error, {"zeros_", "undefined"},
        [] { nn::init::zeros_(Tensor()); });
  t.add("leaky_relu_slope_nan", Raises::Error, {"calculate_gain", "nan"},
        [] { nn::init::calculate_gain(kLeakyReLU, std::nan("")); });
  return t.cases();
}
LG_MISUSE_SUITE(NnInit, init_cases());

}  // namespace
}  // namespace leangrad::test
