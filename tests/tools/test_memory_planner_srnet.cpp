// The memory planner (offload/memory_planner.h) on leangrad-train's srnet (tools/train_models.h),
// on the CPU with Adam and random images: the predicted peak of every keep/recompute plan is
// within 10% of the measured one; under a memory cap (memory::configure, restored after the
// test) the plain step fails with OutOfMemoryError while the plans the planner picks for budgets
// under the cap train, their measured peaks within the budget and within 10% of the prediction.
#include <gtest/gtest.h>

#include <leangrad/leangrad.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "train_models.h"

namespace {

using namespace leangrad;
using offload::BlockPolicy;

constexpr std::int64_t kMiB = 1 << 20;

// srnet with Adam on one batch of random images, as leangrad-train steps it.
struct Srnet {
  std::shared_ptr<nn::Module> model;
  std::vector<std::shared_ptr<nn::Module>> blocks;
  std::unique_ptr<optim::Adam> optimizer;
  Tensor images, labels;

  Srnet(std::int64_t width, std::int64_t blocks_count, std::int64_t batch) {
    manual_seed(4);
    tools::ModelOptions options;
    options.name = "srnet";
    options.width = width;
    options.blocks = blocks_count;
    model = tools::make_model(options);
    blocks = tools::memory_blocks("srnet", *model, "test");
    optimizer = std::make_unique<optim::Adam>(model->parameters(), optim::AdamOptions(1e-3));
    images = rand({batch, 1, 28, 28});
    labels = zeros({batch}, TensorOptions(kInt64));
  }

  void step() {
    optimizer->zero_grad();
    tools::accumulate_micro_batch("srnet", *model, images, labels, 1.0);
    optimizer->step();
  }

  offload::StepProfile profile() {
    return offload::profile_step(*model, blocks, [this] { step(); });
  }

  // The peak allocated of a step with `policies`, after one that fills Adam's state (on the CPU
  // every step then allocates the same).
  std::int64_t measured_peak(const std::vector<BlockPolicy>& policies) {
    const offload::AppliedPlan applied = offload::apply_policies(blocks, policies);
    step();
    memory::reset_peak(Device::cpu());
    step();
    return memory::stats(Device::cpu()).peak_allocated;
  }
};

double relative_error(std::int64_t predicted, std::int64_t measured) {
  return std::abs(static_cast<double>(predicted - measured)) / static_cast<double>(measured);
}

TEST(SrnetMemoryPlanner, PredictedPeakWithinTenPercentForEveryPlan) {
  Srnet srnet(/*width=*/16, /*blocks=*/3, /*batch=*/32);
  const offload::StepProfile profile = srnet.profile();
  // srnet's forward calls blocks(shuffle(head(x))): the pixel shuffle's output, the first block's
  // input, is a temporary of that full expression, alive until the last block has run (Note
  // [Inputs the caller holds]). Each block's first convolution saves its input.
  for (std::size_t i = 0; i < profile.blocks.size(); ++i) {
    const offload::BlockProfile& b = profile.blocks[i];
    EXPECT_EQ(b.saved_input_bytes, b.input_bytes) << b.name;
    EXPECT_EQ(b.input_held_forward_bytes, i == 0 ? b.input_bytes : 0) << b.name;
    EXPECT_EQ(b.input_held_after_forward_bytes, 0) << b.name;
  }
  double worst = 0;
  for (int code = 0; code < 8; ++code) {
    std::vector<BlockPolicy> policies;
    for (int i = 0; i < 3; ++i)
      policies.push_back((code >> i) & 1 ? BlockPolicy::Keep : BlockPolicy::Recompute);
    const std::int64_t predicted = offload::predict_peak_bytes(profile, policies, false);
    const std::int64_t measured = srnet.measured_peak(policies);
    worst = std::max(worst, relative_error(predicted, measured));
    EXPECT_LE(relative_error(predicted, measured), 0.10)
        << "plan " << code << ": predicted " << predicted << " bytes, measured " << measured;
  }
  std::printf(
      "srnet width 16, 3 blocks, batch 32: predicted peaks within %.4f%% of the measured "
      "ones\n",
      100.0 * worst);
}

// Sets a memory cap on the CPU allocator for its lifetime; then back to what the environment
// says (LEANGRAD_ALLOC_CONF, usually nothing), the cache emptied, so no other test runs capped.
class CpuMemoryCap {
 public:
  explicit CpuMemoryCap(std::int64_t cap_mib) {
    memory::empty_cache(Device::cpu());
    memory::configure("memory_cap_mb:" + std::to_string(cap_mib));
  }
  ~CpuMemoryCap() {
    const char* conf = std::getenv("LEANGRAD_ALLOC_CONF");
    try {
      memory::configure(conf != nullptr ? conf : "");
    } catch (const Error&) {  // a malformed environment: no cap, rather than throw here
      memory::configure("");
    }
    memory::empty_cache(Device::cpu());
  }
  CpuMemoryCap(const CpuMemoryCap&) = delete;
  CpuMemoryCap& operator=(const CpuMemoryCap&) = delete;
};

TEST(SrnetMemoryPlanner, UnderACpuMemoryCapThePlainStepFailsAndPlansFit) {
  constexpr std::int64_t kWidth = 16, kBlocks = 6, kBatch = 64;
  // Without a cap: the plain step's peak and the smallest a plan reaches.
  std::int64_t plain_peak = 0, smallest_peak = 0;
  {
    Srnet srnet(kWidth, kBlocks, kBatch);
    plain_peak = srnet.measured_peak(std::vector<BlockPolicy>(kBlocks, BlockPolicy::Keep));
    smallest_peak = offload::smallest_peak_plan(srnet.profile()).predicted_peak_bytes;
  }
  ASSERT_LT(smallest_peak + 48 * kMiB, plain_peak) << "the test's model leaves no room to plan";
  // A budget a third and two thirds of the way from the smallest peak to the plain one; the cap
  // above the budget by 8 MiB (the allocator's segments), below the plain peak.
  for (const int third : {1, 2}) {
    const std::int64_t budget = smallest_peak + (plain_peak - smallest_peak) * third / 3;
    const std::int64_t cap_mib = budget / kMiB + 8;
    SCOPED_TRACE("budget " + std::to_string(budget) +
                 " bytes, memory_cap_mb:" + std::to_string(cap_mib));
    ASSERT_LT(cap_mib * kMiB, plain_peak);
    const CpuMemoryCap cap(cap_mib);
    {
      Srnet plain(kWidth, kBlocks, kBatch);
      try {
        plain.step();
        plain.step();
        ADD_FAILURE() << "the plain step fit under the cap";
      } catch (const OutOfMemoryError& e) {
        EXPECT_NE(e.message().find("memory cap"), std::string::npos) << e.message();
      }
    }
    Srnet srnet(kWidth, kBlocks, kBatch);
    const offload::StepProfile profile = srnet.profile();
    const offload::MemoryPlan plan = offload::plan_memory(profile, budget);
    EXPECT_LE(plan.predicted_peak_bytes, budget);
    const std::int64_t measured = srnet.measured_peak(plan.policies);
    EXPECT_LE(measured, budget) << offload::describe_plan(profile, plan);
    EXPECT_LE(relative_error(plan.predicted_peak_bytes, measured), 0.10)
        << "predicted " << plan.predicted_peak_bytes << ", measured " << measured;
    std::cout << offload::describe_plan(profile, plan) << "  measured peak allocated "
              << static_cast<double>(measured) / kMiB << " MiB\n";
  }
}

}  // namespace
