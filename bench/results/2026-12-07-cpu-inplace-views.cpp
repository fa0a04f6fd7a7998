// Writes through views under autograd at one thread (Note [In-place writes through views] in
// autograd/graph.cpp): a recurrence of 50 steps, batch 32, width 128, whose states are copied
// into rows of a zeros buffer (out[t] = h), forward and backward, beside the same recurrence
// gathered with stack; and 100,000 slices of a non-leaf, the cost a view pays for knowing its
// base; and a view whose history is remade after a write through another view of its base (an
// as_strided backward). The best of 15 calls after 3
// (bench/results/2026-12-07-cpu-inplace-views-zen5-2core.md). LibTorch's side is
// 2026-12-07-cpu-inplace-views-libtorch.cpp.
//   g++ -O2 -std=c++20 -I. -Ibuild/generated -Ibench/results \
//     bench/results/2026-12-07-cpu-inplace-views.cpp -Lbuild -lleangrad \
//     -Wl,-rpath,$PWD/build -o /tmp/inplace-views
//   /tmp/inplace-views; LD_LIBRARY_PATH=OTHER_BUILD /tmp/inplace-views
#include <leangrad/leangrad.h>
#include <cstdio>
#include <vector>
#include "best_of.h"
using namespace leangrad;
int main() {
  set_num_threads(1);
  const std::int64_t steps = 50, batch = 32, width = 128;
  const Tensor w = (randn({width, width}) * 0.05).requires_grad_();
  const Tensor x = randn({steps, batch, width});
  const double buffer = best_of_ms(15, 3, [&] {
    Tensor out = zeros({steps, batch, width});
    Tensor h = zeros({batch, width});
    for (std::int64_t t = 0; t < steps; ++t) {
      h = tanh(matmul(h, w) + x.select(0, t));
      out.select(0, t).copy_(h);
    }
    out.sum().backward();
  });
  const double stacked = best_of_ms(15, 3, [&] {
    std::vector<Tensor> states;
    Tensor h = zeros({batch, width});
    for (std::int64_t t = 0; t < steps; ++t) {
      h = tanh(matmul(h, w) + x.select(0, t));
      states.push_back(h);
    }
    stack(states, 0).sum().backward();
  });
  const Tensor y = randn({64, 64}).requires_grad_() * 2.0;
  const double slices = best_of_ms(15, 3, [&] {
    for (int i = 0; i < 100000; ++i) {
      const Tensor v = y.slice(0, 1, 3);
    }
  });
  const Tensor x2 = randn({256, 1024}).requires_grad_();
  const double remade = best_of_ms(15, 3, [&] {
    Tensor y2 = x2 * 1.0;
    const Tensor first = y2.select(0, 0);  // made before the write below: its history is remade
    y2.select(0, 1).mul_(2.0);
    (first * 3.0).sum().backward();
  });
  std::printf("recurrence into a buffer, forward + backward: %.3f ms\n", buffer);
  std::printf("recurrence gathered with stack, forward + backward: %.3f ms\n", stacked);
  std::printf("100,000 slices of a non-leaf: %.3f ms\n", slices);
  std::printf(
      "a (256, 1024) row read after a write through another row, forward + backward: "
      "%.3f ms\n",
      remade);
}
