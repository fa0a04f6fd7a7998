// The stores (distributed/tcp_store.h, the file store of distributed/store.h) in one process:
// rank 0's server and the clients of other "ranks" on threads, over loopback.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <thread>
#include <vector>

#include <leangrad/core/error.h>
#include <leangrad/distributed/process_group.h>
#include <leangrad/distributed/rendezvous.h>
#include <leangrad/distributed/socket.h>
#include <leangrad/distributed/store_keys.h>
#include <leangrad/distributed/tcp_store.h>
#include <leangrad/distributed/tcp_store_protocol.h>
#include <leangrad/distributed/tcp_store_server.h>
#include "distributed/launch.h"
#include "testing/sanitized.h"
#include "testing/tensor_testing.h"

namespace leangrad::distributed {
namespace {

using std::chrono::milliseconds;

// The message of what `f` throws as leangrad::Error.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.message();
  }
  ADD_FAILURE() << "no Error thrown";
  return "";
}

const std::string kGroup1 = store_keys::group_prefix(1);
const std::string kInitError = store_keys::init_error(kGroup1);

using Server = TCPStore::Server;

std::unique_ptr<TCPStore> serve(int world_size, milliseconds timeout = milliseconds(2000)) {
  return std::make_unique<TCPStore>("127.0.0.1", 0, 0, world_size, timeout, Server::ThisProcess);
}
std::unique_ptr<TCPStore> join(int port, int rank, int world_size,
                               milliseconds timeout = milliseconds(2000), int generation = 1,
                               Server server = Server::Rank0) {
  return std::make_unique<TCPStore>("127.0.0.1", port, rank, world_size, timeout, server,
                                    generation);
}

TEST(TCPStore, SetGetAddCheck) {
  auto server = serve(2);
  auto client = join(server->port(), 1, 2);
  EXPECT_FALSE(client->try_get("k").has_value());
  server->set("k", std::string("v\0w", 3));  // values are bytes
  EXPECT_EQ(client->get("k"), std::string("v\0w", 3));
  client->set("k", "replaced");
  EXPECT_EQ(server->get("k"), "replaced");
  EXPECT_EQ(client->add("n", 5), 5);
  EXPECT_EQ(server->add("n", -2), 3);
  EXPECT_EQ(client->get("n"), "3");
  EXPECT_TRUE(client->check({"k", "n"}));
  EXPECT_FALSE(client->check({"k", "absent"}));
  EXPECT_CONTAINS(error_of([&] { client->add("k", 1); }), "is not an integer");
  EXPECT_CONTAINS(client->describe(), "127.0.0.1:" + std::to_string(server->port()));
}

TEST(TCPStore, ConcurrentAddsAllCount) {
  auto server = serve(3);
  std::vector<std::thread> threads;
  for (int rank = 1; rank <= 2; ++rank) {
    threads.emplace_back([&, rank] {
      auto client = join(server->port(), rank, 3);
      for (int i = 0; i < 200; ++i)
        client->add("counter", 1);
    });
  }
  for (int i = 0; i < 200; ++i)
    server->add("counter", 1);
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(server->get("counter"), "600");
}

TEST(TCPStore, WaitSeesAKeySetLaterAndTimesOutNamingTheMissingKeys) {
  auto server = serve(2);
  auto client = join(server->port(), 1, 2);
  std::thread setter([&] {
    std::this_thread::sleep_for(milliseconds(100));
    server->set("late", "1");
  });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(client->get("late"), "1");
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(90));
  setter.join();

  const std::string message = error_of([&] { client->wait({"late", "never"}, milliseconds(200)); });
  EXPECT_CONTAINS(message, "waited 200 ms for key(s) [never]");
  EXPECT_CONTAINS(message, "the TCP store at 127.0.0.1:");
}

TEST(TCPStore, PortInUseFailsAtOnce) {
  auto server = serve(2);
  const auto start = std::chrono::steady_clock::now();
  const std::string message = error_of([&] {
    TCPStore second("127.0.0.1", server->port(), 0, 2, milliseconds(5000), Server::ThisProcess);
  });
  EXPECT_CONTAINS(message, "port " + std::to_string(server->port()) + " is already in use");
  EXPECT_CONTAINS(message, "choose another MASTER_PORT");
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(1000));
}

