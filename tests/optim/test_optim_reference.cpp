// Optimizers, clip_grad_norm_ and schedulers against PyTorch (tests/data/make_optim.py): each
// optimizer case replays 20 steps with given gradients (some parameters without a gradient on
// some steps) and compares the parameters after every step at float32 tolerance.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <leangrad/kernels/creation.h>
#include <leangrad/optim/optim.h>
#include "optim_test_util.h"
#include "testing/reference_data.h"
#include "testing/tensor_testing.h"

namespace leangrad {
namespace {

constexpr int kNumParams = 3;

const std::vector<test::ReferenceCase>& reference() {
  static const std::vector<test::ReferenceCase> cases = test::load_reference("optim.json");
  return cases;
}

TEST(OptimReference, TrajectoriesMatchPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& c : reference()) {
    if (!c.params.contains("optimizer")) continue;
    SCOPED_TRACE(c.name);
    std::vector<Tensor> params;
    for (int k = 0; k < kNumParams; ++k)
      params.push_back(c.at("param" + std::to_string(k)).clone().requires_grad_(true));
    std::unique_ptr<optim::Optimizer> opt = test::make_optimizer(c.params, params);
    ASSERT_NE(opt, nullptr);
    const std::int64_t steps = c.at("traj0").size(0);
    for (std::int64_t s = 0; s < steps; ++s) {
      for (int k = 0; k < kNumParams; ++k) {
        const std::string i = std::to_string(k);
        const bool has_grad = c.at("has_grad" + i).select(0, s).item<std::int64_t>() != 0;
        params[k].set_grad(has_grad ? c.at("grad" + i).select(0, s).clone() : Tensor());
      }
      opt->step();
      for (int k = 0; k < kNumParams; ++k) {
        SCOPED_TRACE("step " + std::to_string(s) + ", param " + std::to_string(k));
        const Tensor expected = c.at("traj" + std::to_string(k)).select(0, s);
        ASSERT_TRUE(test::all_close(params[k].detach(), test::to_vector(expected), 1e-5, 1e-6));
      }
    }
    ++checked;
  }
  EXPECT_EQ(checked, 18);
}

TEST(ClipGradNorm, MatchesPyTorch) {
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
      Tensor p = zeros(g.shape()).requires_grad_(true);
      p.set_grad(g.clone());
      params.push_back(p);
    }
    const Tensor total = optim::clip_grad_norm_(params, c.params.at("max_norm"), norm_type);
    EXPECT_TRUE(
        test::all_close(total.reshape({1}), test::to_vector(c.at("total_norm")), 1e-6, 1e-6));
    for (int k = 0; k < kNumParams; ++k)
      EXPECT_TRUE(test::all_close(
          params[k].grad(), test::to_vector(c.at("clipped" + std::to_string(k))), 1e-6, 1e-7));
    ++checked;
  }
  EXPECT_EQ(checked, 14);
}

TEST(ClipGradNorm, SkipsParametersWithoutGradient) {
  Tensor a = ones({3}).requires_grad_(true);
  Tensor b = ones({2}).requires_grad_(true);
  a.set_grad(full({3}, 4.0));  // norm sqrt(48)
  const Tensor total = optim::clip_grad_norm_({a, b}, 1e9);
  EXPECT_NEAR(total.item<float>(), std::sqrt(48.0), 1e-5);
  EXPECT_FALSE(b.grad().defined());
  EXPECT_TRUE(test::all_close(a.grad(), {4, 4, 4}));
}

