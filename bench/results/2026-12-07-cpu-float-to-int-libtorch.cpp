// LibTorch 1.13's side of 2026-12-07-cpu-float-to-int.cpp: the same casts, timed the same way
// (best_of.h), one thread:
//   g++ -O2 -std=c++17 -Ibench/results -I/usr/include/torch/csrc/api/include \
//     bench/results/2026-12-07-cpu-float-to-int-libtorch.cpp -ltorch -ltorch_cpu -lc10 \
//     -o /tmp/float-to-int-libtorch
#include <torch/torch.h>
#include <cstdio>
#include "best_of.h"
int main() {
  at::set_num_threads(1);
  const torch::Tensor x = torch::randn({2048, 2048});
  const torch::Tensor row = torch::randn({1, 2048}).expand({2048, 2048});
  const torch::Tensor as_int = x.to(torch::kInt32);
  for (int round = 0; round < 3; ++round) {
    std::printf(
        "to int32 %.3f | broadcast row to int32 %.3f | to int64 %.3f | int32 to float %.3f\n",
        best_of_ms(15, 3, [&] { return x.to(torch::kInt32); }),
        best_of_ms(15, 3, [&] { return row.to(torch::kInt32); }),
        best_of_ms(15, 3, [&] { return x.to(torch::kInt64); }),
        best_of_ms(15, 3, [&] { return as_int.to(torch::kFloat32); }));
  }
}
