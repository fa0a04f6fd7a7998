// set_num_threads / get_num_threads: one process-wide count over OpenMP's per-thread one.
#include <leangrad/core/parallel.h>

#include <omp.h>

#include <atomic>

#include <leangrad/core/error.h>

namespace leangrad {
namespace {
std::atomic<int> g_num_threads{0};  // 0: never set, OpenMP's default
}  // namespace

void set_num_threads(int num_threads) {
  LG_CHECK(num_threads >= 1, "set_num_threads: expected at least 1 thread, got ", num_threads);
  g_num_threads.store(num_threads, std::memory_order_relaxed);
  omp_set_num_threads(num_threads);
}

int get_num_threads() {
  const int n = g_num_threads.load(std::memory_order_relaxed);
  return n > 0 ? n : omp_get_max_threads();
}

}  // namespace leangrad
