// leangrad-run's launcher: starts the ranks of this node and watches them until they end
// (rank_launcher.h). Design:
// - Local rank r is global rank node_rank * N + r, started with posix_spawnp (the program looked up
//   in PATH as exec does) and the environment of launch_plan.h: RANK, WORLD_SIZE, LOCAL_RANK,
//   LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, LEANGRAD_USE_AGENT_STORE=1 (node 0's launcher
//   serves the store: leangrad_run.cpp) and OMP_NUM_THREADS (shared out when unset).
// - Each rank leads a process group of its own, and every signal goes to the whole group; ranks
//   are reaped only at the end (Note [One process group per rank]).
// - A rank's stdout and stderr are pipes. One poll() loop reads them all and writes each line,
//   prefixed "[rank R] ", to the launcher's stdout or stderr (rank_output.h); signals and exits
//   reach the same loop through a pipe (Note [Signals through a pipe]).
// - SIGINT, SIGTERM and SIGHUP are passed on to every rank; the launcher then dies of the same
//   signal, as a shell running it expects. Ctrl-Z stops the ranks and the launcher, fg continues.
// - The first rank to exit non-zero or be killed by a signal fails the job: the other ranks get
//   SIGTERM, SIGKILL after the grace period (5 s by default), and the launcher exits with the
//   failed rank's code (128 + the signal's number for a signal), naming the rank.
// Layout: signals and output; Rank; Launcher (start, the loop, stopping, the end); run_ranks.
#include "rank_launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "rank_output.h"

extern char** environ;

namespace leangrad::tools {
namespace {

using Clock = std::chrono::steady_clock;

// ---- Signals and output --------------------------------------------------------------------

// Note [Signals through a pipe]
// The handlers only write the signal's number into a pipe whose read end the poll loop watches
// (the self-pipe trick): SIGCHLD wakes the loop to notice an exit, SIGINT, SIGTERM and SIGHUP to
// pass the signal on, SIGTSTP and SIGCONT to stop and continue the ranks with the launcher.
// Everything else (kill, waitpid, printing) runs in the loop, where it may allocate. A signal the
// launcher was started with ignored (nohup ignores SIGHUP) stays ignored and is not passed on: the
// ranks inherit the ignoring, as with a shell.

constexpr int kStoppingSignals[] = {SIGINT, SIGTERM, SIGHUP};  // passed on; they end the job
constexpr int kJobControlSignals[] = {SIGTSTP, SIGCONT};       // Ctrl-Z, then fg or bg
int g_wake_write_fd = -1;

void on_signal(int signal_number) {
  const int saved_errno = errno;
  const auto byte = static_cast<unsigned char>(signal_number);
  [[maybe_unused]] const ssize_t written = ::write(g_wake_write_fd, &byte, 1);
  errno = saved_errno;
}

std::string signal_name(int signal_number) {
  const char* abbreviation = ::sigabbrev_np(signal_number);
  return abbreviation != nullptr ? std::string("SIG") + abbreviation
                                 : "signal " + std::to_string(signal_number);
}

// Writes all of `text`, waiting while `fd` is full. Output that cannot be written (a closed pipe,
// as in `leangrad-run ... | head`) is dropped: the job goes on.
void write_all(int fd, std::string_view text) {
  static bool closed[3] = {false, false, false};
  if (fd <= 2 && closed[fd]) return;
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n >= 0) {
      text.remove_prefix(static_cast<std::size_t>(n));
    } else if (errno == EAGAIN) {
      pollfd writable{fd, POLLOUT, 0};
      ::poll(&writable, 1, 100);
    } else if (errno != EINTR) {
      if (fd <= 2) closed[fd] = true;
      return;
    }
  }
}

void say(const std::string& message) {
  write_all(STDERR_FILENO, "leangrad-run: " + message + "\n");
}

// ---- Rank ----------------------------------------------------------------------------------

