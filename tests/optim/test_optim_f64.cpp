// The optimizers and clip_grad_norm_ on float64 parameters, alone and beside float32 ones in one
// optimizer, against PyTorch (tests/data/make_optim_f64.py): 10 steps of each optimizer with its
// options, the parameters after every step and the final states compared at a tolerance derived
// from the dtype's rounding (below); state dicts of float64 states; a failed mixed step changes
// nothing.
//
// Tolerance: one step computes each new parameter and state from the old ones in a few roundings
// of values no larger than the parameters', the gradients' (N(0, 1)) and the states' magnitudes:
// PyTorch and leangrad each round every operation to half an ulp, in a possibly different order
// (PyTorch's vectorised CPU kernels fuse some multiply-adds), so one step differs by at most a few
// ulps of that scale, and the difference of earlier steps is carried on, damped by the betas and
// the momentum, but not amplified (no cancellation divides it). After step s (1-based) we allow
// s * 16 ulps of max(1, the largest magnitude of the compared trajectory or state): 1e-13 for
// float64 here, a million times below the float32 result it would be if anything ran in float32.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/optim/optim.h>
#include "optim_test_util.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

constexpr int kNumParams = 3;
constexpr double kUlpsPerStep = 16.0;

const std::vector<test::ReferenceCase>& reference() {
  static const std::vector<test::ReferenceCase> cases = test::load_reference("optim_f64.json");
  return cases;
}

double epsilon_of(DType dtype) {
  return dtype == kFloat64 ? std::numeric_limits<double>::epsilon()
                           : static_cast<double>(std::numeric_limits<float>::epsilon());
}

double max_magnitude(const Tensor& t) {
  double m = 1.0;
  for (double v : test::to_vector(t))
    m = std::max(m, std::fabs(v));
  return m;
}

// The tolerance after `steps` steps for values of `expected`'s dtype and magnitude (see the top).
double tolerance(const Tensor& expected, std::int64_t steps) {
  return static_cast<double>(steps) * kUlpsPerStep * epsilon_of(expected.dtype()) *
         max_magnitude(expected);
}

