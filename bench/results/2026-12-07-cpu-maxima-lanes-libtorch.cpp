// LibTorch 1.13's side of 2026-12-07-cpu-maxima-lanes.cpp: the same reductions, timed the same
// way (best_of.h), one thread:
//   g++ -O2 -std=c++17 -Ibench/results -I/usr/include/torch/csrc/api/include \
//     bench/results/2026-12-07-cpu-maxima-lanes-libtorch.cpp -ltorch -ltorch_cpu -lc10 \
//     -o /tmp/maxima-lanes-libtorch
#include <torch/torch.h>
#include <cstdio>
#include <functional>
#include <utility>
#include <vector>
#include "best_of.h"

int main() {
  at::set_num_threads(1);
  const torch::Tensor small = torch::randn({64, 2048});
  const torch::Tensor x = torch::randn({2048, 2048});
  const torch::Tensor x64 = x.to(torch::kFloat64), b = x.to(torch::kBFloat16),
                      i = (x * 100.0).to(torch::kInt32);
  const auto hundred = [](const std::function<torch::Tensor()>& f) {
    return [f] {
      for (int k = 0; k < 99; ++k)
        f();
      return f();
    };
  };
  const std::vector<std::pair<const char*, std::function<torch::Tensor()>>> cases = {
      {"amax dim 1, (64, 2048) in L2, 100 calls", hundred([&] { return small.amax({1}); })},
      {"argmax dim 1, (64, 2048) in L2, 100 calls", hundred([&] { return small.argmax(1); })},
      {"amax dim 1, float32", [&] { return x.amax({1}); }},
      {"amin dim 1, float32", [&] { return x.amin({1}); }},
      {"argmax dim 1, float32", [&] { return x.argmax(1); }},
      {"max, float32", [&] { return x.max(); }},
      {"amax dim 1, float64", [&] { return x64.amax({1}); }},
      {"amax dim 1, bfloat16", [&] { return b.amax({1}); }},
      {"amax dim 1, int32", [&] { return i.amax({1}); }},
  };
  for (const auto& [name, f] : cases)
    std::printf("| %s | %.3f |\n", name, best_of_ms(15, 3, f));
}
