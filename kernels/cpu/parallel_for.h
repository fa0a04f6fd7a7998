// parallel_for: the one way CPU kernels split work across threads (OpenMP underneath).
//   parallel_for(n, kGrain, [&](int64_t begin, int64_t end) { for (i = begin; i < end; ++i) ... });
// Runs serially when n is below the grain size or when already inside a parallel region.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace leangrad::kernels::cpu {

// Elements per task below which threading costs more than it saves (elementwise kernels).
constexpr std::int64_t kElementwiseGrain = 32768;

template <typename F>
void parallel_for(std::int64_t n, std::int64_t grain_size, const F& fn) {
  if (n <= 0) return;
  const std::int64_t max_tasks =
      std::max<std::int64_t>(1, n / std::max<std::int64_t>(grain_size, 1));
  const int num_threads =
      static_cast<int>(std::min<std::int64_t>(omp_get_max_threads(), max_tasks));
  if (num_threads <= 1 || omp_in_parallel()) {
    fn(std::int64_t{0}, n);
    return;
  }
#pragma omp parallel num_threads(num_threads)
  {
    const std::int64_t tid = omp_get_thread_num();
    const std::int64_t nt = omp_get_num_threads();
    const std::int64_t chunk = (n + nt - 1) / nt;
    const std::int64_t begin = tid * chunk;
    const std::int64_t end = std::min(n, begin + chunk);
    if (begin < end) fn(begin, end);
  }
}

}  // namespace leangrad::kernels::cpu
