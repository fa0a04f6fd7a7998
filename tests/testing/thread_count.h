// ThreadCount: the CPU kernels' thread count (set_num_threads) for one scope, restored after; for
// the tests that run a kernel at several thread counts and compare.
//
// Tests ask for at most 4 threads. LLVM's libomp 14 (the sanitizer jobs' OpenMP, tools/sanitize.sh)
// loses a few KiB of team bookkeeping when a team that has only ever had 2 to 4 threads first
// grows past 4: on a 2-core machine ThreadCount(17) is enough for LeakSanitizer to fail the ASan
// job (`omp_set_num_threads(2)`, a parallel region, then 17 and another region reproduces it in a
// 10-line program). It is not leangrad's leak, and a suppression for it would have to name
// libomp's module, which also hides every leak made inside a parallel region, so the tests stay
// where libomp does not leak.
#pragma once

#include <leangrad/core/parallel.h>

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
