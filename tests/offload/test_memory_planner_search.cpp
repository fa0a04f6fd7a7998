// The memory planner's search (offload/memory_planner.cpp) on synthetic profiles, no tensors:
// plan_memory's plan against every plan enumerated (the fastest that fits, the same smallest
// peak), SaveOnCpu and parameter offload only where they free memory and are allowed, the error
// when nothing fits, and the cost model on a profile small enough to add up by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <leangrad/core/error.h>
#include <leangrad/offload/memory_planner.h>
#include "testing/tensor_testing.h"

namespace leangrad::offload {
namespace {

constexpr std::int64_t kMiB = 1 << 20;

// A profile shaped like a real one (offload/memory_profiler.cpp): Between(0), then per block
// Forward(i) and Between(i + 1), then per block in reverse Recompute(i), Backward(i), Between(i).
// Levels: the resident bytes (parameters, optimizer state, the rest) + the gradients so far + the
// inputs of the blocks held + a random transient.
StepProfile synthetic_profile(std::mt19937& rng, int blocks, Device device) {
  auto draw = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  StepProfile p;
  p.device = device;
  for (int i = 0; i < blocks; ++i) {
    BlockProfile b;
    b.name = "blocks." + std::to_string(i);
    b.input_bytes = draw(1, 8) * kMiB;
    b.output_bytes = draw(1, 8) * kMiB;
    // Most blocks save their input; the model's code holds some blocks' inputs beyond the block
    // (Note [Inputs the caller holds]): in the forward, and sometimes into backward too.
    b.saved_input_bytes = draw(0, 3) > 0 ? b.input_bytes : 0;
    b.saved_bytes = b.saved_input_bytes + draw(0, 40) * kMiB;
    b.input_held_forward_bytes = draw(0, 3) == 0 ? b.input_bytes : 0;
    b.input_held_after_forward_bytes = draw(0, 2) == 0 ? b.input_held_forward_bytes : 0;
    b.forward_rise_bytes =
        b.saved_bytes - b.saved_input_bytes + b.output_bytes + draw(0, 10) * kMiB;
    b.forward_ms = static_cast<double>(draw(5, 50));
    b.nograd_forward_ms = b.forward_ms * 0.8;
    b.backward_ms = static_cast<double>(draw(10, 100));
    b.parameter_bytes = draw(1, 30) * kMiB;
    b.gradient_bytes = b.parameter_bytes;
    p.parameter_bytes += b.parameter_bytes;
    p.blocks.push_back(b);
  }
  p.outside_parameter_bytes = 2 * kMiB;
  p.parameter_bytes += p.outside_parameter_bytes;
  p.optimizer_state_bytes = 2 * p.parameter_bytes;
  const std::int64_t resident = draw(20, 60) * kMiB + p.parameter_bytes + p.optimizer_state_bytes;
  p.step_ms = 10;
  for (const BlockProfile& b : p.blocks)
    p.step_ms += b.nograd_forward_ms + b.forward_ms + b.backward_ms;
  if (device.is_cuda()) {
    p.copy_bytes_per_ms = static_cast<double>(draw(1, 20)) * kMiB;
    p.host_optimizer_bytes_per_ms = static_cast<double>(draw(10, 100)) * kMiB;
  }

  std::vector<std::int64_t> inputs_held(blocks + 1, 0);
  for (int i = 0; i < blocks; ++i)
    inputs_held[i + 1] = inputs_held[i] + p.blocks[i].input_bytes;
  bool after_forward = false;
  auto window = [&](WindowKind kind, int block, int held, std::int64_t transient,
                    std::int64_t gradients) {
    MemoryWindow w;
    w.kind = kind;
    w.block = block;
    w.held_blocks = held;
    w.after_forward = after_forward;
    w.start_bytes = resident + gradients + inputs_held[held];
    w.peak_bytes = w.start_bytes + transient;
    w.gradient_bytes = gradients;
    p.windows.push_back(w);
  };
  window(WindowKind::Between, -1, 0, draw(0, 20) * kMiB, 0);
  for (int i = 0; i < blocks; ++i) {
    window(WindowKind::Forward, i, i, draw(1, 10) * kMiB, 0);
    window(WindowKind::Between, -1, i + 1, draw(0, 5) * kMiB, 0);
  }
  std::int64_t gradients = p.outside_parameter_bytes;
  after_forward = true;
  for (int i = blocks - 1; i >= 0; --i) {
    const BlockProfile& b = p.blocks[i];
    window(WindowKind::Recompute, i, i, b.input_bytes + b.forward_rise_bytes, gradients);
    window(WindowKind::Backward, i, i, b.saved_bytes + b.output_bytes + draw(0, 20) * kMiB,
           gradients);
    gradients += b.gradient_bytes;
    window(WindowKind::Between, -1, i, draw(0, 5) * kMiB, gradients);
  }
  return p;
}

struct Enumerated {
  bool any_fits = false;
  double fastest_ms = 0;
  std::int64_t smallest_peak = 0;
};

// Every plan with these policies and offload choices, the way a user could try them by hand.
Enumerated enumerate_plans(const StepProfile& p, std::int64_t budget,
                           const std::vector<BlockPolicy>& allowed,
                           const std::vector<bool>& offload_choices) {
  Enumerated e;
  e.smallest_peak = INT64_MAX;
  const std::size_t n = p.blocks.size();
  std::size_t count = 1;
  for (std::size_t i = 0; i < n; ++i)
    count *= allowed.size();
  for (const bool offload : offload_choices) {
    for (std::size_t code = 0; code < count; ++code) {
      std::vector<BlockPolicy> policies;
      std::size_t rest = code;
      for (std::size_t i = 0; i < n; ++i) {
        policies.push_back(allowed[rest % allowed.size()]);
        rest /= allowed.size();
      }
      const std::int64_t peak = predict_peak_bytes(p, policies, offload);
      const double ms = predict_step_ms(p, policies, offload);
      e.smallest_peak = std::min(e.smallest_peak, peak);
      if (peak > budget) continue;
      if (!e.any_fits || ms < e.fastest_ms) e.fastest_ms = ms;
      e.any_fits = true;
    }
  }
  return e;
}

// With `processes` > 1, DDP's gradient all-reduce on the device and in host memory, drawn so
// that either can be the cheaper one.
void draw_gradient_sync(std::mt19937& rng, StepProfile& p, int processes) {
  if (processes <= 1) return;
  p.processes = processes;
  p.gradient_bucket_bytes = 25 * kMiB;
  p.gradient_sync_ms = std::uniform_int_distribution<int>(0, 400)(rng);
  p.host_gradient_sync_ms = std::uniform_int_distribution<int>(1, 400)(rng);
}

void expect_search_matches_enumeration(Device device, bool allow_offload, int processes = 1) {
  std::mt19937 rng((device.is_cuda() ? 11u : 7u) + static_cast<unsigned>(processes));
  const std::vector<BlockPolicy> allowed =
      device.is_cuda() ? std::vector<BlockPolicy>{BlockPolicy::Keep, BlockPolicy::Recompute,
                                                  BlockPolicy::SaveOnCpu}
                       : std::vector<BlockPolicy>{BlockPolicy::Keep, BlockPolicy::Recompute};
  const std::vector<bool> offload_choices =
      allow_offload ? std::vector<bool>{false, true} : std::vector<bool>{false};
  PlanOptions options;
  options.allow_parameter_offload = allow_offload;
  int fitted = 0, refused = 0, offloaded = 0, saved_on_cpu = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const int blocks = 1 + trial % 6;
    StepProfile p = synthetic_profile(rng, blocks, device);
    draw_gradient_sync(rng, p, processes);
    const Enumerated all = enumerate_plans(p, INT64_MAX, allowed, offload_choices);
    const MemoryPlan smallest = smallest_peak_plan(p, options);
    ASSERT_EQ(smallest.predicted_peak_bytes, all.smallest_peak) << "trial " << trial;
    for (int b = 0; b < 8; ++b) {
      // Budgets from below the smallest peak to above the largest.
      const std::int64_t budget = all.smallest_peak - 30 * kMiB +
                                  std::uniform_int_distribution<std::int64_t>(0, 300)(rng) * kMiB;
      const Enumerated e = enumerate_plans(p, budget, allowed, offload_choices);
      SCOPED_TRACE("trial " + std::to_string(trial) + ", budget " + std::to_string(budget));
      if (!e.any_fits) {
        ++refused;
        try {
          (void)plan_memory(p, budget, options);
          ADD_FAILURE() << "plan_memory found a plan where none fits";
        } catch (const Error& error) {
          EXPECT_CONTAINS(error.what(), "no plan fits the budget");
          EXPECT_CONTAINS(error.what(), "the smallest peak a plan reaches is");
        }
        continue;
      }
      ++fitted;
      const MemoryPlan plan = plan_memory(p, budget, options);
      EXPECT_LE(plan.predicted_peak_bytes, budget);
      EXPECT_NEAR(plan.predicted_step_ms, e.fastest_ms, 1e-9 * e.fastest_ms);
      EXPECT_EQ(plan.predicted_peak_bytes,
                predict_peak_bytes(p, plan.policies, plan.offload_parameters));
      offloaded += plan.offload_parameters ? 1 : 0;
      for (const BlockPolicy policy : plan.policies)
        saved_on_cpu += policy == BlockPolicy::SaveOnCpu ? 1 : 0;
    }
  }
  EXPECT_GT(fitted, 100);  // both outcomes are exercised
  EXPECT_GT(refused, 10);
  // SaveOnCpu only on CUDA, parameter offload only when allowed; where possible, both are used.
  EXPECT_EQ(saved_on_cpu > 0, device.is_cuda());
  EXPECT_EQ(offloaded > 0, allow_offload);
}

TEST(MemoryPlannerSearch, MatchesEnumerationOnTheCpu) {
  expect_search_matches_enumeration(Device::cpu(), /*allow_offload=*/false);
}

TEST(MemoryPlannerSearch, MatchesEnumerationWithSaveOnCpu) {
  expect_search_matches_enumeration(Device::cuda(), /*allow_offload=*/false);
}

TEST(MemoryPlannerSearch, MatchesEnumerationWithParameterOffload) {
  expect_search_matches_enumeration(Device::cuda(), /*allow_offload=*/true);
}

TEST(MemoryPlannerSearch, MatchesEnumerationInSeveralProcesses) {
  expect_search_matches_enumeration(Device::cpu(), /*allow_offload=*/false, /*processes=*/2);
  expect_search_matches_enumeration(Device::cuda(), /*allow_offload=*/true, /*processes=*/4);
}

// Two blocks, every number chosen so the predictions can be added up by hand.
StepProfile hand_profile() {
  StepProfile p;
  p.device = Device::cpu();
  for (int i = 0; i < 2; ++i) {
    BlockProfile b;
    b.name = "blocks." + std::to_string(i);
    b.input_bytes = 10;
    b.output_bytes = 10;
    b.saved_bytes = 50;  // input included
    b.saved_input_bytes = 10;
    b.forward_rise_bytes = 60;
    b.forward_ms = 4;
    b.nograd_forward_ms = 3;
    b.backward_ms = 8;
    p.blocks.push_back(b);
  }
  p.step_ms = 40;  // 2 x (3 + 4 + 8) + 10 outside the blocks
  auto window = [&](WindowKind kind, int block, int held, std::int64_t start, std::int64_t peak) {
    MemoryWindow w;
    w.kind = kind;
    w.block = block;
    w.held_blocks = held;
    w.after_forward =
        kind == WindowKind::Recompute || (!p.windows.empty() && p.windows.back().after_forward);
    w.peak_bytes = peak;
    w.start_bytes = start;
    p.windows.push_back(w);
  };
  // resident 100; forward of block i starts at 100 + 10 (i + 1): the inputs held and its own.
  window(WindowKind::Between, -1, 0, 100, 110);
  window(WindowKind::Forward, 0, 0, 110, 125);
  window(WindowKind::Between, -1, 1, 120, 120);
  window(WindowKind::Forward, 1, 1, 120, 135);
  window(WindowKind::Between, -1, 2, 130, 140);
  window(WindowKind::Recompute, 1, 1, 125, 195);  // 125 + 70: recomputed 40 + output 10 + 20
  window(WindowKind::Backward, 1, 1, 175, 190);
  window(WindowKind::Between, -1, 1, 115, 120);
  window(WindowKind::Recompute, 0, 0, 115, 185);
  window(WindowKind::Backward, 0, 0, 165, 180);
  window(WindowKind::Between, -1, 0, 100, 105);
  return p;
}

TEST(MemoryPlannerSearch, CostModelAddsUpByHand) {
  const StepProfile p = hand_profile();
  const BlockPolicy keep = BlockPolicy::Keep, recompute = BlockPolicy::Recompute;
  // Every block recomputed: the profile itself.
  EXPECT_EQ(predict_peak_bytes(p, {recompute, recompute}, false), 195);
  EXPECT_DOUBLE_EQ(predict_step_ms(p, {recompute, recompute}, false), 40);
  // Block 0 kept: it holds 50 instead of 10 while block 1 runs: block 1's recompute peaks at
  // 195 + 40; block 0's own backward is 180 less its recomputed output; its forward rises 60.
  EXPECT_EQ(predict_peak_bytes(p, {keep, recompute}, false), 235);
  EXPECT_DOUBLE_EQ(predict_step_ms(p, {keep, recompute}, false), 37);
  // Block 1 kept: the end of the forward holds 140 + 40; its backward 190 - 10 + 0.
  EXPECT_EQ(predict_peak_bytes(p, {recompute, keep}, false), 185);
  EXPECT_EQ(predict_peak_bytes(p, {keep, keep}, false), 140 + 80);
  EXPECT_DOUBLE_EQ(predict_step_ms(p, {keep, keep}, false), 34);

  // The fastest plan under each budget.
  EXPECT_EQ(plan_memory(p, 1000).policies, (std::vector<BlockPolicy>{keep, keep}));
  EXPECT_EQ(plan_memory(p, 220).policies, (std::vector<BlockPolicy>{keep, keep}));
  EXPECT_EQ(plan_memory(p, 219).policies, (std::vector<BlockPolicy>{recompute, keep}));
  EXPECT_EQ(plan_memory(p, 185).policies, (std::vector<BlockPolicy>{recompute, keep}));
  EXPECT_EQ(smallest_peak_plan(p).predicted_peak_bytes, 185);
  try {
    (void)plan_memory(p, 184);
    ADD_FAILURE() << "a budget of 184 bytes fits no plan";
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), "no plan fits the budget of 0.00 MiB (184 bytes) on cpu");
    EXPECT_CONTAINS(e.what(), "(1 keep, 1 recompute; parameters on the device)");
  }
  EXPECT_THROW((void)plan_memory(p, 0), Error);
}

