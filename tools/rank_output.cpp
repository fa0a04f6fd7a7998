// Cutting a rank's output into prefixed lines (rank_output.h).
#include "rank_output.h"

namespace leangrad::tools {

RankOutput::RankOutput(int rank) : prefix_("[rank " + std::to_string(rank) + "] ") {}

std::string RankOutput::feed(std::string_view bytes) {
  std::string lines;
  while (!bytes.empty()) {
    const std::size_t newline = bytes.find('\n');
    const std::size_t room = kMaxLineBytes - partial_.size();
    if (newline == std::string_view::npos && bytes.size() < room) {
      partial_.append(bytes);
      break;
    }
    // A whole line, or a piece of kMaxLineBytes of one that is longer.
    const bool whole = newline != std::string_view::npos && newline < room;
    const std::size_t taken = whole ? newline + 1 : room;
    lines += prefix_;
    lines += partial_;
    lines.append(bytes.substr(0, taken));
    if (!whole) lines += '\n';
    partial_.clear();
    bytes.remove_prefix(taken);
  }
  return lines;
}

std::string RankOutput::finish() {
  if (partial_.empty()) return "";
  std::string line = prefix_ + partial_ + '\n';
  partial_.clear();
  return line;
}

}  // namespace leangrad::tools
