// ThreadCount: the CPU kernels' thread count (set_num_threads) for one scope, restored after; for
// the tests that run a kernel at several thread counts and compare.
#pragma once

#include "core/parallel.h"

namespace leangrad {

class ThreadCount {
 public:
  explicit ThreadCount(int threads) : saved_(get_num_threads()) { set_num_threads(threads); }
  ~ThreadCount() { set_num_threads(saved_); }
  ThreadCount(const ThreadCount&) = delete;
  ThreadCount& operator=(const ThreadCount&) = delete;

 private:
  int saved_;
};

}  // namespace leangrad
