// leangrad-run's output of one rank's stream (its stdout or its stderr, read from a pipe): the
// bytes cut into lines, each line prefixed with "[rank R] " so the ranks' interleaved output stays
// readable. Pure string handling, tested on its own (tests/tools/test_launch_plan.cpp); the poll
// loop that reads the pipes is in leangrad_run.cpp.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace leangrad::tools {

// A line longer than this without a '\n' (a progress bar redrawn with '\r', binary output) is
// written out in pieces of this size, each prefixed and ended with '\n', so memory stays bounded.
inline constexpr std::size_t kMaxLineBytes = 64 * 1024;

class RankOutput {
 public:
  explicit RankOutput(int rank);

  // Takes the next bytes the rank wrote; returns the lines they completed, each prefixed and
  // ending with '\n' (empty when they completed none). The rest waits for the next call.
  std::string feed(std::string_view bytes);

  // At the end of the stream: the partial last line, prefixed and ended with '\n' (empty when the
  // stream ended with a '\n').
  std::string finish();

 private:
  std::string prefix_;   // "[rank R] "
  std::string partial_;  // the bytes of the current line, without its prefix
};

}  // namespace leangrad::tools
