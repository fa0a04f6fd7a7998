// The optimizers on float16 and bfloat16 parameters (Note [Optimizers in half precision] in
// kernels/optim_math.h): each step of SGD, Adam, AdamW and RAdam against an independent
// reference computed here in double with the same rounding points (every stored value rounded
// once to the parameter's dtype); the states' dtype; the gated step of amp::GradScaler; state
// dicts and safetensors checkpoints; clip_grad_norm_ over 16-bit gradients; and a bfloat16 model
// that trains. The vectorised kernel against the reference loop, bitwise, is in
// tests/kernels/test_optim_vectorized.cpp; the refusals in tests/misuse/test_misuse_optim.cpp.
//
// The tolerance of the step reference: before every step the reference takes the parameter and
// states the kernel stored, so no difference carries over from one step to the next. Within a
// step the kernel computes each element in float from the same inputs as the reference (exact in
// both), with the hyperparameters rounded to float; the reference computes in double. Each float
// operation rounds its result with a relative error of at most u = 2^-24, and so does each
// hyperparameter; along the longest path to one value (Adam's parameter: weight decay, both
// moments, the square root, the bias corrections, the division, the update) there are fewer than
// K = 16 such roundings, and every intermediate result is at most S, the sum of the magnitudes of
// the terms the value is made of (|b1 m| + |(1 - b1) g| for exp_avg; |p| plus the update computed
// from the magnitudes of its terms for the parameter). So the kernel's unrounded value lies within
// E = K u S of the reference's unrounded value r (the standard forward error bound of sums and
// products), and the value it stores is one of the 16-bit values that [r - E, r + E] rounds to,
// which is what the test checks. Where nothing cancels, S is about |r| and that interval holds one
// value or two neighbours; where a sum cancels (exp_avg, a gradient against the old moment), S is
// much larger than |r| and several tiny values are allowed, as they must be: float and double
// then disagree by far more than the result's own last place. A kernel computing in the 16-bit
// type (a relative error of 2^-8 or 2^-11 per operation) or rounding twice fails the bound.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/autograd/nn_functions.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/generator.h>
#include <leangrad/data/safetensors.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/activation.h>
#include <leangrad/nn/container.h>
#include <leangrad/nn/linear.h>
#include <leangrad/optim/optim.h>
#include "optim/optim_test_util.h"

