// The few POSIX socket operations the TCP store needs, each bounded by a deadline: listen on a
// port, connect with retries, send and receive exactly n bytes. Failures throw leangrad::Error
// naming the peer ("127.0.0.1:29500") and the system's reason. Used by tcp_store.cpp and
// tcp_store_server.cpp only; Gloo has its own transport.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace leangrad::distributed::net {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

// An owned socket descriptor, closed when destroyed (move-only).
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() { close(); }
  Socket(Socket&& other) noexcept : fd_(other.release()) {}
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release();
  void close();

 private:
  int fd_ = -1;
};

// A socket listening on `port` of every interface (IPv6 and IPv4 where the system has both);
// port 0 lets the system pick a free port. Returns the port actually bound in *bound_port.
// A port already in use is an Error at once, naming the port.
Socket listen_on(int port, int* bound_port);

// Connects to host:port, retrying while the connection is refused or the host unreachable (rank
// 0 may not listen yet) until `deadline`; then throws Error naming host:port, the time waited
// and the last reason. A host name that does not resolve fails at once.
Socket connect_until(const std::string& host, int port, Deadline deadline);

// Sends the n bytes (a closed peer is an Error, never SIGPIPE); Error at the deadline.
void send_all(int fd, const void* data, std::size_t n, Deadline deadline, const std::string& peer);
// Receives exactly n bytes; Error when the peer closes the connection or at the deadline.
void recv_all(int fd, void* data, std::size_t n, Deadline deadline, const std::string& peer);

// The address this end of a connected socket has ("10.1.2.3", "::1"): the interface that
// reaches the peer, which is the one other ranks can reach this process through.
std::string local_address(int fd);

// "host:port", with IPv6 literals in brackets: "[::1]:29500".
std::string host_port(const std::string& host, int port);

}  // namespace leangrad::distributed::net
