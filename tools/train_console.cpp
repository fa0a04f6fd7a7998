// leangrad-train's console: the progress bar, option suggestions, --log-jsonl, Ctrl-C and
// SIGTERM (train_console.h).
#include "train_console.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <ostream>

#include <leangrad/core/error.h>
#include <leangrad/data/file_io.h>

namespace leangrad::tools {

// ---- The progress bar -------------------------------------------------------------------------

int terminal_columns(int fd) {
  winsize size{};
  if (::ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  if (const char* columns = std::getenv("COLUMNS")) {
    const int n = std::atoi(columns);
    if (n > 0) return n;
  }
  return 80;
}

namespace {

std::string printf_string(const char* format, auto... args) {
  char text[128];
  std::snprintf(text, sizeof(text), format, args...);
  return text;
}

// "[=====>    ] " with `cells` cells between the brackets.
std::string bar_graphic(std::int64_t step, std::int64_t steps, int cells) {
  const int filled =
      steps > 0 ? static_cast<int>(std::clamp<std::int64_t>(cells * step / steps, 0, cells))
                : cells;
  std::string bar = "[" + std::string(static_cast<std::size_t>(filled), '=');
  if (filled < cells) bar += '>' + std::string(static_cast<std::size_t>(cells - filled - 1), ' ');
  return bar + "] ";
}

}  // namespace

std::string format_progress(const ProgressState& s, int columns) {
  constexpr int kWidestBar = 30, kNarrowestBar = 10;
  const auto room = static_cast<std::size_t>(std::max(columns - 1, 1));
  const long long eta = std::llround(std::max(0.0, s.eta_seconds));
  const std::string epoch = printf_string("epoch %d/%d ", s.epoch, s.epochs);
  const std::string count =
      printf_string("%lld/%lld", static_cast<long long>(s.step), static_cast<long long>(s.steps));
  const std::string loss = printf_string(" loss %.4f", s.loss);
  const std::string speed = printf_string(" %.0f samples/s", s.samples_per_second);
  const std::string eta_text = printf_string(" ETA %lld:%02lld", eta / 60, eta % 60);

  // The tail's parts, dropped from the back while the line does not fit: first with the graphic,
  // then (a narrow terminal) without it.
  const std::vector<const std::string*> parts = {&loss, &eta_text, &speed};
  auto rest_with = [&](std::size_t kept) {
    std::string rest = count;
    for (const std::string* part : {&loss, &speed, &eta_text}) {
      if (std::find(parts.begin(), parts.begin() + static_cast<std::ptrdiff_t>(kept), part) !=
          parts.begin() + static_cast<std::ptrdiff_t>(kept))
        rest += *part;
    }
    return rest;
  };
  for (std::size_t kept = parts.size() + 1; kept-- > 0;) {
    const std::string rest = rest_with(kept);
    // The widest graphic that fits: 2 brackets and a space around its cells.
    const std::int64_t cells = std::min<std::int64_t>(
        kWidestBar, static_cast<std::int64_t>(room) -
                        static_cast<std::int64_t>(epoch.size() + rest.size()) - 3);
    if (cells >= kNarrowestBar)
      return epoch + bar_graphic(s.step, s.steps, static_cast<int>(cells)) + rest;
  }
  for (std::size_t kept = parts.size() + 1; kept-- > 0;) {
    std::string line = epoch + rest_with(kept);
    if (line.size() <= room || kept == 0) {
      if (line.size() > room) line.resize(room);
      return line;
    }
  }
  return {};
}

bool terminal_erases_lines(const char* term) {
  return term != nullptr && *term != '\0' && std::strcmp(term, "dumb") != 0;
}

ProgressBar::ProgressBar(bool enabled, std::ostream& out, int fd, bool ansi_erase)
    : enabled_(enabled), out_(out), fd_(fd), ansi_erase_(ansi_erase) {}

ProgressBar::~ProgressBar() {
  try {
    if (drawn_) out_ << "\n" << std::flush;
  } catch (...) {  // destructors never throw
  }
}

void ProgressBar::update(const ProgressState& s, Clock::time_point now) {
  if (!enabled_) return;
  if (s.step != s.steps && last_draw_ && now - *last_draw_ < kRedrawInterval) return;
  last_draw_ = now;
  const int columns = terminal_columns(fd_);
  const std::string line = format_progress(s, columns);
  if (ansi_erase_) {
    out_ << "\r\033[K" << line;
  } else {
    // Spaces over the rest of the previous redraw, within the width (the window may have shrunk).
    const std::size_t rest =
        std::min(drawn_width_, static_cast<std::size_t>(std::max(columns - 1, 1)));
    out_ << "\r" << line << std::string(rest > line.size() ? rest - line.size() : 0, ' ');
  }
  out_ << std::flush;
  drawn_width_ = line.size();
  drawn_ = true;
}

void ProgressBar::clear() {
  if (drawn_) {
    if (ansi_erase_) {
      out_ << "\r\033[K" << std::flush;
    } else {
      out_ << "\r" << std::string(drawn_width_, ' ') << "\r" << std::flush;
    }
  }
  drawn_ = false;
  drawn_width_ = 0;
}

// ---- Options ------------------------------------------------------------------------------------

std::size_t edit_distance(const std::string& a, const std::string& b) {
  // One row of the dynamic programme: row[j] = distance(a[0, i), b[0, j)).
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];  // distance(a[0, i-1), b[0, j-1))
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

std::optional<std::string> nearest_option(const std::string& unknown,
                                          const std::vector<std::string>& known) {
  // "--epoch=3" is the option "--epoch" with a value.
  const std::string name = unknown.substr(0, unknown.find('='));
  std::optional<std::string> best;
  std::size_t best_distance = 0;
  for (const std::string& option : known) {
    const std::size_t d = edit_distance(name, option);
    const std::size_t allowed = std::max<std::size_t>(1, option.size() / 3);
    if (d <= allowed && (!best || d < best_distance)) {
      best = option;
      best_distance = d;
    }
  }
  if (best) return best;
  // A unique prefix: "--check" for "--checkpoint-dir" is ambiguous, "--limit-tr" is not.
  const std::size_t dashes = name.find_first_not_of('-');
  if (dashes == std::string::npos || name.size() - dashes < 3) return std::nullopt;
  std::vector<std::string> starting;
  for (const std::string& option : known) {
    if (option.rfind(name, 0) == 0) starting.push_back(option);
  }
  if (starting.size() == 1) return starting[0];
  return std::nullopt;
}

void suggest_options(const CLI::App& app, const std::string& program, std::ostream& err) {
  std::vector<std::string> known;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames())
      known.push_back("--" + name);
  }
  for (const std::string& arg : app.remaining()) {
    if (arg.rfind("--", 0) != 0) continue;
    if (const std::optional<std::string> nearest = nearest_option(arg, known))
      err << program << ": " << arg << ": did you mean " << *nearest << "?\n";
  }
}

