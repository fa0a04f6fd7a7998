// What leangrad-train shows and takes on the console, apart from training itself: the progress
// bar fitted to the terminal's width, the nearest known option for a mistyped one, the per-step
// JSON lines of --log-jsonl, and Ctrl-C (or SIGTERM) turned into a flag the training loop polls.
// Kept out of tools/leangrad_train.cpp so each part has unit tests
// (tests/tools/test_train_console.cpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace leangrad::tools {

// ---- The progress bar -------------------------------------------------------------------------

// The columns of the terminal on file descriptor `fd` (ioctl TIOCGWINSZ), else of $COLUMNS, else
// 80. Asked again at each redraw, so a resized window is followed.
int terminal_columns(int fd);

// What one redraw of the bar says.
struct ProgressState {
  int epoch = 1;
  int epochs = 1;
  std::int64_t step = 0;
  std::int64_t steps = 0;
  double loss = 0;
  double samples_per_second = 0;
  double eta_seconds = 0;
};

// The bar's text, at most `columns - 1` characters (the last column stays free: writing into it
// wraps the cursor on some terminals, and the next \r would then redraw on a new line). The parts
// that do not fit are dropped, least useful first (the bar's graphic shrinks to 10 cells, then the
// throughput, the ETA and the loss go, then the graphic itself, and the parts come back without
// it): "epoch 1/10 [=====>    ] 120/938 loss 0.6123 5103 samples/s ETA 0:09".
std::string format_progress(const ProgressState& s, int columns);

// Whether a terminal whose $TERM is `term` (nullptr: unset) takes ANSI's erase to the end of the
// line (\033[K): not when it is unset or "dumb" (Emacs' shell buffer, some CI log viewers show the
// escape as text), where the bar erases with spaces instead, as git's progress does.
bool terminal_erases_lines(const char* term);

// The one-line progress bar shown when the standard output is a terminal: redrawn in place (\r,
// then erase to the end of the line) at most four times a second and always at an epoch's last
// step, erased before any other line is printed. Disabled, it prints nothing. Destroyed while
// drawn (an error ended training), it ends its line: the message that follows starts on its own.
class ProgressBar {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kRedrawInterval{250};

  // `fd`: the terminal the bar is drawn on (its width is asked there); `out` writes to it.
  // `ansi_erase`: erase with \033[K, else with spaces (terminal_erases_lines).
  ProgressBar(bool enabled, std::ostream& out, int fd, bool ansi_erase = true);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  bool enabled() const { return enabled_; }
  // Redraws the bar unless the last redraw was under kRedrawInterval ago (`now` for tests).
  void update(const ProgressState& s, Clock::time_point now = Clock::now());
  void clear();

 private:
  bool enabled_;
  std::ostream& out_;
  int fd_;
  bool ansi_erase_;
  bool drawn_ = false;
  std::size_t drawn_width_ = 0;  // the characters of the last redraw
  std::optional<Clock::time_point> last_draw_;
};

// ---- Options ------------------------------------------------------------------------------------

// Levenshtein distance (insertions, deletions, substitutions, each 1) between two strings.
std::size_t edit_distance(const std::string& a, const std::string& b);

// The known option nearest to `unknown` ("--epoch" -> "--epochs"), if one is near enough to be
// what was meant: within a third of its length in edits (at least 1), or `unknown` (at least 3
// characters after the dashes) being the start of exactly one option. Ties go to the first known.
std::optional<std::string> nearest_option(const std::string& unknown,
                                          const std::vector<std::string>& known);

// After CLI11's "The following arguments were not expected": for each mistyped option of `app`'s
// leftover arguments, "<program>: --epoch: did you mean --epochs?" on `err`.
void suggest_options(const CLI::App& app, const std::string& program, std::ostream& err);

// ---- --log-jsonl --------------------------------------------------------------------------------

// Where a resumed run takes up its --log-jsonl file: after optimizer step `global_step` (the
// checkpoint's), in epoch `epoch`.
struct LogResumePoint {
  std::int64_t global_step = 0;
  int epoch = 1;
};

// One JSON object per line, flushed after each, so a crashed or interrupted run keeps every line
// it wrote and a plot can follow a run while it trains (tools/plot_training.py). A new run starts
// the file afresh. A resumed run appends to it, after keeping only what its checkpoint covers
// (Note [A resumed run's log lines] in train_console.cpp): the step lines up to the checkpoint's
// step and the epoch lines of the epochs before its epoch.
class JsonLines {
 public:
  JsonLines() = default;
  JsonLines(const std::string& path, std::optional<LogResumePoint> resumed);

  bool is_open() const { return out_.is_open(); }
  void write(const nlohmann::json& record);
  // Lines a resumed run dropped: written past its checkpoint, or not whole records.
  std::int64_t dropped_lines() const { return dropped_lines_; }

 private:
  std::string path_;
  std::ofstream out_;
  std::int64_t dropped_lines_ = 0;
};

// ---- Ctrl-C and SIGTERM
// --------------------------------------------------------------------------

// Installs a handler for SIGINT (Ctrl-C) and SIGTERM (kill's default, and what a batch scheduler
// such as Slurm sends before it kills a job at its time limit) that only records the signal
// (interrupt_requested()); the training loop ends at the next optimizer step, saves a checkpoint
// and exits with interrupted_exit_code(). The handler puts that signal's default action back, so
// a second one kills the process at once.
void catch_interrupt();
bool interrupt_requested();
// The signal that interrupted training (SIGINT or SIGTERM), 0 when none did.
int interrupt_signal();
// "Ctrl-C" or "SIGTERM": what interrupted the run, for its last lines.
const char* interrupt_name(int signal_number);
// The exit status of a process ended by `signal_number`, as shells report one killed by it:
// 128 + the signal (130 for SIGINT, 143 for SIGTERM).
inline constexpr int interrupted_exit_code(int signal_number) {
  return 128 + signal_number;
}

}  // namespace leangrad::tools
