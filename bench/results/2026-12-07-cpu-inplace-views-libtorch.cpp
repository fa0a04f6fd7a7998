// LibTorch 1.13's side of 2026-12-07-cpu-inplace-views.cpp: the same recurrence into a buffer
// (PyTorch's CopySlices), the same with stack, the same slices; one thread, the best of 15 calls
// after 3.
//   g++ -O2 -std=c++17 -Ibench/results -I/usr/include/torch/csrc/api/include \
//     bench/results/2026-12-07-cpu-inplace-views-libtorch.cpp -ltorch -ltorch_cpu -lc10 \
//     -o /tmp/inplace-views-libtorch
#include <torch/torch.h>
#include <cstdio>
#include <vector>
#include "best_of.h"
int main() {
  at::set_num_threads(1);
  const int64_t steps = 50, batch = 32, width = 128;
  const torch::Tensor w = (torch::randn({width, width}) * 0.05).requires_grad_();
  const torch::Tensor x = torch::randn({steps, batch, width});
  const double buffer = best_of_ms(15, 3, [&] {
    torch::Tensor out = torch::zeros({steps, batch, width});
    torch::Tensor h = torch::zeros({batch, width});
    for (int64_t t = 0; t < steps; ++t) {
      h = torch::tanh(torch::matmul(h, w) + x.select(0, t));
      out.select(0, t).copy_(h);
    }
    out.sum().backward();
  });
  const double stacked = best_of_ms(15, 3, [&] {
    std::vector<torch::Tensor> states;
    torch::Tensor h = torch::zeros({batch, width});
    for (int64_t t = 0; t < steps; ++t) {
      h = torch::tanh(torch::matmul(h, w) + x.select(0, t));
      states.push_back(h);
    }
    torch::stack(states, 0).sum().backward();
  });
  const torch::Tensor y = torch::randn({64, 64}).requires_grad_() * 2.0;
  const double slices = best_of_ms(15, 3, [&] {
    for (int i = 0; i < 100000; ++i) {
      const torch::Tensor v = y.slice(0, 1, 3);
    }
  });
  const torch::Tensor x2 = torch::randn({256, 1024}).requires_grad_();
  const double remade = best_of_ms(15, 3, [&] {
    torch::Tensor y2 = x2 * 1.0;
    const torch::Tensor first =
        y2.select(0, 0);  // made before the write below: its history is remade
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
