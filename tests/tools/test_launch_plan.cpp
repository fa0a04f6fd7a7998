// leangrad-run's rules without processes (tools/launch_plan.h, tools/rank_output.h): the options
// checked and completed, the program found as exec finds it, each rank's environment, and the
// output cut into prefixed lines. test_leangrad_run.cpp runs the launcher itself.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "launch_plan.h"
#include "rank_output.h"

namespace leangrad::tools {
namespace {

LaunchOptions options(int nproc_per_node) {
  LaunchOptions o;
  o.nproc_per_node = nproc_per_node;
  o.command = {"sh", "-c", "true"};
  return o;
}

// The message of the UsageError `o` is refused with ("" when it is accepted).
std::string refusal(LaunchOptions o) {
  try {
    check_and_complete(o);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

// The port stays 0 on one node: the launcher binds the store's port itself (leangrad_run.cpp),
// so no port is chosen here that another program could take before it is bound.
TEST(LaunchPlan, OneNodeGetsLoopbackAndThePortIsLeftToTheStore) {
  LaunchOptions o = options(2);
  check_and_complete(o);
  EXPECT_EQ(o.master_addr, "127.0.0.1");
  EXPECT_EQ(o.master_port, 0);
  LaunchOptions given = options(2);
  given.master_addr = "10.0.0.7";
  given.master_port = 29555;
  check_and_complete(given);
  EXPECT_EQ(given.master_addr, "10.0.0.7");
  EXPECT_EQ(given.master_port, 29555);
}

TEST(LaunchPlan, BadOptionsAreRefusedNamingTheOption) {
  LaunchOptions o = options(0);
  EXPECT_EQ(refusal(o), "--nproc-per-node must be at least 1, got 0");
  o = options(2);
  o.nnodes = 0;
  EXPECT_EQ(refusal(o), "--nnodes must be at least 1, got 0");
  o = options(2);
  o.nnodes = 2;
  o.node_rank = 2;
  o.master_addr = "10.0.0.1";
  o.master_port = 29500;
  EXPECT_EQ(refusal(o),
            "--node-rank 2 is not a node of the 2 given by --nnodes (node ranks are 0..1)");
  o.node_rank = -1;
  EXPECT_NE(refusal(o).find("--node-rank -1 is not a node"), std::string::npos);
  o = options(2);
  o.nnodes = 2;
  EXPECT_NE(refusal(o).find("--nnodes 2 needs --master-addr"), std::string::npos);
  o.master_addr = "10.0.0.1";
  EXPECT_NE(refusal(o).find("--nnodes 2 needs --master-port"), std::string::npos);
  o.master_port = 29500;
  EXPECT_EQ(refusal(o), "");
  o = options(2);
  o.master_port = 70000;
  EXPECT_EQ(refusal(o), "--master-port must be a TCP port, 1..65535, got 70000");
  o = options(2);
  o.grace_period_s = -1;
  EXPECT_NE(refusal(o).find("--grace-period"), std::string::npos);
  o = options(2);
  o.command.clear();
  EXPECT_NE(refusal(o).find("no program to run"), std::string::npos);
  o = options(65536);
  o.nnodes = 65536;
  o.master_addr = "h";
  o.master_port = 1;
  EXPECT_NE(refusal(o).find("too large a world"), std::string::npos);
}

// The launcher's files (two pipes per rank, on node 0 a store connection per rank of the job,
// kLauncherOwnFiles) and the user's processes are checked before any rank starts.
TEST(LaunchPlan, RanksBeyondTheProcessLimitsAreRefusedBeforeAnyStarts) {
  const auto limit_refusal = [](const LaunchOptions& o, const ProcessLimits& limits) {
    try {
      check_fits_limits(o, limits);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  LaunchOptions o = options(100);
  // Node 0 of one: 2 * 100 + 100 + 16 files.
  EXPECT_EQ(limit_refusal(o, {.open_files = 316}), "");
  EXPECT_EQ(limit_refusal(o, {.open_files = 315}),
            "--nproc-per-node 100 needs at least 316 open files in leangrad-run (two output "
            "pipes per rank, a store connection per rank of the job), more than its limit of 315 "
            "(ulimit -n)");
  // Node 0 of two serves both nodes' ranks; node 1 serves none.
  o.nnodes = 2;
  EXPECT_NE(limit_refusal(o, {.open_files = 415}), "");
  EXPECT_EQ(limit_refusal(o, {.open_files = 416}), "");
  o.node_rank = 1;
  EXPECT_EQ(limit_refusal(o, {.open_files = 216}), "");
  EXPECT_NE(limit_refusal(o, {.open_files = 215}).find("(two output pipes per rank)"),
            std::string::npos);
  // Processes of this user; no limits at all.
  EXPECT_EQ(limit_refusal(o, {.processes = 100}), "");
  EXPECT_EQ(limit_refusal(o, {.processes = 99}),
            "--nproc-per-node 100 is more processes than this user may run, 99 (ulimit -u)");
  EXPECT_EQ(limit_refusal(options(1 << 30), {}), "");
}

TEST(LaunchPlan, ProgramsAreFoundAsExecFindsThem) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("leangrad_find_program_" + std::to_string(::getpid()));
  fs::create_directories(dir / "bin");
  const fs::path script = dir / "bin" / "myprog";
  std::ofstream(script) << "#!/bin/sh\n";
  const fs::path plain = dir / "bin" / "notexec";
  std::ofstream(plain) << "text\n";
  fs::permissions(script, fs::perms::owner_all);
  fs::create_directories(dir / "bin" / "adir");
  const std::string path = "/nonexistent:" + (dir / "bin").string();

  EXPECT_EQ(find_program("myprog", path.c_str()), script.string());
  EXPECT_EQ(find_program(script.string(), "/nonexistent"), script.string());  // a '/': as is
  EXPECT_EQ(find_program("sh", nullptr).back(), 'h');  // PATH unset: the system's default path
  const auto refused = [&](const std::string& program) {
    try {
      find_program(program, path.c_str());
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("found");
  };
  EXPECT_EQ(
      refused("nosuchprogram"),
      "program 'nosuchprogram' not found: no executable file of that name in PATH (" + path + ")");
  EXPECT_NE(refused("notexec").find("not found"), std::string::npos);  // skipped, as exec does
  EXPECT_NE(refused("adir").find("not found"), std::string::npos);     // a folder is no program
  EXPECT_EQ(refused(plain.string()), "program " + plain.string() + " is not an executable file");
  EXPECT_EQ(refused((dir / "missing").string()),
            "program " + (dir / "missing").string() + ": No such file or directory");
  EXPECT_EQ(refused(""), "the program's name is empty");
  // An empty PATH entry is the current folder.
  const fs::path before = fs::current_path();
  fs::current_path(dir / "bin");
  EXPECT_EQ(find_program("myprog", "/nonexistent::"), "./myprog");
  fs::current_path(before);
  fs::remove_all(dir);
}

// The value of `name` in an environment ("" when absent), and how often it is set.
std::string value_of(const std::vector<std::string>& environment, const std::string& name) {
  for (const std::string& entry : environment) {
    if (entry.rfind(name + "=", 0) == 0) return entry.substr(name.size() + 1);
  }
  return "";
}
long count_of(const std::vector<std::string>& environment, const std::string& name) {
  return std::count_if(environment.begin(), environment.end(),
                       [&](const std::string& e) { return e.rfind(name + "=", 0) == 0; });
}

TEST(LaunchPlan, EachRankGetsTorchrunsVariables) {
  LaunchOptions o = options(4);
  o.nnodes = 3;
  o.node_rank = 2;
  o.master_addr = "node0";
  o.master_port = 29500;
  const std::vector<std::string> inherited = {"HOME=/root", "RANK=99", "MASTER_PORT=1", "PATH=/bin",
                                              "LOCAL_WORLD_SIZE=77"};
  const std::vector<std::string> env = rank_environment(o, 3, inherited, 0);
  EXPECT_EQ(value_of(env, "RANK"), "11");  // node 2 * 4 + local rank 3
  EXPECT_EQ(value_of(env, "WORLD_SIZE"), "12");
  EXPECT_EQ(value_of(env, "LOCAL_RANK"), "3");
  EXPECT_EQ(value_of(env, "LOCAL_WORLD_SIZE"), "4");
  EXPECT_EQ(value_of(env, "MASTER_ADDR"), "node0");
  EXPECT_EQ(value_of(env, "MASTER_PORT"), "29500");
  EXPECT_EQ(value_of(env, "LEANGRAD_USE_AGENT_STORE"), "1");  // rank 0 joins node 0's store
  EXPECT_EQ(value_of(env, "HOME"), "/root");                  // the rest is inherited
  EXPECT_EQ(value_of(env, "PATH"), "/bin");
  for (const char* name : {"RANK", "MASTER_PORT", "LOCAL_WORLD_SIZE"})
    EXPECT_EQ(count_of(env, name), 1) << name;  // replaced, not repeated
  EXPECT_EQ(count_of(env, "OMP_NUM_THREADS"), 0);
}

TEST(LaunchPlan, OpenMPThreadsAreSharedOutUnlessSet) {
  EXPECT_EQ(default_omp_threads(16, 1), 0);  // one rank: OpenMP's own default
  EXPECT_EQ(default_omp_threads(16, 2), 8);
  EXPECT_EQ(default_omp_threads(16, 3), 5);
  EXPECT_EQ(default_omp_threads(2, 4), 1);
  const LaunchOptions o = options(2);
  EXPECT_EQ(value_of(rank_environment(o, 0, {"HOME=/"}, 8), "OMP_NUM_THREADS"), "8");
  const std::vector<std::string> set = rank_environment(o, 0, {"OMP_NUM_THREADS=3"}, 8);
  EXPECT_EQ(value_of(set, "OMP_NUM_THREADS"), "3");
  EXPECT_EQ(count_of(set, "OMP_NUM_THREADS"), 1);
}

TEST(RankOutput, PrefixesWholeLinesAndKeepsThePartialOne) {
  RankOutput out(3);
  EXPECT_EQ(out.feed("hel"), "");
  EXPECT_EQ(out.feed("lo\nwor"), "[rank 3] hello\n");
  EXPECT_EQ(out.feed("ld\n\nx\n"), "[rank 3] world\n[rank 3] \n[rank 3] x\n");
  EXPECT_EQ(out.feed("tail"), "");
  EXPECT_EQ(out.finish(), "[rank 3] tail\n");  // the partial last line, ended
  EXPECT_EQ(out.finish(), "");
  EXPECT_EQ(out.feed(std::string("a\rb\0c\n", 6)), std::string("[rank 3] a\rb\0c\n", 15));
}

TEST(RankOutput, CutsLinesLongerThanTheLimit) {
  RankOutput out(0);
  const std::string prefix = "[rank 0] ";
  const std::string long_line(kMaxLineBytes + 10, 'a');
  const std::string lines = out.feed(long_line);
  EXPECT_EQ(lines, prefix + std::string(kMaxLineBytes, 'a') + "\n");
  EXPECT_EQ(out.feed("b\n"), prefix + "aaaaaaaaaab\n");
  // Exactly the limit with its '\n' is one line.
  EXPECT_EQ(out.feed(std::string(kMaxLineBytes - 1, 'c') + "\n"),
            prefix + std::string(kMaxLineBytes - 1, 'c') + "\n");
  // Fed a byte at a time, the same.
  std::string bytewise;
  for (std::size_t i = 0; i < kMaxLineBytes + 1; ++i)
    bytewise += out.feed("d");
  EXPECT_EQ(bytewise, prefix + std::string(kMaxLineBytes, 'd') + "\n");
  EXPECT_EQ(out.finish(), prefix + "d\n");
}

}  // namespace
}  // namespace leangrad::tools
