// The progress board (progress.h).
//
// Note [Naming the missing ranks]
// When a collective fails, Gloo knows only that a peer's connection closed or that a receive
// timed out; with a ring, the peer that is late is usually not even the one a rank talks to.
// The store knows more, because of two records:
// - g<n>/progress/<rank> = "<seq> <description>": every rank overwrites it as it enters each
//   collective, before any data moves, with Store::post (a message to the TCP store without
//   waiting for its answer: no round trip on the collective's path);
// - g<n>/left/<rank>: set by the TCP store's server when that rank's connection closes,
//   which the kernel does for a process that exits or is killed.
// A rank whose collective #s failed reads both for every other rank: a rank whose last record
// is below s "did not arrive", a rank with a left key "has exited". The file store has no server
// and so no left keys; its messages name the late ranks only.
//
// Note [A rank that exits after its last collective]
// A rank's part of a collective can end before another rank's: in a broadcast tree the root is
// done once its children hold the data, while a grandchild still receives it from a child. A
// program that exits right after its last collective then leaves the store while its peers are
// still in that collective, and a left key alone would make them fail with "rank r has exited"
// although r sent everything (the data a process wrote to its sockets is delivered after it
// exits). So the Gloo group also records each collective a rank completes:
// - g<n>/finished/<rank> = "<seq>", posted by the worker after the collective's data moved and
//   before its Work completes, so before wait() returns and the program can exit;
// - it travels on the same connection as the rank's later departure, so the server stores it
//   before it sets the left key: a rank read as gone has its last completion on the board too
//   (left keys are read first);
// - exited_before_finishing(s) keeps only the ranks that left without completing #s: those are
//   the ones the watchdog aborts for (gloo_watchdog.cpp) and this note's diagnosis names.
// NCCL completes collectives on the GPU and posts nothing; its watchdog does not abort on left
// keys, which only name the exited ranks once a collective has already failed.
//
// Note [Why a rank failed]
// A left key says that a rank exited, not why; the reason is on that rank's terminal, which on
// a cluster is another machine's log. So a rank that fails leaves its reason on the board:
// - g<n>/error/<rank> = the message, set (report()) by the Gloo group's fail() and the NCCL
//   group's break_group with the Error they raise, and by distributed::record_error, which a
//   program calls from its top-level catch before it exits (leangrad-train does): the failures
//   in the program's own code (a corrupt file, a bad option, out of memory) no collective saw;
// - it is posted on the connection the rank's departure later closes, so a rank read as gone
//   has its report stored too (the argument of the Note above); a report that cannot be written
//   is dropped, never thrown: the error on its way says more;
// - diagnose() quotes one report: the first rank it names as exited, the likely cause, if that
//   rank reported; when none exited, the first late rank that did (it failed in its own code
//   and has not exited yet). The other ranks' reports are not quoted: a rank that failed because
//   of the first one reports that, which would repeat the sentence;
// - the quote is one line of at most kQuotedChars bytes (quote_report), and reading it cannot
//   fail the diagnosis: a store that cannot be read leaves the quote out.
#include <leangrad/distributed/progress.h>

#include <algorithm>
#include <charconv>
#include <sstream>
#include <thread>
#include <vector>

#include <leangrad/core/error.h>
#include <leangrad/distributed/store_keys.h>

namespace leangrad::distributed {
namespace {

constexpr std::size_t kRanksNamed = 16;  // a message names at most this many ranks of a list

// "rank 2", "ranks 1 and 3", "ranks 0, 1, ... 15 and 40 more".
std::string join_ranks(const std::vector<int>& ranks) {
  std::ostringstream out;
  out << (ranks.size() == 1 ? "rank " : "ranks ");
  const std::size_t named = std::min(ranks.size(), kRanksNamed);
  for (std::size_t i = 0; i < named; ++i) {
    out << (i == 0 ? "" : i + 1 == ranks.size() ? " and " : ", ") << ranks[i];
  }
  if (named < ranks.size()) out << " and " << ranks.size() - named << " more";
  return out.str();
}

}  // namespace

std::string quote_report(const std::string& reason, std::size_t max_chars) {
  std::string line;
  bool at_break = false;  // after a control character: the spaces around it go
  for (const char ch : reason) {
    const auto byte = static_cast<unsigned char>(ch);
    if (byte < 0x20 || byte == 0x7f) {
      while (!line.empty() && line.back() == ' ')
        line.pop_back();
      at_break = true;
      continue;
    }
    if (at_break) {
      if (ch == ' ') continue;
      if (!line.empty()) line.push_back(' ');
      at_break = false;
    }
    line.push_back(ch);
  }
  while (!line.empty() && line.back() == ' ')
    line.pop_back();
  if (line.size() <= max_chars) return line;
  const std::string ellipsis = "...";
  std::size_t cut = max_chars > ellipsis.size() ? max_chars - ellipsis.size() : 0;
  // Back to the first byte of a UTF-8 character (continuation bytes are 10xxxxxx).
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80)
    --cut;
  line.resize(cut);
  return line + ellipsis;
}