TEST(MemoryPlannerSearch, SaveOnCpuAndParameterOffloadOnlyWhereTheyFreeMemory) {
  StepProfile p = hand_profile();
  // On the CPU neither is considered, even when allowed.
  PlanOptions everything;
  everything.allow_parameter_offload = true;
  p.parameter_bytes = 60;
  p.optimizer_state_bytes = 120;
  p.copy_bytes_per_ms = 1000;
  p.host_optimizer_bytes_per_ms = 1000;
  EXPECT_THROW((void)plan_memory(p, 184, everything), Error);

  // On CUDA, SaveOnCpu holds nothing: the end of the forward drops to 140 - 20.
  p.device = Device::cuda();
  const MemoryPlan soc = plan_memory(p, 184, PlanOptions());
  EXPECT_FALSE(soc.offload_parameters);
  EXPECT_LE(soc.predicted_peak_bytes, 184);
  EXPECT_NE(std::find(soc.policies.begin(), soc.policies.end(), BlockPolicy::SaveOnCpu),
            soc.policies.end());
  PlanOptions no_save_on_cpu;
  no_save_on_cpu.allow_save_on_cpu = false;
  EXPECT_THROW((void)plan_memory(p, 184, no_save_on_cpu), Error);

  // Parameter offload removes parameters and state (180) and brings two blocks' parameters and
  // one block's gradients in flight: below every other plan's smallest peak, when allowed only.
  const std::int64_t tight = smallest_peak_plan(p).predicted_peak_bytes - 1;
  EXPECT_THROW((void)plan_memory(p, tight, PlanOptions()), Error);
  const MemoryPlan offloaded = plan_memory(p, tight, everything);
  EXPECT_TRUE(offloaded.offload_parameters);
  EXPECT_LE(offloaded.predicted_peak_bytes, tight);
  // Its time: the copies (3 x 60 bytes at 1000 bytes/ms) hide behind 24 ms of compute; the
  // host step reads parameters, gradients and state (240 bytes at 1000 bytes/ms).
  EXPECT_NEAR(offloaded.predicted_step_ms, predict_step_ms(p, offloaded.policies, false) + 0.24,
              1e-12);
  // apply_plan without the model cannot offload it: refused.
  EXPECT_THROW((void)apply_plan(offloaded, {nullptr, nullptr}), Error);
}