TEST(TCPStore, UnreachableStoreFailsAfterTheTimeoutNamingHostAndPort) {
  const test::UnservedPort unserved;
  const int port = unserved.port();
  const auto start = std::chrono::steady_clock::now();
  const std::string message = error_of([&] { join(port, 1, 2, milliseconds(300)); });
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_CONTAINS(message,
                  "rank 1 could not reach the store of rank 0 at MASTER_ADDR:MASTER_PORT "
                  "= 127.0.0.1:" +
                      std::to_string(port));
  EXPECT_CONTAINS(message, "Connection refused");
  EXPECT_GE(took, milliseconds(250));
  EXPECT_LT(took, milliseconds(2000));
}

// A name that does not exist fails at once ("cannot resolve ..."); where no resolver answers at
// all, the name is retried until the timeout, and the message names it too.
TEST(TCPStore, UnresolvableHostIsNamed) {
  const auto start = std::chrono::steady_clock::now();
  const std::string message = error_of(
      [] { TCPStore("no-such-host.invalid", 29500, 1, 2, milliseconds(1000), Server::Rank0); });
  EXPECT_CONTAINS(message, "no-such-host.invalid");
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(3000));
}

TEST(TCPStore, AnAddThatWouldOverflowIsRefusedAndChangesNothing) {
  auto server = serve(2);
  auto client = join(server->port(), 1, 2);
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(client->add("n", kMax), kMax);
  EXPECT_CONTAINS(error_of([&] { client->add("n", 1); }),
                  "add: 9223372036854775807 + 1 for key 'n' overflows int64");
  EXPECT_EQ(server->get("n"), std::to_string(kMax));
  EXPECT_EQ(client->add("n", -kMax), 0);  // the store still answers
}

// A raw connection speaking the wire format (tcp_store_protocol.h): one request, its answer's
// payload; empty when the server closed (or reset) the connection instead of answering. A server
// that neither answers nor closes within 2 s is a failure: the timeout's Error propagates.
std::string raw_request(const net::Socket& socket, const std::string& frame) {
  const net::Deadline deadline = net::Clock::now() + std::chrono::seconds(2);
  net::send_all(socket.fd(), frame.data(), frame.size(), deadline, "store");
  char prefix[4];
  try {
    net::recv_all(socket.fd(), prefix, 4, deadline, "store");
  } catch (const Error& e) {
    if (std::string(e.what()).find("timed out") != std::string::npos) throw;
    return "";
  }
  std::string payload(tcp_store_protocol::frame_length(prefix), '\0');
  net::recv_all(socket.fd(), payload.data(), payload.size(), deadline, "store");
  return payload;
}

TEST(TCPStore, BytesFromAStrangerNeitherCrashNorFoolTheServer) {
  namespace wire = tcp_store_protocol;
  auto server = serve(2);
  const auto hello = [](std::int64_t rank, std::int64_t world_size) {
    return wire::FrameWriter()
        .u8(static_cast<std::uint8_t>(wire::Command::Hello))
        .i64(rank)
        .i64(world_size)
        .i64(1)  // the generation
        .frame();
  };
  const auto connect = [&] {
    return net::connect_until("127.0.0.1", server->port(),
                              net::Clock::now() + std::chrono::seconds(2));
  };
  {
    // Ranks and world sizes past int: refused as they were sent, not as they would narrow
    // (2^32 is rank 0 in an int, 2^32 + 2 a world of 2).
    const net::Socket s = connect();
    const std::string answer = raw_request(s, hello(std::int64_t{1} << 32, 2));
    ASSERT_FALSE(answer.empty());
    wire::FrameReader reader(answer);
    EXPECT_EQ(reader.u8(), static_cast<std::uint8_t>(wire::Status::Refused));
    EXPECT_CONTAINS(reader.str(), "a process was started with RANK=4294967296, outside 0..1");
    const std::string second = raw_request(s, hello(1, (std::int64_t{1} << 32) + 2));
    ASSERT_FALSE(second.empty());
    wire::FrameReader reader2(second);
    EXPECT_EQ(reader2.u8(), static_cast<std::uint8_t>(wire::Status::Refused));
    EXPECT_CONTAINS(reader2.str(), "WORLD_SIZE=4294967298 but rank 0");
  }
  // Requests before Hello, an unknown command, a truncated field and a frame past the size limit:
  // each closes that connection and nothing else.
  const std::vector<std::string> strangers = {
      wire::FrameWriter()
          .u8(static_cast<std::uint8_t>(wire::Command::Set))
          .str("k")
          .str("v")
          .frame(),
      wire::FrameWriter().u8(42).frame(),
      wire::FrameWriter().u8(static_cast<std::uint8_t>(wire::Command::Hello)).u8(7).frame(),
      std::string("\xff\xff\xff\xff", 4)};
  for (const std::string& frame : strangers) {
    const net::Socket s = connect();
    EXPECT_EQ(raw_request(s, frame), "") << "the server answered a stranger";
  }
  EXPECT_FALSE(server->check({"k"}));
  // The first Hello did not take rank 0's place: rank 1 joins and the store works.
  auto client = join(server->port(), 1, 2);
  client->set("k", "v");
  EXPECT_EQ(server->get("k"), "v");
}