TEST(Schedulers, MatchPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& c : reference()) {
    if (!c.params.contains("base_lr")) continue;
    SCOPED_TRACE(c.name);
    Tensor p = zeros({1}).requires_grad_(true);
    optim::SGD sgd({p}, optim::SGDOptions(c.params.at("base_lr")));
    std::unique_ptr<optim::LRScheduler> sched;
    if (c.name == "step_lr") {
      sched = std::make_unique<optim::StepLR>(sgd, c.params.at("step_size"), c.params.at("gamma"));
    } else if (c.name == "one_cycle") {
      sched = std::make_unique<optim::OneCycleLR>(
          sgd, c.params.at("max_lr"), c.params.at("total_steps"), c.params.at("pct_start"),
          c.params.at("div_factor"), c.params.at("final_div_factor"));
    } else if (c.name == "cosine_with_warmup") {
      sched = std::make_unique<optim::CosineWithWarmupLR>(
          sgd, c.params.at("warmup_steps"), c.params.at("total_steps"), c.params.at("eta_min"));
    } else {
      sched = std::make_unique<optim::CosineAnnealingLR>(sgd, c.params.at("t_max"),
                                                         c.params.at("eta_min"));
    }
    const std::vector<double> expected = test::to_vector(c.at("lr"));
    for (std::size_t s = 0; s < expected.size(); ++s) {
      EXPECT_NEAR(*sgd.param_groups()[0].lr, expected[s], 1e-12) << "epoch " << s;
      sched->step();
    }
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

// The optimizer's state holds the scheduled lrs, so a scheduler built after loading it took them
// as its initial lrs and started over at epoch 0; the scheduler's own state dict restores both.
// PyTorch's lrs come from its recursive forms over 30 epochs (a few double roundings each, under
// 1e-14 relative to the lr), hence 1e-13 relative.
TEST(Schedulers, ResumeFromStateDictsMatchesPyTorch) {
  int checked = 0;
  for (const test::ReferenceCase& c : reference()) {
    if (!c.params.contains("resume_epoch")) continue;
    SCOPED_TRACE(c.name);
    const std::vector<double> group_lrs = c.params.at("group_lrs");
    auto build = [&](std::unique_ptr<optim::SGD>& sgd, std::unique_ptr<optim::LRScheduler>& sched) {
      std::vector<optim::ParamGroup> groups;
      for (double lr : group_lrs)
        groups.emplace_back(std::vector<Tensor>{zeros({1}).requires_grad_(true)}, lr);
      sgd = std::make_unique<optim::SGD>(groups, optim::SGDOptions(group_lrs[0]));
      if (c.params.at("scheduler") == "step_lr") {
        sched =
            std::make_unique<optim::StepLR>(*sgd, c.params.at("step_size"), c.params.at("gamma"));
      } else {
        sched = std::make_unique<optim::CosineAnnealingLR>(*sgd, c.params.at("t_max"),
                                                           c.params.at("eta_min"));
      }
    };
    std::unique_ptr<optim::SGD> sgd;
    std::unique_ptr<optim::LRScheduler> sched;
    build(sgd, sched);
    const Tensor expected = c.at("lr");  // (epochs, groups)
    const std::int64_t resume_epoch = c.params.at("resume_epoch");
    for (std::int64_t epoch = 0; epoch < expected.size(0); ++epoch) {
      if (epoch == resume_epoch) {
        const NamedTensors saved_optimizer = sgd->state_dict();
        const NamedTensors saved_scheduler = sched->state_dict();
        build(sgd, sched);
        sgd->load_state_dict(saved_optimizer);
        sched->load_state_dict(saved_scheduler);
        EXPECT_EQ(sched->last_epoch(), resume_epoch);
      }
      const std::vector<double> lrs = test::to_vector(expected.select(0, epoch));
      for (std::size_t g = 0; g < lrs.size(); ++g)
        EXPECT_NEAR(*sgd->param_groups()[g].lr, lrs[g], 1e-13 * lrs[g])
            << "epoch " << epoch << ", group " << g;
      sched->step();
    }
    ++checked;
  }
  EXPECT_EQ(checked, 2);
}

TEST(Schedulers, LoadStateDictRefusesWhatDoesNotFit) {
  Tensor p = zeros({1}).requires_grad_(true);
  optim::SGD sgd({optim::ParamGroup({p}, 0.1), optim::ParamGroup({p.detach()}, 0.02)},
                 optim::SGDOptions(0.1));
  optim::OneCycleLR sched(sgd, 0.5, 10);
  sched.step();
  const NamedTensors saved = sched.state_dict();
  ASSERT_EQ(saved.size(), 2u);
  EXPECT_EQ(saved[0].first, "last_epoch");
  EXPECT_EQ(saved[0].second.dtype(), kInt64);
  EXPECT_EQ(saved[1].first, "base_lrs");
  EXPECT_EQ(saved[1].second.dtype(), kFloat64);
  const std::vector<double> lrs = sched.get_last_lr();
  auto with = [&](const std::string& key, const Tensor& value) {
    NamedTensors state = saved;
    for (auto& [name, t] : state)
      if (name == key) t = value;
    return state;
  };
  EXPECT_THROW(sched.load_state_dict({saved[0]}), Error);  // no base_lrs
  EXPECT_THROW(sched.load_state_dict(with("base_lrs", full({3}, 0.1, kFloat64))), Error);
  EXPECT_THROW(sched.load_state_dict(with("base_lrs", full({2}, -0.1, kFloat64))), Error);
  EXPECT_THROW(sched.load_state_dict(with("last_epoch", full({}, 11.0, kInt64))), Error);
  EXPECT_THROW(sched.load_state_dict(with("last_epoch", full({}, 2.5, kFloat64))), Error);
  NamedTensors unknown = saved;
  unknown.emplace_back("_step_count", full({}, 2.0, kInt64));
  EXPECT_THROW(sched.load_state_dict(unknown), Error);
  EXPECT_EQ(sched.last_epoch(), 1);  // each failed load changed nothing
  EXPECT_EQ(sched.get_last_lr(), lrs);
  sched.load_state_dict(with("last_epoch", full({}, 9.0, kInt64)));
  EXPECT_EQ(sched.last_epoch(), 9);
  EXPECT_DOUBLE_EQ(sched.get_last_lr()[1], 0.5 / 25 / 1e4);  // the schedule's last lr
}

TEST(Schedulers, LinearWarmupRampsThenHolds) {
  Tensor p = zeros({1}).requires_grad_(true);
  optim::SGD sgd({optim::ParamGroup({p}), optim::ParamGroup({p.detach()}, 0.5)},
                 optim::SGDOptions(0.1));
  optim::LinearWarmup warmup(sgd, 4);
  const double expected[] = {0.025, 0.05, 0.075, 0.1, 0.1, 0.1};
  for (double lr : expected) {
    EXPECT_NEAR(warmup.get_last_lr()[0], lr, 1e-15);
    EXPECT_NEAR(warmup.get_last_lr()[1], 5 * lr, 1e-15);
    warmup.step();
  }
}

}  // namespace
}  // namespace leangrad