TEST(MemoryPlannerSearch, GradientAllReduceCostsWhatBackwardDoesNotHide) {
  StepProfile p = hand_profile();  // backward: 8 + 8 ms
  const BlockPolicy keep = BlockPolicy::Keep, recompute = BlockPolicy::Recompute;
  p.device = Device::cuda();
  p.parameter_bytes = 100;
  p.optimizer_state_bytes = 200;
  p.copy_bytes_per_ms = 1000;
  p.host_optimizer_bytes_per_ms = 1000;
  p.processes = 2;
  p.gradient_bucket_bytes = 25;  // the last bucket: a quarter of the gradients
  p.gradient_sync_ms = 20;       // 20 - 16 = 4 exposed, above the last bucket's 5: 5
  p.host_gradient_sync_ms = 40;  // 40 - 16 = 24 exposed
  EXPECT_DOUBLE_EQ(predict_step_ms(p, {keep, keep}, false), 34 + 5);
  // Offloaded: the copies (300 bytes) hide behind 24 ms of compute, the host step reads 400
  // bytes at 1000 bytes/ms, then 24 ms of the host all-reduce show.
  EXPECT_DOUBLE_EQ(predict_step_ms(p, {keep, keep}, true), 34 + 0.4 + 24);
  p.gradient_sync_ms = 100;  // 84 exposed
  EXPECT_DOUBLE_EQ(predict_step_ms(p, {recompute, keep}, false), 37 + 84);
  p.gradient_bucket_bytes = 1000;  // one bucket: nothing hides
  EXPECT_DOUBLE_EQ(predict_step_ms(p, {recompute, keep}, false), 37 + 100);

  // Offloading wins when the device all-reduce is dearer than the host one plus the host step.
  PlanOptions offload;
  offload.allow_parameter_offload = true;
  EXPECT_TRUE(plan_memory(p, 1000, offload).offload_parameters);
  p.gradient_sync_ms = 1;
  EXPECT_FALSE(plan_memory(p, 1000, offload).offload_parameters);
  // A group that cannot reduce host tensors (host time 0): never offloaded, even when only an
  // offloaded plan would fit.
  p.gradient_sync_ms = 100;
  p.host_gradient_sync_ms = 0;
  EXPECT_FALSE(plan_memory(p, 1000, offload).offload_parameters);
  const std::int64_t tight = smallest_peak_plan(p, offload).predicted_peak_bytes - 1;
  EXPECT_THROW((void)plan_memory(p, tight, offload), Error);
  p.processes = 1;  // the same profile in one process: the offload fits
  EXPECT_TRUE(plan_memory(p, tight, offload).offload_parameters);
}

