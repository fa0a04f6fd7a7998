// The TCP store's server (tcp_store_server.h): one thread, one poll() over the listening socket,
// a wake-up pipe and every client. Sockets are non-blocking; each client has an input buffer
// (bytes of frames not complete yet) and an output buffer (answers not sent yet), so a slow or
// dead client never stalls the others. Both buffers are bounded (Note [Bounded buffers]).
//
// Note [Bounded buffers]
// A client may send requests faster than it reads the answers, or without reading them at all
// (a Get of a large value in a loop). The server then stops reading from that client while its
// unsent answers exceed kMaxPendingAnswerBytes, and reads at most one largest frame ahead of what
// it has answered: the client's own socket fills and its sends block, and the server's memory
// for it stays below about two frames of kMaxFrameBytes. Requests already read wait in the input
// buffer and are answered as the answers drain. leangrad's clients wait for each answer before
// the next request (Post has none), so they never come near either bound.
//
// Note [A store of an earlier group]
// A job may make several groups in the same processes: init_process_group, destroy_process_group,
// init_process_group again, the n-th group with generation n (store_keys.h). Rank 0 serves each
// group's store on the same MASTER_PORT, one after the other, and keeps the old one up in
// destroy_process_group until the other ranks have left it. A rank that destroys its group and
// starts the next one quickly therefore finds the old server still listening. If it joined it,
// it would write its keys into a store about to close, and rank 0, waiting for every rank to
// leave, would wait for it until the timeout. So Hello carries the generation:
// - a rank of a later group is answered Busy and not counted as connected; its TCPStore closes
//   the connection and tries again until rank 0 serves the new group (or the timeout);
// - a rank of an earlier group is refused, as a mismatched world size is: its process called
//   init_process_group fewer times than rank 0's.
#include <leangrad/distributed/tcp_store_server.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <limits>
#include <thread>
#include <vector>

#include <leangrad/core/error.h>
#include <leangrad/distributed/store_keys.h>
#include <leangrad/distributed/tcp_store_protocol.h>

namespace leangrad::distributed {

using namespace tcp_store_protocol;

namespace {
// Note [Bounded buffers]: unsent answers past this stop the reading of a client's requests.
constexpr std::size_t kMaxPendingAnswerBytes = std::size_t{kMaxFrameBytes} + 4;
// Requests read ahead: enough for one frame of the largest size and its length prefix.
constexpr std::size_t kMaxReadAheadBytes = std::size_t{kMaxFrameBytes} + 4;
}  // namespace

struct TCPStoreServer::Client {
  net::Socket socket;
  int rank = -1;       // known after Hello
  int generation = 0;  // the group it joined, known after Hello
  std::string in;      // received bytes not yet parsed into frames
  std::string out;     // answers not yet sent
  bool closed = false;
};

TCPStoreServer::TCPStoreServer(int port, int world_size, int generation)
    : world_size_(world_size),
      generation_(generation),
      name_(generation == kEveryGroup ? "leangrad-run" : "rank 0") {
  LG_CHECK(world_size >= 1 && generation >= 0, "TCP store: world size ", world_size, " and group ",
           generation, " are not a job's");
  listener_ = net::listen_on(port, &port_);
  ::fcntl(listener_.fd(), F_SETFL, ::fcntl(listener_.fd(), F_GETFL, 0) | O_NONBLOCK);
  int pipe_fds[2];
  LG_CHECK(::pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) == 0, "TCP store: pipe2 failed");
  wake_read_ = pipe_fds[0];
  wake_write_ = pipe_fds[1];
  thread_ = std::thread([this] { serve(); });
}

TCPStoreServer::~TCPStoreServer() {
  const char byte = 0;
  [[maybe_unused]] ssize_t rc = ::write(wake_write_, &byte, 1);
  if (thread_.joinable()) thread_.join();
  ::close(wake_read_);
  ::close(wake_write_);
}

std::string TCPStoreServer::init_error_key(int generation) {
  return store_keys::init_error(store_keys::group_prefix(generation));
}

void TCPStoreServer::wait_for_ranks_to_leave(int except_rank, net::Deadline deadline) {
  std::unique_lock lock(mutex_);
  ranks_changed_.wait_until(lock, deadline, [&] {
    return std::all_of(connected_.begin(), connected_.end(),
                       [&](const std::pair<int, int>& c) { return c.second == except_rank; });
  });
}