struct Stream {
  int fd = -1;      // the read end of the rank's pipe; -1 once closed
  int target = -1;  // STDOUT_FILENO or STDERR_FILENO
  RankOutput output;
};

struct Rank {
  int local_rank = 0;
  int rank = 0;           // global
  pid_t pid = -1;         // also the id of its process group; -1 when it could not be started
  bool exited = false;    // seen to exit (and left unreaped: Note [One process group per rank])
  bool reaped = false;    // at the launcher's end
  int exit_code = 0;      // once exited; 128 + the signal's number when a signal ended it
  std::string how_ended;  // once exited: "exited with code 3", "was killed by SIGSEGV"
  std::vector<Stream> streams;

  bool started() const { return pid > 0; }
  bool running() const { return started() && !exited; }
};

// ---- Launcher ------------------------------------------------------------------------------

// Note [One process group per rank]
// A terminal's Ctrl-C goes to its foreground process group. Were the ranks in the launcher's
// group, each would get SIGINT twice (from the terminal and passed on by the launcher), and a
// signal aimed at a rank would miss the processes it started (a shell's children, helpers), which
// could outlive the job. So each rank leads a process group of its own (POSIX_SPAWN_SETPGROUP),
// and every signal goes to the group, kill(-pid): once, from the launcher, to the rank's whole
// tree, including what is left of a rank that has exited (but not a process that made a group of
// its own, as daemons do). For that the pid must stay the group's: the launcher notices exits with
// waitid(WNOWAIT) and reaps the ranks only at its end, so each zombie keeps its pid from being
// reused while the launcher may still signal its group.
// The price: the terminal's job control reaches the launcher alone, so it relays Ctrl-Z (SIGTSTP)
// and SIGCONT itself; ranks outside the terminal's foreground group would be stopped (SIGTTIN) if
// they read the terminal, so their stdin is /dev/null; and a launcher killed by SIGKILL passes
// nothing on: its ranks then die of SIGPIPE when they next write output, or at their collectives'
// timeout when another rank is gone.

class Launcher {
 public:
  explicit Launcher(LaunchOptions options) : options_(std::move(options)) {}
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;

  // Leaves nothing behind when the launcher itself fails (finish() reaps the ranks otherwise).
  ~Launcher() {
    for (Rank& r : ranks_) {
      if (!r.started() || r.reaped) continue;
      ::kill(-r.pid, SIGKILL);
      ::waitpid(r.pid, nullptr, 0);
    }
  }

  // Runs the job to its end; returns the exit code (or dies of a signal it passed on).
  int run() {
    install_signal_handlers();
    start_ranks();
    while (running_ranks() > 0)
      wait_and_handle();
    return finish();
  }

 private:
  enum class Cause { kNone, kRankFailed, kSignal, kStartFailed };

  void install_signal_handlers() {
    int wake[2];
    if (::pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0)
      throw std::system_error(errno, std::generic_category(), "pipe");
    wake_read_fd_ = wake[0];
    g_wake_write_fd = wake[1];
    action_.sa_handler = on_signal;
    action_.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigemptyset(&action_.sa_mask);
    sigset_t unblock;
    sigemptyset(&unblock);
    std::vector<int> handled(std::begin(kStoppingSignals), std::end(kStoppingSignals));
    handled.insert(handled.end(), std::begin(kJobControlSignals), std::end(kJobControlSignals));
    for (int s : handled) {
      struct sigaction old {};
      ::sigaction(s, nullptr, &old);
      if (old.sa_handler == SIG_IGN) continue;  // Note [Signals through a pipe]
      ::sigaction(s, &action_, nullptr);
      sigaddset(&unblock, s);
    }
    ::sigaction(SIGCHLD, &action_, nullptr);
    sigaddset(&unblock, SIGCHLD);
    ::sigprocmask(SIG_UNBLOCK, &unblock, nullptr);
    // A write to a closed output pipe is an error to handle (write_all), not death; the ranks
    // get back the disposition the launcher was started with.
    struct sigaction old_pipe {};
    ::sigaction(SIGPIPE, nullptr, &old_pipe);
    sigpipe_was_default_ = old_pipe.sa_handler == SIG_DFL;
    ::signal(SIGPIPE, SIG_IGN);
  }

