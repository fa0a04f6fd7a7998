// pixel_shuffle and pixel_unshuffle forward without a graph on srnet's shapes, the best of 30 calls
// after 3 (bench/results/2026-12-06-cpu-narrow-copy-zen4-2core.md). Run against two builds of the
// library through LD_LIBRARY_PATH to compare them:
//   g++ -O2 -std=c++20 -I. -Ibuild/include bench/results/2026-12-06-cpu-narrow-copy.cpp \
//     -Lbuild -lleangrad -Wl,-rpath,$PWD/build -o /tmp/narrow-copy
//   OMP_NUM_THREADS=1 /tmp/narrow-copy; OMP_NUM_THREADS=1 LD_LIBRARY_PATH=OTHER_BUILD
//   /tmp/narrow-copy
#include <leangrad/leangrad.h>
#include <cstdio>
#include "best_of.h"
using namespace leangrad;
int main() {
  NoGradGuard no_grad;
  const Tensor x = randn({64, 64, 14, 14}), y = randn({64, 16, 28, 28});
  const Tensor x3 = randn({64, 72, 14, 14}), x1 = randn({64, 4, 14, 14});
  std::printf("pixel_shuffle (64, 64, 14, 14) r 2: %.3f ms\n",
              best_of_ms(30, 3, [&] { pixel_shuffle(x, 2); }));
  std::printf("pixel_unshuffle (64, 16, 28, 28) r 2: %.3f ms\n",
              best_of_ms(30, 3, [&] { pixel_unshuffle(y, 2); }));
  std::printf("pixel_shuffle (64, 72, 14, 14) r 3: %.3f ms\n",
              best_of_ms(30, 3, [&] { pixel_shuffle(x3, 3); }));
  std::printf("pixel_shuffle (64, 4, 14, 14) r 2: %.3f ms\n",
              best_of_ms(30, 3, [&] { pixel_shuffle(x1, 2); }));
}
