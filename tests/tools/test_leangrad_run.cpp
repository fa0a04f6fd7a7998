// leangrad-run end to end: the launcher binary started with posix_spawn, running small `sh -c`
// programs as ranks (and tests/distributed's dist_worker for a real job): the environment each
// rank sees, the prefixed output, exit codes, stopping the other ranks when one fails, signals
// passed on, and the messages of bad command lines.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "launch_plan.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

struct Outcome {
  int exit_code = -1;  // -1 when a signal ended the launcher
  int signal = 0;
  double seconds = 0;
  std::string out, err;
  std::string describe() const {
    return "exit code " + std::to_string(exit_code) + ", signal " + std::to_string(signal) + ", " +
           std::to_string(seconds) + " s\n--- stdout:\n" + out + "--- stderr:\n" + err;
  }
};

// One leangrad-run process, its stdout and stderr in files. Its environment is the test's without
// any launcher's variables, plus `env`.
class Launcher {
 public:
  explicit Launcher(const std::vector<std::string>& args,
                    const std::map<std::string, std::string>& env = {}) {
    static int count = 0;
    const std::string base = std::filesystem::temp_directory_path().string() + "/leangrad_run_" +
                             std::to_string(::getpid()) + "_" + std::to_string(count++);
    out_path_ = base + ".out";
    err_path_ = base + ".err";
    std::vector<std::string> strings;
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string entry = *e;
      bool launcher_variable = false;
      for (const char* prefix :
           {"RANK=", "WORLD_SIZE=", "LOCAL_RANK=", "LOCAL_WORLD_SIZE=", "MASTER_ADDR=",
            "MASTER_PORT=", "OMP_NUM_THREADS=", "OMPI_COMM_WORLD_", "SLURM_",
            "LEANGRAD_STORE=", "LEANGRAD_USE_AGENT_STORE="})
        launcher_variable |= entry.rfind(prefix, 0) == 0;
      const bool given = env.count(entry.substr(0, entry.find('='))) != 0;
      if (!launcher_variable && !given) strings.push_back(entry);
    }
    for (const auto& [name, value] : env)
      strings.push_back(name + "=" + value);
    std::vector<char*> envp;
    for (std::string& s : strings)
      envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> words = {LEANGRAD_RUN};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& w : words)
      argv.push_back(w.data());
    argv.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_addopen(&actions, 2, err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    // Whatever the test runner ignores or blocks, the launcher starts with the defaults (it leaves
    // an ignored SIGINT ignored, as shells do), in a process group of its own whose parent (this
    // test) is outside it, as a shell's job: so SIGTSTP stops it.
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(
        &attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
    sigset_t signals;
    sigemptyset(&signals);
    posix_spawnattr_setsigmask(&attributes, &signals);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGTSTP, SIGCONT})
      sigaddset(&signals, s);
    posix_spawnattr_setsigdefault(&attributes, &signals);
    start_ = Clock::now();
    EXPECT_EQ(posix_spawn(&pid_, argv[0], &actions, &attributes, argv.data(), envp.data()), 0);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
  }

  ~Launcher() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    std::remove(out_path_.c_str());
    std::remove(err_path_.c_str());
  }

  // Waits until stdout holds `text` `times` times; false at the timeout.
  bool wait_for_stdout(const std::string& text, int times, double timeout_s = 20) {
    while (seconds_since(start_) < timeout_s) {
      const std::string out = read_file(out_path_);
      int found = 0;
      for (std::size_t at = out.find(text); at != std::string::npos; at = out.find(text, at + 1))
        ++found;
      if (found >= times) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  void send(int signal_number) { ::kill(pid_, signal_number); }
  pid_t pid() const { return pid_; }
  std::string stdout_so_far() const { return read_file(out_path_); }

  // Waits for the launcher to end (killing it after `deadline_s`, which fails the test).
  Outcome wait(double deadline_s = 30) {
    Outcome o;
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (seconds_since(start_) > deadline_s) {
        ADD_FAILURE() << "leangrad-run still running after " << deadline_s << " s: killed";
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    pid_ = -1;
    o.seconds = seconds_since(start_);
    if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
    o.out = read_file(out_path_);
    o.err = read_file(err_path_);
    return o;
  }

 private:
  pid_t pid_ = -1;
  Clock::time_point start_;
  std::string out_path_, err_path_;
};

Outcome run(const std::vector<std::string>& args,
            const std::map<std::string, std::string>& env = {}) {
  return Launcher(args, env).wait();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A port of 127.0.0.1 held by a socket bound without listening (and without SO_REUSEADDR): no
// other socket can bind it while this lives, and connections to it are refused. release()
// closes it: then the port is free, until another program takes it (which the tests that use
// it to name a port for the launcher detect and retry).
class HeldPort {
 public:
  HeldPort() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      ADD_FAILURE() << "cannot bind a port of 127.0.0.1: " << std::strerror(errno);
      return;
    }
    port_ = ntohs(address.sin_port);
  }
  ~HeldPort() { release(); }
  HeldPort(const HeldPort&) = delete;
  HeldPort& operator=(const HeldPort&) = delete;
  std::string port() const { return std::to_string(port_); }
  void release() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
  int port_ = 0;
};

// ---- The environment -------------------------------------------------------------------------

TEST(LeangradRun, EachRankSeesItsVariables) {
  const Outcome o = run({"--nproc-per-node", "3", "sh", "-c",
                         "echo \"$RANK $WORLD_SIZE $LOCAL_RANK $LOCAL_WORLD_SIZE $MASTER_ADDR "
                         "$MASTER_PORT omp=$OMP_NUM_THREADS agent=$LEANGRAD_USE_AGENT_STORE\""});
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  std::set<std::string> ports;
  std::map<int, int> seen;  // rank -> lines
  const std::regex line(R"(\[rank (\d)\] (\d) 3 (\d) 3 127\.0\.0\.1 (\d+) omp=(\d+) agent=1)");
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  for (const std::string& l : lines_of(o.out)) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(l, m, line)) << l << "\n" << o.describe();
    EXPECT_EQ(m[1], m[2]);  // prefix = RANK = LOCAL_RANK on one node
    EXPECT_EQ(m[2], m[3]);
    ports.insert(m[4]);
    // The cores shared out (the test's affinity may allow fewer than the machine has).
    EXPECT_GE(std::stoi(m[5]), 1);
    EXPECT_LE(std::stoi(m[5]), std::max(1, cores / 3));
    ++seen[std::stoi(m[1])];
  }
  EXPECT_EQ(seen, (std::map<int, int>{{0, 1}, {1, 1}, {2, 1}})) << o.describe();
  ASSERT_EQ(ports.size(), 1u) << "every rank gets the same port";
  EXPECT_GT(std::stoi(*ports.begin()), 0);
  EXPECT_EQ(o.err, "");
}

