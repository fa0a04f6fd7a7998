// libFuzzer target: the TCP store's server (distributed/tcp_store_server.cpp) on arbitrary bytes
// from a stranger. Rank 0's server of a world of 4 runs in this process for the whole run, with
// rank 0's own connection and one proper client (rank 1): a stranger's Hello as rank 2 or 3 is
// accepted, and then every request reaches the map. Each input is sent as is over a fresh
// connection, which is then shut for writing: the server answers every well-formed frame, closes
// the connection on a malformed one, and drops it at the end of the input; it must never crash,
// hang or leak (ASan, UBSan, the per-input timeout). After each input the proper client's set and
// get must still work: no input may break the store for the ranks.
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include <leangrad/core/error.h>
#include <leangrad/distributed/socket.h>
#include <leangrad/distributed/tcp_store.h>

namespace {

namespace dist = leangrad::distributed;
using std::chrono::milliseconds;

struct Store {
  std::unique_ptr<dist::TCPStore> server = std::make_unique<dist::TCPStore>(
      "127.0.0.1", 0, 0, 4, milliseconds(5000), dist::TCPStore::Server::ThisProcess);
  std::unique_ptr<dist::TCPStore> client = std::make_unique<dist::TCPStore>(
      "127.0.0.1", server->port(), 1, 4, milliseconds(5000), dist::TCPStore::Server::Rank0);
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Store store;
  static std::uint64_t input = 0;
  const auto deadline = dist::net::Clock::now() + std::chrono::seconds(5);
  {
    const dist::net::Socket stranger =
        dist::net::connect_until("127.0.0.1", store.server->port(), deadline);
    try {
      dist::net::send_all(stranger.fd(), data, size, deadline, "store");
    } catch (const leangrad::Error&) {
      // The server closed the connection part way: it refused a malformed frame.
    }
    ::shutdown(stranger.fd(), SHUT_WR);
    char answers[4096];
    for (;;) {  // until the server drops the connection
      const ssize_t got = ::recv(stranger.fd(), answers, sizeof(answers), 0);
      if (got == 0 || (got < 0 && errno != EINTR)) break;
      if (dist::net::Clock::now() > deadline) std::abort();  // the server did not let go
    }
  }
  // The ranks' store still works.
  const std::string key = "fuzz-check-" + std::to_string(input++);
  store.client->set(key, "v");
  if (store.client->get(key) != "v") std::abort();
  return 0;
}
