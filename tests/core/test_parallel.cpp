// set_num_threads holds for every thread of the process: a thread the program starts itself (as a
// DataLoader worker is) splits kernel work over that many threads, and its OpenMP default, which
// Eigen's GEMM follows, is that count, not the machine's core count. openmp_wait_setting names
// the setting the environment holds (use_short_openmp_spin's exec is checked end to end by
// train_cli_errors, through leangrad-train). An exception thrown by a task of parallel_for
// reaches its caller instead of ending the process.
#include <gtest/gtest.h>
#include <omp.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <new>
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

// Runs parallel_for over 4 tasks of kTask items each on 4 threads, in which the tasks in
// `throwing` (a bit per task) throw an Error naming their task after
// `delay_ms[static_cast<std::size_t>(task)]`, the others count their items. Returns the message of
// the Error that reached the caller ("" when none did).
constexpr std::int64_t kTask = 1024;

std::string message_from_tasks(unsigned throwing, const std::array<int, 4>& delay_ms,
                               std::atomic<std::int64_t>& counted) {
  try {
    kernels::cpu::parallel_for(4 * kTask, 1, [&](std::int64_t begin, std::int64_t end) {
      const std::int64_t task = begin / kTask;
      std::this_thread::sleep_for(
          std::chrono::milliseconds(delay_ms[static_cast<std::size_t>(task)]));
      if ((throwing >> task & 1u) != 0) LG_THROW(Error, "task ", task);
      counted += end - begin;
    });
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Without the catch in every task, the first throw would end the process (std::terminate): an
// exception may not leave a thread of an OpenMP region.
TEST(Parallel, ExceptionOfTheLowestThrowingTaskReachesTheCaller) {
  const int saved = get_num_threads();
  set_num_threads(4);
  // Tasks 1 and 3 throw, in either order of time: the caller gets task 1's exception, as a
  // serial run over the same ranges would, and the tasks that do not throw finish their ranges.
  const std::array<int, 4> task_1_last = {0, 100, 0, 0};
  const std::array<int, 4> task_3_last = {0, 0, 0, 100};
  for (const std::array<int, 4>& delays : {task_1_last, task_3_last}) {
    std::atomic<std::int64_t> counted{0};
    const std::string message = message_from_tasks(0b1010u, delays, counted);
    EXPECT_NE(message.find("task 1"), std::string::npos) << message;
    EXPECT_EQ(counted.load(), 2 * kTask);
  }
  // Every task throwing; and the pool runs the next loop as before.
  const std::array<int, 4> no_delay = {0, 0, 0, 0};
  std::atomic<std::int64_t> counted{0};
  EXPECT_NE(message_from_tasks(0b1111u, no_delay, counted).find("task 0"), std::string::npos);
  EXPECT_EQ(message_from_tasks(0u, no_delay, counted), "");
  EXPECT_EQ(counted.load(), 4 * kTask);
  set_num_threads(saved);
}

// The exception keeps its type: a failed allocation in a task is still std::bad_alloc.
TEST(Parallel, ExceptionFromATaskKeepsItsType) {
  const int saved = get_num_threads();
  set_num_threads(2);
  EXPECT_THROW(kernels::cpu::parallel_for(2 * kTask, 1,
                                          [](std::int64_t begin, std::int64_t) {
                                            if (begin > 0) throw std::bad_alloc();
                                          }),
               std::bad_alloc);
  set_num_threads(saved);
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
