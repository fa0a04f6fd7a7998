// The optimizer base (optim/optimizer.h): zero_grad, skipped parameters, state dicts, option
// defaults and errors, and the gradient-accumulation pattern of docs/optimizers.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <leangrad/autograd/functions.h>
#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/generator.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/optim/optim.h>
#include "optim_test_util.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

TEST(OptimizerBase, ZeroGradDropsOrZeroes) {
  Tensor p = ones({2}).requires_grad_(true);
  optim::SGD sgd({p}, optim::SGDOptions(0.1));
  p.set_grad(full({2}, 3.0));
  sgd.zero_grad(/*set_to_none=*/false);
  ASSERT_TRUE(p.grad().defined());
  EXPECT_TRUE(test::all_close(p.grad(), {0, 0}));
  sgd.zero_grad();
  EXPECT_FALSE(p.grad().defined());
}

TEST(OptimizerBase, SkipsParametersWithoutGradient) {
  Tensor a = ones({3}).requires_grad_(true);
  Tensor b = ones({3}).requires_grad_(true);
  optim::Adam adam({a, b}, optim::AdamOptions(0.1));
  a.set_grad(ones({3}));
  adam.step();
  EXPECT_TRUE(test::all_close(a.detach(), {0.9, 0.9, 0.9}, 1e-6, 1e-6));
  EXPECT_TRUE(test::all_close(b.detach(), {1, 1, 1}, 0, 0));
  EXPECT_EQ(adam.state(0).step, 1);
  EXPECT_TRUE(adam.state(1).empty());
}

TEST(OptimizerBase, OptionDefaultsArePyTorchs) {
  EXPECT_EQ(optim::AdamOptions().lr(), 1e-3);
  EXPECT_EQ(std::get<0>(optim::AdamOptions().betas()), 0.9);
  EXPECT_EQ(std::get<1>(optim::AdamOptions().betas()), 0.999);
  EXPECT_EQ(optim::AdamOptions().eps(), 1e-8);
  EXPECT_EQ(optim::AdamOptions().weight_decay(), 0.0);
  EXPECT_EQ(optim::AdamWOptions().weight_decay(), 1e-2);
  EXPECT_EQ(optim::RAdamOptions().lr(), 1e-3);
  EXPECT_EQ(optim::Adam8bitOptions().min_8bit_size(), 4096);
  EXPECT_EQ(optim::SGDOptions(0.1).momentum(), 0.0);
  EXPECT_FALSE(optim::SGDOptions(0.1).nesterov());
}

TEST(OptimizerBase, RejectsBadArguments) {
  Tensor p = ones({2}).requires_grad_(true);
  EXPECT_THROW(optim::SGD({p}, optim::SGDOptions(0.1).nesterov(true)), Error);
  EXPECT_THROW(optim::Adam({p}, optim::AdamOptions().betas({1.0, 0.9})), Error);
  EXPECT_THROW(optim::Adam({ones({2}, kInt32)}), DTypeError);  // float16 is taken (test_optim_half)
  EXPECT_THROW(optim::Adam8bit({ones({2}, kFloat64)}), DTypeError);
  EXPECT_THROW(optim::Adam8bit({ones({2}, kBFloat16)}), DTypeError);
  EXPECT_THROW(optim::Adam({ones({2, 3}).transpose(0, 1)}), Error);
  optim::Adam adam({p});
  EXPECT_THROW(adam.load_state_dict({{"bogus", ones({1})}}), Error);
  EXPECT_THROW(adam.load_state_dict({{"state.5.exp_avg", ones({2})}}), Error);
  EXPECT_THROW(adam.load_state_dict({{"state.0.exp_avg", ones({3})}}), Error);
}

// A parameter given twice would be updated twice per step: refused when the optimizer is built.
TEST(OptimizerBase, RejectsTheSameParameterTwice) {
  Tensor p = ones({2}).requires_grad_(true);
  Tensor q = ones({2}).requires_grad_(true);
  EXPECT_THROW(optim::SGD({p, q, p}, optim::SGDOptions(0.1)), Error);
  EXPECT_THROW(
      optim::Adam(std::vector<optim::ParamGroup>{optim::ParamGroup({p}), optim::ParamGroup({p})}),
      Error);
}

