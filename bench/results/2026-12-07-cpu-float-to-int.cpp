// float32 -> int32 casts at one thread: a (2048, 2048) float32 (randn), a (1, 2048) row expanded
// to (2048, 2048), and for scale the cast to int64 and back from int32 to float32; the best of
// 15 calls after 3, three rounds (bench/results/2026-12-07-cpu-contiguous-runs-zen5-2core.md).
// LibTorch's side is 2026-12-07-cpu-float-to-int-libtorch.cpp. Run against two builds of the
// library through LD_LIBRARY_PATH to compare them:
//   g++ -O2 -std=c++20 -I. -Ibuild/include bench/results/2026-12-07-cpu-float-to-int.cpp \
//     -Lbuild -lleangrad -Wl,-rpath,$PWD/build -o /tmp/float-to-int
//   /tmp/float-to-int; LD_LIBRARY_PATH=OTHER_BUILD /tmp/float-to-int
#include <leangrad/leangrad.h>
#include <cstdio>
#include "best_of.h"
using namespace leangrad;
int main() {
  set_num_threads(1);
  const Tensor x = randn({2048, 2048});
  const Tensor row = randn({1, 2048}).expand({2048, 2048});
  const Tensor as_int = x.to(kInt32);
  for (int round = 0; round < 3; ++round) {
    std::printf(
        "to int32 %.3f | broadcast row to int32 %.3f | to int64 %.3f | int32 to float %.3f\n",
        best_of_ms(15, 3, [&] { return x.to(kInt32); }),
        best_of_ms(15, 3, [&] { return row.to(kInt32); }),
        best_of_ms(15, 3, [&] { return x.to(kInt64); }),
        best_of_ms(15, 3, [&] { return as_int.to(kFloat32); }));
  }
}