// ---- --log-jsonl --------------------------------------------------------------------------------

// Note [A resumed run's log lines]
// A run resumes from its newest checkpoint, which may be older than the last lines of its log: a
// run killed (SIGKILL, out of memory, a lost machine) after step 27 with a checkpoint at step 20,
// or stopped by --max-steps at an epoch's end, whose checkpoint is taken before that epoch's
// evaluation. The resumed run trains steps 21.. and evaluates that epoch again, so appending alone
// would leave each of those steps twice, and the curve of a plot would run back on itself. So the
// file keeps what the checkpoint covers, the step lines up to its step and the epoch lines of the
// epochs before its epoch, and drops the rest, as TensorBoard's purge_step does with its events;
// a line that is not a whole JSON object (cut short by the kill) goes too. The file is rewritten
// atomically, and only when something is dropped.
namespace {

// Whether a line of the log is covered by a checkpoint at `resumed`.
bool covered_by(const std::string& line, const LogResumePoint& resumed) {
  const nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!record.is_object()) return false;
  const bool epoch_line = record.value("event", std::string()) == "epoch";
  const char* field = epoch_line ? "epoch" : "step";
  if (!record.contains(field) || !record[field].is_number_integer()) return true;  // not ours
  const auto value = record[field].get<std::int64_t>();
  return epoch_line ? value < resumed.epoch : value <= resumed.global_step;
}

// Drops the lines of `path` past `resumed`; returns how many.
std::int64_t keep_resumed_lines(const std::string& path, const LogResumePoint& resumed) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return 0;  // new, or a pipe: nothing to keep
  std::ifstream in(path, std::ios::binary);
  LG_CHECK(in.is_open(), "--log-jsonl: cannot read '", path, "': ", std::strerror(errno));
  std::string kept, line;
  std::int64_t dropped = 0;
  while (std::getline(in, line)) {
    if (in.eof() || !covered_by(line, resumed)) {  // at eof: a last line without its '\n'
      ++dropped;
    } else {
      kept += line + '\n';
    }
  }
  LG_CHECK(!in.bad(), "--log-jsonl: reading '", path, "' failed");
  if (dropped > 0) write_file_atomically(path, kept, "--log-jsonl");
  return dropped;
}

}  // namespace

JsonLines::JsonLines(const std::string& path, std::optional<LogResumePoint> resumed) : path_(path) {
  if (resumed) dropped_lines_ = keep_resumed_lines(path, *resumed);
  out_.open(path, resumed ? std::ios::app : std::ios::trunc);
  LG_CHECK(out_.is_open(), "--log-jsonl: cannot write '", path, "': ", std::strerror(errno));
}

void JsonLines::write(const nlohmann::json& record) {
  out_ << record.dump() << '\n' << std::flush;
  LG_CHECK(out_.good(), "--log-jsonl: writing '", path_, "' failed");
}

// ---- Ctrl-C and SIGTERM
// --------------------------------------------------------------------------

namespace {

std::atomic<int> g_interrupt_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "set from a signal handler");

extern "C" void on_interrupt(int signal_number) {
  g_interrupt_signal.store(signal_number, std::memory_order_relaxed);
  std::signal(signal_number, SIG_DFL);  // a second one ends the process at once
}

}  // namespace

void catch_interrupt() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // reads and waits in progress go on
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

bool interrupt_requested() {
  return interrupt_signal() != 0;
}

int interrupt_signal() {
  return g_interrupt_signal.load(std::memory_order_relaxed);
}

const char* interrupt_name(int signal_number) {
  return signal_number == SIGTERM ? "SIGTERM" : "Ctrl-C";
}

}  // namespace leangrad::tools
