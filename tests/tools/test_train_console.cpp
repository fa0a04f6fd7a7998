// leangrad-train's console (tools/train_console.h), as functions and as the program sees a user:
// - format_progress fits every width from 20 to 200 columns in columns - 1 characters, keeping the
//   loss before the ETA before the throughput; the bar is redrawn at most every 250 ms.
// - edit_distance against hand-counted cases; nearest_option's suggestions and refusals, and the
//   line printed after CLI11 refuses a mistyped option.
// - --log-jsonl lines parse back; a resumed run appends, after dropping the lines its checkpoint
//   does not cover (a run that went on past it) and a line cut short.
// - The bar on a terminal whose TERM is dumb or unset erases with spaces, no escape; destroyed
//   while drawn, it ends its line.
// - leangrad-train in an 80-column pseudo-terminal keeps its progress bar on one line, writes no
//   escape when TERM is dumb or unset, and prints an error during training on a line of its own.
// - Ctrl-C (SIGINT) during training exits 130 leaving a checkpoint that a rerun resumes from, and
//   the trace of the --profile window it ended; SIGTERM the same, exiting 143.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <pty.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <leangrad/core/error.h>

#include "train_console.h"

namespace {

using namespace leangrad::tools;
namespace fs = std::filesystem;

const std::string kData = "/usr/share/datasets/fashion-mnist";

ProgressState typical_state() {
  return {.epoch = 3,
          .epochs = 10,
          .step = 420,
          .steps = 938,
          .loss = 0.61234,
          .samples_per_second = 5103.4,
          .eta_seconds = 611};
}

TEST(TrainConsole, ProgressFitsEveryWidth) {
  const ProgressState s = typical_state();
  for (int columns = 20; columns <= 200; ++columns) {
    const std::string line = format_progress(s, columns);
    EXPECT_LE(line.size(), static_cast<std::size_t>(columns - 1)) << columns << ": " << line;
    EXPECT_EQ(line.find('\n'), std::string::npos);
    EXPECT_EQ(line.rfind("epoch 3/10 ", 0), 0u) << line;
  }
}

TEST(TrainConsole, ProgressDropsTheLeastUsefulPartsFirst) {
  const ProgressState s = typical_state();
  const std::string wide = format_progress(s, 200);
  EXPECT_EQ(wide,
            "epoch 3/10 [=============>                ] 420/938 loss 0.6123 5103 samples/s "
            "ETA 10:11");
  // 80 columns: everything, with a narrower graphic (the old bar's 95 characters wrapped here).
  const std::string eighty = format_progress(s, 80);
  EXPECT_NE(eighty.find("samples/s"), std::string::npos) << eighty;
  EXPECT_NE(eighty.find("ETA 10:11"), std::string::npos) << eighty;
  // 60: no room for the throughput; 44: the ETA goes too (the graphic at its 10 cells); 31: no
  // graphic, the loss kept; 20: only the epoch and the count.
  const std::string sixty = format_progress(s, 60);
  EXPECT_EQ(sixty.find("samples/s"), std::string::npos) << sixty;
  EXPECT_NE(sixty.find("ETA 10:11"), std::string::npos) << sixty;
  EXPECT_NE(sixty.find("loss 0.6123"), std::string::npos) << sixty;
  EXPECT_EQ(format_progress(s, 44), "epoch 3/10 [====>     ] 420/938 loss 0.6123");  // 4 of 10
  EXPECT_EQ(format_progress(s, 31), "epoch 3/10 420/938 loss 0.6123");
  EXPECT_EQ(format_progress(s, 20), "epoch 3/10 420/938");
  EXPECT_EQ(format_progress(s, 12), "epoch 3/10 ");
}

TEST(TrainConsole, ProgressBarRedrawsAtMostFourTimesASecond) {
  std::ostringstream out;
  ProgressBar bar(/*enabled=*/true, out, /*fd=*/-1);  // no terminal: $COLUMNS or 80
  ProgressState s = typical_state();
  const auto t0 = ProgressBar::Clock::time_point{} + std::chrono::hours(1);
  int redraws = 0;
  auto count = [&] {
    const std::string text = out.str();
    int n = 0;
    for (std::size_t at = text.find('\r'); at != std::string::npos; at = text.find('\r', at + 1))
      ++n;
    return n;
  };
  for (int ms = 0; ms < 1000; ms += 10) {  // 100 steps in one second
    ++s.step;
    bar.update(s, t0 + std::chrono::milliseconds(ms));
  }
  redraws = count();
  EXPECT_EQ(redraws, 4);  // at 0, 250, 500 and 750 ms
  s.step = s.steps;       // an epoch's last step is always drawn
  bar.update(s, t0 + std::chrono::milliseconds(1001));
  EXPECT_EQ(count(), 5);
  bar.clear();
  EXPECT_EQ(out.str().substr(out.str().size() - 4), "\r\033[K");
  std::ostringstream off;
  ProgressBar disabled(/*enabled=*/false, off, -1);
  disabled.update(s);
  disabled.clear();
  EXPECT_EQ(off.str(), "");
}

TEST(TrainConsole, DumbTerminalErasesWithSpaces) {
  EXPECT_FALSE(terminal_erases_lines(nullptr));  // TERM unset
  EXPECT_FALSE(terminal_erases_lines(""));
  EXPECT_FALSE(terminal_erases_lines("dumb"));
  EXPECT_TRUE(terminal_erases_lines("xterm-256color"));
  EXPECT_TRUE(terminal_erases_lines("linux"));

  // 200 columns: the graphic at its widest, so that a shorter tail makes a shorter line.
  const char* columns = std::getenv("COLUMNS");
  const std::string saved_columns = columns != nullptr ? columns : "";
  ::setenv("COLUMNS", "200", 1);
  std::ostringstream out;
  ProgressBar bar(/*enabled=*/true, out, /*fd=*/-1, /*ansi_erase=*/false);
  ProgressState s = typical_state();
  const auto t0 = ProgressBar::Clock::time_point{} + std::chrono::hours(1);
  bar.update(s, t0);
  const std::string first = out.str();
  ASSERT_EQ(first, "\r" + format_progress(s, terminal_columns(-1)));
  // A shorter redraw is padded with spaces to the previous one's width.
  s.step = 5;
  s.loss = 1;
  s.eta_seconds = 0;
  bar.update(s, t0 + std::chrono::seconds(1));
  const std::string second = out.str().substr(first.size());
  const std::string line = format_progress(s, terminal_columns(-1));
  ASSERT_LT(line.size(), first.size() - 1) << first;
  EXPECT_EQ(second, "\r" + line + std::string(first.size() - 1 - line.size(), ' '));
  bar.clear();
  EXPECT_EQ(out.str().substr(first.size() + second.size()),
            "\r" + std::string(line.size(), ' ') + "\r");
  EXPECT_EQ(out.str().find('\033'), std::string::npos) << "an escape on a dumb terminal";
  if (columns != nullptr) {
    ::setenv("COLUMNS", saved_columns.c_str(), 1);
  } else {
    ::unsetenv("COLUMNS");
  }
}

TEST(TrainConsole, ProgressBarEndsItsLineWhenDestroyedDrawn) {
  std::ostringstream out;
  {
    ProgressBar bar(/*enabled=*/true, out, /*fd=*/-1);
    bar.update(typical_state());
  }  // as when an error unwinds training: the message that follows starts on a new line
  EXPECT_EQ(out.str().back(), '\n');
  std::ostringstream cleared;
  {
    ProgressBar bar(/*enabled=*/true, cleared, /*fd=*/-1);
    bar.update(typical_state());
    bar.clear();
  }  // erased already: nothing more
  EXPECT_EQ(cleared.str().substr(cleared.str().size() - 4), "\r\033[K");
}

TEST(TrainConsole, EditDistance) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("", "abcd"), 4u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);  // k->s, e->i, +g
  EXPECT_EQ(edit_distance("--epoch", "--epochs"), 1u);
  EXPECT_EQ(edit_distance("--lr", "--rl"), 2u);  // no transpositions: two substitutions
  EXPECT_EQ(edit_distance("flaw", "lawn"), 2u);
}

