// What init_process_group is told: the backend, and where it should otherwise look in the
// environment (environment.h) for the rank, the world size and rank 0's address. Every field
// left at its default is read from the launcher's variables.
#pragma once

#include <chrono>
#include <string>

#include <leangrad/core/macros.h>

namespace leangrad::distributed {

// Gloo: CPU tensors, over TCP. NCCL: CUDA tensors of one GPU per process (docs/distributed.md).
enum class Backend { Gloo, NCCL };

// "gloo", "nccl".
const char* backend_name(Backend backend);

// The default timeout of rendezvous and of every collective (LEANGRAD_DIST_TIMEOUT_S overrides).
constexpr std::chrono::milliseconds kDefaultTimeout = std::chrono::minutes(10);

// InitOptions().backend(Backend::Gloo).rank(r).world_size(n).master_addr("node1")
//     .master_port(29500).timeout(std::chrono::seconds(60))
class InitOptions {
  LG_ARG(Backend, backend) = Backend::Gloo;
  // -1: from RANK, OMPI_COMM_WORLD_RANK or SLURM_PROCID (with the matching world size).
  LG_ARG(int, rank) = -1;
  // -1: from WORLD_SIZE, OMPI_COMM_WORLD_SIZE or SLURM_NTASKS.
  LG_ARG(int, world_size) = -1;
  // -1: from LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK or SLURM_LOCALID (else unknown, -1).
  LG_ARG(int, local_rank) = -1;
  // Empty: from MASTER_ADDR (127.0.0.1 for a group of one process).
  LG_ARG(std::string, master_addr) = "";
  // -1: from MASTER_PORT (any free port for a group of one process).
  LG_ARG(int, master_port) = -1;
  // Zero: from LEANGRAD_DIST_TIMEOUT_S (seconds), else kDefaultTimeout.
  LG_ARG(std::chrono::milliseconds, timeout) = std::chrono::milliseconds(0);
  // Empty: from LEANGRAD_STORE; unset there too means the TCP store of rank 0. "file:///dir" is
  // the file store in /dir (a folder every rank sees).
  LG_ARG(std::string, store) = "";
};

}  // namespace leangrad::distributed