TEST(MemoryPlannerSearch, MeasurementsRoundTripOrientedWorstIsLargest) {
  std::mt19937 rng(3);
  StepProfile a = synthetic_profile(rng, 3, Device::cuda());
  draw_gradient_sync(rng, a, 2);
  const std::vector<double> m = profile_measurements(a);
  StepProfile b = synthetic_profile(rng, 3, Device::cuda());  // the same shape, other numbers
  set_profile_measurements(b, m);
  EXPECT_EQ(profile_measurements(b), m);
  EXPECT_EQ(b.windows.size(), a.windows.size());
  for (std::size_t i = 0; i < a.blocks.size(); ++i) {
    EXPECT_EQ(b.blocks[i].saved_bytes, a.blocks[i].saved_bytes);
    EXPECT_EQ(b.blocks[i].backward_ms, a.blocks[i].backward_ms);
  }
  EXPECT_EQ(b.windows.back().peak_bytes, a.windows.back().peak_bytes);
  EXPECT_EQ(b.copy_bytes_per_ms, a.copy_bytes_per_ms);
  EXPECT_EQ(b.host_gradient_sync_ms, a.host_gradient_sync_ms);
  // Larger is worse: a bandwidth enters negated, so the maximum is the lowest bandwidth.
  StepProfile slow = a;
  slow.copy_bytes_per_ms /= 2;
  slow.blocks[1].forward_ms += 1;
  const std::vector<double> ms = profile_measurements(slow);
  std::vector<double> worst(m.size());
  for (std::size_t i = 0; i < m.size(); ++i)
    worst[i] = std::max(m[i], ms[i]);
  set_profile_measurements(b, worst);
  EXPECT_EQ(b.copy_bytes_per_ms, a.copy_bytes_per_ms / 2);
  EXPECT_EQ(b.blocks[1].forward_ms, a.blocks[1].forward_ms + 1);
  // Another shape is refused, naming both.
  StepProfile other = synthetic_profile(rng, 2, Device::cuda());
  try {
    set_profile_measurements(other, m);
    ADD_FAILURE() << "measurements of 3 blocks were set into a profile of 2";
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), "for a profile of 2 blocks and");
  }
}

