// quantile's forward over 2^24 float32 elements in rows of n (the first argument), for 1 to 32
// q (each asking two ranks), best of 5: the figures behind Note [Stable positions by selection]'s
// threshold (bench/results/2026-12-06-cpu-quantile-by-selection-zen4-2core.md). The threshold
// was forced each way (selects() returning true, then false) in kernels/cpu/sort.cpp to time
// both paths.
//   g++ -O2 -std=c++20 -I. bench/results/2026-12-06-cpu-quantile-ranks.cpp -Lbuild -lleangrad \
//       -Wl,-rpath,build -o /tmp/quantile_ranks && OMP_NUM_THREADS=1 /tmp/quantile_ranks 4096
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <leangrad/leangrad.h>

namespace lg = leangrad;
int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const std::int64_t n = std::atoll(argv[1]);
  const lg::Tensor x = lg::randn({16777216 / n, n});
  for (int q : {1, 2, 4, 9, 16, 32}) {
    const lg::Tensor qs = lg::linspace(0.1, 0.9, q);
    double best = 1e9;
    for (int i = 0; i < 5; ++i) {
      auto s = std::chrono::steady_clock::now();
      lg::Tensor r = lg::quantile(x, qs, 1);
      double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count();
      best = std::min(best, ms);
    }
    std::printf("n %lld q %d: %.1f ms\n", (long long)n, q, best);
  }
}