namespace leangrad {
namespace {

// ---- The 16-bit values ---------------------------------------------------------------------

template <typename T>
double value_of_bits(std::uint16_t bits) {
  return static_cast<double>(static_cast<float>(T::from_bits(bits)));
}

// The T nearest to x, ties to even, straight from double (no double rounding through float):
// T(float(|x|)) is the nearest or a neighbour of it, so the nearest of those three is the answer.
template <typename T>
T round_to(double x) {
  const double a = std::fabs(x);
  const std::uint16_t c = T(static_cast<float>(a)).bits;
  std::uint16_t best = c;
  double best_error = std::fabs(value_of_bits<T>(c) - a);
  for (const int candidate : {static_cast<int>(c) - 1, static_cast<int>(c) + 1}) {
    if (candidate < 0) continue;
    const auto bits = static_cast<std::uint16_t>(candidate);
    const double error = std::fabs(value_of_bits<T>(bits) - a);
    if (error < best_error || (error == best_error && (bits & 1u) == 0)) {
      best = bits;
      best_error = error;
    }
  }
  return T::from_bits(static_cast<std::uint16_t>(best | (std::signbit(x) ? 0x8000u : 0u)));
}

// The position of a 16-bit value in the order of the type's values (both zeros at 0): neighbours
// differ by 1.
int ordinal(std::uint16_t bits) {
  const int magnitude = bits & 0x7fff;
  return (bits & 0x8000) != 0 ? -magnitude : magnitude;
}

std::vector<double> to_doubles(const Tensor& t) {
  const Tensor c = t.to(kFloat64).contiguous();
  const double* d = c.data_ptr<double>();
  return std::vector<double>(d, d + c.numel());
}

// Random values N(0, scale^2) as a tensor of T (rounded from float by Tensor::to).
Tensor random_tensor(DType dtype, const Shape& shape, double scale, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, static_cast<float>(scale));
  Tensor t = empty(shape, kFloat32);
  float* data = t.data_ptr<float>();
  for (std::int64_t i = 0; i < t.numel(); ++i)
    data[i] = normal(rng);
  return t.to(dtype);
}

// What the kernel may store for one value (the file's header): the 16-bit values between the
// roundings of r - E and r + E, with E = K u S.
template <typename T>
struct Allowed {
  T low, high;
};
constexpr double kRoundings = 16;           // K
constexpr double kFloatRoundoff = 0x1p-24;  // u
template <typename T>
Allowed<T> allowed(double value, double scale) {
  const double error = kRoundings * kFloatRoundoff * scale;
  return {round_to<T>(value - error), round_to<T>(value + error)};
}

// Every element of `got` (a tensor of T) within its allowed values.
template <typename T>
::testing::AssertionResult within_allowed(const Tensor& got,
                                          const std::vector<Allowed<T>>& expected,
                                          const std::string& what) {
  if (got.dtype() != dtype_of<T>)
    return ::testing::AssertionFailure() << what << " is " << got.dtype();
  const Tensor c = got.contiguous();
  const T* data = c.data_ptr<T>();
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const int at = ordinal(data[i].bits);
    if (at < ordinal(expected[i].low.bits) || at > ordinal(expected[i].high.bits)) {
      return ::testing::AssertionFailure()
             << what << "[" << i << "] = " << static_cast<float>(data[i]) << ", outside ["
             << static_cast<float>(expected[i].low) << ", " << static_cast<float>(expected[i].high)
             << "]";
    }
  }
  return ::testing::AssertionSuccess();
}

// ---- The reference step, in double --------------------------------------------------------

struct Config {
  std::string name;
  std::string kind;  // sgd, adam, adamw, radam
  double lr = 1e-3;
  double momentum = 0, dampening = 0;
  bool nesterov = false;
  double weight_decay = 0;
  bool amsgrad = false;
  bool maximize = false;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
};

std::unique_ptr<optim::Optimizer> make(const Config& c, const std::vector<Tensor>& params) {
  if (c.kind == "sgd") {
    return std::make_unique<optim::SGD>(params, optim::SGDOptions(c.lr)
                                                    .momentum(c.momentum)
                                                    .dampening(c.dampening)
                                                    .nesterov(c.nesterov)
                                                    .weight_decay(c.weight_decay)
                                                    .maximize(c.maximize));
  }
  if (c.kind == "adam") {
    return std::make_unique<optim::Adam>(params, optim::AdamOptions(c.lr)
                                                     .betas({c.beta1, c.beta2})
                                                     .eps(c.eps)
                                                     .weight_decay(c.weight_decay)
                                                     .amsgrad(c.amsgrad)
                                                     .maximize(c.maximize));
  }
  if (c.kind == "adamw") {
    return std::make_unique<optim::AdamW>(params, optim::AdamWOptions(c.lr)
                                                      .betas({c.beta1, c.beta2})
                                                      .eps(c.eps)
                                                      .weight_decay(c.weight_decay)
                                                      .amsgrad(c.amsgrad)
                                                      .maximize(c.maximize));
  }
  return std::make_unique<optim::RAdam>(
      params,
      optim::RAdamOptions(c.lr).betas({c.beta1, c.beta2}).eps(c.eps).weight_decay(c.weight_decay));
}

// One parameter's values before a step (all exact in double) and after it, by state name.
struct Values {
  std::vector<double> param;
  std::map<std::string, std::vector<double>> states;
};

