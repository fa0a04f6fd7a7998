// The collectives in several processes over loopback: dist_worker ranks (dist_worker.cpp) run a
// scenario and check every result against the plain reference they compute themselves; these
// tests start them (launch.h) with 2 and 4 ranks and read their exit codes and output.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <leangrad/core/cuda.h>
#include <leangrad/distributed/process_group.h>
#include "distributed/launch.h"
#include "testing/tensor_testing.h"

namespace leangrad::test {
namespace {

// Runs `scenario` on `world_size` ranks and expects every rank to pass its checks.
void expect_scenario_passes(const std::string& scenario, int world_size) {
  SKIP_WITHOUT_GLOO();
  Launch l;
  l.scenario = scenario;
  l.world_size = world_size;
  const std::vector<RankOutcome> outcomes = launch(l);
  for (const RankOutcome& o : outcomes) {
    ASSERT_EQ(o.exit_code, 0) << describe(outcomes);
    EXPECT_CONTAINS(o.output, "OK " + scenario);
  }
}

// CUDA tensors through the Gloo group, staged through pinned host buffers (Note [CUDA tensors on
// Gloo]): two ranks sharing GPU 0, which NCCL would refuse. SKIPPED without a GPU.
TEST(DistributedCollectives, CudaTensorsStagedThroughGlooOnTwoRanksSharingOneGpu) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  expect_scenario_passes("collectives_cuda", 2);
}

TEST(DistributedCollectives, EveryCollectiveDtypeSizeAndReductionOnTwoRanks) {
  expect_scenario_passes("collectives", 2);
}
TEST(DistributedCollectives, EveryCollectiveDtypeSizeAndReductionOnFourRanks) {
  expect_scenario_passes("collectives", 4);
}
TEST(DistributedCollectives, NonContiguousTensorsAndAsyncWorkOnTwoRanks) {
  expect_scenario_passes("layouts_async", 2);
}
TEST(DistributedCollectives, NonContiguousTensorsAndAsyncWorkOnFourRanks) {
  expect_scenario_passes("layouts_async", 4);
}
TEST(DistributedCollectives, AllReduceOf64MiBOnTwoRanks) {
  expect_scenario_passes("big", 2);
}
TEST(DistributedCollectives, AllReduceOf64MiBOnFourRanks) {
  expect_scenario_passes("big", 4);
}

// The root of a large broadcast and the rank it feeds exit as soon as their part is done, while
// the ranks downstream of a late rank still receive: those must complete, not fail with "rank 1
// has exited" (Note [A rank that exits after its last collective] in progress.cpp). With four
// ranks and root 1, Gloo's binomial tree sends 1 -> 3 -> 0 and 1 -> 2: rank 3 still sends to
// the late rank 0 after ranks 1 and 2 have gone.
TEST(DistributedCollectives, RanksThatExitAfterTheirPartOfABroadcastDoNotFailTheOthers) {
  SKIP_WITHOUT_GLOO();
  Launch l;
  l.scenario = "exit_after_broadcast";
  l.world_size = 4;
  l.env = {{"LEANGRAD_DIST_SIGNATURES", "0"}, {"DIST_ROOT", "1"}, {"DIST_LATE", "0"}};
  const std::vector<RankOutcome> outcomes = launch(l);
  for (const RankOutcome& o : outcomes) {
    ASSERT_EQ(o.exit_code, 0) << describe(outcomes);
    EXPECT_CONTAINS(o.output, "OK exit_after_broadcast");
  }
}

// A second group in the same processes, the other ranks asking for it while rank 0 still
// serves the first one's store (Note [A store of an earlier group] in tcp_store_server.cpp):
// within seconds, not at the 20 s timeout.
TEST(DistributedCollectives, ASecondGroupInTheSameProcesses) {
  SKIP_WITHOUT_GLOO();
  Launch l;
  l.scenario = "reinit";
  l.world_size = 3;
  const std::vector<RankOutcome> outcomes = launch(l);
  for (const RankOutcome& o : outcomes) {
    ASSERT_EQ(o.exit_code, 0) << describe(outcomes);
    EXPECT_CONTAINS(o.output, "OK reinit");
    EXPECT_LT(o.seconds, 15.0) << describe(outcomes);
  }
}

// destroy_process_group while collectives are queued, and collectives after it: the queued ones
// complete (their data checked) on both ranks, within seconds, and every call after
// destroy_process_group raises naming it.
TEST(DistributedCollectives, DestroyRunsTheQueuedCollectivesAndRefusesLaterOnes) {
  SKIP_WITHOUT_GLOO();
  Launch l;
  l.scenario = "destroy_in_flight";
  l.env = {{"LEANGRAD_DIST_TIMEOUT_S", "5"}};
  l.deadline_s = 30;
  const std::vector<RankOutcome> outcomes = launch(l);
  for (const RankOutcome& o : outcomes) {
    ASSERT_EQ(o.exit_code, 0) << describe(outcomes);
    EXPECT_LT(o.seconds, 15.0) << describe(outcomes);
    EXPECT_CONTAINS(o.output, "the collectives in flight at destroy_process_group completed");
    EXPECT_CONTAINS(o.output,
                    "AFTER all_reduce: distributed::all_reduce: no process group; call "
                    "distributed::init_process_group first");
    EXPECT_CONTAINS(o.output, "AFTER kept handle: all_reduce(sum) of float32 [1048576]");
    EXPECT_CONTAINS(o.output, "AFTER kept handle again: broadcast from rank 0 of float32");
    EXPECT_CONTAINS(o.output,
                    "(collective #5): the process group was destroyed (destroy_process_group)");
  }
}

// Another thread's is_initialized() and get_rank() answer while rank 0's destroy_process_group
// still waits for rank 1 to leave its store (Note [Destroying outside the lock] in
// distributed.cpp): rank 1 leaves only once rank 0's querying thread has its answers, so they
// come while destroy waits, or, were destroy to hold them up, only after the minutes of the
// timeout, past this launch's deadline (rank 1 gives up after 60 s and fails).
TEST(DistributedCollectives, QueriesFromAnotherThreadAnswerWhileDestroyWaits) {
  SKIP_WITHOUT_GLOO();
  const std::string signal_file =
      ::testing::TempDir() + "leangrad_destroy_signal_" + std::to_string(::getpid());
  std::remove(signal_file.c_str());
  Launch l;
  l.scenario = "destroy_while_querying";
  l.env = {{"LEANGRAD_DIST_TIMEOUT_S", "300"}, {"DIST_SIGNAL_FILE", signal_file}};
  l.deadline_s = 90;
  const std::vector<RankOutcome> outcomes = launch(l);
  std::remove(signal_file.c_str());
  for (const RankOutcome& o : outcomes) {
    ASSERT_EQ(o.exit_code, 0) << describe(outcomes);
    EXPECT_CONTAINS(o.output, "OK destroy_while_querying");
  }
  EXPECT_CONTAINS(outcomes[0].output,
                  "QUERIES: is_initialized() false; get_rank(): distributed::get_rank: no process "
                  "group; call distributed::init_process_group first; destroy_process_group had "
                  "not returned yet");
}

// A group of one process needs no environment at all beyond its rank.
TEST(DistributedCollectives, OneRankWithoutMasterAddress) {
  SKIP_WITHOUT_GLOO();
  Launch l;
  l.scenario = "collectives";
  l.world_size = 1;
  l.env = {{"MASTER_ADDR", ""}, {"MASTER_PORT", ""}};
  const std::vector<RankOutcome> outcomes = launch(l);
  ASSERT_EQ(outcomes[0].exit_code, 0) << describe(outcomes);
}

// Mismatched calls: every rank raises the same error, naming who called what, and the group
// still works afterwards (the worker checks with one more all_reduce).
void expect_mismatch(const std::string& kind, const std::string& error_class,
                     const std::vector<std::string>& words) {
  SKIP_WITHOUT_GLOO();
  Launch l;
  l.scenario = "mismatch_" + kind;
  l.world_size = 2;
  const std::vector<RankOutcome> outcomes = launch(l);
  for (const RankOutcome& o : outcomes) {
    ASSERT_EQ(o.exit_code, 0) << describe(outcomes);
    EXPECT_CONTAINS(o.output, "CAUGHT " + error_class +
                                  ": distributed: the 2 ranks of the group "
                                  "disagree about collective #1");
    for (const std::string& word : words)
      EXPECT_CONTAINS(o.output, word);
    EXPECT_CONTAINS(o.output, "the group works after the mismatch");
  }
}

TEST(DistributedCollectives, MismatchedShapesAreAShapeErrorOnEveryRank) {
  expect_mismatch(
      "shape", "ShapeError",
      {"rank 0: all_reduce(sum) of float32 [4]", "rank 1: all_reduce(sum) of float32 [5]"});
}
TEST(DistributedCollectives, MismatchedDtypesAreADTypeErrorOnEveryRank) {
  expect_mismatch(
      "dtype", "DTypeError",
      {"rank 0: all_reduce(sum) of float32 [4]", "rank 1: all_reduce(sum) of float64 [4]"});
}
TEST(DistributedCollectives, MismatchedCollectivesAreAnErrorOnEveryRank) {
  expect_mismatch(
      "op", "Error",
      {"rank 0: all_reduce(sum) of float32 [4]", "rank 1: broadcast from rank 0 of float32 [4]"});
}

// Without signatures (LEANGRAD_DIST_SIGNATURES=0) a mismatch is not seen before the data moves.
// Gloo then met a message longer than the buffer posted for it by throwing from its event-loop
// thread, which terminated the process (SIGABRT). Payloads of different byte counts now carry
// different Gloo tags (Note [Gloo tags] in gloo/gloo_tags.h), so they never pair: every rank
// raises an Error at the 2 s timeout, and the group is broken.
TEST(DistributedCollectives, WithoutSignaturesMismatchedSizesRaiseAtTheTimeoutNotAbort) {
  SKIP_WITHOUT_GLOO();
  Launch l;
  l.scenario = "mismatch_shape";
  l.env = {{"LEANGRAD_DIST_SIGNATURES", "0"}, {"LEANGRAD_DIST_TIMEOUT_S", "2"}};
  l.deadline_s = 30;
  const std::vector<RankOutcome> outcomes = launch(l);
  for (int r = 0; r < 2; ++r) {
    const RankOutcome& o = outcomes[static_cast<std::size_t>(r)];
    EXPECT_EQ(o.signal, 0) << describe(outcomes);
    EXPECT_EQ(o.exit_code, 2) << describe(outcomes);  // the all-reduce after it: group broken
    EXPECT_CONTAINS(o.output, std::string("CAUGHT Error: all_reduce(sum) of float32 [") +
                                  (r == 0 ? "4" : "5") + "] (collective #1) failed on rank " +
                                  std::to_string(r));
    EXPECT_CONTAINS(o.output, "the process group is unusable after an earlier failure");
  }
}

// Two "hosts": network namespaces joined by a veth pair (10.213.0.1 and 10.213.0.2), one rank in
// each, MASTER_ADDR the first's address. Nothing but the veth link joins them, so this checks
// that each rank gives Gloo an address the other can reach (the one its store connection uses).
// Needs root; SKIPPED where network namespaces cannot be made.
TEST(DistributedTwoHosts, RanksInTwoNetworkNamespacesJoinedByAVethPair) {
  SKIP_WITHOUT_GLOO();
  if (::geteuid() != 0) GTEST_SKIP() << "network namespaces need root";
  const std::string id = std::to_string(::getpid());
  const std::string ns_a = "lg" + id + "a";
  const std::string ns_b = "lg" + id + "b";
  auto sh = [](const std::string& command) {
    return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
  };
  if (!sh("ip netns add " + ns_a)) GTEST_SKIP() << "cannot make network namespaces here";
  struct Cleanup {
    std::string a, b;
    ~Cleanup() {
      std::system(
          ("ip netns del " + a + " 2>/dev/null; ip netns del " + b + " 2>/dev/null").c_str());
    }
  } cleanup{ns_a, ns_b};
  ASSERT_TRUE(sh("ip netns add " + ns_b));
  ASSERT_TRUE(sh("ip link add lgv" + id + "a netns " + ns_a + " type veth peer name lgv" + id +
                 "b netns " + ns_b));
  ASSERT_TRUE(sh("ip -n " + ns_a + " addr add 10.213.0.1/24 dev lgv" + id + "a"));
  ASSERT_TRUE(sh("ip -n " + ns_b + " addr add 10.213.0.2/24 dev lgv" + id + "b"));
  for (const std::string& ns : {ns_a, ns_b}) {
    ASSERT_TRUE(sh("ip -n " + ns + " link set lo up"));
    ASSERT_TRUE(sh("ip -n " + ns + " link set lgv" + id + ns.back() + " up"));
  }
  Launch l;
  l.scenario = "layouts_async";
  l.world_size = 2;
  l.env = {{"MASTER_ADDR", "10.213.0.1"}};
  l.rank_prefix[0] = {"/usr/bin/env", "ip", "netns", "exec", ns_a};
  l.rank_prefix[1] = {"/usr/bin/env", "ip", "netns", "exec", ns_b};
  const std::vector<RankOutcome> outcomes = launch(l);
  for (const RankOutcome& o : outcomes) {
    ASSERT_EQ(o.exit_code, 0) << describe(outcomes);
    EXPECT_CONTAINS(o.output, "OK layouts_async");
  }
}

}  // namespace
}  // namespace leangrad::test