TEST(LeangradRun, NodeRankNumbersTheRanksAndTheMasterIsGiven) {
  const Outcome o =
      run({"--nnodes", "3", "--node-rank", "1", "--master-addr", "10.1.2.3", "--master-port",
           "29555", "--nproc-per-node", "2", "sh", "-c",
           "echo $RANK $WORLD_SIZE $LOCAL_RANK $LOCAL_WORLD_SIZE $MASTER_ADDR $MASTER_PORT"},
          {{"RANK", "7"}, {"OMP_NUM_THREADS", "5"}});
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  std::vector<std::string> lines = lines_of(o.out);
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(lines, (std::vector<std::string>{"[rank 2] 2 6 0 2 10.1.2.3 29555",
                                             "[rank 3] 3 6 1 2 10.1.2.3 29555"}));
}

// MASTER_PORT from the environment: node 0's launcher serves the store there. The port was free
// a moment before; a parallel test that took it meanwhile makes the launcher exit 1 saying so,
// and the test tries another.
TEST(LeangradRun, MasterFromTheEnvironmentAndOpenMPThreadsKept) {
  for (int attempt = 0;; ++attempt) {
    HeldPort held;
    const std::string port = held.port();
    held.release();
    const Outcome o =
        run({"--nproc-per-node", "2", "sh", "-c",
             "echo $MASTER_ADDR $MASTER_PORT $OMP_NUM_THREADS; cat; echo stdin-done"},
            {{"MASTER_ADDR", "localhost"}, {"MASTER_PORT", port}, {"OMP_NUM_THREADS", "3"}});
    if (o.exit_code == 1 && contains(o.err, "is already in use") && attempt < 3) continue;
    ASSERT_EQ(o.exit_code, 0) << o.describe();
    EXPECT_TRUE(contains(o.out, "[rank 0] localhost " + port + " 3\n")) << o.describe();
    EXPECT_TRUE(contains(o.out, "[rank 1] localhost " + port + " 3\n")) << o.describe();
    EXPECT_TRUE(contains(o.out, "[rank 1] stdin-done\n")) << "stdin is /dev/null";
    return;
  }
}

