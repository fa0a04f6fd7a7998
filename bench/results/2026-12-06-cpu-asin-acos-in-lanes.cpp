// asin and acos of float32 over [-0.99, 0.99], one thread, in ns per element: forward without a
// graph, and forward plus backward through autograd; the best of 15 calls on 1M elements
// (bench/results/2026-12-06-cpu-asin-acos-in-lanes-zen5-2core.md). Run against two builds of the
// library through LD_LIBRARY_PATH to compare them; the LibTorch twin is
// ...-asin-acos-in-lanes-libtorch.cpp:
//   g++ -O2 -std=c++20 -I. -Ibuild/include bench/results/2026-12-06-cpu-asin-acos-in-lanes.cpp \
//     -Lbuild -lleangrad -Wl,-rpath,$PWD/build -o /tmp/asin-acos
//   /tmp/asin-acos; LD_LIBRARY_PATH=OTHER_BUILD /tmp/asin-acos
#include <leangrad/leangrad.h>
#include <cstdio>
#include "best_of.h"
using namespace leangrad;
int main() {
  set_num_threads(1);
  const std::int64_t n = 1 << 20;
  manual_seed(0);
  const Tensor x = (rand({n}) * 1.98 - 0.99).detach().requires_grad_(true);
  const double per_element = 1e6 / static_cast<double>(n);
  for (const bool is_asin : {true, false}) {
    const auto op = [&] { return is_asin ? asin(x) : acos(x); };
    const double forward = best_of_ms(15, 0, [&] {
      NoGradGuard no_grad;
      op();
    });
    const double both = best_of_ms(15, 0, [&] {
      Tensor y = op();
      y.backward(ones_like(y));
      x.mutable_grad() = Tensor();
    });
    std::printf("%s %.3f / %.3f\n", is_asin ? "asin" : "acos", forward * per_element,
                both * per_element);
  }
}