TEST(TrainConsole, NearestOption) {
  const std::vector<std::string> known = {"--epochs",     "--lr",        "--limit-train",
                                          "--limit-test", "--log-json",  "--log-jsonl",
                                          "--profile",    "--batch-size"};
  EXPECT_EQ(nearest_option("--epoch", known), "--epochs");
  EXPECT_EQ(nearest_option("--epohcs", known), "--epochs");
  EXPECT_EQ(nearest_option("--epoch=3", known), "--epochs");
  EXPECT_EQ(nearest_option("--batchsize", known), "--batch-size");
  EXPECT_EQ(nearest_option("--profil", known), "--profile");
  EXPECT_EQ(nearest_option("--log-jsonll", known), "--log-jsonl");
  EXPECT_EQ(nearest_option("--log-jsn", known), "--log-json");
  EXPECT_EQ(nearest_option("--batch", known), "--batch-size");  // a unique prefix
  EXPECT_EQ(nearest_option("--limit", known), std::nullopt);    // the start of two
  EXPECT_EQ(nearest_option("--bogus-option", known), std::nullopt);
  EXPECT_EQ(nearest_option("--x", known), std::nullopt);
}

TEST(TrainConsole, SuggestionsAfterAParseError) {
  CLI::App app{"test"};
  int epochs = 0;
  std::string profile;
  app.add_option("--epochs", epochs);
  app.add_option("--profile", profile);
  std::vector<std::string> args = {"--profile", "t.json", "--epoch", "3", "--bogus"};
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector in reverse order
  EXPECT_THROW(app.parse(args), CLI::ExtrasError);
  std::ostringstream err;
  suggest_options(app, "prog", err);
  EXPECT_EQ(err.str(), "prog: --epoch: did you mean --epochs?\n");
}

