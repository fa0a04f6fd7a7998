// LibTorch 1.13's side of 2026-12-07-cpu-broadcast-sums.cpp: the same sums, timed the same way
// (best_of.h), one thread:
//   g++ -O2 -std=c++17 -Ibench/results -I/usr/include/torch/csrc/api/include \
//     bench/results/2026-12-07-cpu-broadcast-sums-libtorch.cpp -ltorch -ltorch_cpu -lc10 \
//     -o /tmp/broadcast-sums-libtorch
#include <torch/torch.h>
#include <cstdio>
#include <functional>
#include <utility>
#include <vector>
#include "best_of.h"
int main() {
  at::set_num_threads(1);
  const torch::Tensor row = torch::randn({1, 2048}).expand({2048, 2048});
  const torch::Tensor half_row = torch::randn({1, 2048}).to(torch::kHalf).expand({2048, 2048});
  const std::vector<std::pair<const char*, std::function<torch::Tensor()>>> cases = {
      {"sum, broadcast row", [&] { return row.sum(); }},
      {"sum dim 0, broadcast row", [&] { return row.sum(0); }},
      {"mean dim 0, broadcast row", [&] { return row.mean(0); }},
      {"sum dim 0, float16 broadcast row", [&] { return half_row.sum(0); }},
  };
  for (const auto& [name, f] : cases)
    std::printf("| %s | %.3f |\n", name, best_of_ms(15, 3, f));
}
