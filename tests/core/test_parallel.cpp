// set_num_threads holds for every thread of the process: a thread the program starts itself (as a
// DataLoader worker is) splits kernel work over that many threads, and its OpenMP default, which
// Eigen's GEMM follows, is that count, not the machine's core count. openmp_wait_setting names
// the setting the environment holds (use_short_openmp_spin's exec is checked end to end by
// train_cli_errors, through leangrad-train).
#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <cstdlib>
#include <optional>
#include <string>
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
  EXPECT_THROW(set_num_threads(100000), Error);  // libgomp crashed starting them
  EXPECT_THROW(set_num_threads(-4), Error);
  EXPECT_EQ(get_num_threads(), saved);
}

// Sets (or unsets, with nullopt) an environment variable for the scope, then restores it.
class EnvironmentVariable {
 public:
  EnvironmentVariable(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~EnvironmentVariable() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  EnvironmentVariable(const EnvironmentVariable&) = delete;
  EnvironmentVariable& operator=(const EnvironmentVariable&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(Parallel, OpenMpWaitSettingNamesWhatTheEnvironmentHolds) {
  {
    const EnvironmentVariable policy("OMP_WAIT_POLICY", std::nullopt);
    const EnvironmentVariable spin("GOMP_SPINCOUNT", std::nullopt);
    EXPECT_EQ(openmp_wait_setting(), "libgomp's default (spin 300,000 times, then sleep)");
  }
  {
    const EnvironmentVariable policy("OMP_WAIT_POLICY", std::nullopt);
    const EnvironmentVariable spin("GOMP_SPINCOUNT", "5");
    const EnvironmentVariable ours("LEANGRAD_SET_GOMP_SPINCOUNT", std::nullopt);
    EXPECT_EQ(openmp_wait_setting(), "GOMP_SPINCOUNT=5 (from the environment)");
  }
  {
    const EnvironmentVariable policy("OMP_WAIT_POLICY", std::nullopt);
    const EnvironmentVariable spin("GOMP_SPINCOUNT", "1000");
    const EnvironmentVariable ours("LEANGRAD_SET_GOMP_SPINCOUNT", "1");
    EXPECT_EQ(openmp_wait_setting(), "GOMP_SPINCOUNT=1000 (set by use_short_openmp_spin)");
  }
  {
    const EnvironmentVariable policy("OMP_WAIT_POLICY", "passive");
    EXPECT_EQ(openmp_wait_setting(), "OMP_WAIT_POLICY=passive (from the environment)");
  }
}

// With a setting in the environment use_short_openmp_spin returns at once, changing nothing (the
// exec it does otherwise would restart this test program).
TEST(Parallel, UseShortOpenMpSpinLeavesTheUsersSettingAlone) {
  const EnvironmentVariable spin("GOMP_SPINCOUNT", "7");
  char name[] = "leangrad_tests";
  char* argv[] = {name, nullptr};
  use_short_openmp_spin(argv);
  EXPECT_STREQ(std::getenv("GOMP_SPINCOUNT"), "7");
  EXPECT_EQ(openmp_wait_setting(), "GOMP_SPINCOUNT=7 (from the environment)");
}

}  // namespace
}  // namespace leangrad
