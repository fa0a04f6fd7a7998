// parallel_for: the one way CPU kernels split work across threads (OpenMP underneath).
//   parallel_for(n, kGrain, [&](int64_t begin, int64_t end) { for (i = begin; i < end; ++i) ... });
// Runs serially when n is below the grain size or when already inside a parallel region. An
// exception a task throws reaches the caller (Note [Exceptions out of a parallel region]).
//
// Note [Exceptions out of a parallel region]
//   An exception may not leave an OpenMP structured block: one that escapes a thread of the
//   region calls std::terminate, and the process ends without a word of why. Kernels validate
//   their arguments before they split the work, but a task can still throw: an allocation
//   (std::bad_alloc from a scratch vector: GroupNorm's per-row parts, softmax's column scratch,
//   the convolution's per-thread buffers), or a library it calls (oneDNN's dnnl::error). So each
//   task runs inside a try block; every task finishes its range (OpenMP cannot cancel the others
//   midway), and after the region the exception of the lowest-numbered task that threw is
//   rethrown on the calling thread, as it was thrown: the one a serial run over the same ranges
//   would have met first, whichever thread happened to throw first. The catch costs nothing
//   while nothing is thrown. tests/core/test_parallel.cpp throws from tasks on several threads.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <exception>

#include <leangrad/core/parallel.h>
#include <leangrad/kernels/cpu/async_signals.h>

namespace leangrad::kernels::cpu {

// The thread count of set_num_threads, made the calling thread's OpenMP default first: OpenMP
// keeps that default per thread, so a thread the program started itself (a DataLoader worker)
// would otherwise split work over every core, and Eigen's GEMM, which follows that default,
// would too. Kernels ask here, never omp_get_max_threads().
inline int max_threads() {
  const int n = get_num_threads();
  if (!omp_in_parallel() && omp_get_max_threads() != n) omp_set_num_threads(n);
  return n;
}

// Elements per task below which threading costs more than it saves (elementwise kernels).
constexpr std::int64_t kElementwiseGrain = 32768;

// The grain, in items, for items of `work_per_item` elements each (rows, runs, groups): enough
// items per task to hold about kElementwiseGrain elements, and at least one.
inline std::int64_t grain_for(std::int64_t work_per_item) {
  return std::max<std::int64_t>(1, kElementwiseGrain / std::max<std::int64_t>(work_per_item, 1));
}

template <typename F>
void parallel_for(std::int64_t n, std::int64_t grain_size, const F& fn) {
  if (n <= 0) return;
  const std::int64_t max_tasks =
      std::max<std::int64_t>(1, n / std::max<std::int64_t>(grain_size, 1));
  const int num_threads = static_cast<int>(std::min<std::int64_t>(max_threads(), max_tasks));
  if (num_threads <= 1 || omp_in_parallel()) {
    fn(std::int64_t{0}, n);
    return;
  }
  std::exception_ptr error;  // the exception of task error_task, the lowest that threw
  std::int64_t error_task = -1;
#pragma omp parallel num_threads(num_threads)
  {
    const std::int64_t tid = omp_get_thread_num();
    if (tid != 0) block_async_signals_in_worker();  // Note [Signals and oneDNN's GEMM kernels]
    const std::int64_t nt = omp_get_num_threads();
    const std::int64_t chunk = (n + nt - 1) / nt;
    const std::int64_t begin = tid * chunk;
    const std::int64_t end = std::min(n, begin + chunk);
    if (begin < end) {
      try {
        fn(begin, end);
      } catch (...) {
#pragma omp critical(leangrad_parallel_for_error)
        if (error_task < 0 || tid < error_task) {
          error = std::current_exception();
          error_task = tid;
        }
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace leangrad::kernels::cpu
