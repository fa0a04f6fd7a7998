// The progress board (progress.h).
//
// Note [Naming the missing ranks]
// When a collective fails, Gloo knows only that a peer's connection closed or that a receive
// timed out; with a ring, the peer that is late is usually not even the one a rank talks to.
// The store knows more, because of two records:
// - g<n>/progress/<rank> = "<seq> <description>": every rank overwrites it as it enters each
//   collective, before any data moves, with Store::post (a message to the TCP store without
//   waiting for its answer: no round trip on the collective's path);
// - leangrad/left/<rank>: set by the TCP store's server when that rank's connection closes,
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

std::vector<int> ranks_that_left(Store& store, int size, int self) {
  std::vector<std::pair<std::int64_t, int>> departures;  // (time, rank)
  for (int r = 0; r < size; ++r) {
    if (r == self) continue;
    if (const std::optional<std::string> when = store.try_get(store_keys::left(r))) {
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

std::vector<int> ProgressBoard::exited_before_finishing(std::uint64_t seq) {
  std::vector<int> exited = ranks_that_left(*store_, size_, rank_);  // first: see the Note
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
    return out.str();
  }
}

}  // namespace leangrad::distributed