void TCPStoreServer::serve() {
  for (;;) {
    std::vector<pollfd> fds = {{wake_read_, POLLIN, 0}, {listener_.fd(), POLLIN, 0}};
    std::vector<Client*> polled;
    for (auto& [fd, client] : clients_) {
      // Note [Bounded buffers]: a client with too many answers unsent is not read from.
      const bool read = client->out.size() < kMaxPendingAnswerBytes;
      fds.push_back(
          {fd, static_cast<short>((read ? POLLIN : 0) | (client->out.empty() ? 0 : POLLOUT)), 0});
      polled.push_back(client.get());
    }
    if (::poll(fds.data(), fds.size(), -1) < 0) continue;  // EINTR
    if (fds[0].revents != 0) return;                       // the destructor asks us to stop

    if (fds[1].revents & POLLIN) {
      const int fd = ::accept4(listener_.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd >= 0) {
        auto client = std::make_unique<Client>();
        client->socket = net::Socket(fd);
        clients_[fd] = std::move(client);
      } else if (errno == EMFILE || errno == ENFILE) {
        // Out of file descriptors: the connection stays queued and the listener readable, so
        // poll would return at once forever. Say why under the init error key (the ranks that
        // are connected read it and stop), and pause instead of spinning.
        data_.emplace(init_error_key(generation_ == kEveryGroup ? std::max(newest_generation_, 1)
                                                                : generation_),
                      detail::str_cat(name_, " ran out of file descriptors (",
                                      errno == EMFILE ? "this process's limit, ulimit -n"
                                                      : "the system's limit",
                                      ") accepting the ranks of a group of ", world_size_));
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    for (std::size_t i = 0; i < polled.size(); ++i) {
      Client& client = *polled[i];
      const short revents = fds[i + 2].revents;
      if (revents & (POLLIN | POLLHUP | POLLERR)) handle_readable(client);
      const bool had_backlog = client.out.size() >= kMaxPendingAnswerBytes;
      while (!client.closed && !client.out.empty()) {
        const ssize_t sent =
            ::send(client.socket.fd(), client.out.data(), client.out.size(), MSG_NOSIGNAL);
        if (sent > 0) {
          client.out.erase(0, static_cast<std::size_t>(sent));
        } else if (sent < 0 && (errno == EAGAIN || errno == EINTR)) {
          break;  // POLLOUT will tell us when there is room again
        } else {
          client.closed = true;
        }
      }
      // Requests read while the answers were backed up wait for no new bytes to be answered.
      if (had_backlog && !client.closed) answer_frames(client);
    }
    for (Client* client : polled) {
      if (client->closed) drop(*client);
    }
  }
}

void TCPStoreServer::handle_readable(Client& client) {
  char buffer[64 * 1024];
  while (client.in.size() < kMaxReadAheadBytes) {  // Note [Bounded buffers]
    const ssize_t got = ::recv(client.socket.fd(), buffer, sizeof(buffer), 0);
    if (got > 0) {
      client.in.append(buffer, static_cast<std::size_t>(got));
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) client.closed = true;
    break;
  }
  answer_frames(client);
}

void TCPStoreServer::answer_frames(Client& client) {
  // Every complete frame, while the answers are not backed up (Note [Bounded buffers]).
  while (client.in.size() >= 4 && client.out.size() < kMaxPendingAnswerBytes) {
    const std::uint32_t length = frame_length(client.in.data());
    if (length > kMaxFrameBytes) {
      client.closed = true;
      return;
    }
    if (client.in.size() < 4 + static_cast<std::size_t>(length)) break;
    const std::string payload = client.in.substr(4, length);
    client.in.erase(0, 4 + static_cast<std::size_t>(length));
    try {
      client.out += answer(client, payload);
    } catch (const std::exception&) {  // a malformed request: not a client of ours
      client.closed = true;
      return;
    }
  }
}

std::string TCPStoreServer::answer(Client& client, const std::string& payload) {
  FrameReader request(payload);
  const auto command = static_cast<Command>(request.u8());
  if (command == Command::Hello) {
    const std::int64_t rank = request.i64();
    const std::int64_t world_size = request.i64();
    const std::int64_t generation = request.i64();
    return answer_hello(client, rank, world_size, generation);
  }
  LG_CHECK(client.rank >= 0, "TCP store: request before Hello");
  switch (command) {
    case Command::Set:
    case Command::Post: {
      std::string key = request.str();
      data_[key] = request.str();
      if (command == Command::Post) return "";  // the client does not wait for an answer
      return FrameWriter().u8(static_cast<std::uint8_t>(Status::Ok)).frame();
    }
    case Command::Get: {
      const auto it = data_.find(request.str());
      if (it == data_.end()) {
        return FrameWriter().u8(static_cast<std::uint8_t>(Status::NotFound)).frame();
      }
      return FrameWriter().u8(static_cast<std::uint8_t>(Status::Ok)).str(it->second).frame();
    }
    case Command::Add: {
      const std::string key = request.str();
      const std::int64_t delta = request.i64();
      std::string& value = data_[key];
      std::int64_t current = 0;
      const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), current);
      if (!value.empty() && (error != std::errc() || end != value.data() + value.size())) {
        return FrameWriter()
            .u8(static_cast<std::uint8_t>(Status::Refused))
            .str("add: the value of key '" + printable(key) + "' is not an integer")
            .frame();
      }
      std::int64_t sum = 0;
      if (__builtin_add_overflow(current, delta, &sum)) {
        return FrameWriter()
            .u8(static_cast<std::uint8_t>(Status::Refused))
            .str(detail::str_cat("add: ", current, " + ", delta, " for key '", printable(key),
                                 "' overflows int64"))
            .frame();
      }
      value = std::to_string(sum);
      return FrameWriter().u8(static_cast<std::uint8_t>(Status::Ok)).i64(sum).frame();
    }
    case Command::Hello:
      break;
  }
  LG_THROW(Error, "TCP store: unknown command ", static_cast<int>(command));
}