// Note [Checking a profile's numbers]: a profile made elsewhere than profile_step (by hand,
// reduced over ranks) is checked before the model adds its counts in std::int64_t. Three kept
// blocks of 2^62 saved bytes overflowed to a negative peak, and that plan "fitted" a budget of
// 1000 bytes; a negative count or a NaN time gave a plan without a word.
TEST(MemoryPlannerSearch, ProfileNumbersThatWouldOverflowOrMisleadAreRefused) {
  StepProfile huge;
  huge.device = Device::cpu();
  for (int i = 0; i < 3; ++i) {
    BlockProfile b;
    b.name = "blocks." + std::to_string(i);
    b.input_bytes = 10;
    b.output_bytes = 10;
    b.saved_bytes = std::int64_t{1} << 62;
    b.nograd_forward_ms = 1;  // keeping is faster
    huge.blocks.push_back(b);
  }
  MemoryWindow w;
  w.held_blocks = 3;
  w.peak_bytes = 100;
  huge.windows.push_back(w);
  auto expect_error = [](const std::function<void()>& call, const std::string& part) {
    try {
      call();
      ADD_FAILURE() << "accepted; expected an error saying '" << part << "'";
    } catch (const Error& e) {
      EXPECT_CONTAINS(e.what(), part);
    }
  };
  expect_error([&] { (void)plan_memory(huge, 1000); }, "the profile's byte counts add up to 1.38");
  expect_error([&] { (void)predict_peak_bytes(huge, std::vector<BlockPolicy>(3), false); },
               "more than 2^60 (1 EiB)");

  StepProfile negative = hand_profile();
  negative.blocks[1].saved_bytes = -50;
  expect_error([&] { (void)plan_memory(negative, 200); },
               "block 1 (blocks.1)'s saved_bytes is -50; a profile's byte counts must be >= 0");
  StepProfile not_a_number = hand_profile();
  not_a_number.blocks[0].nograd_forward_ms = std::nan("");
  expect_error([&] { (void)plan_memory(not_a_number, 200); },
               "block 0 (blocks.0)'s nograd_forward_ms is nan; a profile's times and bandwidths "
               "must be finite and >= 0");
  expect_error([&] { (void)predict_step_ms(not_a_number, std::vector<BlockPolicy>(2), false); },
               "nograd_forward_ms is nan");
  StepProfile window = hand_profile();
  window.windows[2].peak_bytes = -1;
  expect_error([&] { (void)smallest_peak_plan(window); }, "window 2's peak_bytes is -1");
  // Measurements that do not fit a byte count are refused before the conversion.
  StepProfile target = hand_profile();
  std::vector<double> m = profile_measurements(target);
  m[1] = 1e30;  // parameter_bytes
  expect_error([&] { set_profile_measurements(target, m); },
               "set_profile_measurements: a byte count of 1e+30");
}

