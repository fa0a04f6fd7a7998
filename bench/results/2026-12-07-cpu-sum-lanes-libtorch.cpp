// LibTorch 1.13's side of 2026-12-07-cpu-sum-lanes.cpp: the same sums, timed the same way
// (best_of.h), one thread:
//   g++ -O2 -std=c++17 -Ibench/results -I/usr/include/torch/csrc/api/include \
//     bench/results/2026-12-07-cpu-sum-lanes-libtorch.cpp -ltorch -ltorch_cpu -lc10 \
//     -o /tmp/sum-lanes-libtorch
#include <torch/torch.h>
#include <cstdio>
#include <functional>
#include <utility>
#include <vector>
#include "best_of.h"
int main() {
  at::set_num_threads(1);
  const torch::Tensor x = torch::randn({2048, 2048});
  const torch::Tensor row = torch::randn({1, 2048}).expand({2048, 2048});
  const torch::Tensor small = torch::randn({64, 2048});
  const torch::Tensor short_rows = torch::randn({4096, 196}),
                      bias_grad = torch::randn({64, 64, 14, 14});
  const torch::Tensor x64 = x.to(torch::kFloat64), b = x.to(torch::kBFloat16),
                      h = x.to(torch::kFloat16), i = (x * 100.0).to(torch::kInt32);
  const std::vector<std::pair<const char*, std::function<torch::Tensor()>>> cases = {
      {"sum, float32", [&] { return x.sum(); }},
      {"sum dim 1, float32", [&] { return x.sum({1}); }},
      {"mean dim 1, float32", [&] { return x.mean({1}); }},
      {"sum dim 1, broadcast row", [&] { return row.sum({1}); }},
      {"sum, broadcast row", [&] { return row.sum(); }},
      {"sum dim 1, (64, 2048) in L2, 100 calls",
       [&] {
         for (int i = 0; i < 99; ++i)
           small.sum({1});
         return small.sum({1});
       }},
      {"sum dim 1, (4096, 196)", [&] { return short_rows.sum({1}); }},
      {"sum over (0, 2, 3) of (64, 64, 14, 14)",
       [&] {
         return bias_grad.sum({0, 2, 3});
       }},
      {"sum dim 1, float64", [&] { return x64.sum({1}); }},
      {"sum dim 1, bfloat16", [&] { return b.sum({1}); }},
      {"sum dim 1, float16", [&] { return h.sum({1}); }},
      {"sum dim 1, int32", [&] { return i.sum({1}); }},
  };
  for (const auto& [name, f] : cases)
    std::printf("| %s | %.3f |\n", name, best_of_ms(15, 3, f));
}
