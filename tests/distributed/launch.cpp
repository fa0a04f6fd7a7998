// Spawning dist_worker ranks for the multi-process tests (launch.h).
#include "distributed/launch.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <leangrad/distributed/distributed.h>

extern char** environ;

namespace leangrad::test {
namespace {

// Variables of the launchers leangrad reads: never inherited from the test's own environment.
bool is_launcher_variable(const std::string& name) {
  for (const char* prefix :
       {"RANK=", "WORLD_SIZE=", "LOCAL_RANK=", "MASTER_ADDR=", "MASTER_PORT=", "OMPI_COMM_WORLD_",
        "SLURM_", "LEANGRAD_STORE=", "LEANGRAD_DIST_TIMEOUT_S=", "OMP_NUM_THREADS=",
        "LEANGRAD_USE_AGENT_STORE="}) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

std::vector<RankOutcome> launch_once(const Launch& l, int port) {
  char dir_template[] = "/tmp/leangrad_dist_XXXXXX";
  const std::string dir = ::mkdtemp(dir_template);
  std::vector<int> ranks = l.ranks;
  if (ranks.empty()) {
    for (int r = 0; r < l.world_size; ++r)
      ranks.push_back(r);
  }
  std::vector<pid_t> pids;
  std::vector<std::string> logs;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t index = 0; index < ranks.size(); ++index) {
    const int rank = ranks[index];
    std::map<std::string, std::string> vars = {
        {"RANK", std::to_string(rank)},
        {"WORLD_SIZE", std::to_string(l.world_size)},
        {"LOCAL_RANK", std::to_string(rank)},
        {"MASTER_ADDR", "127.0.0.1"},
        {"MASTER_PORT", std::to_string(port)},
        {"LEANGRAD_DIST_TIMEOUT_S", "20"},
        {"OMP_NUM_THREADS", "1"},  // ranks share the cores, as torchrun sets it
    };
    for (const auto& [k, v] : l.env)
      vars[k] = v;
    if (auto it = l.rank_env.find(rank); it != l.rank_env.end()) {
      for (const auto& [k, v] : it->second)
        vars[k] = v;
    }
    std::vector<std::string> strings;
    for (char** e = environ; *e != nullptr; ++e) {
      if (!is_launcher_variable(*e)) strings.emplace_back(*e);
    }
    for (const auto& [k, v] : vars) {
      if (!v.empty()) strings.push_back(k + "=" + v);
    }
    std::vector<char*> envp;
    for (std::string& s : strings)
      envp.push_back(s.data());
    envp.push_back(nullptr);

    const std::string log = dir + "/process" + std::to_string(index) + ".log";
    logs.push_back(log);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    std::vector<std::string> command;
    if (auto it = l.rank_prefix.find(rank); it != l.rank_prefix.end()) command = it->second;
    command.push_back(LEANGRAD_DIST_WORKER);
    command.push_back(l.scenario);
    std::vector<char*> argv;
    for (std::string& word : command)
      argv.push_back(word.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    pids.push_back(rc == 0 ? pid : -1);
  }

  std::vector<RankOutcome> outcomes(ranks.size());
  std::size_t running = 0;
  for (pid_t pid : pids)
    running += pid > 0;
  const auto deadline = start + std::chrono::duration<double>(l.deadline_s);
  while (running > 0) {
    for (std::size_t i = 0; i < pids.size(); ++i) {
      if (pids[i] <= 0) continue;
      int status = 0;
      if (::waitpid(pids[i], &status, WNOHANG) != pids[i]) continue;
      RankOutcome& o = outcomes[i];
      o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
      pids[i] = 0;
      --running;
    }
    if (running > 0 && std::chrono::steady_clock::now() > deadline) {
      for (std::size_t i = 0; i < pids.size(); ++i) {
        if (pids[i] <= 0) continue;
        ::kill(pids[i], SIGKILL);
        ::waitpid(pids[i], nullptr, 0);
        outcomes[i].killed_at_deadline = true;
        outcomes[i].signal = SIGKILL;
        pids[i] = 0;
      }
      running = 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (std::size_t i = 0; i < logs.size(); ++i) {
    std::ifstream in(logs[i]);
    std::stringstream text;
    text << in.rdbuf();
    outcomes[i].output = text.str();
    std::remove(logs[i].c_str());
  }
  ::rmdir(dir.c_str());
  return outcomes;
}

}  // namespace

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

UnservedPort::UnservedPort() : socket_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
  // No SO_REUSEADDR: a server that sets it (the TCP store's does) still cannot bind the port.
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  if (!socket_.valid() ||
      ::bind(socket_.fd(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::getsockname(socket_.fd(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    ADD_FAILURE() << "UnservedPort: cannot bind a port of 127.0.0.1: " << std::strerror(errno);
    return;
  }
  port_ = ntohs(address.sin_port);
}

std::vector<RankOutcome> launch(const Launch& l) {
  for (int attempt = 0;; ++attempt) {
    std::vector<RankOutcome> outcomes = launch_once(l, l.port != 0 ? l.port : free_port());
    bool port_taken = false;
    for (const RankOutcome& o : outcomes) {
      port_taken |= o.output.find("is already in use") != std::string::npos;
    }
    if (!port_taken || l.port != 0 || attempt == 3) return outcomes;
  }
}

std::string describe(const std::vector<RankOutcome>& outcomes) {
  std::ostringstream out;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    const RankOutcome& o = outcomes[i];
    out << "--- process " << i << " (exit " << o.exit_code << ", signal " << o.signal
        << (o.killed_at_deadline ? ", killed at the deadline" : "") << ", " << o.seconds << " s):\n"
        << o.output;
  }
  return out.str();
}

void GroupOfOneTest::SetUp() {
  if (!distributed::is_gloo_available()) GTEST_SKIP() << "built without Gloo";
  distributed::init_process_group(distributed::InitOptions().rank(0).world_size(1));
}

void GroupOfOneTest::TearDown() {
  if (distributed::is_initialized()) distributed::destroy_process_group();
}

std::vector<RankOutcome> expect_all_pass(const std::string& scenario, int world_size) {
  Launch l;
  l.scenario = scenario;
  l.world_size = world_size;
  l.deadline_s = 60;
  const std::vector<RankOutcome> outcomes = launch(l);
  for (const RankOutcome& o : outcomes)
    EXPECT_EQ(o.exit_code, 0) << describe(outcomes);
  return outcomes;
}

}  // namespace leangrad::test
