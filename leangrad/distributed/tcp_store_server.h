// The server of the TCP store, run by rank 0 on one thread of its own: a map from keys to
// values, answered over the protocol of tcp_store_protocol.h. Besides the map it keeps the
// roll of connected ranks, which gives the store two duties beyond key-value storage:
// - it refuses a joining rank whose WORLD_SIZE differs from rank 0's, whose RANK is out of range
//   or already connected, and writes the reason under `init_error_key`, so every rank's
//   rendezvous stops at once with that message;
// - when a rank's connection closes it sets store_keys::left(rank) to the time (milliseconds
//   since the server started), so a failed collective can say which ranks exited, first first.
// A server serves one group of the job (its generation, store_keys::group_prefix): a rank
// joining a later group while it still runs is told to come back (Note [A store of an earlier
// group] in tcp_store_server.cpp).
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

#include <leangrad/distributed/socket.h>

namespace leangrad::distributed {

class TCPStoreServer {
 public:
  // Listens on `port` (0: a free port; see port()) for the group number `generation` of a job
  // of `world_size` ranks. Throws Error at once when the port is in use.
  TCPStoreServer(int port, int world_size, int generation, std::string init_error_key);
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

  int world_size_;
  int generation_;
  std::string init_error_key_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  net::Socket listener_;
  int port_ = 0;
  int wake_read_ = -1;  // a pipe the destructor writes to, waking the thread from poll()
  int wake_write_ = -1;
  std::map<std::string, std::string> data_;  // touched by the server thread only
  std::map<int, std::unique_ptr<Client>> clients_;

  std::mutex mutex_;  // guards connected_ranks_
  std::condition_variable ranks_changed_;
  std::set<int> connected_ranks_;

  std::thread thread_;
};

}  // namespace leangrad::distributed
