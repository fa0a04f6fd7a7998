// Sums and means over a reduced broadcast dim at one thread (Note [Broadcast dims of a reduction]
// in kernels/ops_reduce.cpp): a (1, 2048) row expanded to (2048, 2048), float32 and float16,
// summed whole and over dim 0, its mean over dim 0; the best of 15 calls after 3
// (bench/results/2026-12-07-cpu-broadcast-sums-zen5-2core.md). LibTorch's side is
// 2026-12-07-cpu-broadcast-sums-libtorch.cpp. Run against two builds of the library through
// LD_LIBRARY_PATH to compare them:
//   g++ -O2 -std=c++20 -I. -Ibuild/include -Ibench/results \
//     bench/results/2026-12-07-cpu-broadcast-sums.cpp -Lbuild -lleangrad \
//     -Wl,-rpath,$PWD/build -o /tmp/broadcast-sums
//   /tmp/broadcast-sums; LD_LIBRARY_PATH=OTHER_BUILD /tmp/broadcast-sums
#include <leangrad/leangrad.h>
#include <cstdio>
#include <functional>
#include <utility>
#include <vector>
#include "best_of.h"
using namespace leangrad;
int main() {
  set_num_threads(1);
  const Tensor row = randn({1, 2048}).expand({2048, 2048});
  const Tensor half_row = randn({1, 2048}).to(kFloat16).expand({2048, 2048});
  const std::vector<std::pair<const char*, std::function<Tensor()>>> cases = {
      {"sum, broadcast row", [&] { return row.sum(); }},
      {"sum dim 0, broadcast row", [&] { return row.sum({0}); }},
      {"mean dim 0, broadcast row", [&] { return row.mean({0}); }},
      {"sum dim 0, float16 broadcast row", [&] { return half_row.sum({0}); }},
  };
  for (const auto& [name, f] : cases)
    std::printf("| %s | %.3f |\n", name, best_of_ms(15, 3, f));
}
