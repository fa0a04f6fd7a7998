// LibTorch 1.13's side of 2026-12-06-cpu-inverse-hyperbolic-in-lanes.cpp: the same ops, inputs,
// sizes and timing.
//   g++ -O2 -std=c++17 -I/usr/include/torch/csrc/api/include \
//     bench/results/2026-12-06-cpu-inverse-hyperbolic-in-lanes-libtorch.cpp -ltorch -ltorch_cpu \
//     -lc10 -o /tmp/inverse-hyperbolic-libtorch
#include <torch/torch.h>
#include <cstdio>
#include "best_of.h"
using torch::Tensor;
int main() {
  torch::set_num_threads(1);
  torch::NoGradGuard no_grad;
  const std::int64_t n = 1 << 20;
  torch::manual_seed(0);
  const Tensor x = torch::rand({n}) * 4 - 2, y = torch::rand({n}) * 2 + 1,
               z = torch::rand({n}) * 1.98 - 0.99;
  const double per_element = 1e6 / static_cast<double>(n);
  std::printf("asinh %.3f\n", best_of_ms(15, 0, [&] { torch::asinh(x); }) * per_element);
  std::printf("acosh %.3f\n", best_of_ms(15, 0, [&] { torch::acosh(y); }) * per_element);
  std::printf("atanh %.3f\n", best_of_ms(15, 0, [&] { torch::atanh(z); }) * per_element);
}