// Step t of torch.optim (1.13, single-tensor) on one element: p, its gradient g and the states
// (absent ones 0) in double; records what the kernel may store for each new value (`store`: the
// value and S, the magnitudes of its terms; see the file's header). Each value is carried with its
// S (`_s`); S of a product or quotient by a factor computed without cancellation is the factor
// times S.
template <typename T>
void reference_step(const Config& c, std::int64_t t, std::size_t i, const Values& before,
                    const std::vector<double>& grad, bool first_sgd_step,
                    std::map<std::string, std::vector<Allowed<T>>>& after) {
  auto state = [&](const std::string& name) {
    const auto it = before.states.find(name);
    return it == before.states.end() ? 0.0 : it->second[i];
  };
  auto store = [&](const std::string& name, double value, double scale) {
    std::vector<Allowed<T>>& values = after[name];
    values.resize(before.param.size());
    values[i] = allowed<T>(value, scale);
  };
  double p = before.param[i];
  double p_s = std::fabs(p);
  double g = c.maximize ? -grad[i] : grad[i];
  double g_s = std::fabs(g);
  if (c.kind == "sgd") {
    if (c.weight_decay != 0) {
      g = g + c.weight_decay * p;
      g_s += c.weight_decay * p_s;
    }
    if (c.momentum != 0) {
      const double old = state("momentum_buffer");
      const double buf = first_sgd_step ? g : c.momentum * old + (1 - c.dampening) * g;
      const double buf_s =
          first_sgd_step ? g_s : c.momentum * std::fabs(old) + (1 - c.dampening) * g_s;
      store("momentum_buffer", buf, buf_s);
      g = c.nesterov ? g + c.momentum * buf : buf;
      g_s = c.nesterov ? g_s + c.momentum * buf_s : buf_s;
    }
    store("param", p - c.lr * g, p_s + c.lr * g_s);
    return;
  }
  if (c.weight_decay != 0) {
    if (c.kind == "adamw") {
      p = p * (1 - c.lr * c.weight_decay);
      p_s = std::fabs(p);
    } else {
      g = g + c.weight_decay * p;
      g_s += c.weight_decay * p_s;
    }
  }
  const double m = c.beta1 * state("exp_avg") + (1 - c.beta1) * g;
  const double m_s = c.beta1 * std::fabs(state("exp_avg")) + (1 - c.beta1) * g_s;
  const double v = c.beta2 * state("exp_avg_sq") + (1 - c.beta2) * g * g;
  const double v_s = c.beta2 * state("exp_avg_sq") + (1 - c.beta2) * g_s * g_s;
  store("exp_avg", m, m_s);
  store("exp_avg_sq", v, v_s);
  const double bc1 = 1 - std::pow(c.beta1, static_cast<double>(t));
  const double bc2 = 1 - std::pow(c.beta2, static_cast<double>(t));
  // The denominators are sums of non-negative terms: v's error, at most K u v_s, moves sqrt(v) by
  // at most K u sqrt(v_s) (v_s >= v), which the update's S covers through sqrt(v_s / v).
  if (c.kind == "radam") {
    const double rho_inf = 2 / (1 - c.beta2) - 1;
    const double rho_t = rho_inf - 2 * t * std::pow(c.beta2, static_cast<double>(t)) / bc2;
    const double corrected = m / bc1;
    if (rho_t > 5) {
      const double rect =
          std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t));
      const double adaptive_lr = std::sqrt(bc2) / (std::sqrt(v) + c.eps);
      const double factor = c.lr * adaptive_lr * rect / bc1;
      const double update_s = factor * (m_s + std::fabs(m) * (v > 0 ? std::sqrt(v_s / v) : 1.0));
      store("param", p - corrected * c.lr * adaptive_lr * rect, p_s + update_s);
    } else {
      store("param", p - corrected * c.lr, p_s + c.lr * m_s / bc1);
    }
    return;
  }
  double second = v;
  double second_s = v_s;
  if (c.amsgrad) {
    const double old = state("max_exp_avg_sq");
    second = std::max(old, v);
    second_s = std::max(old, v_s);
    store("max_exp_avg_sq", second, second_s);
  }
  const double denom = std::sqrt(second) / std::sqrt(bc2) + c.eps;
  const double factor = (c.lr / bc1) / denom;
  const double update_s =
      factor * (m_s + std::fabs(m) * (second > 0 ? std::sqrt(second_s / second) : 1.0));
  store("param", p - (c.lr / bc1) * m / denom, p_s + update_s);
}

