// set_num_threads holds for every thread of the process: a thread the program starts itself (as a
// DataLoader worker is) splits kernel work over that many threads, and its OpenMP default, which
// Eigen's GEMM follows, is that count, not the machine's core count.
#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <thread>

#include <leangrad/core/error.h>
#include <leangrad/core/parallel.h>
#include <leangrad/kernels/cpu/parallel_for.h>

namespace leangrad {
namespace {

struct ThreadsSeen {
  int chunks = 0;       // the pieces parallel_for split a large loop into: one per thread
  int omp_default = 0;  // the thread's OpenMP default afterwards
};

ThreadsSeen threads_seen_by_a_new_thread() {
  ThreadsSeen seen;
  std::thread worker([&] {
    std::atomic<int> chunks{0};
    kernels::cpu::parallel_for(1 << 20, 1, [&](std::int64_t, std::int64_t) { ++chunks; });
    seen.chunks = chunks.load();
    seen.omp_default = omp_get_max_threads();
  });
  worker.join();
  return seen;
}

TEST(Parallel, SetNumThreadsReachesThreadsTheProgramStarted) {
  const int saved = get_num_threads();
  for (const int threads : {1, 3}) {
    set_num_threads(threads);
    const ThreadsSeen seen = threads_seen_by_a_new_thread();
    EXPECT_EQ(seen.chunks, threads);
    EXPECT_EQ(seen.omp_default, threads);
    EXPECT_EQ(get_num_threads(), threads);
  }
  set_num_threads(saved);
}

TEST(Parallel, SetNumThreadsRefusesLessThanOne) {
  const int saved = get_num_threads();
  EXPECT_THROW(set_num_threads(0), Error);
  EXPECT_THROW(set_num_threads(-4), Error);
  EXPECT_EQ(get_num_threads(), saved);
}

}  // namespace
}  // namespace leangrad
