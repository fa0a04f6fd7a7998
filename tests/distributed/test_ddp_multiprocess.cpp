// DistributedDataParallel in several processes (dist_worker's ddp_* scenarios, ddp_scenarios.cpp):
// equal to one process with the global batch (MLP and CNN, float32 and float64), no_sync
// accumulation, unused parameters (an error naming them, or find_unused_parameters), the
// construction broadcast, mismatched models, and a rank killed in the middle of backward.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <string>

#include <leangrad/core/cuda.h>
#include <leangrad/distributed/process_group.h>
#include "distributed/launch.h"
#include "testing/tensor_testing.h"

namespace leangrad::test {
namespace {

TEST(DistributedDDP, TwoRanksEqualOneProcessMlpFloat32) {
  SKIP_WITHOUT_GLOO();
  expect_all_pass("ddp_equal_mlp_f32");
}
TEST(DistributedDDP, TwoRanksEqualOneProcessMlpFloat64) {
  SKIP_WITHOUT_GLOO();
  expect_all_pass("ddp_equal_mlp_f64");
}
TEST(DistributedDDP, TwoRanksEqualOneProcessCnnFloat32) {
  SKIP_WITHOUT_GLOO();
  expect_all_pass("ddp_equal_cnn_f32");
}
TEST(DistributedDDP, TwoRanksEqualOneProcessCnnFloat64) {
  SKIP_WITHOUT_GLOO();
  expect_all_pass("ddp_equal_cnn_f64");
}
TEST(DistributedDDP, FourRanksEqualOneProcessCnnFloat64) {
  SKIP_WITHOUT_GLOO();
  expect_all_pass("ddp_equal_cnn_f64", 4);
}

TEST(DistributedDDP, OffloadedParametersTrainBitwiseAsResidentOnes) {
  SKIP_WITHOUT_GLOO();
  for (const RankOutcome& o : expect_all_pass("ddp_offload"))
    EXPECT_CONTAINS(o.output, "bitwise the resident DDP after 5 steps");
}

// The same on CUDA (both ranks on cuda:0 over Gloo): the gradients' copies to the host are
// asynchronous there, and the reducer's bucket copy must wait for each (Note [Gradients to the
// host] in offload/parameter_offload.cpp).
TEST(DistributedDDP, OffloadedParametersTrainAsResidentOnesOnCuda) {
  SKIP_WITHOUT_GLOO();
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (const RankOutcome& o : expect_all_pass("ddp_offload_cuda"))
    EXPECT_CONTAINS(o.output, "the resident DDP within");
}

TEST(DistributedDDP, EveryForwardStartsFromRankZerosBuffers) {
  SKIP_WITHOUT_GLOO();
  for (const RankOutcome& o : expect_all_pass("ddp_buffers"))
    EXPECT_CONTAINS(o.output, "buffers (broadcast on)");
}

TEST(DistributedDDP, WithoutBroadcastBuffersTheRanksDriftApart) {
  SKIP_WITHOUT_GLOO();
  for (const RankOutcome& o : expect_all_pass("ddp_buffers_off"))
    EXPECT_CONTAINS(o.output, "buffers (broadcast off)");
}

TEST(DistributedDDP, NoSyncAccumulationEqualsOneProcess) {
  SKIP_WITHOUT_GLOO();
  expect_all_pass("ddp_no_sync");
}

TEST(DistributedDDP, AnUnusedParameterIsAnErrorNamingIt) {
  SKIP_WITHOUT_GLOO();
  for (const RankOutcome& o : expect_all_pass("ddp_unused_error")) {
    EXPECT_CONTAINS(o.output,
                    "CAUGHT: DistributedDataParallel: 2 parameters received no gradient "
                    "in this backward on rank ");
    EXPECT_CONTAINS(o.output, "module.c.weight, module.c.bias");
    EXPECT_CONTAINS(o.output, "find_unused_parameters(true)");
  }
}

// A parameter unused on rank 1 only, without find_unused_parameters: rank 1 raises at once naming
// it; rank 0, waiting for the bucket rank 1 never launched, raises too: at once when rank 1's
// next collective is another (the signatures disagree), else at the timeout, naming rank 1.
// (PyTorch's other rank waits for its timeout in both cases.)
double caught_after_s(const std::string& output) {
  const std::size_t at = output.find("CAUGHT after ");
  return at == std::string::npos ? -1.0 : std::atof(output.c_str() + at + 13);
}

TEST(DistributedDDP, AParameterUnusedOnOneRankFailsEveryRankWithinTheTimeout) {
  SKIP_WITHOUT_GLOO();
  for (const char* then : {"barrier", "wait"}) {
    Launch l;
    l.scenario = "ddp_unused_on_one_rank";
    const bool wait = std::string(then) == "wait";
    l.env = {{"DIST_THEN", then}, {"LEANGRAD_DIST_TIMEOUT_S", wait ? "2" : "20"}};
    l.deadline_s = 30;
    const std::vector<RankOutcome> outcomes = launch(l);
    for (const RankOutcome& o : outcomes)
      ASSERT_EQ(o.exit_code, 0) << then << "\n" << describe(outcomes);
    const std::string& named = outcomes[1].output;
    EXPECT_CONTAINS(named,
                    "parameters received no gradient in this backward on rank 1: "
                    "module.b.weight, module.b.bias");
    EXPECT_LT(caught_after_s(named), 10.0) << named;
    const std::string& waiting = outcomes[0].output;
    EXPECT_CONTAINS(waiting, "DistributedDataParallel: the all-reduce of bucket ");
    EXPECT_GE(caught_after_s(waiting), 0.0) << waiting;
    if (wait) {
      EXPECT_CONTAINS(waiting, "(timeout 2 s): rank 1 did not arrive");
      EXPECT_LT(caught_after_s(waiting), 10.0) << waiting;
    } else {
      EXPECT_CONTAINS(waiting, "(rank 0: all_reduce(avg) of float32 [420]; rank 1: barrier)");
      EXPECT_LT(caught_after_s(waiting), 10.0) << waiting;  // not the 20 s timeout
    }
  }
}

TEST(DistributedDDP, FindUnusedParametersReducesWhatSomeRankUsed) {
  SKIP_WITHOUT_GLOO();
  expect_all_pass("ddp_find_unused");
}

TEST(DistributedDDP, ConstructionBroadcastsRankZerosParametersAndBuffers) {
  SKIP_WITHOUT_GLOO();
  expect_all_pass("ddp_broadcast");
}

TEST(DistributedDDP, MismatchedModelsAreNamedOnEveryRank) {
  SKIP_WITHOUT_GLOO();
  for (const RankOutcome& o : expect_all_pass("ddp_mismatched_models")) {
    EXPECT_CONTAINS(o.output,
                    "CAUGHT: DistributedDataParallel: the ranks wrap different models (rank 0: 6 "
                    "parameters and 0 buffers; rank 1: 8 parameters and 0 buffers)");
  }
}

// Rank 1's `w` is [6, 4] where rank 0's is [4, 6]: as many elements, so without a check the
// construction broadcast would copy rank 0's bytes into rank 1's other shape. Every rank raises
// naming the parameter, with the signature exchange on and off (NCCL never exchanges them), and
// the group still works.
TEST(DistributedDDP, ParametersOfOtherShapesAreNamedOnEveryRank) {
  SKIP_WITHOUT_GLOO();
  for (const char* signatures : {"1", "0"}) {
    Launch l;
    l.scenario = "ddp_differing_shape";
    l.env = {{"LEANGRAD_DIST_SIGNATURES", signatures}};
    l.deadline_s = 30;
    const std::vector<RankOutcome> outcomes = launch(l);
    for (const RankOutcome& o : outcomes) {
      EXPECT_EQ(o.exit_code, 0) << "signatures " << signatures << "\n" << describe(outcomes);
      EXPECT_CONTAINS(o.output,
                      "CAUGHT: DistributedDataParallel: the ranks wrap different models: "
                      "parameter 'module.w' is float32 [4, 6] on rank 0 but float32 [6, 4] on "
                      "rank 1");
    }
  }
}

// Rank 1 froze its first layer: its buckets would hold other parameters than rank 0's, and
// their all-reduces pair up wrongly. Refused at construction, naming the parameter.
TEST(DistributedDDP, ParametersFrozenOnSomeRanksAreNamedOnEveryRank) {
  SKIP_WITHOUT_GLOO();
  for (const RankOutcome& o : expect_all_pass("ddp_differing_frozen")) {
    EXPECT_CONTAINS(o.output,
                    "CAUGHT: DistributedDataParallel: the ranks wrap different models: "
                    "parameter 'module.0.weight' is float32 [32, 20] requiring grad on rank 0 but "
                    "float32 [32, 20] frozen (requires_grad false) on rank 1");
  }
}

// Rank 1 is killed in the middle of a backward (after launching its first bucket): rank 0's
// backward raises within the 5 s timeout, naming the bucket and the dead rank.
TEST(DistributedDDP, ARankKilledInBackwardMakesTheOthersRaise) {
  SKIP_WITHOUT_GLOO();
  Launch l;
  l.scenario = "ddp_die";
  l.world_size = 2;
  l.env = {{"LEANGRAD_DIST_TIMEOUT_S", "5"}, {"DIST_VICTIM", "1"}};
  l.deadline_s = 30;
  const std::vector<RankOutcome> outcomes = launch(l);
  EXPECT_EQ(outcomes[1].signal, SIGKILL) << describe(outcomes);
  EXPECT_FALSE(outcomes[1].killed_at_deadline) << describe(outcomes);
  const RankOutcome& o = outcomes[0];
  ASSERT_EQ(o.exit_code, 0) << describe(outcomes);
  const std::size_t at = o.output.find("CAUGHT after ");
  ASSERT_NE(at, std::string::npos) << o.output;
  EXPECT_LT(std::atof(o.output.c_str() + at + 13), 5.0) << o.output;
  EXPECT_CONTAINS(o.output, "in step 3: DistributedDataParallel: the all-reduce of bucket ");
  EXPECT_CONTAINS(o.output, "failed in backward: all_reduce(avg) of float32");
  EXPECT_CONTAINS(o.output, "failed on rank 0 of a group of 2 after ");
  EXPECT_CONTAINS(o.output, "(timeout 5 s): ");
  EXPECT_CONTAINS(o.output, "rank 1 has exited");
}

}  // namespace
}  // namespace leangrad::test