std::vector<Config> configs() {
  std::vector<Config> out;
  auto add = [&](Config c) { out.push_back(std::move(c)); };
  add({.name = "sgd_plain_maximize", .kind = "sgd", .lr = 0.1, .maximize = true});
  add({.name = "sgd_momentum_dampening_wd",
       .kind = "sgd",
       .lr = 0.1,
       .momentum = 0.9,
       .dampening = 0.1,
       .weight_decay = 0.01});
  add({.name = "sgd_nesterov", .kind = "sgd", .lr = 0.05, .momentum = 0.9, .nesterov = true});
  add({.name = "adam", .kind = "adam"});
  add({.name = "adam_amsgrad_wd_maximize",
       .kind = "adam",
       .lr = 2e-3,
       .weight_decay = 0.01,
       .amsgrad = true,
       .maximize = true});
  add({.name = "adamw", .kind = "adamw", .weight_decay = 0.01});
  add({.name = "adamw_amsgrad", .kind = "adamw", .lr = 3e-3, .weight_decay = 0.1, .amsgrad = true});
  // beta2 = 0.999: steps 1 to 5 are not rectified, 6 and 7 are.
  add({.name = "radam_wd", .kind = "radam", .weight_decay = 0.01});
  return out;
}

// kSteps steps of `c` on two parameters of T (1000 elements and 7: the vector loop and its tail),
// each compared with the reference from the values the previous step stored.
template <typename T>
void steps_match_reference(const Config& c) {
  constexpr std::int64_t kSteps = 7;
  const DType dtype = dtype_of<T>;
  std::mt19937 rng(2024);
  std::vector<Tensor> params = {random_tensor(dtype, {40, 25}, 1.0, rng).requires_grad_(),
                                random_tensor(dtype, {7}, 1.0, rng).requires_grad_()};
  const std::unique_ptr<optim::Optimizer> opt = make(c, params);
  for (std::int64_t t = 1; t <= kSteps; ++t) {
    SCOPED_TRACE("step " + std::to_string(t));
    std::vector<Values> before(params.size());
    std::vector<std::vector<double>> grads(params.size());
    for (std::size_t k = 0; k < params.size(); ++k) {
      const Tensor g = random_tensor(dtype, params[k].shape(), 0.1, rng);
      params[k].set_grad(g);
      grads[k] = to_doubles(g);
      before[k].param = to_doubles(params[k]);
      for (const auto& [name, state] : opt->state(k).tensors)
        before[k].states[name] = to_doubles(state);
    }
    opt->step();
    for (std::size_t k = 0; k < params.size(); ++k) {
      const std::size_t n = static_cast<std::size_t>(params[k].numel());
      std::map<std::string, std::vector<Allowed<T>>> expected;
      for (std::size_t i = 0; i < n; ++i)
        reference_step<T>(c, t, i, before[k], grads[k], /*first_sgd_step=*/t == 1, expected);
      const optim::ParamState state = opt->state(k);
      EXPECT_EQ(state.step, t);
      EXPECT_EQ(state.tensors.size(), expected.size() - 1) << "states of parameter " << k;
      for (const auto& [name, values] : expected) {
        const Tensor& got = name == "param" ? params[k] : state.at(name);
        EXPECT_EQ(got.dtype(), dtype) << name;  // states of the parameter's dtype
        EXPECT_TRUE(within_allowed(got, values, name + " of parameter " + std::to_string(k)));
      }
    }
  }
}

// How GoogleTest prints a case.
void PrintTo(const Config& c, std::ostream* out) {
  *out << c.name;
}

class HalfSteps : public ::testing::TestWithParam<Config> {};