std::vector<std::string> lines_of(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

TEST(TrainConsole, JsonLinesAppendWhenResumed) {
  const fs::path path = fs::path(::testing::TempDir()) / "train_console_steps.jsonl";
  {
    JsonLines log(path.string(), std::nullopt);
    log.write({{"step", 1}, {"loss", 2.5}});
    log.write({{"step", 2}, {"loss", 2.25}});
  }
  {
    JsonLines resumed(path.string(), LogResumePoint{.global_step = 2, .epoch = 1});
    EXPECT_EQ(resumed.dropped_lines(), 0);
    resumed.write({{"step", 3}, {"loss", 2.0}});
  }
  std::vector<nlohmann::json> lines;
  for (const std::string& line : lines_of(path))
    lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2]["step"], 3);
  EXPECT_EQ(lines[1]["loss"], 2.25);
  { JsonLines(path.string(), std::nullopt).write({{"step", 1}}); }  // a new run starts afresh
  std::ifstream again(path);
  std::string all((std::istreambuf_iterator<char>(again)), {});
  EXPECT_EQ(all, "{\"step\":1}\n");
  EXPECT_THROW(JsonLines("/no-such-folder/x.jsonl", std::nullopt), leangrad::Error);
}

// A run went on past its last checkpoint (killed after step 5, the checkpoint at step 3, the end
// of epoch 1, taken before its evaluation; the last line cut short): the resumed run keeps what the
// checkpoint covers, and its lines follow without a step or an epoch twice.
TEST(TrainConsole, JsonLinesResumedKeepWhatTheCheckpointCovers) {
  const fs::path path = fs::path(::testing::TempDir()) / "train_console_killed.jsonl";
  const std::vector<std::string> written = {
      R"({"event":"step","epoch":1,"step":1,"loss":2.5})",
      R"({"event":"step","epoch":1,"step":2,"loss":2.4})",
      R"({"event":"step","epoch":1,"step":3,"loss":2.3})",
      R"({"event":"epoch","epoch":1,"step":3,"loss":2.4,"accuracy":0.5})",
      R"({"event":"step","epoch":2,"step":4,"loss":2.2})",
      R"({"event":"step","epoch":2,"step":5,"loss":2.1})",
      R"({"event":"step","epoch":2,"st)"};
  auto write_log = [&] {
    std::ofstream out(path, std::ios::trunc);
    for (std::size_t i = 0; i < written.size(); ++i)
      out << written[i] << (i + 1 < written.size() ? "\n" : "");  // the last one cut short
  };
  write_log();
  {
    JsonLines resumed(path.string(), LogResumePoint{.global_step = 3, .epoch = 1});
    EXPECT_EQ(resumed.dropped_lines(), 4);  // epoch 1's line (evaluated again), steps 4, 5, the cut
    resumed.write({{"event", "epoch"}, {"epoch", 1}, {"step", 3}});
  }
  std::vector<std::string> expected(written.begin(), written.begin() + 3);
  expected.push_back(R"({"epoch":1,"event":"epoch","step":3})");
  EXPECT_EQ(lines_of(path), expected);

  // From a checkpoint at step 4 (in epoch 2): epoch 1's line stays.
  write_log();
  {
    JsonLines resumed(path.string(), LogResumePoint{.global_step = 4, .epoch = 2});
    EXPECT_EQ(resumed.dropped_lines(), 2);  // step 5, the cut
  }
  EXPECT_EQ(lines_of(path), std::vector<std::string>(written.begin(), written.begin() + 5));
}