TEST(MemoryPlannerSearch, DescribesThePlan) {
  const StepProfile p = hand_profile();
  const MemoryPlan plan = plan_memory(p, 200);
  const std::string text = describe_plan(p, plan);
  EXPECT_CONTAINS(text, "memory plan for a budget of 0.00 MiB on cpu (2 blocks");
  EXPECT_CONTAINS(text, "blocks.0  recompute");
  EXPECT_CONTAINS(text, "blocks.1  keep");
  EXPECT_CONTAINS(text, "parameters and optimizer state: on the device");
  EXPECT_CONTAINS(text, "predicted: peak allocated 0.00 MiB, step 37.00 ms");
  EXPECT_EQ(text.find("copies:"), std::string::npos);  // nothing is copied on the CPU
  // A CUDA profile says how fast it copies, and, with several processes, how that was measured.
  StepProfile cuda_profile = p;
  cuda_profile.device = Device::cuda(0);
  cuda_profile.copy_bytes_per_ms = 24.5e6;
  EXPECT_CONTAINS(describe_plan(cuda_profile, plan), "pinned host <-> device copies: 24.50 GB/s\n");
  cuda_profile.processes = 2;
  EXPECT_CONTAINS(describe_plan(cuda_profile, plan),
                  "copies: 24.50 GB/s (measured with every process copying at once)");
}

// A block's name longer than any line buffer (a deep model's dotted path) is shown whole, and the
// columns stay aligned under the header: the name column is as wide as the longest name.
TEST(MemoryPlannerSearch, DescribesLongBlockNamesWhole) {
  StepProfile p = hand_profile();
  std::string long_name = "encoder";
  while (long_name.size() < 300)
    long_name += ".stage" + std::to_string(long_name.size()) + ".residual_blocks";
  p.blocks[0].name = long_name;
  const MemoryPlan plan = plan_memory(p, 200);
  const std::string text = describe_plan(p, plan);
  const std::string pad(long_name.size() - 5, ' ');
  EXPECT_CONTAINS(text, "\n  block" + pad + "  policy       saved MiB    fwd ms    bwd ms\n");
  EXPECT_CONTAINS(text, "\n  " + long_name + "  recompute         0.00      4.00      8.00\n");
  EXPECT_CONTAINS(text, "\n  blocks.1" + std::string(long_name.size() - 8, ' ') +
                            "  keep              0.00      4.00      8.00\n");
  EXPECT_CONTAINS(text, "predicted: peak allocated 0.00 MiB, step 37.00 ms\n");
}

}  // namespace
}  // namespace leangrad::offload