TEST(OptimFloat64, TrajectoriesAndStatesMatchPyTorch) {
  int checked = 0;
  int mixed = 0;
  for (const test::ReferenceCase& c : reference()) {
    if (!c.params.contains("optimizer")) continue;
    SCOPED_TRACE(c.name);
    std::vector<Tensor> params;
    for (int k = 0; k < kNumParams; ++k)
      params.push_back(c.at("param" + std::to_string(k)).clone().requires_grad_(true));
    ASSERT_EQ(params[1].dtype(), kFloat64);
    mixed += params[0].dtype() == kFloat32 ? 1 : 0;
    std::unique_ptr<optim::Optimizer> opt = test::make_optimizer(c.params, params);
    ASSERT_NE(opt, nullptr);
    const std::int64_t steps = c.at("traj0").size(0);
    for (std::int64_t s = 0; s < steps; ++s) {
      for (int k = 0; k < kNumParams; ++k)
        params[k].set_grad(c.at("grad" + std::to_string(k)).select(0, s).clone());
      opt->step();
      for (int k = 0; k < kNumParams; ++k) {
        SCOPED_TRACE("step " + std::to_string(s + 1) + ", param " + std::to_string(k));
        const Tensor traj = c.at("traj" + std::to_string(k));
        ASSERT_EQ(params[k].dtype(), traj.dtype());
        ASSERT_TRUE(test::all_close(params[k].detach(), test::to_vector(traj.select(0, s)), 0.0,
                                    tolerance(traj, s + 1)));
      }
    }
    // Every state PyTorch has, in the parameter's dtype, and no other.
    for (int k = 0; k < kNumParams; ++k) {
      const optim::ParamState state = opt->state(static_cast<std::size_t>(k));
      EXPECT_EQ(state.step, steps);
      std::size_t expected_states = 0;
      for (const auto& [name, expected] : c.tensors) {
        const std::string prefix = "state" + std::to_string(k) + "_";
        if (name.rfind(prefix, 0) != 0) continue;
        ++expected_states;
        const std::string key = name.substr(prefix.size());
        SCOPED_TRACE("param " + std::to_string(k) + " state " + key);
        ASSERT_TRUE(state.contains(key));
        EXPECT_EQ(state.at(key).dtype(), params[k].dtype());
        EXPECT_TRUE(test::all_close(state.at(key), test::to_vector(expected), 0.0,
                                    tolerance(expected, steps)));
      }
      EXPECT_EQ(state.tensors.size(), expected_states) << "param " << k;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 12);
  EXPECT_EQ(mixed, 3);
}

// The norm is float64 when any gradient is (PyTorch's promotion). Its error: each |g|^p is rounded
// once and summed in double, PyTorch sums per tensor then takes the norm of the norms, so a few
// ulps of the norm; a clipped gradient adds the factor's and the product's roundings, a few ulps
// of the gradient. With a float32 gradient among them, both the norm of the float32 gradients
// (a float32 value, which PyTorch also sums in float32) and so the factor of every gradient are
// float32-accurate only: float32 ulps then.
TEST(OptimFloat64, ClipGradNormMatchesPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& c : reference()) {
    if (!c.params.contains("max_norm")) continue;
    SCOPED_TRACE(c.name);
    const nlohmann::json& norm_json = c.params.at("norm_type");
    const double norm_type =
        norm_json.is_string() ? std::numeric_limits<double>::infinity() : norm_json.get<double>();
    std::vector<Tensor> params;
    for (int k = 0; k < kNumParams; ++k) {
      const Tensor g = c.at("grad" + std::to_string(k));
      Tensor p = zeros(g.shape(), g.dtype()).requires_grad_(true);
      p.set_grad(g.clone());
      params.push_back(p);
    }
    const bool mixed = params[0].dtype() == kFloat32;
    const double ulp = epsilon_of(mixed ? kFloat32 : kFloat64);
    const Tensor total = optim::clip_grad_norm_(params, c.params.at("max_norm"), norm_type);
    const Tensor expected_total = c.at("total_norm");
    EXPECT_EQ(total.dtype(), kFloat64);
    EXPECT_TRUE(test::all_close(total.reshape({1}), test::to_vector(expected_total), 0.0,
                                kUlpsPerStep * ulp * max_magnitude(expected_total)));
    for (int k = 0; k < kNumParams; ++k) {
      const Tensor expected = c.at("clipped" + std::to_string(k));
      EXPECT_EQ(params[k].grad().dtype(), expected.dtype());
      EXPECT_TRUE(test::all_close(params[k].grad(), test::to_vector(expected), 0.0,
                                  kUlpsPerStep * ulp * max_magnitude(expected)))
          << "gradient " << k;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 6);
}

// The same mixed list stepped as one optimizer and as two (one per dtype) gives the same bits:
// the float32 parameters' update does not change when float64 ones join the optimizer.
TEST(OptimFloat64, MixedOptimizerEqualsOnePerDtype) {
  manual_seed(3);
  const Tensor a0 = randn({7, 3});
  const Tensor b0 = randn({11}, kFloat64);
  Tensor a = a0.clone().requires_grad_(true);
  Tensor b = b0.clone().requires_grad_(true);
  Tensor a_alone = a0.clone().requires_grad_(true);
  Tensor b_alone = b0.clone().requires_grad_(true);
  const auto options = optim::AdamWOptions(0.01).amsgrad(true);
  optim::AdamW mixed({a, b}, options);
  optim::AdamW only_a({a_alone}, options);
  optim::AdamW only_b({b_alone}, options);
  for (int step = 0; step < 4; ++step) {
    const Tensor ga = randn({7, 3});
    const Tensor gb = randn({11}, kFloat64);
    a.set_grad(ga.clone());
    b.set_grad(gb.clone());
    a_alone.set_grad(ga.clone());
    b_alone.set_grad(gb.clone());
    mixed.step();
    only_a.step();
    only_b.step();
  }
  EXPECT_TRUE(test::bitwise_equal(a.detach(), a_alone.detach()));
  EXPECT_TRUE(test::bitwise_equal(b.detach(), b_alone.detach()));
  EXPECT_TRUE(test::bitwise_equal(mixed.state(1).at("max_exp_avg_sq"),
                                  only_b.state(0).at("max_exp_avg_sq")));
}

// state_dict() gives float64 states for float64 parameters (float32 for float32 ones), and a fresh
// optimizer that loads it continues bit for bit as the one that saved it. A float32 state loaded
// for a float64 parameter is converted to float64, as PyTorch's load_state_dict casts floating
// states to their parameter's dtype.
TEST(OptimFloat64, StateDictRoundTripContinuesBitExactly) {
  manual_seed(4);
  auto make = [](const std::vector<Tensor>& p) {
    return optim::SGD(std::vector<optim::ParamGroup>{optim::ParamGroup({p[0], p[1]}),
                                                     optim::ParamGroup({p[2]}, 0.02)},
                      optim::SGDOptions(0.05).momentum(0.9).nesterov(true));
  };
  const std::vector<Tensor> init = {randn({5}, kFloat64), randn({2, 3}), randn({4}, kFloat64)};
  std::vector<Tensor> p;
  std::vector<Tensor> q;
  for (const Tensor& t : init) {
    p.push_back(t.clone().requires_grad_(true));
    q.push_back(t.clone().requires_grad_(true));
  }
  optim::SGD saver = make(p);
  std::vector<std::vector<Tensor>> grads;
  for (int step = 0; step < 6; ++step)
    grads.push_back({randn({5}, kFloat64), randn({2, 3}), randn({4}, kFloat64)});
  for (int step = 0; step < 3; ++step) {
    for (std::size_t k = 0; k < p.size(); ++k)
      p[k].set_grad(grads[static_cast<std::size_t>(step)][k].clone());
    saver.step();
  }
  const NamedTensors saved = saver.state_dict();
  for (const auto& [key, value] : saved) {
    if (key.find("momentum_buffer") == std::string::npos) continue;
    EXPECT_EQ(value.dtype(), key.rfind("state.1.", 0) == 0 ? kFloat32 : kFloat64) << key;
  }
  // q is where p was after three steps, with a new optimizer given the saved state.
  {
    NoGradGuard no_grad;
    for (std::size_t k = 0; k < q.size(); ++k)
      q[k].copy_(p[k].detach());
  }
  optim::SGD loader = make(q);
  loader.load_state_dict(saved);
  for (int step = 3; step < 6; ++step) {
    for (std::size_t k = 0; k < p.size(); ++k) {
      p[k].set_grad(grads[static_cast<std::size_t>(step)][k].clone());
      q[k].set_grad(grads[static_cast<std::size_t>(step)][k].clone());
    }
    saver.step();
    loader.step();
  }
  for (std::size_t k = 0; k < p.size(); ++k)
    EXPECT_TRUE(test::bitwise_equal(q[k].detach(), p[k].detach())) << "param " << k;

  NamedTensors as_float32 = saved;
  for (auto& [key, value] : as_float32)
    if (key == "state.0.momentum_buffer") value = value.to(kFloat32);
  loader.load_state_dict(as_float32);
  EXPECT_EQ(loader.state(0).at("momentum_buffer").dtype(), kFloat64);
  EXPECT_TRUE(test::all_close(loader.state(0).at("momentum_buffer"),
                              test::to_vector(saved[1].second.to(kFloat32)), 0.0, 0.0));
}

// A step whose float64 parameter no longer fits its state (set_data: another shape, or, as
// Module::to(kFloat64) does, another dtype) throws before anything changes, also for the float32
// parameters the same optimizer would have updated first.
TEST(OptimFloat64, AMixedStepThatFailsChangesNothing) {
  manual_seed(6);
  Tensor a = randn({3}).requires_grad_(true);
  Tensor b = randn({4}, kFloat64).requires_grad_(true);
  optim::Adam adam({a, b}, optim::AdamOptions(0.1));
  a.set_grad(ones({3}));
  b.set_grad(ones({4}, kFloat64));
  adam.step();
  const Tensor a_before = a.detach().clone();
  const Tensor exp_avg_before = adam.state(0).at("exp_avg").clone();
  {
    NoGradGuard no_grad;
    b.set_data(randn({5}, kFloat64));
  }
  b.set_grad(ones({5}, kFloat64));
  EXPECT_THROW(adam.step(), ShapeError);
  {
    NoGradGuard no_grad;
    b.set_data(randn({4}, kFloat64));
    a.set_data(a.detach().to(kFloat64));  // a's state is still float32
  }
  a.set_grad(ones({3}, kFloat64));
  b.set_grad(ones({4}, kFloat64));
  try {
    adam.step();
    ADD_FAILURE() << "no error";
  } catch (const DTypeError& e) {
    EXPECT_CONTAINS(e.what(), "exp_avg");
    EXPECT_CONTAINS(e.what(), "float32");
    EXPECT_CONTAINS(e.what(), "float64");
  }
  EXPECT_EQ(adam.state(0).step, 1);
  EXPECT_EQ(adam.state(1).step, 1);
  EXPECT_TRUE(test::all_close(a.detach(), test::to_vector(a_before), 0.0, 0.0));
  EXPECT_TRUE(test::bitwise_equal(adam.state(0).at("exp_avg"), exp_avg_before));
}

}  // namespace
}  // namespace leangrad
