// TCPStore: the default Store (store.h), as in torchrun's rendezvous. Rank 0 runs the server
// (tcp_store_server.h) on MASTER_PORT, or, under leangrad-run, node 0's launcher does (Note [The
// launcher's store] in tcp_store_server.cpp); every rank, rank 0 included, is a client with one
// connection to MASTER_ADDR:MASTER_PORT, opened with a Hello that states its rank, world size
// and group (so the server can refuse a mismatched rank and notice when a rank exits). Each
// request is answered at once; waits poll (Note [Waiting by polling] in store.cpp).
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <leangrad/distributed/socket.h>
#include <leangrad/distributed/store.h>

namespace leangrad::distributed {

class TCPStoreServer;

class TCPStore final : public Store {
 public:
  // Who serves the store: this process (rank 0, which starts the server first), rank 0's
  // process, or the launcher, before any rank started (LEANGRAD_USE_AGENT_STORE=1).
  enum class Server { ThisProcess, Rank0, Launcher };

  // Connects rank `rank` of `world_size` to the store of group number `generation` of the job
  // (store_keys::group_prefix) at host:port, retrying until `timeout` (rank 0 may start later
  // than the others, or still serve the previous group: Note [A store of an earlier group] in
  // tcp_store_server.cpp). With Server::ThisProcess (rank 0) it first starts the server on
  // `port`, 0 meaning any free port (port() tells which). The server writes why it refused a
  // rank under the group's store_keys::init_error. Throws Error when the port is in use, when
  // the store cannot be reached in time, and when the server refuses the rank.
  TCPStore(std::string host, int port, int rank, int world_size, std::chrono::milliseconds timeout,
           Server server, int generation = 1);
  ~TCPStore() override;

  void set(const std::string& key, const std::string& value) override;
  void post(const std::string& key, const std::string& value) override;
  std::optional<std::string> try_get(const std::string& key) override;
  std::int64_t add(const std::string& key, std::int64_t delta) override;
  std::string describe() const override;

  int port() const { return port_; }
  // This process's address as the store's server sees it: an interface other ranks can reach.
  std::string local_address() const { return local_address_; }
  // Rank 0 only: waits until every other rank has closed its connection or the deadline passed,
  // so that ranks still finishing can use the store before the server stops.
  void wait_for_ranks_to_leave(net::Deadline deadline);

 private:
  // Sends one request frame and returns the answer's payload (nothing when !answered).
  std::string request(const std::string& frame, bool answered = true);

  // "rank 0" or "leangrad-run": who serves the store, for messages.
  const char* server_name() const;

  std::string host_;
  int port_;
  int rank_;
  Server served_by_;
  std::unique_ptr<TCPStoreServer> server_;  // rank 0 only; outlives the connection below
  std::mutex mutex_;                        // one request at a time on the connection
  net::Socket socket_;
  std::string local_address_;
  std::string broken_;  // why the connection failed, once it has
};

}  // namespace leangrad::distributed
