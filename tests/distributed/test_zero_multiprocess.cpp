// ZeroRedundancyOptimizer in several processes (dist_worker's zero_* scenarios,
// zero_scenarios.cpp): bitwise the wrapped optimizer run whole, for each optimizer class, on two
// and three ranks, with amp::GradScaler, the state dict consolidated, local and whole, and ranks
// that pass other parameters named before any step.
#include <gtest/gtest.h>

#include <string>

#include <leangrad/core/cuda.h>

#include "distributed/launch.h"
#include "testing/tensor_testing.h"

namespace leangrad::test {
namespace {

void expect_bitwise(const std::string& scenario, int world_size) {
  for (const RankOutcome& o : expect_all_pass(scenario, world_size))
    EXPECT_CONTAINS(o.output, "bitwise the plain optimizer after 6 steps");
}

TEST(DistributedZero, AdamOnTwoRanksStepsBitwiseAsAdam) {
  SKIP_WITHOUT_GLOO();
  expect_bitwise("zero_equal_adam", 2);
}
TEST(DistributedZero, AdamOnThreeRanksStepsBitwiseAsAdam) {
  SKIP_WITHOUT_GLOO();
  expect_bitwise("zero_equal_adam", 3);
}
TEST(DistributedZero, AdamWStepsBitwiseAsAdamW) {
  SKIP_WITHOUT_GLOO();
  expect_bitwise("zero_equal_adamw", 2);
}
TEST(DistributedZero, NesterovSgdStepsBitwiseAsSgd) {
  SKIP_WITHOUT_GLOO();
  expect_bitwise("zero_equal_sgd", 2);
}
TEST(DistributedZero, RAdamStepsBitwiseAsRAdam) {
  SKIP_WITHOUT_GLOO();
  expect_bitwise("zero_equal_radam", 2);
}
TEST(DistributedZero, Adam8bitStepsBitwiseAsAdam8bit) {
  SKIP_WITHOUT_GLOO();
  expect_bitwise("zero_equal_adam8bit", 2);
}

// Both ranks on cuda:0 over Gloo (which stages CUDA tensors through the host): the wrapped
// optimizer's CUDA kernels over each rank's share, the broadcasts of CUDA parameters.
TEST(DistributedZero, AdamOnCudaStepsBitwiseAsAdam) {
  SKIP_WITHOUT_GLOO();
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  expect_bitwise("zero_equal_adam_cuda", 2);
}

TEST(DistributedZero, GradScalerSkipsTheSameStepsAsOverAPlainOptimizer) {
  SKIP_WITHOUT_GLOO();
  for (const RankOutcome& o : expect_all_pass("zero_grad_scaler", 2))
    EXPECT_CONTAINS(o.output, "bitwise the plain Adam, the infinite step skipped");
}

TEST(DistributedZero, StateDictsConsolidatedLocalAndWholeResumeBitwise) {
  SKIP_WITHOUT_GLOO();
  for (const RankOutcome& o : expect_all_pass("zero_state_dict", 2)) {
    EXPECT_CONTAINS(o.output, "consolidated, local and whole dicts bitwise");
    EXPECT_CONTAINS(o.output, "CAUGHT: load_state_dict: the state of parameter");
  }
}

TEST(DistributedZero, RanksWithAnotherNumberOfParametersAreNamed) {
  SKIP_WITHOUT_GLOO();
  for (const RankOutcome& o : expect_all_pass("zero_mismatch_count", 2)) {
    EXPECT_CONTAINS(o.output,
                    "CAUGHT: ZeroRedundancyOptimizer: the ranks optimize different numbers of "
                    "parameters (rank 0: 6; rank 1: 5)");
  }
}

TEST(DistributedZero, RanksWithParametersOfAnotherShapeAreNamed) {
  SKIP_WITHOUT_GLOO();
  for (const RankOutcome& o : expect_all_pass("zero_mismatch_shape", 2)) {
    EXPECT_CONTAINS(o.output,
                    "CAUGHT: ZeroRedundancyOptimizer: the ranks optimize different parameters: "
                    "parameter 1 is float32 [256] on rank 0 but float32 [128, 2] on rank 1");
  }
}

// Ranks with gradients on different parameters, or on none: the broadcasts follow the
// partition, so every parameter ends as its owner left it, on every rank.
TEST(DistributedZero, RanksWithDifferentGradientsKeepOneReplica) {
  SKIP_WITHOUT_GLOO();
  for (const char* how : {"subset", "one"}) {
    for (const RankOutcome& o : expect_all_pass(std::string("zero_gradients_") + how, 2))
      EXPECT_CONTAINS(o.output, std::string("zero ") + how +
                                    " gradients: every parameter its owner's on every rank");
  }
  for (const RankOutcome& o : expect_all_pass("zero_gradients_subset", 3))
    EXPECT_CONTAINS(o.output, "zero subset gradients: every parameter its owner's on every rank");
}

}  // namespace
}  // namespace leangrad::test
