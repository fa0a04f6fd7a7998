// What leangrad-run starts, decided before anything runs: its options checked and completed
// (the master's address), the program found in PATH as exec would find it, and the environment
// of each rank (torchrun's variables, docs/distributed.md). No processes and no sockets here:
// the launcher itself is leangrad_run.cpp (which serves the store on node 0 and so fills in the
// port), and tests/tools/test_launch_plan.cpp tests these rules.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace leangrad::tools {

// A command line leangrad-run cannot run: the launcher prints the message and exits with 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct LaunchOptions {
  int nproc_per_node = 0;            // ranks started on this node
  int nnodes = 1;                    // nodes of the job, each running one leangrad-run
  int node_rank = 0;                 // this node's index in 0..nnodes-1
  std::string master_addr;           // rank 0's host; empty: 127.0.0.1 (one node only)
  int master_port = 0;               // the store's port; 0: the one node's launcher binds any
  double grace_period_s = 5;         // from SIGTERM to SIGKILL when the ranks are stopped
  std::vector<std::string> command;  // the program and its arguments
};

// Checks `o` (throws UsageError naming the option) and fills in the defaults: on one node the
// master is 127.0.0.1, and a port left 0 is the one node 0's launcher gets when it binds the
// store's (leangrad_run.cpp); on several nodes both must be given, since every node must name
// the same one.
void check_and_complete(LaunchOptions& o);

// The soft limits of the launcher's process that its ranks count against (getrlimit's;
// UINT64_MAX where there is none).
struct ProcessLimits {
  std::uint64_t open_files = UINT64_MAX;  // RLIMIT_NOFILE (ulimit -n)
  std::uint64_t processes = UINT64_MAX;   // RLIMIT_NPROC (ulimit -u), for this user's processes
};
ProcessLimits current_process_limits();

// Throws UsageError when o.nproc_per_node ranks cannot start within `limits`, before any does:
// the launcher holds two files per rank it starts (the read ends of the rank's stdout and stderr
// pipes), on node 0 one more per rank of the job (its connection to the store node 0 serves),
// and kLauncherOwnFiles of its own; each rank is a process of this user. Without the check,
// leangrad-run --nproc-per-node 100000 started about 10,000 ranks before one failed on "Too many
// open files" and the rest were stopped. The counts are lower bounds: a job that passes may still
// meet a limit (the user's other processes count too), and then stops as before.
inline constexpr std::uint64_t kLauncherOwnFiles = 16;
void check_fits_limits(const LaunchOptions& o, const ProcessLimits& limits);

// The file exec would run for `program`: the program itself when it contains a '/', else the
// first executable regular file named so in the folders of `path_variable` (PATH; nullptr: unset,
// then the system's default path). Throws UsageError saying what was searched when there is none.
std::string find_program(const std::string& program, const char* path_variable);

// The environment of local rank `local_rank` ("NAME=value" strings): `inherited` (the launcher's
// own environment) with RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT (o.master_port must be the store's by now) and LEANGRAD_USE_AGENT_STORE=1 (node
// 0's launcher serves the store: rank 0 joins it rather than serving it) set for this rank, and
// OMP_NUM_THREADS set to `omp_threads` unless it is inherited or `omp_threads` is 0.
std::vector<std::string> rank_environment(const LaunchOptions& o, int local_rank,
                                          const std::vector<std::string>& inherited,
                                          int omp_threads);

// OpenMP threads per rank when OMP_NUM_THREADS is not set: the cores shared out among the ranks of
// the node (at least 1), so N ranks do not each start a thread per core; 0 (leave OpenMP's default)
// for a single rank.
int default_omp_threads(int cores, int nproc_per_node);

}  // namespace leangrad::tools