// This process's resident memory in bytes (/proc/self/statm).
std::size_t resident_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long pages = 0;
  unsigned long resident = 0;
  const int read = std::fscanf(f, "%lu %lu", &pages, &resident);
  std::fclose(f);
  return read == 2 ? resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)) : 0;
}

// Note [Bounded buffers]: a client that sends 384 Gets of a 1 MiB value without reading the
// answers does not make the server hold 384 MiB of them (about 65 MiB, plus what the growing
// buffer freed on the way; not checked under a sanitizer, whose own memory would count); it gets
// every answer, in order, when it reads, and other clients are served meanwhile.
TEST(TCPStore, AClientThatDoesNotReadItsAnswersIsHeldBack) {
  namespace wire = tcp_store_protocol;
  auto server = serve(3);
  auto client = join(server->port(), 1, 3);
  constexpr int kRequests = 384;
  constexpr std::size_t kValueBytes = 1 << 20;
  std::string value(kValueBytes, 'x');
  value.back() = 'y';
  client->set("big", value);
  const net::Socket greedy =
      net::connect_until("127.0.0.1", server->port(), net::Clock::now() + std::chrono::seconds(2));
  const net::Deadline deadline = net::Clock::now() + std::chrono::seconds(20);
  std::string requests = wire::FrameWriter()
                             .u8(static_cast<std::uint8_t>(wire::Command::Hello))
                             .i64(2)
                             .i64(3)
                             .i64(1)
                             .frame();
  for (int i = 0; i < kRequests; ++i)
    requests +=
        wire::FrameWriter().u8(static_cast<std::uint8_t>(wire::Command::Get)).str("big").frame();
  const std::size_t before = resident_bytes();
  net::send_all(greedy.fd(), requests.data(), requests.size(), deadline, "store");
  std::this_thread::sleep_for(milliseconds(500));  // the server answers what it will
  const std::size_t during = resident_bytes();
  ASSERT_GT(before, 0u);
  // Sanitizers keep freed memory (ASan's quarantine) and map shadow memory beside what a program
  // touches (ASan, TSan), so resident memory says little about the program's own use there.
  if (!test::kSanitized) {
    EXPECT_LT(during, before + 256 * kValueBytes)
        << "the server holds the unread answers: " << (during - before) / kValueBytes << " MiB";
  }
  client->set("k", "v");  // the others are served meanwhile
  EXPECT_EQ(client->get("k"), "v");
  for (int i = 0; i <= kRequests; ++i) {  // the Hello's answer, then every Get's
    char prefix[4];
    net::recv_all(greedy.fd(), prefix, 4, deadline, "store");
    std::string payload(wire::frame_length(prefix), '\0');
    net::recv_all(greedy.fd(), payload.data(), payload.size(), deadline, "store");
    wire::FrameReader reader(payload);
    ASSERT_EQ(reader.u8(), static_cast<std::uint8_t>(wire::Status::Ok)) << "answer " << i;
    if (i > 0) {
      ASSERT_EQ(reader.str(), value) << "answer " << i;
    }
  }
}