// rank, world_size and generation as the client sent them (int64 on the wire): compared before
// any narrowing, so that no value outside 0..world_size-1 can pass for a rank.
std::string TCPStoreServer::answer_hello(Client& client, std::int64_t rank, std::int64_t world_size,
                                         std::int64_t generation) {
  const bool every_group = generation_ == kEveryGroup;
  if (generation < 1 || generation > std::numeric_limits<int>::max()) {
    return FrameWriter()
        .u8(static_cast<std::uint8_t>(Status::Refused))
        .str(detail::str_cat("group ", generation, " is not a group of a job (1 or more)"))
        .frame();
  }
  if (!every_group && generation > generation_) {  // Note [A store of an earlier group]
    return FrameWriter()
        .u8(static_cast<std::uint8_t>(Status::Busy))
        .str(detail::str_cat("rank 0 still serves the store of group ", generation_,
                             " of this job (it has not finished destroy_process_group), and rank ",
                             rank, " is joining group ", generation))
        .frame();
  }
  // Groups before the newest cannot be joined (Notes [A store of an earlier group], [The
  // launcher's store]).
  const int serving =
      every_group ? std::max(newest_generation_, static_cast<int>(generation)) : generation_;
  std::string refusal;
  if (generation < serving) {
    refusal = detail::str_cat(
        "rank ", rank, " is joining group ", generation, " of this job but ",
        every_group ? detail::str_cat("ranks have joined group ", serving, " already")
                    : detail::str_cat("rank 0 serves group ", serving),
        ": every process must call init_process_group (and destroy_process_group) "
        "the same number of times");
  } else if (world_size != world_size_) {
    refusal = detail::str_cat("rank ", rank, " was started with WORLD_SIZE=", world_size, " but ",
                              name_, ", which serves the store, with WORLD_SIZE=", world_size_,
                              ": every rank must be given the same WORLD_SIZE");
  } else if (rank < 0 || rank >= world_size_) {
    refusal = detail::str_cat("a process was started with RANK=", rank, ", outside 0..",
                              world_size_ - 1, " (WORLD_SIZE=", world_size_, ")");
  } else {
    const std::pair<int, int> joining(static_cast<int>(generation), static_cast<int>(rank));
    std::lock_guard lock(mutex_);
    if (connected_.count(joining) != 0) {
      refusal = detail::str_cat("rank ", rank,
                                " joined twice: two processes were started with RANK=", rank);
    } else {
      connected_.insert(joining);
      client.rank = joining.second;
      client.generation = joining.first;
      newest_generation_ = serving;
    }
  }
  if (refusal.empty()) return FrameWriter().u8(static_cast<std::uint8_t>(Status::Ok)).frame();
  data_.emplace(init_error_key(static_cast<int>(generation)), refusal);  // the first reason stays
  return FrameWriter().u8(static_cast<std::uint8_t>(Status::Refused)).str(refusal).frame();
}

void TCPStoreServer::drop(Client& client) {
  if (client.rank >= 0) {
    // The value orders the departures: milliseconds since the server started.
    data_[store_keys::left(store_keys::group_prefix(client.generation), client.rank)] =
        std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::steady_clock::now() - started_)
                           .count());
    std::lock_guard lock(mutex_);
    connected_.erase({client.generation, client.rank});
    ranks_changed_.notify_all();
  }
  clients_.erase(client.socket.fd());  // destroys the Client and closes its socket
}

}  // namespace leangrad::distributed
