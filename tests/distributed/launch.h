// Starting the ranks of a multi-process test: dist_worker processes spawned with posix_spawn
// (safe from GoogleTest's threads), each with RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and
// MASTER_PORT set and every other launcher's variables removed, their output collected in files.
// A process still running at the deadline is killed, and its outcome says so.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include <leangrad/distributed/process_group.h>
#include <leangrad/distributed/socket.h>

// In a test body: SKIPPED in a build without Gloo (LEANGRAD_WITH_GLOO=OFF), where no rank could
// join a process group.
#define SKIP_WITHOUT_GLOO() \
  if (!distributed::is_gloo_available()) GTEST_SKIP() << "built without Gloo"

namespace leangrad::test {

// A fixture whose tests run in a Gloo group of this one process (no launcher, no other rank),
// destroyed after each test; SKIPPED in a build without Gloo.
class GroupOfOneTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
};

struct RankOutcome {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;      // the signal that ended it, 0 when it exited
  bool killed_at_deadline = false;
  double seconds = 0;  // from spawn to exit
  std::string output;  // stdout and stderr
};

struct Launch {
  std::string scenario;
  int world_size = 2;
  // Variables for every rank (LEANGRAD_DIST_TIMEOUT_S defaults to 20 s), and per rank.
  std::map<std::string, std::string> env;
  std::map<int, std::map<std::string, std::string>> rank_env;
  // The ranks to start (empty: all). A rank set to "" in rank_env/env keeps the variable unset.
  std::vector<int> ranks;
  // A command to run a rank's dist_worker through, e.g. {"/usr/sbin/ip", "netns", "exec", "ns0"}.
  std::map<int, std::vector<std::string>> rank_prefix;
  // MASTER_PORT: 0 picks a free port (and retries with another when the chosen one was taken
  // meanwhile by another test).
  int port = 0;
  double deadline_s = 60;
};

// Runs the ranks to completion; outcomes are indexed like `ranks` (all ranks: by rank).
std::vector<RankOutcome> launch(const Launch& launch);

// A TCP port that was free a moment ago (bound to port 0 and released): another process may
// take it before it is used, which launch() detects and retries. For rank 0's MASTER_PORT only,
// which rank 0 must bind itself and the other ranks be told before they start; a test that
// serves a store in its own process lets the server pick the port (TCPStore::port()).
int free_port();

// A port of 127.0.0.1 on which nobody listens and nobody can while this lives: a socket bound to
// it without listening, so connections to it are refused (the "unreachable store" cases), and
// no other process can bind it meanwhile, as it could a port found free and released.
class UnservedPort {
 public:
  UnservedPort();
  int port() const { return port_; }

 private:
  distributed::net::Socket socket_;
  int port_ = 0;
};

// "rank 0 (exit 0, 0.12 s):\n<output>...": every outcome, for failure messages.
std::string describe(const std::vector<RankOutcome>& outcomes);

// Runs `scenario` on `world_size` ranks (deadline 60 s) and expects every rank to exit 0, having
// passed its checks (a GoogleTest failure listing every rank's output otherwise).
std::vector<RankOutcome> expect_all_pass(const std::string& scenario, int world_size = 2);

}  // namespace leangrad::test