TEST(LeangradRun, ProgramIsLookedUpInPath) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("leangrad_run_path_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "hello_rank") << "#!/bin/sh\necho hello from $RANK \"$@\"\n";
  fs::permissions(dir / "hello_rank", fs::perms::owner_all);
  const Outcome o = run({"--nproc-per-node", "1", "--", "hello_rank", "--flag", "x y"},
                        {{"PATH", dir.string() + ":/usr/bin:/bin"}});
  fs::remove_all(dir);
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_EQ(o.out, "[rank 0] hello from 0 --flag x y\n");
}

// ---- Output ------------------------------------------------------------------------------------

TEST(LeangradRun, OutputLinesArePrefixedWholeAndInOrder) {
  // Each line written in two pieces, both ranks at once, stderr beside stdout, a partial last line.
  const Outcome o = run({"--nproc-per-node", "2", "sh", "-c",
                         "i=1; while [ $i -le 300 ]; do printf \"r$RANK-\"; printf \"$i\\n\"; "
                         "i=$((i+1)); done; echo err-$RANK >&2; printf last-$RANK"});
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  const std::regex line(R"(\[rank (\d)\] r(\d)-(\d+))");
  int next[2] = {1, 1};
  int last_lines = 0;
  for (const std::string& l : lines_of(o.out)) {
    std::smatch m;
    if (l == "[rank 0] last-0" || l == "[rank 1] last-1") {
      ++last_lines;
      continue;
    }
    ASSERT_TRUE(std::regex_match(l, m, line)) << "a mixed or broken line: " << l;
    ASSERT_EQ(m[1], m[2]);
    const int r = std::stoi(m[1]);
    EXPECT_EQ(std::stoi(m[3]), next[r]) << "rank " << r << "'s lines out of order";
    next[r] = std::stoi(m[3]) + 1;
  }
  EXPECT_EQ(next[0], 301);
  EXPECT_EQ(next[1], 301);
  EXPECT_EQ(last_lines, 2) << "the partial last lines, flushed at the end";
  EXPECT_EQ(o.out.back(), '\n');
  std::vector<std::string> errors = lines_of(o.err);
  std::sort(errors.begin(), errors.end());
  EXPECT_EQ(errors, (std::vector<std::string>{"[rank 0] err-0", "[rank 1] err-1"}));
}

// ---- Exit codes and failures -----------------------------------------------------------------

TEST(LeangradRun, ExitsZeroWhenEveryRankDoes) {
  const Outcome o = run({"--nproc-per-node", "4", "true"});
  EXPECT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_EQ(o.out + o.err, "");
}

TEST(LeangradRun, AFailedRankStopsTheOthersAndGivesItsCode) {
  // Rank 1 fails; ranks 0 and 2 would sleep for ever (exec: the sleep is the rank).
  const Outcome o = run({"--nproc-per-node", "3", "sh", "-c",
                         "if [ $RANK = 1 ]; then sleep 0.2; echo bad input >&2; exit 3; fi; "
                         "exec sleep 1000"});
  EXPECT_EQ(o.exit_code, 3) << o.describe();
  EXPECT_LT(o.seconds, 4) << "the sleeping ranks were not stopped at once";
  EXPECT_TRUE(contains(o.err, "[rank 1] bad input\n")) << o.describe();
  EXPECT_TRUE(contains(o.err, "rank 1 (pid ")) << o.describe();
  EXPECT_TRUE(contains(o.err, ") exited with code 3; stopping the other 2 rank(s)"))
      << o.describe();
  EXPECT_TRUE(contains(o.err, "failed first (it exited with code 3): leangrad-run exits with 3"))
      << o.describe();
}

