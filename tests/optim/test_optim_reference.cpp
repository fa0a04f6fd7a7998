// Optimizers, clip_grad_norm_ and schedulers against PyTorch (tests/data/make_optim.py): each
// optimizer case replays 20 steps with given gradients (some parameters without a gradient on
// some steps) and compares the parameters after every step at float32 tolerance.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <leangrad/core/creation.h>
#include <leangrad/core/host_sync.h>
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

// Two gradients, the second past the CPU kernel's first chunk of 16384, whose element 20000 is
// `planted`.
std::vector<Tensor> params_with_planted_gradient(float planted) {
  std::vector<Tensor> params = {zeros({3}).requires_grad_(true),
                                zeros({40000}).requires_grad_(true)};
  params[0].set_grad(tensor<float>({0.5f, -2.0f, 1.0f}));
  params[1].set_grad(full({40000}, 0.01));
  params[1].grad().select(0, 20000).fill_(planted);
  return params;
}

// error_if_nonfinite (LibTorch's fourth argument): a NaN or infinite total norm, from a NaN, an
// Inf, or finite gradients whose p-th powers overflow float32, throws an Error naming the op and
// the norm, for every norm type, and leaves every gradient bit for bit as it was (PyTorch 1.13
// raises before clip_coef, tests/data/make_misuse.py).
TEST(ClipGradNorm, ErrorIfNonfiniteRefusesANonFiniteNormAndChangesNothing) {
  const float inf = std::numeric_limits<float>::infinity();
  for (double norm_type : {2.0, 1.0, 3.0, static_cast<double>(inf)}) {
    for (float planted : {std::numeric_limits<float>::quiet_NaN(), inf, -inf, 3e38f}) {
      // |g| and max |g| stay finite: only the 2- and 3-norms overflow.
      if (planted == 3e38f && (norm_type == 1.0 || std::isinf(norm_type))) continue;
      SCOPED_TRACE("norm_type " + std::to_string(norm_type) + ", planted " +
                   std::to_string(planted));
      const std::vector<Tensor> params = params_with_planted_gradient(planted);
      const std::vector<Tensor> before = {params[0].grad().clone(), params[1].grad().clone()};
      try {
        optim::clip_grad_norm_(params, 1.0, norm_type, /*error_if_nonfinite=*/true);
        ADD_FAILURE() << "no error";
      } catch (const Error& e) {
        EXPECT_CONTAINS(e.what(), "clip_grad_norm_");
        EXPECT_CONTAINS(e.what(), "non-finite");
        EXPECT_CONTAINS(e.what(), std::isnan(planted) ? "nan)" : "inf)");
      }
      for (std::size_t k = 0; k < params.size(); ++k)
        EXPECT_TRUE(test::bitwise_equal(params[k].grad(), before[k])) << "gradient " << k;
    }
  }
}

// With finite norms the flag changes nothing: the same norm and gradients, bitwise, as without
// it, for a norm that clips and one that does not; it reads the norm on the host once (the
// count includes a CPU tensor's item()), and without it nothing is read.
TEST(ClipGradNorm, ErrorIfNonfiniteClipsFiniteGradientsAsBefore) {
  for (double norm_type : {2.0, 1.0, 3.0, std::numeric_limits<double>::infinity()}) {
    for (double max_norm : {0.5, 1e9}) {
      SCOPED_TRACE("norm_type " + std::to_string(norm_type) + ", max_norm " +
                   std::to_string(max_norm));
      const std::vector<Tensor> checked = params_with_planted_gradient(7.0f);
      const std::vector<Tensor> plain = params_with_planted_gradient(7.0f);
      const Tensor plain_before = plain[1].grad().clone();
      const std::uint64_t syncs = host_sync_count();
      const Tensor plain_norm = optim::clip_grad_norm_(plain, max_norm, norm_type);
      EXPECT_EQ(host_sync_count(), syncs);
      const Tensor checked_norm = optim::clip_grad_norm_(checked, max_norm, norm_type, true);
      EXPECT_EQ(host_sync_count(), syncs + 1);
      EXPECT_TRUE(test::bitwise_equal(checked_norm, plain_norm));
      for (std::size_t k = 0; k < checked.size(); ++k)
        EXPECT_TRUE(test::bitwise_equal(checked[k].grad(), plain[k].grad())) << "gradient " << k;
      if (max_norm == 0.5) {  // it clipped
        EXPECT_FALSE(test::bitwise_equal(checked[1].grad(), plain_before));
      }
    }
  }
}

// Without the flag a non-finite norm is used as PyTorch uses it (no error): NaN gradients
// everywhere for a NaN, a coefficient of 0 for an Inf (the Inf itself becomes NaN).
TEST(ClipGradNorm, WithoutErrorIfNonfiniteANonFiniteNormScales) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<Tensor> params =
      params_with_planted_gradient(std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(std::isnan(optim::clip_grad_norm_(params, 1.0).item<float>()));
  EXPECT_TRUE(std::isnan(params[0].grad().select(0, 0).item<float>()));
  params = params_with_planted_gradient(inf);
  EXPECT_EQ(optim::clip_grad_norm_(params, 1.0, 2.0, false).item<float>(), inf);
  EXPECT_TRUE(test::all_close(params[0].grad(), {0, 0, 0}));
  EXPECT_TRUE(std::isnan(params[1].grad().select(0, 20000).item<float>()));
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

// pct_start * total_steps - 1 is rounded per operation, as in torch's Python: a warm-up of no
// steps is refused for every pair whose product is 1 (FMA contraction once let (0.1, 10), (0.2, 5)
// and (0.01, 100) through with a warm-up end of 5.6e-17, and then never reached max_lr).
TEST(Schedulers, OneCycleRefusesAnEmptyWarmupWhateverItsRounding) {
  Tensor p = zeros({1}).requires_grad_(true);
  optim::SGD sgd({p}, optim::SGDOptions(0.1));
  for (const auto& [total, pct] : std::vector<std::pair<std::int64_t, double>>{
           {4, 0.25}, {8, 0.125}, {10, 0.1}, {5, 0.2}, {100, 0.01}}) {
    EXPECT_THROW(optim::OneCycleLR(sgd, 1.0, total, pct), Error) << total << " " << pct;
  }
  // Two steps of warm-up reach max_lr exactly at step 1.
  optim::OneCycleLR ok(sgd, 1.0, 10, 0.2);
  ok.step();
  EXPECT_EQ(ok.get_last_lr()[0], 1.0);
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

// get_last_lr is what the schedule set (PyTorch's _last_lr), not the group's lr as it is now: an
// lr changed by hand shows in the optimizer only, until the next step() overwrites it.
TEST(Schedulers, GetLastLrIsWhatTheScheduleSet) {
  Tensor p = zeros({1}).requires_grad_(true);
  optim::SGD sgd({optim::ParamGroup({p}, 0.1), optim::ParamGroup({p.detach()}, 0.4)},
                 optim::SGDOptions(0.1));
  optim::StepLR sched(sgd, 1, 0.5);
  sched.step();
  EXPECT_EQ(sched.get_last_lr(), (std::vector<double>{0.05, 0.2}));
  sgd.param_groups()[0].lr = 7.0;
  EXPECT_EQ(sched.get_last_lr(), (std::vector<double>{0.05, 0.2}));
  sched.step();
  EXPECT_EQ(sched.get_last_lr(), (std::vector<double>{0.025, 0.1}));
  EXPECT_EQ(*sgd.param_groups()[0].lr, 0.025);
}

}  // namespace
}  // namespace leangrad
