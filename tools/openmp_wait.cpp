#include "openmp_wait.h"

#include <unistd.h>
#include <cstdlib>
#include <cstring>

namespace leangrad::tools {

// Note [OpenMP threads on a shared machine]
//   At the barrier that ends a parallel region, and while they wait for the next one, libgomp's
//   threads spin before they sleep: 300,000 times when neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT
//   is set (some milliseconds). On a machine whose cores are busy with other work, a spinning
//   thread burns the time slice that the thread it waits for needs; and leangrad-train's own
//   DataLoader threads are such other work. OMP_WAIT_POLICY=passive sleeps at once, which costs a
//   wake-up per region: the mlp step, whose regions are short and close together, doubles on an
//   idle machine. GOMP_SPINCOUNT=1000 (some microseconds; a sweep from 300 to 300,000 found it
//   the smallest count that keeps the idle mlp step) keeps the idle step and removes the stalls:
//   measured with 2 threads on the 2-core machine (bench/compare/threads_under_load.sh,
//   docs/training.md "Step times"), idle mlp 0.20 ms as with the default, idle cnn 8.7 ms against
//   the default's 10.8; with a busy process on each core mlp 0.46 ms against the default's p90 of
//   32 ms, cnn 17 ms against 1 thread's 20. libgomp reads both variables once, when it is loaded,
//   before main and before any constructor of the program can add to the environment (a
//   .preinit_array function runs first, but the C library sets up the environment after it). So
//   use_short_openmp_spin sets GOMP_SPINCOUNT=1000 and executes the program again, unless the user
//   set either variable, or it runs under valgrind (whose tools would not follow the new program).
//   A program embedding leangrad sets the variable in its own environment.
namespace {

constexpr const char* kOpenMpSpinCount = "1000";
constexpr const char* kSpinSetByUs = "LEANGRAD_TRAIN_SET_GOMP_SPINCOUNT";

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

std::string openmp_wait_text() {
  if (const char* policy = std::getenv("OMP_WAIT_POLICY")) {
    return std::string("OMP_WAIT_POLICY=") + policy + " (from the environment)";
  }
  const char* spin = std::getenv("GOMP_SPINCOUNT");
  if (spin == nullptr) return "libgomp's default (spin 300,000 times, then sleep)";
  const bool ours = std::getenv(kSpinSetByUs) != nullptr;
  return std::string("GOMP_SPINCOUNT=") + spin +
         (ours ? " (leangrad-train's default)" : " (from the environment)");
}

}  // namespace leangrad::tools