  void start_ranks() {
    std::vector<std::string> inherited;
    for (char** e = environ; *e != nullptr; ++e)
      inherited.emplace_back(*e);
    cpu_set_t cpus;
    const int cores = ::sched_getaffinity(0, sizeof(cpus), &cpus) == 0
                          ? CPU_COUNT(&cpus)
                          : static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
    const int omp_threads = default_omp_threads(cores, options_.nproc_per_node);

    posix_spawnattr_t attributes;
    ::posix_spawnattr_init(&attributes);
    ::posix_spawnattr_setflags(
        &attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    ::posix_spawnattr_setpgroup(&attributes, 0);  // Note [One process group per rank]
    sigset_t signals;
    sigemptyset(&signals);
    ::posix_spawnattr_setsigmask(&attributes, &signals);  // nothing blocked
    if (sigpipe_was_default_) sigaddset(&signals, SIGPIPE);
    ::posix_spawnattr_setsigdefault(&attributes, &signals);

    ranks_.resize(static_cast<std::size_t>(options_.nproc_per_node));
    for (int local = 0; local < options_.nproc_per_node && cause_ == Cause::kNone; ++local) {
      Rank& r = ranks_[static_cast<std::size_t>(local)];
      r.local_rank = local;
      r.rank = options_.node_rank * options_.nproc_per_node + local;
      const std::string error =
          start_rank(r, attributes, rank_environment(options_, local, inherited, omp_threads));
      if (!error.empty()) {
        say("could not start rank " + std::to_string(r.rank) + " (" + options_.command.front() +
            "): " + error);
        cause_ = Cause::kStartFailed;
        exit_code_ = 1;
        stop_ranks(SIGTERM);
      }
    }
    ::posix_spawnattr_destroy(&attributes);
  }

  // Starts one rank with its stdout and stderr on pipes; returns why it could not, or "".
  std::string start_rank(Rank& r, const posix_spawnattr_t& attributes,
                         std::vector<std::string> environment) {
    int pipes[2][2] = {{-1, -1}, {-1, -1}};  // [stdout, stderr][read end, write end]
    for (auto& p : pipes) {
      if (::pipe2(p, O_CLOEXEC) != 0) {
        const int error = errno;
        for (auto& q : pipes)
          for (int fd : q)
            if (fd >= 0) ::close(fd);
        return std::strerror(error);
      }
    }
    posix_spawn_file_actions_t actions;
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    ::posix_spawn_file_actions_adddup2(&actions, pipes[0][1], STDOUT_FILENO);
    ::posix_spawn_file_actions_adddup2(&actions, pipes[1][1], STDERR_FILENO);
    std::vector<char*> argv;
    for (std::string& word : options_.command)
      argv.push_back(word.data());
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (std::string& entry : environment)
      envp.push_back(entry.data());
    envp.push_back(nullptr);
    pid_t pid = -1;
    const int error =
        ::posix_spawnp(&pid, argv[0], &actions, &attributes, argv.data(), envp.data());
    ::posix_spawn_file_actions_destroy(&actions);
    for (int i = 0; i < 2; ++i) {
      ::close(pipes[i][1]);
      if (error != 0) {
        ::close(pipes[i][0]);
        continue;
      }
      ::fcntl(pipes[i][0], F_SETFL, O_NONBLOCK);
      r.streams.push_back(
          Stream{pipes[i][0], i == 0 ? STDOUT_FILENO : STDERR_FILENO, RankOutput(r.rank)});
    }
    if (error != 0) return std::strerror(error);
    r.pid = pid;
    return "";
  }

  int running_ranks() const {
    int n = 0;
    for (const Rank& r : ranks_)
      n += r.running();
    return n;
  }

  // One turn of the loop: waits for output, a signal or the kill deadline, and handles it.
  void wait_and_handle() {
    std::vector<pollfd> fds = {{wake_read_fd_, POLLIN, 0}};
    std::vector<Stream*> streams = {nullptr};
    for (Rank& r : ranks_) {
      for (Stream& s : r.streams) {
        if (s.fd < 0) continue;
        fds.push_back({s.fd, POLLIN, 0});
        streams.push_back(&s);
      }
    }
    int timeout_ms = -1;
    if (kill_deadline_) {
      const auto left =
          std::chrono::ceil<std::chrono::milliseconds>(*kill_deadline_ - Clock::now());
      timeout_ms = static_cast<int>(std::max<std::int64_t>(0, left.count()));
    }
    if (::poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR)
      throw std::system_error(errno, std::generic_category(), "poll");
    if (fds[0].revents != 0) handle_signals();
    for (std::size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents != 0) read_stream(*streams[i], 1);
    }
    notice_exits();
    if (kill_deadline_ && Clock::now() >= *kill_deadline_) kill_the_rest();
  }