TEST(LeangradRun, ARankKilledByASignalGives128PlusIt) {
  const Outcome o = run({"--nproc-per-node", "2", "sh", "-c",
                         "if [ $RANK = 0 ]; then sleep 0.1; kill -KILL $$; fi; exec sleep 1000"});
  EXPECT_EQ(o.exit_code, 128 + SIGKILL) << o.describe();
  EXPECT_LT(o.seconds, 4);
  EXPECT_TRUE(contains(o.err, "rank 0 (pid ")) << o.describe();
  EXPECT_TRUE(contains(o.err, "was killed by SIGKILL")) << o.describe();
}

TEST(LeangradRun, RanksIgnoringSigtermAreKilledAfterTheGracePeriod) {
  // Rank 1 fails; rank 0 ignores SIGTERM (its sleeps too) and is killed 0.5 s later. Rank 1
  // fails only once rank 0 has said (a file) that its trap is set: on a loaded machine rank 0's
  // shell may not have reached the trap when the launcher's SIGTERM comes.
  const std::string trapped = std::filesystem::temp_directory_path().string() +
                              "/leangrad_run_trapped_" + std::to_string(::getpid());
  std::filesystem::remove(trapped);
  Launcher launcher({"--nproc-per-node", "2", "--grace-period", "0.5", "sh", "-c",
                     "trap '' TERM; echo ready; if [ $RANK = 0 ]; then touch " + trapped +
                         "; fi; if [ $RANK = 1 ]; then while [ ! -e " + trapped +
                         " ]; do sleep 0.01; done; exit 5; fi; while :; do sleep 0.05; done"});
  const Outcome o = launcher.wait();
  std::filesystem::remove(trapped);
  EXPECT_EQ(o.exit_code, 5) << o.describe();
  EXPECT_GE(o.seconds, 0.5);
  EXPECT_LT(o.seconds, 4);
  EXPECT_TRUE(contains(o.err, "rank(s) 0 still running after 0.5 s: SIGKILL")) << o.describe();
}

// The state letter of process `pid` in /proc/<pid>/stat (R, S, T: stopped, Z: exited and waiting
// to be reaped), or '?'.
char state_of(pid_t pid) {
  const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  const std::size_t name_end = stat.rfind(')');
  return name_end != std::string::npos && name_end + 2 < stat.size() ? stat[name_end + 2] : '?';
}

bool is_zombie(pid_t pid) {
  return state_of(pid) == 'Z';
}

