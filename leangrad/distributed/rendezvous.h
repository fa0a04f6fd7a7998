// Rendezvous: how the processes of a job find each other before their first collective. Each
// rank opens the store (rank 0 serves the TCP store, unless the launcher does; every rank opens
// a file store), publishes its world size, backend and signature setting under
// g<n>/init/settings/<rank>, and waits until every rank of the job has, comparing as the values
// arrive. It fails within seconds on a
// mismatched setting, a refused rank or an unreachable store, and after the timeout names the
// ranks that never came.
#pragma once

#include <memory>
#include <string>

#include <leangrad/distributed/environment.h>
#include <leangrad/distributed/store.h>

namespace leangrad::distributed {

class TCPStore;

struct Rendezvous {
  std::shared_ptr<Store> store;
  std::shared_ptr<TCPStore> tcp_store;  // the same store when it is the TCP store, else null
  // This process's address as the other ranks can reach it (the interface that reached the
  // store); empty with the file store (Gloo then uses the machine's host name).
  std::string local_address;
};

// Opens the store `config` names for group number `generation` of this process (its keys under
// store_keys::group_prefix(generation)) and waits until every rank has joined it. Throws Error
// naming what went wrong. The same as meet(open_store(config, generation), ...).
Rendezvous rendezvous(const ProcessGroupConfig& config, int generation);

// The two halves of rendezvous. open_store connects to the store (rank 0 serves the TCP store
// first, unless config.agent_store: with master_port 0 on any free port, which
// tcp_store->port() then tells, as PyTorch's TCPStore(port=0) does). meet publishes this rank's
// settings and waits for every rank, and on a failure tells the others why before it throws.
Rendezvous open_store(const ProcessGroupConfig& config, int generation);
Rendezvous meet(Rendezvous opened, const ProcessGroupConfig& config, int generation);

}  // namespace leangrad::distributed
