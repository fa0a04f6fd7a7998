// The server of the TCP store, run on one thread of its own by rank 0, or by the launcher
// (leangrad-run on node 0: Note [The launcher's store] in tcp_store_server.cpp): a map from keys
// to values, answered over the protocol of tcp_store_protocol.h. Besides the map it keeps the
// roll of connected ranks, which gives the store two duties beyond key-value storage:
// - it refuses a joining rank whose WORLD_SIZE differs from the server's, whose RANK is out of
//   range or already connected, and writes the reason under the group's
//   store_keys::init_error, so every rank's rendezvous stops at once with that message;
// - when a rank's connection closes it sets the group's store_keys::left(rank) to the time
//   (milliseconds since the server started), so a failed collective can say which ranks exited,
//   first first.
// Rank 0's server serves one group of the job (its generation, store_keys::group_prefix): a rank
// joining a later group while it still runs is told to come back (Note [A store of an earlier
// group] in tcp_store_server.cpp). The launcher's serves every group of the job at once.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include <leangrad/distributed/socket.h>

namespace leangrad::distributed {

class TCPStoreServer {
 public:
  // The generation of a server that serves every group of the job (the launcher's).
  static constexpr int kEveryGroup = 0;

  // Listens on `port` (0: a free port; see port()) for the group number `generation` of a job
  // of `world_size` ranks (rank 0's server), or for all of them with kEveryGroup (the
  // launcher's). Throws Error at once when the port is in use.
  TCPStoreServer(int port, int world_size, int generation);
  ~TCPStoreServer();  // stops the thread and closes every connection
  TCPStoreServer(const TCPStoreServer&) = delete;
  TCPStoreServer& operator=(const TCPStoreServer&) = delete;

  int port() const { return port_; }
  // Waits until no rank other than `except_rank` is connected, or until the deadline. Rank 0
  // calls it before stopping the server, so ranks still finishing can use the store.
  void wait_for_ranks_to_leave(int except_rank, net::Deadline deadline);

 private:
  struct Client;
  void serve();
  void handle_readable(Client& client);  // reads what came, then answer_frames
  void answer_frames(Client& client);    // answers the complete frames read
  std::string answer(Client& client, const std::string& payload);
  std::string answer_hello(Client& client, std::int64_t rank, std::int64_t world_size,
                           std::int64_t generation);
  void drop(Client& client);

  // The init error key of group `generation` (store_keys::init_error): where a refusal goes.
  static std::string init_error_key(int generation);

  int world_size_;
  int generation_;             // kEveryGroup: the launcher's
  const char* name_;           // who serves, for messages: "rank 0" or "leangrad-run"
  int newest_generation_ = 0;  // the latest group a rank joined (kEveryGroup)
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  net::Socket listener_;
  int port_ = 0;
  int wake_read_ = -1;  // a pipe the destructor writes to, waking the thread from poll()
  int wake_write_ = -1;
  std::map<std::string, std::string> data_;  // touched by the server thread only
  std::map<int, std::unique_ptr<Client>> clients_;

  std::mutex mutex_;  // guards connected_
  std::condition_variable ranks_changed_;
  std::set<std::pair<int, int>> connected_;  // (generation, rank) of each connected rank

  std::thread thread_;
};

}  // namespace leangrad::distributed