TEST(TCPStore, RefusesAMismatchedWorldSizeAndTellsEveryRank) {
  auto server = serve(2);
  const std::string message = error_of([&] { join(server->port(), 1, 3); });
  EXPECT_CONTAINS(message, "refused rank 1");
  EXPECT_CONTAINS(message,
                  "rank 1 was started with WORLD_SIZE=3 but rank 0, which serves the "
                  "store, with WORLD_SIZE=2");
  EXPECT_CONTAINS(server->get(kInitError), "WORLD_SIZE=3");
}

// Ranks that chose different backends would each wait in its own first step (Gloo's pairs, the
// NCCL id) until the timeout: rendezvous compares the backends and stops both at once, naming
// them. (dist_worker cannot show it: a build without CUDA refuses NCCL before rendezvous.)
TEST(Rendezvous, RanksOfDifferentBackendsStopEveryRankAtOnce) {
  auto config_of = [](int r, int port) {
    ProcessGroupConfig config;
    config.backend = r == 0 ? Backend::Gloo : Backend::NCCL;
    config.rank = r;
    config.world_size = 2;
    config.master_addr = "127.0.0.1";
    config.master_port = port;
    config.timeout = milliseconds(20000);
    return config;
  };
  // Rank 0 serves the store on a port the system picks as it binds (no other process can take
  // it in between, as it could a port found free and released), and rank 1 is told it.
  Rendezvous served = open_store(config_of(0, 0), 1);
  ASSERT_NE(served.tcp_store, nullptr);
  const int port = served.tcp_store->port();
  ASSERT_GT(port, 0);
  std::vector<std::string> messages(2);
  std::vector<double> seconds(2);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      const auto start = std::chrono::steady_clock::now();
      messages[r] = error_of([&] {
        if (r == 0) {
          meet(std::move(served), config_of(0, port), 1);
        } else {
          rendezvous(config_of(1, port), 1);
        }
      });
      seconds[r] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    });
  }
  for (std::thread& t : ranks)
    t.join();
  for (int r = 0; r < 2; ++r) {
    EXPECT_CONTAINS(messages[r], "rank 1 chose the nccl backend but rank 0 the gloo one");
    EXPECT_LT(seconds[r], 10.0) << "rank " << r;  // not the 20 s timeout
  }
}

TEST(TCPStore, RefusesARankThatIsAlreadyConnected) {
  auto server = serve(3);
  auto first = join(server->port(), 2, 3);
  EXPECT_CONTAINS(error_of([&] { join(server->port(), 2, 3); }),
                  "rank 2 joined twice: two processes were started with RANK=2");
}

TEST(TCPStore, RecordsRanksThatLeave) {
  auto server = serve(3);
  auto one = join(server->port(), 1, 3);
  auto two = join(server->port(), 2, 3);
  EXPECT_FALSE(server->check({store_keys::left(kGroup1, 1)}));
  one.reset();  // closes its connection, as exiting or being killed does
  server->wait({store_keys::left(kGroup1, 1)}, milliseconds(2000));
  EXPECT_FALSE(server->check({store_keys::left(kGroup1, 2)}));
  // Rank 0 waits for the others to leave before it stops serving.
  std::thread leaver([&] {
    std::this_thread::sleep_for(milliseconds(50));
    two.reset();
  });
  const auto start = std::chrono::steady_clock::now();
  server->wait_for_ranks_to_leave(net::Clock::now() + std::chrono::seconds(5));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  leaver.join();
}

// Note [A store of an earlier group]: a rank of group 2 that finds rank 0 still serving group 1
// is not counted by that server, keeps asking, and joins group 2's server when it comes up on
// the same port.
TEST(TCPStore, ARankOfALaterGroupWaitsForItsStore) {
  auto first = serve(2);
  const int port = first->port();
  std::unique_ptr<TCPStore> joined;
  std::string error;
  std::thread joiner([&] {
    try {
      joined = join(port, 1, 2, milliseconds(10000), /*generation=*/2);
    } catch (const Error& e) {
      error = e.message();
    }
  });
  std::this_thread::sleep_for(milliseconds(200));  // the joiner is asking the old server
  EXPECT_FALSE(first->check({kInitError}));        // which neither refused it
  const auto start = std::chrono::steady_clock::now();
  first->wait_for_ranks_to_leave(net::Clock::now() + std::chrono::seconds(5));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1))
      << "the old server counted the rank of the next group";  // nor counted it
  first.reset();
  auto second = std::make_unique<TCPStore>("127.0.0.1", port, 0, 2, milliseconds(2000),
                                           Server::ThisProcess, /*generation=*/2);
  joiner.join();
  ASSERT_EQ(error, "");
  ASSERT_NE(joined, nullptr);
  joined->set("k", "v");
  EXPECT_EQ(second->get("k"), "v");
}

