// LibTorch 1.13's side of 2026-12-06-cpu-asin-acos-in-lanes.cpp: the same ops, inputs, sizes and
// timing (bench/results/2026-12-06-cpu-asin-acos-in-lanes-zen5-2core.md).
//   g++ -O2 -std=c++17 -I/usr/include/torch/csrc/api/include \
//     bench/results/2026-12-06-cpu-asin-acos-in-lanes-libtorch.cpp -ltorch -ltorch_cpu -lc10 \
//     -o /tmp/asin-acos-libtorch
#include <torch/torch.h>
#include <cstdio>
#include "best_of.h"
using torch::Tensor;
int main() {
  torch::set_num_threads(1);
  const std::int64_t n = 1 << 20;
  torch::manual_seed(0);
  const Tensor x = (torch::rand({n}) * 1.98 - 0.99).detach().requires_grad_(true);
  const double per_element = 1e6 / static_cast<double>(n);
  for (const bool is_asin : {true, false}) {
    const auto op = [&] { return is_asin ? torch::asin(x) : torch::acos(x); };
    const double forward = best_of_ms(15, 0, [&] {
      torch::NoGradGuard no_grad;
      op();
    });
    const double both = best_of_ms(15, 0, [&] {
      Tensor y = op();
      y.backward(torch::ones_like(y));
      x.mutable_grad().reset();
    });
    std::printf("%s %.3f / %.3f\n", is_asin ? "asin" : "acos", forward * per_element,
                both * per_element);
  }
}