  void handle_signals() {
    unsigned char received[64];
    ssize_t n;
    while ((n = ::read(wake_read_fd_, received, sizeof(received))) > 0) {
      for (ssize_t i = 0; i < n; ++i) {
        switch (received[i]) {
          case SIGCHLD:  // notice_exits() follows
            break;
          case SIGTSTP:
            suspend();
            break;
          case SIGCONT:
            signal_ranks(SIGCONT);
            break;
          default:
            pass_on(received[i]);
        }
      }
    }
  }

  // Ctrl-Z: the ranks stop, then the launcher, as a shell expects of its foreground job. When the
  // shell continues the launcher (fg, bg), the launcher continues the ranks.
  void suspend() {
    signal_ranks(SIGTSTP);
    ::signal(SIGTSTP, SIG_DFL);
    ::raise(SIGTSTP);  // stopped here until SIGCONT
    ::sigaction(SIGTSTP, &action_, nullptr);
    signal_ranks(SIGCONT);
  }

  void pass_on(int signal_number) {
    if (cause_ == Cause::kNone) {
      cause_ = Cause::kSignal;
      signal_ = signal_number;
    }
    say("got " + signal_name(signal_number) + ": passing it on to the " +
        std::to_string(running_ranks()) +
        " running rank(s); SIGKILL to those still running after " + grace_text());
    stop_ranks(signal_number);
  }