TEST_P(HalfSteps, BFloat16MatchesTheDoubleReference) {
  steps_match_reference<BFloat16>(GetParam());
}
TEST_P(HalfSteps, Float16MatchesTheDoubleReference) {
  steps_match_reference<Half>(GetParam());
}

INSTANTIATE_TEST_SUITE_P(OptimHalf, HalfSteps, ::testing::ValuesIn(configs()),
                         [](const auto& info) { return info.param.name; });

// ---- The optimizer around the kernels -----------------------------------------------------

// Two parameters of each dtype the optimizers take, with gradients, in one optimizer.
struct MixedDtypes {
  std::vector<Tensor> params;
  explicit MixedDtypes(std::uint32_t seed) {
    std::mt19937 rng(seed);
    for (DType dtype : {kBFloat16, kFloat32, kFloat16, kFloat64})
      params.push_back(random_tensor(dtype, {33}, 1.0, rng).requires_grad_());
  }
  void set_grads(std::uint32_t seed) const {
    std::mt19937 rng(seed);
    for (const Tensor& p : params)
      p.set_grad(random_tensor(p.dtype(), p.shape(), 0.1, rng));
  }
};

// One optimizer over four dtypes updates each parameter as an optimizer of that one alone (one
// launch per dtype), bit for bit.
TEST(OptimHalf, OneOptimizerOverEveryDtypeEqualsOnePerParameter) {
  MixedDtypes mixed(5), alone(5);
  optim::AdamW together(mixed.params, optim::AdamWOptions(1e-2).amsgrad(true));
  std::vector<std::unique_ptr<optim::AdamW>> single;
  for (const Tensor& p : alone.params)
    single.push_back(std::make_unique<optim::AdamW>(std::vector<Tensor>{p},
                                                    optim::AdamWOptions(1e-2).amsgrad(true)));
  for (std::uint32_t step = 0; step < 3; ++step) {
    mixed.set_grads(100 + step);
    alone.set_grads(100 + step);
    together.step();
    for (const auto& opt : single)
      opt->step();
  }
  for (std::size_t k = 0; k < mixed.params.size(); ++k) {
    EXPECT_TRUE(test::bitwise_equal(mixed.params[k], alone.params[k])) << mixed.params[k].dtype();
    for (const char* name : {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"}) {
      EXPECT_EQ(together.state(k).at(name).dtype(), mixed.params[k].dtype()) << name;
      EXPECT_TRUE(test::bitwise_equal(together.state(k).at(name), single[k]->state(0).at(name)))
          << name;
    }
  }
}

// GradScaler's gated step (step_unless): a set flag leaves bfloat16 parameters and states bitwise
// as they were; a clear one is the plain step.
TEST(OptimHalf, GatedStepSkipsOrEqualsThePlainStep) {
  MixedDtypes gated(9), plain(9);
  optim::Adam gated_adam(gated.params, optim::AdamOptions(1e-2));
  optim::Adam plain_adam(plain.params, optim::AdamOptions(1e-2));
  Tensor found_inf = zeros({}, kInt32);
  for (std::uint32_t step = 0; step < 4; ++step) {
    gated.set_grads(200 + step);
    plain.set_grads(200 + step);
    const bool skip = step == 1;
    found_inf.fill_(skip ? 1.0 : 0.0);
    std::vector<Tensor> before;
    for (const Tensor& p : gated.params)
      before.push_back(p.clone());
    const Tensor exp_avg_before = step > 0 ? gated_adam.state(0).at("exp_avg").clone() : Tensor();
    gated_adam.step_unless({found_inf});
    if (skip) {
      for (std::size_t k = 0; k < before.size(); ++k)
        EXPECT_TRUE(test::bitwise_equal(gated.params[k], before[k]));
      EXPECT_TRUE(test::bitwise_equal(gated_adam.state(0).at("exp_avg"), exp_avg_before));
    } else {
      plain_adam.step();
    }
  }
  for (std::size_t k = 0; k < gated.params.size(); ++k) {
    EXPECT_TRUE(test::bitwise_equal(gated.params[k], plain.params[k])) << gated.params[k].dtype();
    EXPECT_EQ(gated_adam.state(k).step, plain_adam.state(k).step);
  }
}

// A state dict keeps the 16-bit states (through a safetensors file too) and the run continues
// bit for bit; a float32 state given to a bfloat16 parameter is rounded to bfloat16 on load.
TEST(OptimHalf, StateDictAndSafetensorsKeepTheDtypeAndContinueBitExactly) {
  MixedDtypes run(21), resumed(21);
  optim::RAdam first(run.params, optim::RAdamOptions(1e-2).weight_decay(0.01));
  for (std::uint32_t step = 0; step < 3; ++step) {
    run.set_grads(300 + step);
    first.step();
  }
  const std::string path =
      ::testing::TempDir() + "optim_half_" + std::to_string(::getpid()) + ".safetensors";
  save_safetensors(path, first.state_dict());
  const NamedTensors loaded = load_safetensors(path);
  std::remove(path.c_str());
  for (const auto& [name, t] : loaded) {
    if (name == "state.0.exp_avg") {
      EXPECT_EQ(t.dtype(), kBFloat16);
    }
    if (name == "state.2.exp_avg_sq") {
      EXPECT_EQ(t.dtype(), kFloat16);
    }
  }
  for (std::size_t k = 0; k < run.params.size(); ++k)
    resumed.params[k].set_data(run.params[k].detach().clone());
  optim::RAdam second(resumed.params, optim::RAdamOptions(1e-2).weight_decay(0.01));
  second.load_state_dict(loaded);
  for (std::uint32_t step = 3; step < 8; ++step) {  // across RAdam's rectification (step 6)
    run.set_grads(300 + step);
    resumed.set_grads(300 + step);
    first.step();
    second.step();
  }
  for (std::size_t k = 0; k < run.params.size(); ++k) {
    EXPECT_TRUE(test::bitwise_equal(run.params[k], resumed.params[k])) << run.params[k].dtype();
    EXPECT_TRUE(test::bitwise_equal(first.state(k).at("exp_avg"), second.state(k).at("exp_avg")));
  }

  // A float32 state (as a float32 run's checkpoint holds) for a bfloat16 parameter.
  const Tensor p = ones({3}, kBFloat16).requires_grad_();
  optim::Adam adam({p});
  const Tensor exp_avg = tensor<float>({0.1f, 1.0f / 3.0f, -2.0f});
  adam.load_state_dict({{"state.0.step", full({}, 2.0, kInt64)},
                        {"state.0.exp_avg", exp_avg},
                        {"state.0.exp_avg_sq", tensor<float>({1e-3f, 2e-3f, 3e-3f})}});
  const Tensor got = adam.state(0).at("exp_avg");
  EXPECT_EQ(got.dtype(), kBFloat16);
  EXPECT_TRUE(test::bitwise_equal(got, exp_avg.to(kBFloat16)));
}

// ---- clip_grad_norm_ ------------------------------------------------------------------------

// 16-bit gradients: the norm is summed in float32 or wider (a float16 square overflows past 256,
// so 300 in a float16 gradient would make an Inf norm in float16 arithmetic) and returned as
// float32; each gradient times the factor, rounded once. Reference: the norm in double (every
// square of a 16-bit value is exact in float and double). The kernel's norm has three float32
// roundings of relative size 2^-24 each (each dtype's norm, its square in the norm of the three
// norms, the result; the double sums add nothing of that size), the square doubling the first in
// the sum and the root halving it again: within 4 * 2^-24 of the norm, relative. The clipped
// gradients: the factor inherits that and a rounding or two more, the product one, none of them
// cancelling, so each is allowed as in the steps above with S = |g * factor|.
TEST(OptimHalf, ClipGradNormOfHalfGradientsSumsInFloat32) {
  std::mt19937 rng(7);
  const Tensor a = ones({30}, kFloat16).requires_grad_();
  const Tensor b = ones({10}, kBFloat16).requires_grad_();
  const Tensor c = ones({5}).requires_grad_();
  Tensor ga = random_tensor(kFloat16, {30}, 100.0, rng);
  ga.data_ptr<Half>()[3] = Half(300.0f);
  a.set_grad(ga);
  b.set_grad(random_tensor(kBFloat16, {10}, 50.0, rng));
  c.set_grad(random_tensor(kFloat32, {5}, 10.0, rng));
  double sum = 0;
  std::vector<std::vector<double>> before;
  for (const Tensor& p : {a, b, c}) {
    before.push_back(to_doubles(p.grad()));
    for (double g : before.back())
      sum += g * g;
  }
  const double norm = std::sqrt(sum);
  const double max_norm = 1.0;
  const Tensor total = optim::clip_grad_norm_({a, b, c}, max_norm);
  ASSERT_EQ(total.dtype(), kFloat32);
  const float got = total.item<float>();
  EXPECT_TRUE(std::isfinite(got));
  EXPECT_LE(std::fabs(static_cast<double>(got) - norm), 4 * std::ldexp(norm, -24))
      << "norm " << got << ", exact " << norm;
  const double factor = max_norm / (norm + 1e-6);
  std::vector<Allowed<Half>> expected_a;
  for (double g : before[0])
    expected_a.push_back(allowed<Half>(g * factor, std::fabs(g * factor)));
  std::vector<Allowed<BFloat16>> expected_b;
  for (double g : before[1])
    expected_b.push_back(allowed<BFloat16>(g * factor, std::fabs(g * factor)));
  EXPECT_TRUE(within_allowed(a.grad(), expected_a, "float16 gradient"));
  EXPECT_TRUE(within_allowed(b.grad(), expected_b, "bfloat16 gradient"));
  EXPECT_EQ(a.grad().dtype(), kFloat16);
}

// ---- Training --------------------------------------------------------------------------------

// A small MLP converted with to(kBFloat16) trains with Adam: parameters, gradients and states stay
// bfloat16, and the loss of a regression on a fixed teacher falls below a tenth of its start (a
// float32 run of the same recipe is printed beside it for comparison).
double train_regression(DType dtype, double* initial_loss) {
  manual_seed(31);
  const Tensor x = randn({256, 8});
  const Tensor teacher = randn({8, 1});
  const Tensor y = matmul(x, teacher);
  manual_seed(32);
  nn::Sequential model(nn::Linear(8, 32), nn::ReLU(), nn::Linear(32, 1));
  model->to(dtype);
  std::vector<Tensor> params = model->parameters();
  optim::Adam adam(params, optim::AdamOptions(1e-2));
  const Tensor xd = x.to(dtype), yd = y.to(dtype);
  double loss_value = 0;
  for (int step = 0; step < 300; ++step) {
    adam.zero_grad();
    const Tensor loss = mse_loss(model->forward(xd), yd);
    EXPECT_EQ(loss.dtype(), dtype);
    loss.backward();
    adam.step();
    loss_value = loss.to(kFloat64).item<double>();
    if (step == 0) *initial_loss = loss_value;
  }
  for (std::size_t k = 0; k < params.size(); ++k) {
    EXPECT_EQ(params[k].dtype(), dtype);
    EXPECT_EQ(params[k].grad().dtype(), dtype);
    EXPECT_EQ(adam.state(k).at("exp_avg_sq").dtype(), dtype);
  }
  return loss_value;
}

TEST(OptimHalf, BFloat16ModelTrainsWithAdam) {
  double initial32 = 0, initial16 = 0;
  const double final32 = train_regression(kFloat32, &initial32);
  const double final16 = train_regression(kBFloat16, &initial16);
  std::printf("regression loss: float32 %.4g -> %.4g, bfloat16 %.4g -> %.4g\n", initial32, final32,
              initial16, final16);
  EXPECT_LT(final16, 0.1 * initial16);
}

}  // namespace
}  // namespace leangrad