// Tensor::set_data (what Module::to uses) can give a parameter another size or a strided layout
// after the optimizer sized its state. The step then refuses with a clear error (it used to
// write past exp_avg, or update the wrong elements), and the failed step changes nothing: the
// step count, the state and the parameter are as before.
TEST(OptimizerBase, AStepWhoseStateNoLongerFitsFailsAndChangesNothing) {
  Tensor p = randn({4}).requires_grad_(true);
  optim::Adam adam({p});
  p.set_grad(ones({4}));
  adam.step();
  const Tensor exp_avg_before = adam.state(0).at("exp_avg").clone();
  {
    NoGradGuard no_grad;
    p.set_data(randn({8}));
  }
  p.set_grad(ones({8}));
  const Tensor p_before = p.detach().clone();
  EXPECT_THROW(adam.step(), ShapeError);
  EXPECT_EQ(adam.state(0).step, 1);
  EXPECT_TRUE(test::bitwise_equal(adam.state(0).at("exp_avg"), exp_avg_before));
  EXPECT_TRUE(test::bitwise_equal(p.detach(), p_before));

  Tensor m = randn({2, 2}).requires_grad_(true);
  optim::SGD sgd({m}, optim::SGDOptions(0.1));
  {
    NoGradGuard no_grad;
    m.set_data(randn({2, 2}).transpose(0, 1));  // same shape, not contiguous
  }
  m.set_grad(ones({2, 2}));
  EXPECT_THROW(sgd.step(), Error);
  EXPECT_EQ(sgd.state(0).step, 0);
}

// A step that throws half-way leaves the step counts where they were, so retrying it gives
// exactly the update of a step that never failed (it used to count the failed step: the retry
// ran as step 2, with step 2's bias corrections).
TEST(OptimizerBase, AFailedStepIsNotCounted) {
  manual_seed(5);
  Tensor a = randn({3}).requires_grad_(true);
  Tensor b = randn({3}).requires_grad_(true);
  Tensor a_ref = a.detach().clone().requires_grad_(true);
  optim::Adam adam({a, b}, optim::AdamOptions(0.1));
  optim::Adam reference({a_ref}, optim::AdamOptions(0.1));
  a.set_grad(ones({3}));
  b.set_grad(ones({3}));  // a valid gradient ...
  {
    NoGradGuard no_grad;
    b.set_data(randn({3, 1}));  // ... for a parameter whose shape then changes
  }
  EXPECT_THROW(adam.step(), ShapeError);
  EXPECT_EQ(adam.state(0).step, 0);
  b.set_grad(Tensor());  // the retry leaves b alone
  adam.step();
  a_ref.set_grad(ones({3}));
  reference.step();
  EXPECT_EQ(adam.state(0).step, 1);
  EXPECT_TRUE(test::bitwise_equal(a.detach(), a_ref.detach()));
}

// A state dict is data from a file: its numbers are checked like the constructor's options, and
// a failed load leaves the optimizer as it was.
TEST(OptimizerBase, LoadStateDictRefusesHostileNumbers) {
  Tensor p = ones({2}).requires_grad_(true);
  optim::Adam adam({p}, optim::AdamOptions(0.1));
  const auto nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(adam.load_state_dict({{"state.0.step", full({}, nan, kFloat64)}}), Error);
  EXPECT_THROW(adam.load_state_dict({{"state.0.step", full({}, -3.0, kInt64)}}), Error);
  EXPECT_THROW(adam.load_state_dict({{"state.0.step", full({}, 2.5, kFloat64)}}), Error);
  EXPECT_THROW(adam.load_state_dict({{"state.0.step", full({}, 1e300, kFloat64)}}), Error);
  EXPECT_THROW(adam.load_state_dict({{"state.0.step", ones({2}, kInt64)}}), Error);
  EXPECT_THROW(adam.load_state_dict({{"param_groups.0.lr", full({}, -1.0, kFloat64)}}), Error);
  EXPECT_THROW(adam.load_state_dict({{"param_groups.0.lr", full({}, nan, kFloat64)}}), Error);
  EXPECT_THROW(adam.load_state_dict({{"param_groups.0.weight_decay", full({}, -0.5, kFloat64)}}),
               Error);
  EXPECT_THROW(adam.load_state_dict({{"state.99999999999999999999.step", ones({})}}), Error);
  EXPECT_THROW(adam.load_state_dict({{"state.0.exp_avg", Tensor()}}), Error);
  // A valid entry followed by a bad one: nothing of the first is kept.
  EXPECT_THROW(adam.load_state_dict({{"param_groups.0.lr", full({}, 0.5, kFloat64)},
                                     {"state.0.step", full({}, nan, kFloat64)}}),
               Error);
  EXPECT_EQ(*adam.param_groups()[0].lr, 0.1);
  EXPECT_TRUE(adam.state(0).empty());
}

