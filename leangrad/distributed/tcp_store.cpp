// The TCP store's client (tcp_store.h): one connection per process, one request at a time.
#include <leangrad/distributed/tcp_store.h>

#include <thread>

#include <leangrad/core/error.h>
#include <leangrad/distributed/tcp_store_protocol.h>
#include <leangrad/distributed/tcp_store_server.h>

namespace leangrad::distributed {

using namespace tcp_store_protocol;

namespace {
// How long a rank pauses before asking again a store that serves an earlier group.
constexpr auto kBusyPause = std::chrono::milliseconds(20);
}  // namespace

TCPStore::TCPStore(std::string host, int port, int rank, int world_size,
                   std::chrono::milliseconds timeout, Server server, int generation)
    : Store(timeout), host_(std::move(host)), port_(port), rank_(rank), served_by_(server) {
  const bool serve = server == Server::ThisProcess;
  if (serve) {
    try {
      server_ = std::make_unique<TCPStoreServer>(port, world_size, generation);
    } catch (const Error& e) {
      LG_THROW(Error, "init_process_group: rank ", rank, " cannot serve the store: ", e.message());
    }
    port_ = server_->port();
  }
  const auto deadline = net::Clock::now() + timeout;
  const std::string hello = FrameWriter()
                                .u8(static_cast<std::uint8_t>(Command::Hello))
                                .i64(rank)
                                .i64(world_size)
                                .i64(generation)
                                .frame();
  for (;;) {
    try {
      socket_ = net::connect_until(host_, port_, deadline);
    } catch (const Error& e) {
      if (serve) {
        LG_THROW(Error, "init_process_group: rank ", rank,
                 " serves the store but cannot reach it through MASTER_ADDR: ", e.message(),
                 ". MASTER_ADDR must name rank 0's machine");
      }
      if (server == Server::Launcher) {
        LG_THROW(Error, "init_process_group: rank ", rank,
                 " could not reach the store of leangrad-run at MASTER_ADDR:MASTER_PORT = ",
                 net::host_port(host_, port_), ": ", e.message(),
                 ". Is node 0's leangrad-run still running, and is --master-addr an address of "
                 "node 0 that this machine reaches?");
      }
      LG_THROW(Error, "init_process_group: rank ", rank, " could not reach the store of rank 0 at ",
               "MASTER_ADDR:MASTER_PORT = ", net::host_port(host_, port_), ": ", e.message(),
               ". Is rank 0 running, and are MASTER_ADDR and MASTER_PORT the same for every rank?");
    }
    local_address_ = net::local_address(socket_.fd());
    broken_.clear();
    std::string answer;
    try {
      answer = request(hello);
    } catch (const Error& e) {
      // The server closed the connection before answering: an earlier group's server stopping
      // as we joined it. Its successor comes up on the same port.
      LG_CHECK(net::Clock::now() + kBusyPause < deadline, e.message());
      std::this_thread::sleep_for(kBusyPause);
      continue;
    }
    FrameReader reader(answer);
    const auto status = static_cast<Status>(reader.u8());
    if (status == Status::Refused) {
      LG_THROW(Error, "init_process_group: the store at ", net::host_port(host_, port_),
               " refused rank ", rank, ": ", reader.str());
    }
    if (status == Status::Ok) return;
    // Busy: rank 0 still serves the previous group (Note [A store of an earlier group]).
    const std::string busy = reader.str();
    socket_.close();
    LG_CHECK(net::Clock::now() + kBusyPause < deadline, "init_process_group: rank ", rank,
             " waited ", format_duration(timeout), " for the store at ",
             net::host_port(host_, port_), " to serve its group, but ", busy,
             ". Did rank 0 call destroy_process_group and init_process_group again?");
    std::this_thread::sleep_for(kBusyPause);
  }
}

TCPStore::~TCPStore() = default;

const char* TCPStore::server_name() const {
  return served_by_ == Server::Launcher ? "leangrad-run" : "rank 0";
}

std::string TCPStore::describe() const {
  return detail::str_cat("the TCP store at ", net::host_port(host_, port_), " (served by ",
                         server_name(), ")");
}

std::string TCPStore::request(const std::string& frame, bool answered) {
  std::lock_guard lock(mutex_);
  LG_CHECK(broken_.empty(), broken_);
  const auto deadline = net::Clock::now() + timeout();
  const std::string peer = net::host_port(host_, port_);
  try {
    net::send_all(socket_.fd(), frame.data(), frame.size(), deadline, peer);
    if (!answered) return "";
    char prefix[4];
    net::recv_all(socket_.fd(), prefix, 4, deadline, peer);
    const std::uint32_t length = frame_length(prefix);
    LG_CHECK(length <= kMaxFrameBytes, "TCP store: answer of ", length, " bytes from ", peer);
    std::string payload(length, '\0');
    net::recv_all(socket_.fd(), payload.data(), length, deadline, peer);
    return payload;
  } catch (const Error& e) {
    // The connection is out of step or gone: every later request fails with this reason.
    broken_ = detail::str_cat(describe(), " is unreachable (", e.message(), "): ", server_name(),
                              " has probably exited");
    socket_.close();
    LG_THROW(Error, broken_);
  }
}

void TCPStore::set(const std::string& key, const std::string& value) {
  request(FrameWriter().u8(static_cast<std::uint8_t>(Command::Set)).str(key).str(value).frame());
}

void TCPStore::post(const std::string& key, const std::string& value) {
  request(FrameWriter().u8(static_cast<std::uint8_t>(Command::Post)).str(key).str(value).frame(),
          /*answered=*/false);
}

std::optional<std::string> TCPStore::try_get(const std::string& key) {
  const std::string answer =
      request(FrameWriter().u8(static_cast<std::uint8_t>(Command::Get)).str(key).frame());
  FrameReader reader(answer);
  if (static_cast<Status>(reader.u8()) == Status::NotFound) return std::nullopt;
  return reader.str();
}

std::int64_t TCPStore::add(const std::string& key, std::int64_t delta) {
  const std::string answer = request(
      FrameWriter().u8(static_cast<std::uint8_t>(Command::Add)).str(key).i64(delta).frame());
  FrameReader reader(answer);
  const auto status = static_cast<Status>(reader.u8());
  LG_CHECK(status == Status::Ok, "distributed store: ", reader.str());
  return reader.i64();
}

void TCPStore::wait_for_ranks_to_leave(net::Deadline deadline) {
  if (server_) server_->wait_for_ranks_to_leave(rank_, deadline);
}

}  // namespace leangrad::distributed