// Waits until process `pid` is in state `state`; false after 10 s.
bool wait_for_state(pid_t pid, char state) {
  for (int i = 0; i < 1000; ++i) {
    if (state_of(pid) == state) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Whether the job of rank process `pid` is stopped: the process itself ('T'), or a shell blocked
// ('D') in vfork on a child that the stop reached between its fork and its exec; such a shell
// cannot run until the child does.
bool rank_is_stopped(pid_t pid) {
  const char state = state_of(pid);
  if (state == 'T') return true;
  if (state != 'D') return false;
  const std::string id = std::to_string(pid);
  std::istringstream children(read_file("/proc/" + id + "/task/" + id + "/children"));
  pid_t child = 0;
  while (children >> child) {
    if (state_of(child) == 'T') return true;
  }
  return false;
}

// Waits until rank_is_stopped(pid); false after 10 s.
bool wait_for_rank_stopped(pid_t pid) {
  for (int i = 0; i < 1000; ++i) {
    if (rank_is_stopped(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(LeangradRun, NothingOfAStoppedRankOutlivesTheLauncher) {
  // Each rank's shell starts a background sleep and prints its pid; rank 1 then fails. The
  // sleeps belong to the ranks' process groups, so the stop reaches them too, the failed rank's
  // included.
  const Outcome o = run({"--nproc-per-node", "2", "sh", "-c",
                         "sleep 1000 & echo child $!; if [ $RANK = 1 ]; then sleep 0.2; exit 1; "
                         "fi; wait"});
  EXPECT_EQ(o.exit_code, 1) << o.describe();
  const std::regex child(R"(\[rank \d\] child (\d+))");
  int children = 0;
  for (const std::string& l : lines_of(o.out)) {
    std::smatch m;
    if (!std::regex_match(l, m, child)) continue;
    ++children;
    const pid_t pid = std::stoi(m[1]);
    bool gone = false;
    for (int i = 0; i < 200 && !gone; ++i) {
      gone = ::kill(pid, 0) != 0 || is_zombie(pid);  // a zombie waits for init to reap it
      if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(gone) << "the background sleep " << pid << " survived";
    if (!gone) ::kill(pid, SIGKILL);
  }
  EXPECT_EQ(children, 2) << o.describe();
}

// ---- Signals ------------------------------------------------------------------------------------

class LeangradRunSignal : public ::testing::TestWithParam<int> {};

TEST_P(LeangradRunSignal, IsPassedOnOnceToEveryRankAndEndsTheLauncher) {
  const int signal_number = GetParam();
  const std::string name = signal_number == SIGINT    ? "INT"
                           : signal_number == SIGTERM ? "TERM"
                                                      : "HUP";
  // The ranks report the signal and go on; SIGKILL ends them after the grace period.
  Launcher launcher(
      {"--nproc-per-node", "2", "--grace-period", "1", "sh", "-c",
       "trap 'echo got " + name + "' " + name + "; echo ready; while :; do sleep 0.05; done"});
  ASSERT_TRUE(launcher.wait_for_stdout("ready", 2));
  launcher.send(signal_number);
  const Outcome o = launcher.wait();
  EXPECT_EQ(o.signal, signal_number) << "the launcher dies of the signal it passed on\n"
                                     << o.describe();
  EXPECT_LT(o.seconds, 6);
  for (const std::string rank : {"0", "1"}) {
    const std::string got = "[rank " + rank + "] got " + name + "\n";
    const std::size_t first = o.out.find(got);
    EXPECT_NE(first, std::string::npos) << o.describe();
    EXPECT_EQ(o.out.find(got, first + 1), std::string::npos) << "received twice\n" << o.describe();
  }
  EXPECT_TRUE(contains(o.err, "got SIG" + name + ": passing it on to the 2 running rank(s)"))
      << o.describe();
}

INSTANTIATE_TEST_SUITE_P(Signals, LeangradRunSignal, ::testing::Values(SIGINT, SIGTERM, SIGHUP),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(sigabbrev_np(info.param));
                         });

TEST(LeangradRun, CtrlZStopsTheRanksAndTheLauncherAndSigcontContinuesThem) {
  // Each rank counts to 20 in 50 ms steps; while stopped it does not count.
  Launcher launcher({"--nproc-per-node", "2", "sh", "-c",
                     "echo pid $$; i=0; while [ $i -lt 20 ]; do sleep 0.05; i=$((i+1)); done; "
                     "echo done"});
  ASSERT_TRUE(launcher.wait_for_stdout("pid ", 2));
  std::vector<pid_t> ranks;
  const std::regex line(R"(\[rank \d\] pid (\d+))");
  for (const std::string& l : lines_of(launcher.stdout_so_far())) {
    std::smatch m;
    if (std::regex_match(l, m, line)) ranks.push_back(std::stoi(m[1]));
  }
  ASSERT_EQ(ranks.size(), 2u);
  launcher.send(SIGTSTP);
  EXPECT_TRUE(wait_for_state(launcher.pid(), 'T')) << "the launcher did not stop";
  for (pid_t r : ranks)
    EXPECT_TRUE(wait_for_rank_stopped(r)) << "rank process " << r << " did not stop";
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  for (pid_t r : ranks) {
    EXPECT_TRUE(rank_is_stopped(r))
        << "rank process " << r << " runs while the job is stopped (state " << state_of(r) << ")";
  }
  launcher.send(SIGCONT);
  const Outcome o = launcher.wait();
  EXPECT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_TRUE(contains(o.out, "[rank 0] done\n")) << o.describe();
  EXPECT_TRUE(contains(o.out, "[rank 1] done\n")) << o.describe();
}

TEST(LeangradRun, RanksThatExitOnSigtermEndItQuickly) {
  Launcher launcher({"--nproc-per-node", "2", "sh", "-c", "echo ready; exec sleep 1000"});
  ASSERT_TRUE(launcher.wait_for_stdout("ready", 2));
  launcher.send(SIGTERM);
  const Outcome o = launcher.wait();
  EXPECT_EQ(o.signal, SIGTERM) << o.describe();
  EXPECT_LT(o.seconds, 3) << "not stopped at once";
}

// ---- Bad command lines -----------------------------------------------------------------------

TEST(LeangradRun, BadCommandLinesExit2WithAMessage) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--nproc-per-node", "0", "true"}, "--nproc-per-node must be at least 1, got 0"},
      {{"--nproc-per-node", "-3", "true"}, "--nproc-per-node must be at least 1, got -3"},
      {{"--nproc-per-node", "two", "true"}, "--nproc-per-node"},
      {{"true"}, "--nproc-per-node is required"},
      {{"--nproc-per-node", "2"}, "no program to run"},
      {{"--nproc-per-node", "2", "--nnodes", "2", "--node-rank", "2", "--master-addr", "h",
        "--master-port", "29500", "true"},
       "--node-rank 2 is not a node of the 2 given by --nnodes (node ranks are 0..1)"},
      {{"--nproc-per-node", "2", "--nnodes", "2", "true"}, "--nnodes 2 needs --master-addr"},
      {{"--nproc-per-node", "2", "--master-port", "65536", "true"}, "--master-port must be"},
      {{"--nproc-per-node", "2", "--grace-period", "-1", "true"}, "--grace-period"},
      {{"--nproc-per-node", "2", "--bogus", "true"}, "unknown option --bogus"},
      {{"--nproc-per-node", "2", "no_such_program_xyz"},
       "program 'no_such_program_xyz' not found: no executable file of that name in PATH"},
      {{"--nproc-per-node", "2", "./no/such/file"}, "program ./no/such/file: No such file"},
      {{"--nproc-per-node", "2", "/"}, "program / is not an executable file"},
  };
  for (const auto& [args, message] : cases) {
    std::string command;
    for (const std::string& a : args)
      command += " " + a;
    const Outcome o = run(args);
    EXPECT_EQ(o.exit_code, 2) << command << "\n" << o.describe();
    EXPECT_TRUE(contains(o.err, "leangrad-run: error: " + message) || contains(o.err, message))
        << command << "\n"
        << o.describe();
    EXPECT_EQ(o.out, "") << command;
  }
}

TEST(LeangradRun, AProgramThatCannotStartExits1) {
  // Executable, but neither a binary nor a script with #!: posix_spawnp refuses it.
  const std::string file = std::filesystem::temp_directory_path().string() +
                           "/leangrad_run_noexec_" + std::to_string(::getpid());
  std::ofstream(file) << "garbage\n";
  std::filesystem::permissions(file, std::filesystem::perms::owner_all);
  const Outcome o = run({"--nproc-per-node", "2", file});
  std::remove(file.c_str());
  EXPECT_EQ(o.exit_code, 1) << o.describe();
  EXPECT_EQ(o.err, "leangrad-run: could not start rank 0 (" + file + "): Exec format error\n");
}

TEST(LeangradRun, HelpDescribesTheOptions) {
  const Outcome o = run({"--help"});
  EXPECT_EQ(o.exit_code, 0) << o.describe();
  for (const char* part :
       {"--nproc-per-node", "--nnodes", "--node-rank", "--master-addr", "--master-port",
        "--grace-period", "RANK", "LOCAL_WORLD_SIZE", "Exit code"})
    EXPECT_TRUE(contains(o.out, part)) << part << "\n" << o.out;
}

// ---- A real distributed job ------------------------------------------------------------------

// dist_worker (tests/distributed/) in 2 ranks under leangrad-run. The launcher serves the
// store on the port the system gave it, bound before any rank started, and every rank joins it
// as a client (LEANGRAD_USE_AGENT_STORE=1); a rank 0 that served the store itself would find
// the port in use, held by the launcher for the whole job. So no retry: no port is chosen and
// released before it is bound.
Outcome run_dist_worker(const std::string& scenario, std::map<std::string, std::string> env = {}) {
  env.emplace("LEANGRAD_DIST_TIMEOUT_S", "20");
  return run({"--nproc-per-node", "2", LEANGRAD_DIST_WORKER, scenario}, env);
}

TEST(LeangradRun, RunsTheCollectivesOfTwoDistWorkerRanks) {
  if (!LEANGRAD_TEST_WITH_GLOO) GTEST_SKIP() << "built without Gloo";
  const Outcome o = run_dist_worker("collectives");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_TRUE(contains(o.out, "[rank 0] rank 0 of 2 joined")) << o.describe();
  EXPECT_TRUE(contains(o.out, "[rank 1] rank 1 of 2 joined")) << o.describe();
  EXPECT_TRUE(std::regex_search(o.out, std::regex(R"(\[rank 0\] OK collectives: \d+ checks)")))
      << o.describe();
  EXPECT_TRUE(std::regex_search(o.out, std::regex(R"(\[rank 1\] OK collectives: \d+ checks)")))
      << o.describe();
}

// The launcher holds the store's port for as long as the ranks run: a rank 0 told to serve the
// store itself (LEANGRAD_USE_AGENT_STORE=0, as without leangrad-run) finds the port in use. So in
// the runs above, which pass, rank 0 joined the launcher's store and bound no port.
TEST(LeangradRun, TheLaunchersStoreHoldsThePortWhileTheRanksRun) {
  if (!LEANGRAD_TEST_WITH_GLOO) GTEST_SKIP() << "built without Gloo";
  const Outcome o = run({"--nproc-per-node", "1", "sh", "-c",
                         "LEANGRAD_USE_AGENT_STORE=0 exec \"$0\" init_only", LEANGRAD_DIST_WORKER},
                        {{"LEANGRAD_DIST_TIMEOUT_S", "20"}});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(std::regex_search(
      o.out,
      std::regex(R"(\[rank 0\] ERROR: init_process_group: rank 0 cannot serve the store: TCP )"
                 R"(store: port \d+ is already in use)")))
      << o.describe();
}

// Two groups one after the other (destroy_process_group, init_process_group) on the launcher's
// one store, which serves every group of the job (Note [The launcher's store]).
TEST(LeangradRun, TwoGroupsOneAfterTheOtherShareTheLaunchersStore) {
  if (!LEANGRAD_TEST_WITH_GLOO) GTEST_SKIP() << "built without Gloo";
  const Outcome o = run_dist_worker("reinit");
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_TRUE(contains(o.out, "[rank 0] OK reinit: 2 checks")) << o.describe();
  EXPECT_TRUE(contains(o.out, "[rank 1] OK reinit: 2 checks")) << o.describe();
}

// The store's port is bound by node 0's launcher before any rank starts: a port in use is the
// launcher's error, and no rank runs. Other nodes' launchers serve nothing, so the same port is
// no matter to them.
TEST(LeangradRun, AStorePortInUseStopsNode0sLauncherBeforeAnyRankStarts) {
  HeldPort held;
  const Outcome o =
      run({"--nproc-per-node", "2", "--master-port", held.port(), "sh", "-c", "echo started"});
  EXPECT_EQ(o.exit_code, 1) << o.describe();
  EXPECT_EQ(o.out, "") << o.describe();
  EXPECT_EQ(o.err, "leangrad-run: error: cannot serve the job's store: TCP store: port " +
                       held.port() +
                       " is already in use on this machine (another job, or an earlier run still "
                       "exiting?); choose another MASTER_PORT\n")
      << o.describe();
  const Outcome node1 =
      run({"--nnodes", "2", "--node-rank", "1", "--master-addr", "127.0.0.1", "--master-port",
           held.port(), "--nproc-per-node", "1", "sh", "-c", "echo $LEANGRAD_USE_AGENT_STORE"});
  EXPECT_EQ(node1.exit_code, 0) << node1.describe();
  EXPECT_EQ(node1.out, "[rank 1] 1\n") << node1.describe();
}

// Rank 0 fails in its own code, records why (distributed::record_error) and exits: dist_worker's
// raise scenario with DIST_VICTIM=0. Rank 1, which ignores the launcher's SIGTERM so that it
// lives to say what it saw (SIGKILL would come after 60 s), finds rank 0 gone in its next
// collective and quotes rank 0's report: the launcher's store outlives rank 0. (When rank 0
// served the store, its exit took the store and the report with it: "the store cannot be read
// either".)
TEST(LeangradRun, Rank0sReportIsQuotedByRank1AfterRank0Exited) {
  if (!LEANGRAD_TEST_WITH_GLOO) GTEST_SKIP() << "built without Gloo";
  const Outcome o = run({"--nproc-per-node", "2", "--grace-period", "60", "sh", "-c",
                         "trap '' TERM; exec \"$0\" raise", LEANGRAD_DIST_WORKER},
                        {{"DIST_VICTIM", "0"}, {"LEANGRAD_DIST_TIMEOUT_S", "20"}});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(o.out, "[rank 0] ERROR: the training data of rank 0 is corrupt:"))
      << o.describe();
  EXPECT_TRUE(contains(o.out,
                       "rank 0 has exited (its connection to the store closed); it reported: the "
                       "training data of rank 0 is corrupt: record 17 of shard 3 has 5 fields, "
                       "expected 6"))
      << o.describe();
  EXPECT_TRUE(contains(o.out, "[rank 1] OK raise")) << o.describe();
  EXPECT_TRUE(contains(o.err, "failed first (it exited with code 2)")) << o.describe();
}

// Two "nodes" on this machine: each launcher starts 2 ranks of a world of 4; node 0's serves the
// store on a port that was free a moment before (tried again when a parallel test took it).
TEST(LeangradRun, TwoLaunchersWithNnodes2FormOneJob) {
  if (!LEANGRAD_TEST_WITH_GLOO) GTEST_SKIP() << "built without Gloo";
  for (int attempt = 0;; ++attempt) {
    HeldPort held;
    const std::string port = held.port();
    held.release();
    std::vector<std::unique_ptr<Launcher>> nodes;
    for (const char* node_rank : {"0", "1"}) {
      nodes.push_back(std::make_unique<Launcher>(
          std::vector<std::string>{"--nnodes", "2", "--node-rank", node_rank, "--master-addr",
                                   "127.0.0.1", "--master-port", port, "--nproc-per-node", "2",
                                   LEANGRAD_DIST_WORKER, "init_only"},
          std::map<std::string, std::string>{{"LEANGRAD_DIST_TIMEOUT_S", "20"}}));
    }
    const Outcome node0 = nodes[0]->wait();
    if (node0.exit_code == 1 && contains(node0.err, "is already in use") && attempt < 3) {
      nodes[1]->send(SIGTERM);  // its ranks wait for a store that is not ours
      nodes[1]->wait();
      continue;
    }
    const Outcome node1 = nodes[1]->wait();
    ASSERT_EQ(node0.exit_code, 0) << node0.describe();
    ASSERT_EQ(node1.exit_code, 0) << node1.describe();
    EXPECT_TRUE(contains(node0.out, "[rank 0] rank 0 of 4 joined")) << node0.describe();
    EXPECT_TRUE(contains(node0.out, "[rank 1] rank 1 of 4 joined")) << node0.describe();
    EXPECT_TRUE(contains(node1.out, "[rank 2] rank 2 of 4 joined")) << node1.describe();
    EXPECT_TRUE(contains(node1.out, "[rank 3] rank 3 of 4 joined")) << node1.describe();
    return;
  }
}

TEST(LeangradRun, ADistWorkerRankKilledInACollectiveEndsTheJob) {
  if (!LEANGRAD_TEST_WITH_GLOO) GTEST_SKIP() << "built without Gloo";
  // Rank 1 kills itself (SIGKILL) inside a stream of all-reduces; rank 0 either reports the
  // failed collective or is stopped by the launcher first.
  const Outcome o =
      run_dist_worker("die", {{"DIST_VICTIM", "1"}, {"LEANGRAD_DIST_TIMEOUT_S", "5"}});
  EXPECT_EQ(o.exit_code, 128 + SIGKILL) << o.describe();
  EXPECT_LT(o.seconds, 10) << o.describe();
  EXPECT_TRUE(contains(o.err, "rank 1 (pid ")) << o.describe();
  EXPECT_TRUE(contains(o.err, "failed first (it was killed by SIGKILL)")) << o.describe();
}

}  // namespace
