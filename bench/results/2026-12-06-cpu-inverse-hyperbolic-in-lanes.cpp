// asinh over [-2, 2], acosh over [1, 3] and atanh over [-0.99, 0.99] of float32, one thread, in ns
// per element: forward without a graph, the best of 15 calls on 1M elements
// (bench/results/2026-12-06-cpu-asin-acos-in-lanes-zen5-2core.md, "asinh, acosh, atanh"). Run
// against two builds of the library through LD_LIBRARY_PATH to compare them; the LibTorch twin
// is ...-inverse-hyperbolic-in-lanes-libtorch.cpp:
//   g++ -O2 -std=c++20 -I. -Ibuild/include \
//     bench/results/2026-12-06-cpu-inverse-hyperbolic-in-lanes.cpp -Lbuild -lleangrad \
//     -Wl,-rpath,$PWD/build -o /tmp/inverse-hyperbolic
//   /tmp/inverse-hyperbolic; LD_LIBRARY_PATH=OTHER_BUILD /tmp/inverse-hyperbolic
#include <leangrad/leangrad.h>
#include <cstdio>
#include "best_of.h"
using namespace leangrad;
int main() {
  set_num_threads(1);
  NoGradGuard no_grad;
  const std::int64_t n = 1 << 20;
  manual_seed(0);
  const Tensor x = rand({n}) * 4 - 2, y = rand({n}) * 2 + 1, z = rand({n}) * 1.98 - 0.99;
  const double per_element = 1e6 / static_cast<double>(n);
  std::printf("asinh %.3f\n", best_of_ms(15, 0, [&] { asinh(x); }) * per_element);
  std::printf("acosh %.3f\n", best_of_ms(15, 0, [&] { acosh(y); }) * per_element);
  std::printf("atanh %.3f\n", best_of_ms(15, 0, [&] { atanh(z); }) * per_element);
}