TEST(TCPStore, ARankOfAnEarlierGroupIsRefused) {
  auto server = std::make_unique<TCPStore>("127.0.0.1", 0, 0, 2, milliseconds(2000),
                                           Server::ThisProcess, /*generation=*/3);
  const std::string message = error_of([&] { join(server->port(), 1, 2); });
  EXPECT_CONTAINS(message, "refused rank 1");
  EXPECT_CONTAINS(message,
                  "rank 1 is joining group 1 of this job but rank 0 serves group 3: every "
                  "process must call init_process_group");
  EXPECT_CONTAINS(server->get(kInitError), "rank 1 is joining group 1");
}

TEST(TCPStore, ARankOfALaterGroupGivesUpAtTheTimeoutSayingWhy) {
  auto server = serve(2);
  const std::string message = error_of([&] {
    TCPStore("127.0.0.1", server->port(), 1, 2, milliseconds(300), Server::Rank0,
             /*generation=*/2);
  });
  EXPECT_CONTAINS(
      message, "rank 1 waited 300 ms for the store at 127.0.0.1:" + std::to_string(server->port()) +
                   " to serve its group, but rank 0 still serves the store of group 1 of this "
                   "job (it has not finished destroy_process_group), and rank 1 is joining "
                   "group 2");
}

TEST(TCPStore, AStoreWhoseServerIsGoneSaysSo) {
  auto server = serve(2);
  auto client = join(server->port(), 1, 2);
  server.reset();
  const std::string message = error_of([&] { client->set("k", "v"); });
  EXPECT_CONTAINS(message, "(served by rank 0) is unreachable");
  EXPECT_CONTAINS(message, "rank 0 has probably exited");
  // Later requests fail at once with the same reason.
  EXPECT_CONTAINS(error_of([&] { client->try_get("k"); }), "rank 0 has probably exited");
}

// Note [The launcher's store]: leangrad-run's server serves every group of the job at once.
// A rank that destroyed group 1 joins group 2 at once while another rank is still in group 1;
// the roll, the departures and the refusals are per group; the map is one.
TEST(TCPStore, TheLaunchersServerServesEveryGroupAtOnce) {
  TCPStoreServer server(0, 2, TCPStoreServer::kEveryGroup);
  const auto launcher_store = [&](int rank, int generation, int world_size = 2) {
    return join(server.port(), rank, world_size, milliseconds(2000), generation, Server::Launcher);
  };
  auto rank0 = launcher_store(0, 1);
  auto rank1 = launcher_store(1, 1);
  EXPECT_EQ(rank0->describe(), "the TCP store at 127.0.0.1:" + std::to_string(server.port()) +
                                   " (served by leangrad-run)");
  rank0->set("g1/k", "one");
  rank0.reset();  // rank 0 destroys group 1
  const std::string group2 = store_keys::group_prefix(2);
  rank1->wait({store_keys::left(kGroup1, 0)}, milliseconds(2000));
  const auto start = std::chrono::steady_clock::now();
  rank0 = launcher_store(0, 2);  // while rank 1 is still in group 1: no Busy, no waiting
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(1000));
  EXPECT_EQ(rank0->get("g1/k"), "one");
  // A second rank 0 of group 2 is refused; rank 1 joins group 2 once it has left group 1.
  EXPECT_CONTAINS(error_of([&] { launcher_store(0, 2); }), "rank 0 joined twice");
  rank1.reset();
  rank1 = launcher_store(1, 2);
  EXPECT_FALSE(rank1->check({store_keys::left(group2, 0)}));
  EXPECT_FALSE(rank1->check({store_keys::left(group2, 1)}));
  // Group 1 completed its rendezvous without whoever asks for it now.
  EXPECT_CONTAINS(error_of([&] { launcher_store(1, 1); }),
                  "rank 1 is joining group 1 of this job but ranks have joined group 2 already: "
                  "every process must call init_process_group (and destroy_process_group) the "
                  "same number of times");
  EXPECT_CONTAINS(error_of([&] { launcher_store(1, 3, 3); }),
                  "rank 1 was started with WORLD_SIZE=3 but leangrad-run, which serves the "
                  "store, with WORLD_SIZE=2");
  EXPECT_CONTAINS(rank0->get(store_keys::init_error(store_keys::group_prefix(3))), "WORLD_SIZE=3");
  EXPECT_CONTAINS(rank0->get(store_keys::init_error(group2)), "rank 0 joined twice");
  EXPECT_CONTAINS(rank0->get(kInitError), "rank 1 is joining group 1");
}

