// set_num_threads / get_num_threads: one process-wide count over OpenMP's per-thread one; and
// how idle OpenMP threads wait (use_short_openmp_spin).
#include <leangrad/core/parallel.h>

#include <omp.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include <leangrad/core/error.h>

namespace leangrad {
namespace {
std::atomic<int> g_num_threads{0};  // 0: never set, OpenMP's default
}  // namespace

void set_num_threads(int num_threads) {
  // Beyond a thousand threads OpenMP fails to start them, or crashes in the first parallel
  // region (libgomp at 100 000), instead of saying so.
  constexpr int kMaxThreads = 1024;
  LG_CHECK(num_threads >= 1 && num_threads <= kMaxThreads, "set_num_threads: expected 1 to ",
           kMaxThreads, " threads, got ", num_threads);
  g_num_threads.store(num_threads, std::memory_order_relaxed);
  omp_set_num_threads(num_threads);
}

int get_num_threads() {
  const int n = g_num_threads.load(std::memory_order_relaxed);
  return n > 0 ? n : omp_get_max_threads();
}

// Note [OpenMP threads on a shared machine]
//   At the barrier that ends a parallel region, and while they wait for the next one, libgomp's
//   threads spin before they sleep: 300,000 times when neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT
//   is set (some milliseconds). On a machine whose cores are busy with other work, a spinning
//   thread burns the time slice that the thread it waits for needs; and the program's own
//   DataLoader threads, or the other ranks of a job on the same machine, are such other work.
//   OMP_WAIT_POLICY=passive sleeps at once, which costs a wake-up per region: the mlp step, whose
//   regions are short and close together, doubles on an idle machine. GOMP_SPINCOUNT=1000 (some
//   microseconds; a sweep from 300 to 300,000 found it the smallest count that keeps the idle mlp
//   step) keeps the idle step and removes the stalls: measured with 2 threads on the 2-core machine
//   (bench/compare/threads_under_load.sh, docs/training.md "Step times"), idle mlp 0.20 ms as with
//   the default, idle cnn 8.7 ms against the default's 10.8; with a busy process on each core mlp
//   0.46 ms against the default's p90 of 32 ms, cnn 17 ms against 1 thread's 20; two ranks of 2
//   threads on the 2 cores 12 ms a cnn step against the default's 48. libgomp reads both variables
//   once, when it is loaded, before main and before any constructor of the program can add to the
//   environment (a .preinit_array function runs first, but the C library sets up the environment
//   after it). So use_short_openmp_spin sets GOMP_SPINCOUNT=1000 and executes the program again,
//   unless the user set either variable, or it runs under valgrind (whose tools would not follow
//   the new program). leangrad-train calls it first in main; a program embedding leangrad may too,
//   or set either variable in its own environment.
namespace {

constexpr const char* kOpenMpSpinCount = "1000";
constexpr const char* kSpinSetByUs = "LEANGRAD_SET_GOMP_SPINCOUNT";

}  // namespace

void use_short_openmp_spin(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) return;
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload != nullptr && std::strstr(preload, "vgpreload") != nullptr) return;  // valgrind
  if (::setenv("GOMP_SPINCOUNT", kOpenMpSpinCount, 0) != 0 || ::setenv(kSpinSetByUs, "1", 1) != 0)
    return;
  ::execv("/proc/self/exe", argv);  // returns only on failure: go on with libgomp's default
  ::unsetenv("GOMP_SPINCOUNT");
  ::unsetenv(kSpinSetByUs);
}

std::string openmp_wait_setting() {
  if (const char* policy = std::getenv("OMP_WAIT_POLICY")) {
    return std::string("OMP_WAIT_POLICY=") + policy + " (from the environment)";
  }
  const char* spin = std::getenv("GOMP_SPINCOUNT");
  if (spin == nullptr) return "libgomp's default (spin 300,000 times, then sleep)";
  const bool ours = std::getenv(kSpinSetByUs) != nullptr;
  return std::string("GOMP_SPINCOUNT=") + spin +
         (ours ? " (set by use_short_openmp_spin)" : " (from the environment)");
}

}  // namespace leangrad
