// The progress board of a process group: each rank writes into the store which collective it
// has entered (and, with Gloo, which one it completed), and a rank whose collective failed reads
// the board to name the ranks that did not arrive and those that exited. See Note [Naming the
// missing ranks] in progress.cpp.
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

  // The ranks other than this one that exited (their connection to the TCP store closed) before
  // they completed collective `seq`, first leaver first. Throws Error when the store cannot be
  // read.
  std::vector<int> exited_before_finishing(std::uint64_t seq);

  // After collective `seq` failed on this rank: a sentence naming the ranks that have not
  // entered it and the ranks that exited before completing it, such as "rank 2 did not arrive
  // (last collective entered: rank 2: #6 broadcast from rank 0 of float32 [10]); rank 2 has
  // exited (its connection to the store closed)". `timed_out` tells whether the failure was the
  // timeout (then the ranks were given all the time there was) or an error from a peer (then
  // the board is read again for up to half a second until it shows a rank that exited: the
  // store may learn of a killed rank a moment after its peers do). Never throws: when the store
  // cannot be read, the sentence says so.
  std::string diagnose(std::uint64_t seq, bool timed_out);

 private:
  std::shared_ptr<Store> store_;
  std::string prefix_;
  int rank_;
  int size_;
};

// The ranks of a group of `size`, other than `self`, whose connection to the TCP store has
// closed, first leaver first (store_keys::left). Empty with the file store. Throws Error when
// the store cannot be read.
std::vector<int> ranks_that_left(Store& store, int size, int self);

}  // namespace leangrad::distributed