// What a rank wrote stays when it exits: rank 0's report can be quoted after rank 0 is gone
// (with rank 0's own server it went with the process).
TEST(TCPStore, WhatRank0WroteOutlivesItOnTheLaunchersServer) {
  TCPStoreServer server(0, 2, TCPStoreServer::kEveryGroup);
  auto rank0 = join(server.port(), 0, 2, milliseconds(2000), 1, Server::Launcher);
  auto rank1 = join(server.port(), 1, 2, milliseconds(2000), 1, Server::Launcher);
  rank0->set(store_keys::error(kGroup1, 0), "rank 0's data is corrupt");
  rank0.reset();  // exits
  rank1->wait({store_keys::left(kGroup1, 0)}, milliseconds(2000));
  EXPECT_EQ(rank1->get(store_keys::error(kGroup1, 0)), "rank 0's data is corrupt");
}

TEST(TCPStore, AnUnreachableOrVanishedLaunchersStoreIsNamed) {
  const test::UnservedPort unserved;
  EXPECT_CONTAINS(
      error_of([&] { join(unserved.port(), 0, 2, milliseconds(200), 1, Server::Launcher); }),
      "rank 0 could not reach the store of leangrad-run at MASTER_ADDR:MASTER_PORT = "
      "127.0.0.1:" +
          std::to_string(unserved.port()));
  auto server = std::make_unique<TCPStoreServer>(0, 2, TCPStoreServer::kEveryGroup);
  auto client = join(server->port(), 1, 2, milliseconds(2000), 1, Server::Launcher);
  server.reset();
  EXPECT_CONTAINS(error_of([&] { client->set("k", "v"); }),
                  "(served by leangrad-run) is unreachable");
  EXPECT_CONTAINS(error_of([&] { client->try_get("k"); }), "leangrad-run has probably exited");
}

TEST(FileStore, SetReplaceGetAddWait) {
  if (!is_gloo_available()) GTEST_SKIP() << "the file store needs a build with Gloo";
  const std::string dir = std::filesystem::temp_directory_path() /
                          ("leangrad_file_store_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    auto store = make_file_store(dir, milliseconds(2000));
    auto other = make_file_store(dir, milliseconds(2000));
    EXPECT_FALSE(store->try_get("k").has_value());
    store->set("k", "first");
    EXPECT_EQ(other->get("k"), "first");
    other->set("k", "second");  // Gloo's FileStore writes once; ours replaces
    EXPECT_EQ(store->get("k"), "second");
    std::thread adder([&] {
      for (int i = 0; i < 50; ++i)
        other->add("n", 1);
    });
    for (int i = 0; i < 50; ++i)
      store->add("n", 2);
    adder.join();
    EXPECT_EQ(store->get("n"), "150");
    EXPECT_CONTAINS(error_of([&] {
                      store->wait({"k", "never"}, milliseconds(100));
                    }),
                    "key(s) [never] in the file store in " + dir);
  }
  std::filesystem::remove_all(dir);
  EXPECT_CONTAINS(error_of([&] { make_file_store(dir, milliseconds(100)); }),
                  "does not name a folder");
}

}  // namespace
}  // namespace leangrad::distributed