std::vector<int> ranks_that_left(Store& store, const std::string& prefix, int size, int self) {
  std::vector<std::pair<std::int64_t, int>> departures;  // (time, rank)
  for (int r = 0; r < size; ++r) {
    if (r == self) continue;
    if (const std::optional<std::string> when = store.try_get(store_keys::left(prefix, r))) {
      std::int64_t ms = 0;
      std::from_chars(when->data(), when->data() + when->size(), ms);
      departures.emplace_back(ms, r);
    }
  }
  std::sort(departures.begin(), departures.end());
  std::vector<int> ranks;
  for (const auto& departure : departures)
    ranks.push_back(departure.second);
  return ranks;
}

ProgressBoard::ProgressBoard(std::shared_ptr<Store> store, std::string prefix, int rank, int size)
    : store_(std::move(store)), prefix_(std::move(prefix)), rank_(rank), size_(size) {}

void ProgressBoard::enter(std::uint64_t seq, const std::string& what) {
  store_->post(store_keys::progress(prefix_, rank_), std::to_string(seq) + " " + what);
}

void ProgressBoard::finish(std::uint64_t seq) {
  store_->post(store_keys::finished(prefix_, rank_), std::to_string(seq));
}

void ProgressBoard::report(const std::string& why) noexcept {
  try {
    // A set, not a post: when it returns the report is stored (one round trip, on a failing path).
    store_->set(store_keys::error(prefix_, rank_), why.substr(0, kReportBytes));
  } catch (...) {  // Note [Why a rank failed]: never in the way of the error being raised
  }
}

std::string ProgressBoard::quoted_report(int r) noexcept {
  try {
    const std::optional<std::string> why = store_->try_get(store_keys::error(prefix_, r));
    return why ? quote_report(*why, kQuotedChars) : "";
  } catch (...) {
    return "";
  }
}

std::vector<int> ProgressBoard::exited_before_finishing(std::uint64_t seq) {
  std::vector<int> exited = ranks_that_left(*store_, prefix_, size_, rank_);  // first: see the Note
  std::erase_if(exited, [&](int r) {
    const std::optional<std::string> record = store_->try_get(store_keys::finished(prefix_, r));
    std::uint64_t completed = 0;
    if (record) std::from_chars(record->data(), record->data() + record->size(), completed);
    return completed >= seq;
  });
  return exited;
}

std::string ProgressBoard::diagnose(std::uint64_t seq, bool timed_out) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  for (;;) {
    std::vector<int> late;
    std::vector<int> exited;
    std::ostringstream whereabouts;  // where each late rank is
    try {
      exited = exited_before_finishing(seq);
      for (int r = 0; r < size_; ++r) {
        if (r == rank_) continue;
        const std::optional<std::string> record = store_->try_get(store_keys::progress(prefix_, r));
        std::uint64_t reached = 0;
        if (record) std::from_chars(record->data(), record->data() + record->size(), reached);
        if (reached >= seq) continue;
        late.push_back(r);
        if (late.size() > kRanksNamed) continue;
        whereabouts << (late.size() > 1 ? "; " : "") << "rank " << r << ": ";
        if (reached == 0) {
          whereabouts << "no collective yet";
        } else {
          whereabouts << "#" << *record;
        }
      }
    } catch (const Error& e) {
      return "the store cannot be read either (" + e.message() +
             "), so the missing ranks are unknown";
    }
    const bool nothing_found = late.empty() && exited.empty();
    if (exited.empty() && !timed_out && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    std::ostringstream out;
    if (!late.empty()) {
      out << join_ranks(late) << " did not arrive (last collective entered: " << whereabouts.str()
          << ")";
    }
    if (!exited.empty()) {
      // The first to leave is the likely cause; the others may have exited because of it.
      out << (late.empty() ? "" : "; ") << "rank " << exited[0]
          << " has exited (its connection to the store closed)";
      if (exited.size() > 1) {
        out << ", then " << join_ranks(std::vector<int>(exited.begin() + 1, exited.end()));
      }
    }
    if (nothing_found) {
      out << "every rank entered this collective and none has exited before completing it";
    }
    // The reason the likely cause gave (Note [Why a rank failed]).
    std::vector<int> candidates = exited.empty() ? late : std::vector<int>{exited[0]};
    if (candidates.size() > kRanksNamed) candidates.resize(kRanksNamed);
    for (const int r : candidates) {
      const std::string why = quoted_report(r);
      if (why.empty()) continue;
      const auto is_r = [r](int other) { return other == r; };
      out << "; ";
      if (std::all_of(late.begin(), late.end(), is_r) &&
          std::all_of(exited.begin(), exited.end(), is_r)) {
        out << "it";  // the sentence names this rank only
      } else {
        out << "rank " << r;
      }
      out << " reported: " << why;
      break;
    }
    return out.str();
  }
}

}  // namespace leangrad::distributed
