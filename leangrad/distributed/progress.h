// The progress board of a process group: each rank writes into the store which collective it
// has entered (and, with Gloo, which one it completed) and, when it fails, why; a rank whose
// collective failed reads the board to name the ranks that did not arrive and those that
// exited, quoting the reason the first of them gave. See Notes [Naming the missing ranks] and
// [Why a rank failed] in progress.cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <leangrad/distributed/store.h>

namespace leangrad::distributed {

class ProgressBoard {
 public:
  ProgressBoard(std::shared_ptr<Store> store, std::string prefix, int rank, int size);

  // Records that this rank has entered collective number `seq`, described as `what`.
  void enter(std::uint64_t seq, const std::string& what);
  // Records that this rank has completed collective `seq`: its part is done, so its exit cannot
  // be why another rank's #seq fails (Note [A rank that exits after its last collective]).
  void finish(std::uint64_t seq);
  // Records why this rank failed (store_keys::error), for the other ranks' diagnose() to quote:
  // the Error of its failed collective, or what the program gave distributed::record_error.
  // Kept to kReportBytes; stored when it returns (a set, answered). Never throws: a store that
  // cannot be written is ignored (this runs on the way to an error that says more).
  void report(const std::string& why) noexcept;

  // The ranks other than this one that exited (their connection to the TCP store closed) before
  // they completed collective `seq`, first leaver first. Throws Error when the store cannot be
  // read.
  std::vector<int> exited_before_finishing(std::uint64_t seq);

  // After collective `seq` failed on this rank: a sentence naming the ranks that have not
  // entered it and the ranks that exited before completing it, such as "rank 2 did not arrive
  // (last collective entered: rank 2: #6 broadcast from rank 0 of float32 [10]); rank 2 has
  // exited (its connection to the store closed); it reported: ..." (the reason the first rank
  // named as exited, or else the first late rank, gave with report(), cut to one line of at most
  // kQuotedChars bytes: Note [Why a rank failed]). `timed_out` tells whether the failure was the
  // timeout (then the ranks were given all the time there was) or an error from a peer (then
  // the board is read again for up to half a second until it shows a rank that exited: the
  // store may learn of a killed rank a moment after its peers do). Never throws: when the store
  // cannot be read, the sentence says so.
  std::string diagnose(std::uint64_t seq, bool timed_out);

  static constexpr std::size_t kReportBytes = 4096;  // what report() stores, at most
  static constexpr std::size_t kQuotedChars = 400;   // what diagnose() quotes of it, at most

 private:
  // The reason rank `r` reported, as diagnose() quotes it (quote_report); empty when it reported
  // none or the store cannot be read.
  std::string quoted_report(int r) noexcept;

  std::shared_ptr<Store> store_;
  std::string prefix_;
  int rank_;
  int size_;
};

// `reason` as diagnose() quotes it: one line (a line break, a tab or another control character
// becomes one space with the spaces around it), at most `max_chars` bytes, cut at a UTF-8
// character boundary and ended with "..." when cut.
std::string quote_report(const std::string& reason, std::size_t max_chars);

// The ranks of a group of `size` (its keys under `prefix`), other than `self`, whose connection
// to the TCP store has closed, first leaver first (store_keys::left). Empty with the file store.
// Throws Error when the store cannot be read.
std::vector<int> ranks_that_left(Store& store, const std::string& prefix, int size, int self);

}  // namespace leangrad::distributed