// ---- leangrad-train as a process ------------------------------------------------------------

bool have_data() {
  return fs::exists(fs::path(kData) / "train-images-idx3-ubyte.gz");
}

std::vector<char*> argv_of(std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (std::string& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  return argv;
}

// Waits for `pid` and returns its exit status (-1 if a signal killed it).
int wait_exit_status(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Runs leangrad-train with `args` in an 80-column pseudo-terminal (COLUMNS unset: the width must
// come from the terminal itself) with TERM set to `term` (nullptr: unset), its regular files
// limited to `max_file_bytes` (RLIMIT_FSIZE; a longer write fails with EFBIG); returns what the
// terminal showed and the exit status.
std::pair<std::string, int> run_in_terminal(std::vector<std::string> args, const char* term,
                                            rlim_t max_file_bytes = RLIM_INFINITY) {
  winsize size{};
  size.ws_row = 24;
  size.ws_col = 80;
  int master = -1;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, &size);
  if (pid < 0) return {std::string("forkpty: ") + std::strerror(errno), -1};
  if (pid == 0) {
    ::unsetenv("COLUMNS");
    if (max_file_bytes != RLIM_INFINITY) {
      const rlimit limit{max_file_bytes, max_file_bytes};
      ::signal(SIGXFSZ, SIG_IGN);  // the write fails instead of killing the process
      ::setrlimit(RLIMIT_FSIZE, &limit);
    }
    if (term != nullptr) {
      ::setenv("TERM", term, 1);
    } else {
      ::unsetenv("TERM");
    }
    std::vector<char*> argv = argv_of(args);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  std::string output;
  char buffer[4096];
  for (;;) {  // until the child closes the terminal (EIO on Linux)
    const ssize_t n = ::read(master, buffer, sizeof(buffer));
    if (n > 0) {
      output.append(buffer, static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  ::close(master);
  return {output, wait_exit_status(pid)};
}

// The terminal turns each \n into \r\n. Splits `output` into the lines a reader sees, then the
// bar's lines into what each \r redraws: every redraw must fit in 79 columns, and all are on one
// line. `erase` is what each redraw starts with after its \r.
void expect_bar_on_one_line(const std::string& output, const std::string& erase) {
  std::vector<std::string> lines;
  std::stringstream stream(output);
  for (std::string line; std::getline(stream, line);)
    lines.push_back(line);
  int bar_lines = 0, redraws = 0;
  for (const std::string& line : lines) {
    if (line.find("epoch 1/1 [") == std::string::npos) continue;
    ++bar_lines;
    std::stringstream parts(line);
    for (std::string part; std::getline(parts, part, '\r');) {
      if (!erase.empty() && part.rfind(erase, 0) == 0) part.erase(0, erase.size());
      EXPECT_LE(part.size(), 79u) << "a redraw wider than the terminal: '" << part << "'";
      if (part.find("epoch 1/1 [") != std::string::npos) ++redraws;
    }
  }
  EXPECT_EQ(bar_lines, 1) << output;  // every redraw on the same line
  EXPECT_GE(redraws, 1);
  EXPECT_NE(output.find("epoch 1/1: train loss"), std::string::npos) << output;
}

const std::vector<std::string> kOneEpoch = {
    LEANGRAD_TRAIN, "--device",     "cpu",  "--epochs", "1",  "--limit-train",
    "12000",        "--limit-test", "1000", "--data",   kData};

TEST(TrainConsoleProcess, ProgressBarStaysOnOneLineIn80Columns) {
  if (!have_data()) GTEST_SKIP() << "Fashion-MNIST is not installed in " << kData;
  const auto [output, status] = run_in_terminal(kOneEpoch, "xterm");
  ASSERT_EQ(status, 0) << output;
  expect_bar_on_one_line(output, "\033[K");
}

// Where $TERM is dumb or unset, no escape reaches the terminal: spaces erase the bar.
TEST(TrainConsoleProcess, ProgressBarOnADumbTerminalWritesNoEscape) {
  if (!have_data()) GTEST_SKIP() << "Fashion-MNIST is not installed in " << kData;
  for (const char* term : {"dumb", static_cast<const char*>(nullptr)}) {
    const auto [output, status] = run_in_terminal(kOneEpoch, term);
    ASSERT_EQ(status, 0) << output;
    EXPECT_EQ(output.find('\033'), std::string::npos)
        << "TERM=" << (term ? term : "(unset)") << ": " << output;
    expect_bar_on_one_line(output, "");
  }
}

// An error in the middle of training (here: --log-jsonl's first line, where files may not grow
// past 64 bytes) is printed on a line of its own, not after the bar.
TEST(TrainConsoleProcess, AnErrorDuringTrainingStartsOnANewLine) {
  if (!have_data()) GTEST_SKIP() << "Fashion-MNIST is not installed in " << kData;
  const fs::path log = fs::path(::testing::TempDir()) / "train_console_small.jsonl";
  std::vector<std::string> args = kOneEpoch;
  args.insert(args.end(), {"--log-jsonl", log.string()});
  const auto [output, status] = run_in_terminal(args, "xterm", /*max_file_bytes=*/64);
  ASSERT_EQ(status, 1) << output;
  const std::size_t error = output.find("leangrad-train: error: --log-jsonl");
  ASSERT_NE(error, std::string::npos) << output;
  ASSERT_GT(error, 0u);
  EXPECT_EQ(output[error - 1], '\n') << output;
  EXPECT_NE(output.rfind("epoch 1/1 [", error), std::string::npos)
      << "no bar was drawn: " << output;
}

// `signal_number` sent once training runs: the run stops after the step in flight, saves a
// checkpoint, writes the trace of the --profile window it ends, and exits 128 + the signal, saying
// `words`; a rerun resumes from the checkpoint.
void expect_signal_saves_a_checkpoint(int signal_number, const std::string& words) {
  if (!have_data()) GTEST_SKIP() << "Fashion-MNIST is not installed in " << kData;
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("train_console_signal" + std::to_string(signal_number));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string steps = (dir / "steps.jsonl").string();
  std::vector<std::string> args = {LEANGRAD_TRAIN, "--device",         "cpu",  "--epochs",
                                   "50",           "--limit-train",    "6000", "--limit-test",
                                   "1000",         "--checkpoint-dir", "",     "--log-jsonl",
                                   steps,          "--data",           kData};
  args[10] = (dir / "ckpt").string();
  // A profile window the interruption ends: its trace is written all the same.
  const std::string trace = (dir / "trace.json").string();
  const std::vector<std::string> profile = {"--profile", trace, "--profile-steps", "100000"};
  std::vector<std::string> profiled = args;
  profiled.insert(profiled.end(), profile.begin(), profile.end());
  const std::string out_path = (dir / "stdout.txt").string();
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    std::vector<char*> argv = argv_of(profiled);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  // Training has started, and the profile (from global step 3) with it, once --log-jsonl holds a
  // few steps (its step lines, not its epochs').
  auto lines_in = [&](const std::string& path) {
    std::ifstream in(path);
    int n = 0;
    for (std::string line; std::getline(in, line);)
      n += line.find("\"event\":\"step\"") != std::string::npos ? 1 : 0;
    return n;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (lines_in(steps) < 5 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_GE(lines_in(steps), 5) << "training did not start";
  ASSERT_EQ(::kill(pid, signal_number), 0);
  const int status = wait_exit_status(pid);
  std::ifstream printed_file(out_path);
  const std::string printed((std::istreambuf_iterator<char>(printed_file)), {});
  ASSERT_EQ(status, 128 + signal_number) << printed;
  EXPECT_NE(printed.find("interrupted (" + words + ") at epoch"), std::string::npos) << printed;
  EXPECT_NE(printed.find("checkpoint: "), std::string::npos) << printed;
  EXPECT_NE(printed.find("from global step 3 (the run ended before the 100000 asked) written to"),
            std::string::npos)
      << printed;
  std::ifstream trace_file(trace);
  ASSERT_TRUE(trace_file.is_open()) << "no trace written at Ctrl-C: " << printed;
  const nlohmann::json parsed = nlohmann::json::parse(trace_file);
  EXPECT_GT(parsed.at("traceEvents").size(), 1u);

  // The checkpoint loads: a rerun resumes from it and runs one more step.
  const int saved_steps = lines_in(steps);
  std::vector<std::string> again = args;
  again.insert(again.end(), {"--max-steps", std::to_string(saved_steps + 1)});
  const std::string again_out = (dir / "again.txt").string();
  const pid_t rerun = ::fork();
  ASSERT_GE(rerun, 0);
  if (rerun == 0) {
    const int fd = ::open(again_out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    std::vector<char*> argv = argv_of(again);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  const int rerun_status = wait_exit_status(rerun);
  std::ifstream again_file(again_out);
  const std::string again_printed((std::istreambuf_iterator<char>(again_file)), {});
  ASSERT_EQ(rerun_status, 0) << again_printed;
  EXPECT_NE(again_printed.find("resuming from"), std::string::npos) << again_printed;
  EXPECT_NE(again_printed.find("global step " + std::to_string(saved_steps)), std::string::npos)
      << again_printed;
  EXPECT_EQ(lines_in(steps), saved_steps + 1);  // the resumed run appended its step
}

TEST(TrainConsoleProcess, CtrlCSavesACheckpointAndExits130) {
  static_assert(interrupted_exit_code(SIGINT) == 130);
  expect_signal_saves_a_checkpoint(SIGINT, "Ctrl-C");
}

// What kill sends by default, and a batch scheduler (Slurm) before it kills a job at its limit.
TEST(TrainConsoleProcess, SigtermSavesACheckpointAndExits143) {
  static_assert(interrupted_exit_code(SIGTERM) == 143);
  expect_signal_saves_a_checkpoint(SIGTERM, "SIGTERM");
}

}  // namespace