// `state` without the entries named in `drop`.
NamedTensors without(const NamedTensors& state, const std::vector<std::string>& drop) {
  NamedTensors out;
  for (const auto& [name, t] : state)
    if (std::find(drop.begin(), drop.end(), name) == drop.end()) out.emplace_back(name, t);
  return out;
}

// A state dict that lacks a tensor its optimizer updates (or the step its bias corrections use)
// is refused whole, as PyTorch's next step fails with a KeyError. Loaded, every later step read
// the missing moment as zeros and never stored it: Adam without exp_avg_sq took each step with
// (1 - beta2) g^2 of that gradient alone as its second moment, steps up to 30 times too large.
TEST(OptimizerBase, LoadStateDictRefusesAnIncompleteState) {
  manual_seed(11);
  auto stepped = [](optim::Optimizer& opt, const std::vector<Tensor>& params) {
    for (int s = 0; s < 2; ++s) {
      for (const Tensor& p : params)
        p.set_grad(randn(p.shape()));
      opt.step();
    }
    return opt.state_dict();
  };
  struct Case {
    std::string name;
    std::function<std::unique_ptr<optim::Optimizer>(const std::vector<Tensor>&)> make;
    std::vector<std::string> required;
  };
  const std::vector<Case> cases = {
      {"adam",
       [](const std::vector<Tensor>& p) {
         return std::make_unique<optim::Adam>(p, optim::AdamOptions(0.1).amsgrad(true));
       },
       {"state.0.step", "state.0.exp_avg", "state.0.exp_avg_sq"}},
      {"radam",
       [](const std::vector<Tensor>& p) {
         return std::make_unique<optim::RAdam>(p, optim::RAdamOptions(0.1));
       },
       {"state.0.step", "state.0.exp_avg", "state.0.exp_avg_sq"}},
      {"adam8bit",
       [](const std::vector<Tensor>& p) {
         return std::make_unique<optim::Adam8bit>(p, optim::Adam8bitOptions().min_8bit_size(256));
       },
       {"state.0.step", "state.0.state1", "state.0.state2", "state.0.absmax1", "state.0.absmax2"}},
      {"sgd",
       [](const std::vector<Tensor>& p) {
         return std::make_unique<optim::SGD>(p, optim::SGDOptions(0.1).momentum(0.9));
       },
       {"state.0.step"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::vector<Tensor> a = {randn({300}).requires_grad_(true)};
    std::unique_ptr<optim::Optimizer> opt_a = c.make(a);
    const NamedTensors saved = stepped(*opt_a, a);
    for (const std::string& key : c.required) {
      SCOPED_TRACE("without " + key);
      const std::vector<Tensor> b = {a[0].detach().clone().requires_grad_(true)};
      std::unique_ptr<optim::Optimizer> opt_b = c.make(b);
      try {
        opt_b->load_state_dict(without(saved, {key}));
        ADD_FAILURE() << "loaded";
      } catch (const Error& e) {
        EXPECT_CONTAINS(e.what(), key);
      }
      EXPECT_TRUE(opt_b->state(0).empty());
    }
  }
  // What the next step makes afresh may be missing, as in PyTorch: SGD's momentum_buffer (the
  // next step starts it as a copy of the gradient) and amsgrad's running maximum (which restarts
  // at exp_avg_sq).
  Tensor p = ones({2}).requires_grad_(true);
  optim::SGD sgd({p}, optim::SGDOptions(0.5).momentum(0.9));
  sgd.load_state_dict({{"state.0.step", full({}, 4.0, kInt64)}});
  p.set_grad(full({2}, 2.0));
  sgd.step();
  EXPECT_TRUE(test::all_close(p.detach(), {0.0, 0.0}));  // 1 - 0.5 * 2: the buffer is g
  EXPECT_TRUE(test::all_close(sgd.state(0).at("momentum_buffer"), {2.0, 2.0}));
  const std::vector<Tensor> a = {randn({3}).requires_grad_(true)};
  optim::Adam plain(a, optim::AdamOptions(0.1));
  const NamedTensors saved = stepped(plain, a);
  const std::vector<Tensor> b = {a[0].detach().clone().requires_grad_(true)};
  optim::Adam amsgrad(b, optim::AdamOptions(0.1).amsgrad(true));
  amsgrad.load_state_dict(saved);
  EXPECT_EQ(amsgrad.state(0).step, 2);
}

// Steps `opt_a` and `opt_b` with the same gradients; every parameter and state stays bitwise equal.
void expect_same_future(optim::Optimizer& opt_a, const std::vector<Tensor>& a,
                        optim::Optimizer& opt_b, const std::vector<Tensor>& b, int steps) {
  for (int s = 0; s < steps; ++s) {
    for (std::size_t k = 0; k < a.size(); ++k) {
      const Tensor g = randn(a[k].shape());
      a[k].set_grad(g);
      b[k].set_grad(g.clone());
    }
    opt_a.step();
    opt_b.step();
  }
  for (std::size_t k = 0; k < a.size(); ++k)
    EXPECT_TRUE(test::bitwise_equal(a[k], b[k])) << "parameter " << k;
  const NamedTensors sa = opt_a.state_dict();
  const NamedTensors sb = opt_b.state_dict();
  ASSERT_EQ(sa.size(), sb.size());
  for (std::size_t i = 0; i < sa.size(); ++i) {
    EXPECT_EQ(sa[i].first, sb[i].first);
    EXPECT_TRUE(test::bitwise_equal(sa[i].second, sb[i].second)) << sa[i].first;
  }
}

TEST(OptimizerBase, StateDictRoundTripContinuesBitExactly) {
  manual_seed(3);
  std::vector<Tensor> a = {randn({5, 4}).requires_grad_(true), randn({4}).requires_grad_(true)};
  optim::Adam opt_a(a, optim::AdamOptions(0.01).amsgrad(true).weight_decay(0.1));
  for (int s = 0; s < 3; ++s) {
    for (Tensor& p : a)
      p.set_grad(randn(p.shape()));
    opt_a.step();
  }
  std::vector<Tensor> b = {a[0].detach().clone(), a[1].detach().clone()};
  optim::Adam opt_b(b, optim::AdamOptions(0.5).amsgrad(true).weight_decay(0.1));
  NamedTensors saved;
  for (const auto& [name, t] : opt_a.state_dict())
    saved.emplace_back(name, t.clone());
  opt_b.load_state_dict(saved);
  EXPECT_EQ(*opt_b.param_groups()[0].lr, 0.01);  // the group's lr comes back too
  EXPECT_EQ(opt_b.state(0).step, 3);
  expect_same_future(opt_a, a, opt_b, b, 3);
}

// Gradient accumulation: 4 micro-batches with loss / 4 and no zero_grad in between give the
// gradient (and the step) of the whole batch.
TEST(OptimizerBase, GradientAccumulationMatchesFullBatch) {
  manual_seed(5);
  const Tensor x = randn({16, 3});
  const Tensor y = randn({16, 1});
  const Tensor w0 = randn({3, 1});
  Tensor w_full = w0.clone().requires_grad_(true);
  Tensor w_acc = w0.clone().requires_grad_(true);
  optim::SGD full_opt({w_full}, optim::SGDOptions(0.1).momentum(0.9));
  optim::SGD acc_opt({w_acc}, optim::SGDOptions(0.1).momentum(0.9));
  for (int step = 0; step < 3; ++step) {
    full_opt.zero_grad();
    ((matmul(x, w_full) - y).pow(2.0).mean()).backward();
    full_opt.step();
    acc_opt.zero_grad();
    constexpr int kMicroBatches = 4;
    for (int m = 0; m < kMicroBatches; ++m) {
      const Tensor xm = x.slice(0, 4 * m, 4 * m + 4);
      const Tensor ym = y.slice(0, 4 * m, 4 * m + 4);
      ((matmul(xm, w_acc) - ym).pow(2.0).mean() / kMicroBatches).backward();
    }
    acc_opt.step();
  }
  EXPECT_TRUE(test::all_close(w_acc.detach(), test::to_vector(w_full), 1e-5, 1e-6));
}

// add_param_group gives the optimizer that was built with both groups: same steps, same bits.
TEST(OptimizerBase, AddParamGroupMatchesBuildingWithBothGroups) {
  auto make_params = [] {
    return std::vector<Tensor>{full({4}, 0.5).requires_grad_(true),
                               full({3}, -0.25).requires_grad_(true)};
  };
  std::vector<Tensor> built = make_params();
  std::vector<Tensor> added = make_params();
  optim::Adam both({optim::ParamGroup({built[0]}), optim::ParamGroup({built[1]}, 0.05, 0.1)},
                   optim::AdamOptions(0.01));
  optim::Adam grown({added[0]}, optim::AdamOptions(0.01));
  grown.step();  // a step before the group exists: the new parameters start fresh
  both.step();   // (no gradients yet: neither moves)
  grown.add_param_group(optim::ParamGroup({added[1]}, 0.05, 0.1));
  ASSERT_EQ(grown.num_params(), 2u);
  ASSERT_EQ(grown.param_groups().size(), 2u);
  for (int step = 0; step < 5; ++step) {
    for (std::size_t k = 0; k < 2; ++k) {
      const Tensor g = full(built[k].shape(), 0.1 * (step + 1) * (k == 0 ? 1.0 : -2.0));
      built[k].set_grad(g.clone());
      added[k].set_grad(g.clone());
    }
    both.step();
    grown.step();
  }
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_TRUE(built[k].detach().equal(added[k].detach())) << "parameter " << k;
    EXPECT_EQ(both.state(k).step, grown.state(k).step);
  }
  EXPECT_EQ(grown.state_dict().size(), both.state_dict().size());
}

TEST(OptimizerBase, AddParamGroupRefusesAndChangesNothing) {
  Tensor a = ones({2}).requires_grad_(true);
  optim::SGD sgd({a}, optim::SGDOptions(0.1));
  EXPECT_THROW(sgd.add_param_group(optim::ParamGroup({a})), Error);  // already there
  EXPECT_THROW(sgd.add_param_group(optim::ParamGroup({})), Error);
  EXPECT_THROW(sgd.add_param_group(optim::ParamGroup({ones({2}, kInt64)})), Error);
  EXPECT_THROW(sgd.add_param_group(optim::ParamGroup({ones({2}).requires_grad_(true)}, -1.0)),
               Error);
  EXPECT_EQ(sgd.num_params(), 1u);
  EXPECT_EQ(sgd.param_groups().size(), 1u);
}

// LibTorch's `group.options().lr(x)`: the same as building the group with lr x.
TEST(OptimizerBase, GroupOptionsSetTheLearningRate) {
  Tensor a = ones({3}).requires_grad_(true);
  Tensor b = ones({3}).requires_grad_(true);
  optim::SGD set_later({a}, optim::SGDOptions(0.1));
  optim::SGD set_first({optim::ParamGroup({b}, 0.02, 0.001)}, optim::SGDOptions(0.1));
  set_later.param_groups()[0].options().lr(0.02).weight_decay(0.001);
  EXPECT_EQ(set_later.param_groups()[0].options().lr(), 0.02);
  EXPECT_EQ(set_later.param_groups()[0].options().weight_decay(), 0.001);
  a.set_grad(full({3}, 2.0));
  b.set_grad(full({3}, 2.0));
  set_later.step();
  set_first.step();
  EXPECT_TRUE(a.detach().equal(b.detach()));
  // The group's values, not the defaults': 1 - 0.02 (2 + 0.001 * 1), within float32 rounding.
  EXPECT_TRUE(test::all_close(a.detach(), {0.95998, 0.95998, 0.95998}, 1e-6, 0));
  EXPECT_THROW(set_later.param_groups()[0].options().lr(-0.5), Error);
  // LibTorch's uncast OptimizerOptions spellings.
  set_later.param_groups()[0].options().set_lr(0.25);
  EXPECT_EQ(set_later.param_groups()[0].options().get_lr(), 0.25);
  EXPECT_EQ(*set_later.param_groups()[0].lr, 0.25);
}

}  // namespace
}  // namespace leangrad
