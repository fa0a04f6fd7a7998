// distributed::plan_memory in two processes (dist_worker's plan_memory scenarios): ranks whose
// own profiles lead to different plans install one plan, the one planned on the ranks' maxima;
// ranks that profiled different models are refused on every rank; on CUDA (GPU only) the ranks
// measure the copy bandwidth together, unless one has no memory for the probe.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include <leangrad/core/cuda.h>

#include "distributed/launch.h"
#include "testing/tensor_testing.h"

namespace leangrad::test {
namespace {

std::string line_after(const std::string& output, const std::string& prefix) {
  const std::size_t at = output.find(prefix);
  if (at == std::string::npos) return "";
  return output.substr(at, output.find('\n', at) - at);
}

TEST(DistributedPlanMemory, RanksThatWouldPlanApartInstallOnePlan) {
  SKIP_WITHOUT_GLOO();
  Launch l;
  l.scenario = "plan_memory";
  const std::vector<RankOutcome> outcomes = launch(l);
  ASSERT_EQ(outcomes.size(), 2u);
  for (const RankOutcome& o : outcomes)
    ASSERT_EQ(o.exit_code, 0) << describe(outcomes);
  // Alone, each rank keeps the block it gains most from; together, the block 1 of the maxima.
  EXPECT_CONTAINS(outcomes[0].output, "alone: keep, recompute");
  EXPECT_CONTAINS(outcomes[1].output, "alone: recompute, keep");
  const std::string agreed = line_after(outcomes[0].output, "agreed plan:");
  EXPECT_CONTAINS(agreed, "agreed plan: recompute, keep");
  // The same predicted step, all-reduce time included, on both ranks.
  EXPECT_EQ(line_after(outcomes[1].output, "agreed plan:"), agreed) << describe(outcomes);
}

TEST(DistributedPlanMemory, RanksThatProfiledDifferentStepsAreRefusedOnEveryRank) {
  SKIP_WITHOUT_GLOO();
  Launch l;
  l.scenario = "plan_memory_mismatch";
  const std::vector<RankOutcome> outcomes = launch(l);
  for (const RankOutcome& o : outcomes) {
    ASSERT_EQ(o.exit_code, 0) << describe(outcomes);
    EXPECT_CONTAINS(o.output,
                    "distributed::plan_memory: the ranks did not profile the same step or plan "
                    "with the same budget (blocks: from 2 to 3 over the ranks; windows: from 3 "
                    "to 4 over the ranks; parameter bytes: 4194304; budget bytes: 150;");
    EXPECT_CONTAINS(o.output, "the group works after the refusal");
  }
}

// On CUDA the ranks measure the copy bandwidth again, copying at the same time (Note [Copy
// bandwidth shared by the ranks], distributed/memory_plan.cpp): the profiles' own 1000 and 1001
// bytes per ms (1 MB/s) give way to one real measurement, the same on both ranks.
TEST(DistributedPlanMemory, OnCudaRanksMeasureTheCopyBandwidthTogether) {
  SKIP_WITHOUT_GLOO();
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  Launch l;
  l.scenario = "plan_memory_cuda";
  const std::vector<RankOutcome> outcomes = launch(l);
  ASSERT_EQ(outcomes.size(), 2u);
  for (const RankOutcome& o : outcomes)
    ASSERT_EQ(o.exit_code, 0) << describe(outcomes);
  const std::string line = line_after(outcomes[0].output, "copy bandwidth:");
  double bytes_per_ms = 0;
  ASSERT_EQ(std::sscanf(line.c_str(), "copy bandwidth: %lf", &bytes_per_ms), 1) << line;
  EXPECT_GT(bytes_per_ms, 1e5) << line;  // above 100 MB/s: measured, not the profiles' own
  EXPECT_LT(bytes_per_ms, 1e9) << line;
  EXPECT_EQ(line_after(outcomes[1].output, "copy bandwidth:"), line) << describe(outcomes);
}

// A rank without room for the probe's 32 MiB (a 16 MiB cap) measures nothing, and neither does
// the other, which would wait for it at the first copy's barrier: both plan on the slower of
// their own measurements.
TEST(DistributedPlanMemory, OnCudaARankWithoutRoomForTheProbeKeepsTheProfilesBandwidth) {
  SKIP_WITHOUT_GLOO();
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  Launch l;
  l.scenario = "plan_memory_cuda";
  l.rank_env[1]["LEANGRAD_ALLOC_CONF"] = "memory_cap_mb:16";
  const std::vector<RankOutcome> outcomes = launch(l);
  ASSERT_EQ(outcomes.size(), 2u);
  for (const RankOutcome& o : outcomes) {
    ASSERT_EQ(o.exit_code, 0) << describe(outcomes);
    EXPECT_CONTAINS(o.output, "copy bandwidth: 1000 bytes/ms");
  }
}

}  // namespace
}  // namespace leangrad::test
