// leangrad-run's options, program lookup and rank environments (launch_plan.h).
#include "launch_plan.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>

namespace leangrad::tools {

void check_and_complete(LaunchOptions& o) {
  if (o.nproc_per_node < 1)
    throw UsageError("--nproc-per-node must be at least 1, got " +
                     std::to_string(o.nproc_per_node));
  if (o.nnodes < 1)
    throw UsageError("--nnodes must be at least 1, got " + std::to_string(o.nnodes));
  if (o.node_rank < 0 || o.node_rank >= o.nnodes) {
    throw UsageError("--node-rank " + std::to_string(o.node_rank) + " is not a node of the " +
                     std::to_string(o.nnodes) + " given by --nnodes (node ranks are 0.." +
                     std::to_string(o.nnodes - 1) + ")");
  }
  if (static_cast<std::int64_t>(o.nnodes) * o.nproc_per_node > INT_MAX) {
    throw UsageError("--nnodes " + std::to_string(o.nnodes) + " times --nproc-per-node " +
                     std::to_string(o.nproc_per_node) + " ranks is too large a world");
  }
  if (o.master_port < 0 || o.master_port > 65535) {
    throw UsageError("--master-port must be a TCP port, 1..65535, got " +
                     std::to_string(o.master_port));
  }
  if (!std::isfinite(o.grace_period_s) || o.grace_period_s < 0 || o.grace_period_s > 86400) {
    throw UsageError("--grace-period must be between 0 and 86400 seconds");
  }
  if (o.command.empty()) {
    throw UsageError("no program to run: leangrad-run [options] program [args...]");
  }
  if (o.nnodes > 1) {
    // Each node's launcher must name the same master: a default could differ between nodes.
    if (o.master_addr.empty()) {
      throw UsageError("--nnodes " + std::to_string(o.nnodes) +
                       " needs --master-addr: the address of node 0, whose leangrad-run serves the "
                       "store, the same on every node");
    }
    if (o.master_port == 0) {
      throw UsageError("--nnodes " + std::to_string(o.nnodes) +
                       " needs --master-port: a free port on node 0, the same on every node");
    }
  }
  if (o.master_addr.empty()) o.master_addr = "127.0.0.1";
}

ProcessLimits current_process_limits() {
  const auto soft = [](int resource) {
    struct rlimit limit {};
    if (::getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return UINT64_MAX;
    return static_cast<std::uint64_t>(limit.rlim_cur);
  };
  return {soft(RLIMIT_NOFILE), soft(RLIMIT_NPROC)};
}

void check_fits_limits(const LaunchOptions& o, const ProcessLimits& limits) {
  const auto ranks = static_cast<std::uint64_t>(o.nproc_per_node);  // checked before: >= 1
  const std::uint64_t store_connections =
      o.node_rank == 0 ? static_cast<std::uint64_t>(o.nnodes) * ranks : 0;
  const std::uint64_t files = 2 * ranks + store_connections + kLauncherOwnFiles;
  if (files > limits.open_files) {
    throw UsageError(
        "--nproc-per-node " + std::to_string(o.nproc_per_node) + " needs at least " +
        std::to_string(files) + " open files in leangrad-run (two output pipes per rank" +
        (store_connections > 0 ? ", a store connection per rank of the job" : "") +
        "), more than its limit of " + std::to_string(limits.open_files) + " (ulimit -n)");
  }
  if (ranks > limits.processes) {
    throw UsageError("--nproc-per-node " + std::to_string(o.nproc_per_node) +
                     " is more processes than this user may run, " +
                     std::to_string(limits.processes) + " (ulimit -u)");
  }
}

std::string find_program(const std::string& program, const char* path_variable) {
  if (program.empty()) throw UsageError("the program's name is empty");
  // What exec would run: an existing regular file with execute permission.
  const auto executable = [](const std::string& file) {
    struct stat info {};
    return ::stat(file.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
           ::access(file.c_str(), X_OK) == 0;
  };
  if (program.find('/') != std::string::npos) {
    if (executable(program)) return program;
    struct stat info {};
    if (::stat(program.c_str(), &info) != 0)
      throw UsageError("program " + program + ": " + std::strerror(errno));
    throw UsageError("program " + program + " is not an executable file");
  }
  std::string path;
  if (path_variable != nullptr) {
    path = path_variable;
  } else {
    // As execvp does without PATH: the system's default path.
    path.resize(::confstr(_CS_PATH, nullptr, 0));
    ::confstr(_CS_PATH, path.data(), path.size());
    path.resize(std::strlen(path.c_str()));
  }
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = path.find(':', begin);
    const std::string folder = path.substr(begin, end == std::string::npos ? end : end - begin);
    // An empty entry means the current folder.
    const std::string file = (folder.empty() ? std::string(".") : folder) + "/" + program;
    if (executable(file)) return file;
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  throw UsageError("program '" + program +
                   "' not found: no executable file of that name in PATH (" + path + ")");
}

std::vector<std::string> rank_environment(const LaunchOptions& o, int local_rank,
                                          const std::vector<std::string>& inherited,
                                          int omp_threads) {
  const std::int64_t rank = static_cast<std::int64_t>(o.node_rank) * o.nproc_per_node + local_rank;
  const std::int64_t world_size = static_cast<std::int64_t>(o.nnodes) * o.nproc_per_node;
  std::map<std::string, std::string> set = {
      {"RANK", std::to_string(rank)},
      {"WORLD_SIZE", std::to_string(world_size)},
      {"LOCAL_RANK", std::to_string(local_rank)},
      {"LOCAL_WORLD_SIZE", std::to_string(o.nproc_per_node)},
      {"MASTER_ADDR", o.master_addr},
      {"MASTER_PORT", std::to_string(o.master_port)},
      {"LEANGRAD_USE_AGENT_STORE", "1"},  // Note [The launcher's store] (tcp_store_server.cpp)
  };
  std::vector<std::string> environment;
  bool omp_inherited = false;
  for (const std::string& entry : inherited) {
    const std::string name = entry.substr(0, entry.find('='));
    omp_inherited |= name == "OMP_NUM_THREADS";
    if (set.count(name) == 0) environment.push_back(entry);
  }
  for (const auto& [name, value] : set)
    environment.push_back(name + "=" + value);
  if (!omp_inherited && omp_threads > 0)
    environment.push_back("OMP_NUM_THREADS=" + std::to_string(omp_threads));
  return environment;
}

int default_omp_threads(int cores, int nproc_per_node) {
  if (nproc_per_node <= 1) return 0;
  return cores / nproc_per_node > 1 ? cores / nproc_per_node : 1;
}

}  // namespace leangrad::tools