  // Reads what a rank wrote, at most `max_reads` times or until the pipe is empty, and writes it
  // out line by line. At the end of the stream, writes its partial last line and closes it.
  void read_stream(Stream& s, int max_reads) {
    char buffer[64 * 1024];
    for (int reads = 0; s.fd >= 0 && reads < max_reads; ++reads) {
      const ssize_t n = ::read(s.fd, buffer, sizeof(buffer));
      if (n > 0) {
        write_all(s.target, s.output.feed(std::string_view(buffer, static_cast<std::size_t>(n))));
      } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        return;
      } else {
        close_stream(s);  // end of file (or an error)
      }
    }
  }

  void close_stream(Stream& s) {
    write_all(s.target, s.output.finish());
    ::close(s.fd);
    s.fd = -1;
  }

  // Notices the ranks that exited, leaving them unreaped (Note [One process group per rank]).
  void notice_exits() {
    for (Rank& r : ranks_) {
      if (!r.running()) continue;
      siginfo_t info{};
      if (::waitid(P_PID, static_cast<id_t>(r.pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
          info.si_pid != r.pid) {
        continue;
      }
      r.exited = true;
      if (info.si_code == CLD_EXITED) {
        r.exit_code = info.si_status;
        r.how_ended = "exited with code " + std::to_string(info.si_status);
      } else {
        r.exit_code = 128 + info.si_status;
        r.how_ended = "was killed by " + signal_name(info.si_status) +
                      (info.si_code == CLD_DUMPED ? " (core dumped)" : "");
      }
      on_exit(r);
    }
  }

  void on_exit(Rank& r) {
    // What it wrote before it exited is in its pipes: show it before saying how it ended.
    for (Stream& s : r.streams)
      read_stream(s, 64);
    if (r.exit_code == 0 || cause_ != Cause::kNone) return;
    cause_ = Cause::kRankFailed;
    exit_code_ = r.exit_code;
    failed_ = &r;
    const int others = running_ranks();
    say(name(r) + " " + r.how_ended +
        (others == 0 ? ""
                     : "; stopping the other " + std::to_string(others) +
                           " rank(s): SIGTERM, then SIGKILL after " + grace_text()));
    stop_ranks(SIGTERM);
  }

  // Signals every rank's process group, the exited ranks' too (what they left running).
  void signal_ranks(int signal_number) {
    for (Rank& r : ranks_) {
      if (r.started()) ::kill(-r.pid, signal_number);  // Note [One process group per rank]
    }
  }

  // Asks every rank to stop; SIGKILL follows after the grace period (kill_the_rest).
  void stop_ranks(int signal_number) {
    signal_ranks(signal_number);
    if (!kill_deadline_)
      kill_deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(options_.grace_period_s));
  }

  void kill_the_rest() {
    std::string names;
    for (Rank& r : ranks_) {
      if (!r.started()) continue;
      ::kill(-r.pid, SIGKILL);
      if (r.running()) names += (names.empty() ? "" : ", ") + std::to_string(r.rank);
    }
    if (!names.empty())
      say("rank(s) " + names + " still running after " + grace_text() + ": SIGKILL");
    kill_deadline_.reset();  // SIGKILL cannot be caught: they end
  }

  // Every rank has exited: writes what is left of their output, reaps them, says why the job
  // ended and returns the exit code.
  int finish() {
    for (Rank& r : ranks_) {
      for (Stream& s : r.streams) {
        read_stream(s, 64);
        if (s.fd >= 0) close_stream(s);  // left open by what the rank left running: not waited for
      }
      if (r.started()) ::waitpid(r.pid, nullptr, 0);
      r.reaped = true;
    }
    switch (cause_) {
      case Cause::kNone:
        return 0;
      case Cause::kStartFailed:
        return exit_code_;
      case Cause::kRankFailed:
        say(name(*failed_) + " failed first (it " + failed_->how_ended +
            "): leangrad-run exits with " + std::to_string(exit_code_));
        return exit_code_;
      case Cause::kSignal:
        // Die of the signal, so a shell running a loop of jobs sees the interruption.
        ::signal(signal_, SIG_DFL);
        ::raise(signal_);
        return 128 + signal_;
    }
    return 1;
  }

  std::string name(const Rank& r) const {
    std::string text = "rank " + std::to_string(r.rank);
    if (options_.nnodes > 1) text += " (local rank " + std::to_string(r.local_rank) + ")";
    return text + " (pid " + std::to_string(r.pid) + ")";
  }

  std::string grace_text() const {
    char text[32];
    std::snprintf(text, sizeof(text), "%g s", options_.grace_period_s);
    return text;
  }

  LaunchOptions options_;
  std::vector<Rank> ranks_;
  int wake_read_fd_ = -1;
  struct sigaction action_ {};  // the handler of the signals it handles (on_signal)
  bool sigpipe_was_default_ = true;
  Cause cause_ = Cause::kNone;
  int exit_code_ = 0;
  int signal_ = 0;                // Cause::kSignal: the first signal passed on
  const Rank* failed_ = nullptr;  // Cause::kRankFailed: the rank that failed first
  std::optional<Clock::time_point> kill_deadline_;
};

}  // namespace

int run_ranks(LaunchOptions options) {
  Launcher launcher(std::move(options));
  return launcher.run();
}

}  // namespace leangrad::tools
