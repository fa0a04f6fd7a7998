// POSIX sockets with deadlines (socket.h): non-blocking connect and poll() bound every wait, so
// nothing here blocks past its deadline.
#include <leangrad/distributed/socket.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include <leangrad/core/error.h>
#include <leangrad/distributed/store.h>

namespace leangrad::distributed::net {
namespace {

// Milliseconds left until the deadline, for poll() (0 when it has passed).
int remaining_ms(Deadline deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 1 << 30));
}

// Waits until fd is ready for `events`; false when the deadline passed first.
bool poll_until(int fd, short events, Deadline deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int rc = ::poll(&p, 1, remaining_ms(deadline));
    if (rc > 0) return true;
    if (rc == 0) return false;
    if (errno != EINTR) return true;  // let the following call report the error
  }
}

void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

// One non-blocking connect to `address`, waiting at most until `deadline`: the connected socket,
// or an invalid one with the reason in *error.
Socket try_connect(const addrinfo& address, Deadline deadline, std::string* error) {
  Socket s(::socket(address.ai_family, address.ai_socktype | SOCK_CLOEXEC, address.ai_protocol));
  if (!s.valid()) {
    *error = std::strerror(errno);
    return Socket();
  }
  const int flags = ::fcntl(s.fd(), F_GETFL, 0);
  ::fcntl(s.fd(), F_SETFL, flags | O_NONBLOCK);
  if (::connect(s.fd(), address.ai_addr, address.ai_addrlen) != 0) {
    if (errno != EINPROGRESS) {
      *error = std::strerror(errno);
      return Socket();
    }
    if (!poll_until(s.fd(), POLLOUT, deadline)) {
      *error = "connection attempt timed out";
      return Socket();
    }
    int so_error = 0;
    socklen_t len = sizeof(so_error);
    ::getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &so_error, &len);
    if (so_error != 0) {
      *error = std::strerror(so_error);
      return Socket();
    }
  }
  ::fcntl(s.fd(), F_SETFL, flags);  // blocking again: every later wait goes through poll_until
  set_nodelay(s.fd());
  return s;
}

}  // namespace

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.release();
  }
  return *this;
}

int Socket::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

void Socket::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string host_port(const std::string& host, int port) {
  const bool ipv6_literal = host.find(':') != std::string::npos;
  return (ipv6_literal ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Socket listen_on(int port, int* bound_port) {
  LG_CHECK(port >= 0 && port <= 65535, "TCP store: port ", port, " is not a port (0 to 65535)");
  std::string error;
  // IPv6 with IPV6_V6ONLY off accepts IPv4 clients too; systems without IPv6 use IPv4.
  for (int family : {AF_INET6, AF_INET}) {
    Socket s(::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!s.valid()) {
      error = std::strerror(errno);
      continue;
    }
    int one = 1;
    int zero = 0;
    ::setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));  // not TIME_WAIT's prey
    sockaddr_storage address{};
    socklen_t length = 0;
    if (family == AF_INET6) {
      ::setsockopt(s.fd(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
      auto* a = reinterpret_cast<sockaddr_in6*>(&address);
      a->sin6_family = AF_INET6;
      a->sin6_addr = in6addr_any;
      a->sin6_port = htons(static_cast<std::uint16_t>(port));
      length = sizeof(sockaddr_in6);
    } else {
      auto* a = reinterpret_cast<sockaddr_in*>(&address);
      a->sin_family = AF_INET;
      a->sin_addr.s_addr = htonl(INADDR_ANY);
      a->sin_port = htons(static_cast<std::uint16_t>(port));
      length = sizeof(sockaddr_in);
    }
    if (::bind(s.fd(), reinterpret_cast<sockaddr*>(&address), length) != 0) {
      LG_CHECK(errno != EADDRINUSE, "TCP store: port ", port,
               " is already in use on this machine (another job, or an earlier run still "
               "exiting?); choose another MASTER_PORT");
      error = std::strerror(errno);
      continue;
    }
    if (::listen(s.fd(), 128) != 0) {
      error = std::strerror(errno);
      continue;
    }
    getsockname(s.fd(), reinterpret_cast<sockaddr*>(&address), &length);
    *bound_port = family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port)
                                     : ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
    return s;
  }
  LG_THROW(Error, "TCP store: cannot listen on port ", port, ": ", error);
}

Socket connect_until(const std::string& host, int port, Deadline deadline) {
  const auto start = Clock::now();
  const std::string port_text = std::to_string(port);
  std::string error = "no attempt was made";
  auto pause = std::chrono::milliseconds(10);
  for (;;) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* addresses = nullptr;
    const int rc = ::getaddrinfo(host.c_str(), port_text.c_str(), &hints, &addresses);
    LG_CHECK(rc != EAI_NONAME && rc != EAI_SERVICE, "cannot resolve the host name '",
             printable(host), "' (MASTER_ADDR): ", gai_strerror(rc));
    if (rc != 0) {
      error = gai_strerror(rc);
    } else {
      for (addrinfo* a = addresses; a != nullptr; a = a->ai_next) {
        Socket s = try_connect(*a, deadline, &error);
        if (s.valid()) {
          ::freeaddrinfo(addresses);
          return s;
        }
      }
      ::freeaddrinfo(addresses);
    }
    const auto now = Clock::now();
    if (now >= deadline) break;
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, std::chrono::milliseconds(500));
  }
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  LG_THROW(Error, "could not connect to ", host_port(host, port), " within ",
           format_duration(waited), " (last attempt: ", error, ")");
}

void send_all(int fd, const void* data, std::size_t n, Deadline deadline, const std::string& peer) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    LG_CHECK(poll_until(fd, POLLOUT, deadline), "timed out sending to ", peer);
    const ssize_t sent = ::send(fd, p, n, MSG_NOSIGNAL);
    if (sent < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    LG_CHECK(sent > 0, "sending to ", peer, " failed: ", std::strerror(errno));
    p += sent;
    n -= static_cast<std::size_t>(sent);
  }
}

void recv_all(int fd, void* data, std::size_t n, Deadline deadline, const std::string& peer) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    LG_CHECK(poll_until(fd, POLLIN, deadline), "timed out waiting for an answer from ", peer);
    const ssize_t got = ::recv(fd, p, n, 0);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    LG_CHECK(got != 0, peer, " closed the connection");
    LG_CHECK(got > 0, "receiving from ", peer, " failed: ", std::strerror(errno));
    p += got;
    n -= static_cast<std::size_t>(got);
  }
}

std::string local_address(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  LG_CHECK(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0,
           "getsockname failed: ", std::strerror(errno));
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&address);
    if (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr)) {  // an IPv4 peer reached through a dual-stack socket
      ::inet_ntop(AF_INET, &a->sin6_addr.s6_addr[12], text, sizeof(text));
    } else {
      ::inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof(text));
    }
  } else {
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&address)->sin_addr, text,
                sizeof(text));
  }
  return text;
}

}  // namespace leangrad::distributed::net
