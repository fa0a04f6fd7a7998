// From InitOptions and the launcher's environment to the settings of one process group: which
// rank this process is, of how many, and where rank 0's store is. A pure function of the options
// and an environment lookup, so every rule and every message is tested without processes.
//
// Rank and world size come from the first of these families that the launcher set (a value
// given in InitOptions wins over its variable):
//   torchrun, leangrad-run   RANK, WORLD_SIZE, LOCAL_RANK
//   Open MPI (mpirun)        OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK
//   Slurm (srun)             SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID
// and, with every family, MASTER_ADDR and MASTER_PORT (rank 0's host and the store's port),
// LEANGRAD_DIST_TIMEOUT_S, LEANGRAD_STORE, LEANGRAD_DIST_SIGNATURES and LEANGRAD_USE_AGENT_STORE
// (leangrad-run's: the launcher serves the store at MASTER_ADDR:MASTER_PORT already).
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include <leangrad/distributed/init_options.h>

namespace leangrad::distributed {

// The settings init_process_group settled on.
struct ProcessGroupConfig {
  Backend backend = Backend::Gloo;
  int rank = 0;
  int world_size = 1;
  int local_rank = -1;  // -1: no launcher said
  std::string master_addr;
  int master_port = 0;
  std::chrono::milliseconds timeout = kDefaultTimeout;
  std::string file_store_dir;  // empty: the TCP store
  // The TCP store is served by the launcher (LEANGRAD_USE_AGENT_STORE=1 and the port is
  // MASTER_PORT's), so rank 0 joins it as a client instead of serving it (Note [The launcher's
  // store] in tcp_store_server.cpp).
  bool agent_store = false;
  // Whether collectives exchange signatures first (Note [Signatures] in collective.cpp);
  // LEANGRAD_DIST_SIGNATURES=0 turns it off.
  bool check_signatures = true;
  // Where rank and world size came from, for messages: "RANK/WORLD_SIZE", "InitOptions", ...
  std::string source;
};

// The value of an environment variable, or nothing when it is not set.
using EnvironmentLookup = std::function<std::optional<std::string>(const std::string& name)>;

// This process's environment (getenv).
EnvironmentLookup process_environment();

// Resolves the settings; throws Error naming the variable and its value when one is missing,
// not a number, or out of range (a rank not below the world size, a port above 65535, ...).
ProcessGroupConfig resolve_init_options(const InitOptions& options, const EnvironmentLookup& env);

}  // namespace leangrad::distributed
